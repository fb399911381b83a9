//! The node every sandbox has: no kubelet runs anywhere, but `kubectl get nodes` lists one
//! Ready node, as a cluster with fake nodes (kwok) does.

use serde_json::json;

use crate::store::ops::create::create;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

/// The node's name.
pub const NODE_NAME: &str = "sandbox-node-0";

/// Registers the node and reports it Ready.
pub fn create_default_node(state: &mut State) {
    let Some(def) = state.registry.find("", "v1", "nodes") else {
        return;
    };
    let options = WriteOptions {
        manager: "kubelet".into(),
        ..WriteOptions::default()
    };
    let labels = json!({
        "kubernetes.io/arch": std::env::consts::ARCH.replace("x86_64", "amd64").replace("aarch64", "arm64"),
        "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": NODE_NAME,
    });
    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": NODE_NAME, "labels": labels}, "spec": {}});
    let Ok(created) = create(state, &def, "", node, &options) else {
        tracing::error!(node = NODE_NAME, "cannot register the sandbox node");
        return;
    };
    let now = crate::meta::now_time();
    let mut reported = (*created.object).clone();
    reported["status"] = json!({
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
            "lastTransitionTime": now}],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                      {"type": "Hostname", "address": NODE_NAME}],
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "nodeInfo": {"kubeletVersion": "v1.33.0", "operatingSystem": "linux",
            "architecture": labels["kubernetes.io/arch"], "containerRuntimeVersion": "ferroplane-sandbox",
            "kernelVersion": "", "osImage": "ferroplane sandbox", "kubeProxyVersion": "",
            "machineID": "", "systemUUID": "", "bootID": ""},
        "phase": "Running",
    });
    let target = Target {
        subresource: "status",
        ..Target::main(&def, "", NODE_NAME)
    };
    if let Err(error) = update(state, &target, reported, UpdateKind::Update, &options) {
        tracing::error!(%error, "cannot report the sandbox node ready");
    }
}
