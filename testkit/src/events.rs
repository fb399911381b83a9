//! The Kubernetes Events a test's object got (events.k8s.io/v1, as the framework records them).

use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams};

/// (reason, note) of the events in `namespace` about the object named `name`.
pub async fn about(client: &kube::Client, namespace: &str, name: &str) -> Vec<(String, String)> {
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    api.list(&ListParams::default())
        .await
        .expect("events listed")
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
        .collect()
}

/// The reasons of the events in `namespace` about the object named `name`.
pub async fn reasons(client: &kube::Client, namespace: &str, name: &str) -> Vec<String> {
    about(client, namespace, name)
        .await
        .into_iter()
        .map(|(reason, _)| reason)
        .collect()
}
