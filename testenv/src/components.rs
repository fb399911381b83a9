//! The command lines of the five programs: their flags, ports and the files of D they read.
//! Pure, so the rules "loopback only" and "RBAC enforced" are checked by unit tests.

use std::path::Path;

use crate::layout::Layout;

/// The loopback ports of one control plane.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    pub etcd_client: u16,
    pub etcd_peer: u16,
    pub apiserver: u16,
    pub controller_manager: u16,
    pub scheduler: u16,
}

pub const LOOPBACK: &str = "127.0.0.1";
/// The front proxy's user name: the only one whose X-Remote-User headers the API server trusts.
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";
/// Only written into Services: nothing routes to it (there is no kube-proxy).
pub const SERVICE_CIDR: &str = "10.96.0.0/16";
/// The `kubernetes` Service's address, in the API server's certificate.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";
/// The addresses kwok writes into Pod status: no pod network exists, nothing listens there,
/// and nothing here connects to them (the API server proxies to a pod only when asked to).
pub const POD_CIDR: &str = "10.244.0.0/16";

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn flag(name: &str, value: impl Into<String>) -> String {
    format!("--{name}={}", value.into())
}

pub fn etcd_url(ports: &Ports) -> String {
    format!("http://{LOOPBACK}:{}", ports.etcd_client)
}

pub fn apiserver_url(ports: &Ports) -> String {
    format!("https://{LOOPBACK}:{}", ports.apiserver)
}

pub fn etcd_args(l: &Layout, p: &Ports) -> Vec<String> {
    let client = etcd_url(p);
    let peer = format!("http://{LOOPBACK}:{}", p.etcd_peer);
    vec![
        flag("name", "testenv"),
        flag("data-dir", s(&l.etcd_data())),
        flag("listen-client-urls", client.clone()),
        flag("advertise-client-urls", client),
        flag("listen-peer-urls", peer.clone()),
        flag("initial-advertise-peer-urls", peer.clone()),
        flag("initial-cluster", format!("testenv={peer}")),
        flag("initial-cluster-state", "new"),
        // A test cluster's data is thrown away: fsync would only make every write wait for a
        // disk that other builds share.
        "--unsafe-no-fsync".into(),
        flag("log-level", "warn"),
    ]
}

pub fn apiserver_args(l: &Layout, p: &Ports) -> Vec<String> {
    vec![
        flag("etcd-servers", etcd_url(p)),
        flag("bind-address", LOOPBACK),
        flag("advertise-address", LOOPBACK),
        // The `kubernetes` Service's endpoints would be the advertised address, and since 1.37
        // the API server refuses a loopback one there; nothing in this cluster dials that
        // Service (there is no pod network), so it keeps no endpoints.
        flag("endpoint-reconciler-type", "none"),
        flag("secure-port", p.apiserver.to_string()),
        flag("tls-cert-file", s(&l.pki("apiserver.crt"))),
        flag("tls-private-key-file", s(&l.pki("apiserver.key"))),
        flag("client-ca-file", s(&l.pki("ca.crt"))),
        flag("service-account-issuer", apiserver_url(p)),
        flag("service-account-key-file", s(&l.pki("sa.pub"))),
        flag("service-account-signing-key-file", s(&l.pki("sa.key"))),
        flag("authorization-mode", "Node,RBAC"),
        flag(
            "requestheader-client-ca-file",
            s(&l.pki("front-proxy-ca.crt")),
        ),
        flag("requestheader-allowed-names", FRONT_PROXY_CLIENT),
        flag("requestheader-username-headers", "X-Remote-User"),
        flag("requestheader-group-headers", "X-Remote-Group"),
        flag("requestheader-extra-headers-prefix", "X-Remote-Extra-"),
        flag(
            "proxy-client-cert-file",
            s(&l.pki("front-proxy-client.crt")),
        ),
        flag("proxy-client-key-file", s(&l.pki("front-proxy-client.key"))),
        flag("enable-admission-plugins", "NodeRestriction"),
        flag("service-cluster-ip-range", SERVICE_CIDR),
        flag("allow-privileged", "true"),
        flag("profiling", "false"),
    ]
}

