//! A stand-in ingress controller for the real control plane, which runs none. In a cluster an
//! ingress controller (ingress-nginx, Traefik, a cloud load balancer controller) writes the
//! address it serves an Ingress on into `status.loadBalancer.ingress`; nothing else does, so
//! without one what waits for that address (an Application's Ready) waits forever. This one
//! watches the Ingresses of one namespace and writes, as a controller would, the documentation
//! address [`ADDRESS`] (RFC 5737, nothing answers there) on each that has none: the same
//! address the sandbox's stand-in writes, so a test reads the same status on both servers.

use futures::StreamExt;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;
use tokio::task::JoinHandle;

/// The address every Ingress gets.
pub const ADDRESS: &str = "192.0.2.1";

/// Field manager of the status writes.
const MANAGER: &str = "stand-in-ingress-controller";

/// Runs until dropped.
pub struct IngressStandIn {
    task: JoinHandle<()>,
}

fn has_address(ingress: &Ingress) -> bool {
    ingress
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .is_some_and(|i| !i.is_empty())
}

impl IngressStandIn {
    /// Serves the Ingresses of `namespace` with `client` (which may write `ingresses/status`).
    pub fn start(client: kube::Client, namespace: &str) -> Self {
        let api: Api<Ingress> = Api::namespaced(client, namespace);
        let task = tokio::spawn(async move {
            let mut ingresses = watcher(api.clone(), watcher::Config::default())
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(event) = ingresses.next().await {
                let Ok(ingress) = event else { continue };
                if has_address(&ingress) || ingress.metadata.deletion_timestamp.is_some() {
                    continue;
                }
                let name = ingress.metadata.name.clone().unwrap_or_default();
                let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": ADDRESS}]}}});
                // A failed write is retried at the Ingress's next event; a real controller
                // resyncs the same way.
                let params = PatchParams {
                    field_manager: Some(MANAGER.to_owned()),
                    ..PatchParams::default()
                };
                let _ = api
                    .patch_status(&name, &params, &Patch::Merge(&status))
                    .await;
            }
        });
        Self { task }
    }
}

impl Drop for IngressStandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}