/// What the controller-manager and the scheduler share: their kubeconfig (also for delegated
/// authentication and authorization of their own endpoints), a loopback serving port with the
/// certificate `<cert>.crt`, no leader election and no profiling.
fn component_args(l: &Layout, component: &str, port: u16, cert: &str) -> Vec<String> {
    let kubeconfig = s(&l.component_kubeconfig(component));
    vec![
        flag("kubeconfig", kubeconfig.clone()),
        flag("authentication-kubeconfig", kubeconfig.clone()),
        flag("authorization-kubeconfig", kubeconfig),
        flag("bind-address", LOOPBACK),
        flag("secure-port", port.to_string()),
        flag("tls-cert-file", s(&l.pki(&format!("{cert}.crt")))),
        flag("tls-private-key-file", s(&l.pki(&format!("{cert}.key")))),
        flag("leader-elect", "false"),
        flag("profiling", "false"),
    ]
}

pub fn controller_manager_args(l: &Layout, p: &Ports) -> Vec<String> {
    let mut args = component_args(
        l,
        "kube-controller-manager",
        p.controller_manager,
        "controller-manager",
    );
    args.extend([
        // Every controller but node IPAM, which would want pod CIDRs for nodes.
        flag("controllers", "*,-nodeipam"),
        // Each controller runs as its own ServiceAccount, so RBAC applies to them as in a cluster.
        flag("use-service-account-credentials", "true"),
        flag("service-account-private-key-file", s(&l.pki("sa.key"))),
        flag("root-ca-file", s(&l.pki("ca.crt"))),
        flag("cluster-signing-cert-file", s(&l.pki("ca.crt"))),
        flag("cluster-signing-key-file", s(&l.pki("ca.key"))),
    ]);
    args
}

pub fn scheduler_args(l: &Layout, p: &Ports) -> Vec<String> {
    component_args(l, "kube-scheduler", p.scheduler, "scheduler")
}

/// The annotation that hands a Node to kwok.
pub const KWOK_NODE_ANNOTATION: (&str, &str) = ("kwok.x-k8s.io/node", "fake");

pub fn kwok_args(l: &Layout, stages: &Path) -> Vec<String> {
    vec![
        flag("kubeconfig", s(&l.component_kubeconfig("kwok"))),
        flag("config", s(stages)),
        flag(
            "manage-nodes-with-annotation-selector",
            format!("{}={}", KWOK_NODE_ANNOTATION.0, KWOK_NODE_ANNOTATION.1),
        ),
        // Node addresses are where the API server would reach a kubelet (logs, exec): loopback,
        // where nothing listens.
        flag("node-ip", LOOPBACK),
        flag("cidr", POD_CIDR),
        // kwok renews each node's Lease, as a kubelet does.
        flag("node-lease-duration-seconds", "40"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_args() -> Vec<Vec<String>> {
        let l = Layout::new("/d");
        let p = Ports {
            etcd_client: 1,
            etcd_peer: 2,
            apiserver: 3,
            controller_manager: 4,
            scheduler: 5,
        };
        vec![
            etcd_args(&l, &p),
            apiserver_args(&l, &p),
            controller_manager_args(&l, &p),
            scheduler_args(&l, &p),
            kwok_args(&l, Path::new("/s.yaml")),
        ]
    }

    #[test]
    fn every_listening_or_advertised_address_is_loopback() {
        for args in all_args() {
            for a in &args {
                let listens = [
                    "address",
                    "-urls",
                    "initial-cluster=",
                    "etcd-servers",
                    "issuer",
                ]
                .iter()
                .any(|k| a.contains(k));
                if listens {
                    assert!(
                        a.contains("127.0.0.1") && !a.contains("0.0.0.0"),
                        "{a} leaves loopback"
                    );
                }
            }
        }
    }

    #[test]
    fn authorization_is_node_and_rbac() {
        let l = Layout::new("/d");
        let p = Ports {
            etcd_client: 1,
            etcd_peer: 2,
            apiserver: 3,
            controller_manager: 4,
            scheduler: 5,
        };
        let args = apiserver_args(&l, &p);
        assert!(args.contains(&"--authorization-mode=Node,RBAC".to_string()));
        assert!(!args.iter().any(|a| a.contains("AlwaysAllow")));
        assert!(args.contains(&"--client-ca-file=/d/pki/ca.crt".to_string()));
    }

    #[test]
    fn the_controller_manager_mints_service_account_tokens() {
        let args = &all_args()[2];
        assert!(args.contains(&"--service-account-private-key-file=/d/pki/sa.key".to_string()));
        assert!(args.contains(&"--controllers=*,-nodeipam".to_string()));
    }
}
