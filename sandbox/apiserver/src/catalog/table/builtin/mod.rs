//! Printers of built-in kinds, with the columns kube-apiserver serves for them (all columns,
//! including the `priority: 1` ones kubectl shows only with `-o wide`), computed from the
//! object's JSON the way the apiserver's Go printers compute them from typed objects.

mod autoscaling;
mod batch;
mod columns;
mod event;
mod fields;
mod network;
mod pod;
mod storage;

use super::age::age;
use fields::{containers, get, int, items, label_selector, len, s};
use jiff::Timestamp;
use serde_json::{Value, json};

/// A built-in kind with a dedicated printer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltInKind {
    Namespace,
    Secret,
    ConfigMap,
    Event,
    Service,
    Pod,
    ServiceAccount,
    Deployment,
    StatefulSet,
    ReplicaSet,
    Job,
    CronJob,
    Node,
    PersistentVolumeClaim,
    Ingress,
    HorizontalPodAutoscaler,
    PodDisruptionBudget,
    Lease,
    RoleBinding,
    /// The apiserver's default table for kinds without a printer (CRDs, ClusterRoles, ...):
    /// NAME and CREATED AT.
    Generic,
}

impl BuiltInKind {
    /// The printer kube-apiserver uses for `group`/`kind` (`""` is the core group).
    pub fn for_kind(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Namespace") => Self::Namespace,
            ("", "Secret") => Self::Secret,
            ("", "ConfigMap") => Self::ConfigMap,
            ("" | "events.k8s.io", "Event") => Self::Event,
            ("", "Service") => Self::Service,
            ("", "Pod") => Self::Pod,
            ("", "ServiceAccount") => Self::ServiceAccount,
            ("apps", "Deployment") => Self::Deployment,
            ("apps", "StatefulSet") => Self::StatefulSet,
            ("", "PersistentVolumeClaim") => Self::PersistentVolumeClaim,
            ("apps", "ReplicaSet") => Self::ReplicaSet,
            ("batch", "Job") => Self::Job,
            ("batch", "CronJob") => Self::CronJob,
            ("", "Node") => Self::Node,
            ("networking.k8s.io", "Ingress") => Self::Ingress,
            ("autoscaling", "HorizontalPodAutoscaler") => Self::HorizontalPodAutoscaler,
            ("policy", "PodDisruptionBudget") => Self::PodDisruptionBudget,
            ("coordination.k8s.io", "Lease") => Self::Lease,
            ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
                Self::RoleBinding
            }
            _ => Self::Generic,
        }
    }

    pub(crate) fn cells(self, o: &Value, now: Timestamp) -> Vec<Value> {
        let name = json!(s(o, &["metadata", "name"]));
        let created = age(
            get(o, &["metadata", "creationTimestamp"]).and_then(Value::as_str),
            now,
        );
        match self {
            Self::Namespace => vec![name, json!(s(o, &["status", "phase"])), json!(created)],
            Self::Secret => vec![
                name,
                json!(s(o, &["type"])),
                json!(len(o, &["data"])),
                json!(created),
            ],
            Self::ConfigMap => vec![
                name,
                json!(len(o, &["data"]) + len(o, &["binaryData"])),
                json!(created),
            ],
            Self::Event => event::event_cells(o, now),
            Self::Service => network::service_cells(o, name, created),
            Self::Pod => pod::pod_cells(o, name, created, now),
            Self::ServiceAccount => vec![name, json!(created)],
            Self::Deployment => {
                let desired = int(o, &["spec", "replicas"]).unwrap_or(1);
                let ready = int(o, &["status", "readyReplicas"]).unwrap_or(0);
                vec![
                    name,
                    json!(format!("{ready}/{desired}")),
                    json!(int(o, &["status", "updatedReplicas"]).unwrap_or(0)),
                    json!(int(o, &["status", "availableReplicas"]).unwrap_or(0)),
                    json!(created),
                    json!(containers(o, "name")),
                    json!(containers(o, "image")),
                    json!(label_selector(get(o, &["spec", "selector"]))),
                ]
            }
            Self::StatefulSet => {
                let desired = int(o, &["spec", "replicas"]).unwrap_or(1);
                let ready = int(o, &["status", "readyReplicas"]).unwrap_or(0);
                vec![
                    name,
                    json!(format!("{ready}/{desired}")),
                    json!(created),
                    json!(containers(o, "name")),
                    json!(containers(o, "image")),
                ]
            }
            Self::PersistentVolumeClaim => storage::claim_cells(o, name, created),
            Self::ReplicaSet => batch::replicaset_cells(o, name, created),
            Self::Job => batch::job_cells(o, name, created),
            Self::CronJob => {
                let last = match get(o, &["status", "lastScheduleTime"]).and_then(Value::as_str) {
                    Some(time) => age(Some(time), now),
                    None => "<none>".to_owned(),
                };
                batch::cronjob_cells(o, name, created, last)
            }
            Self::Node => batch::node_cells(o, name, created),
            Self::Ingress => network::ingress_cells(o, name, created),
            Self::HorizontalPodAutoscaler => autoscaling::autoscaler_cells(o, name, created),
            Self::PodDisruptionBudget => {
                let bound = |field: &str| match get(o, &["spec", field]) {
                    Some(Value::String(v)) => v.clone(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => "N/A".to_owned(),
                };
                vec![
                    name,
                    json!(bound("minAvailable")),
                    json!(bound("maxUnavailable")),
                    json!(int(o, &["status", "disruptionsAllowed"]).unwrap_or(0)),
                    json!(created),
                ]
            }
            Self::Lease => vec![
                name,
                json!(s(o, &["spec", "holderIdentity"])),
                json!(created),
            ],
            Self::RoleBinding => {
                let role = format!(
                    "{}/{}",
                    s(o, &["roleRef", "kind"]),
                    s(o, &["roleRef", "name"])
                );
                let subjects = |kind: &str| -> String {
                    items(o, &["subjects"])
                        .iter()
                        .filter(|sub| sub.get("kind").and_then(Value::as_str) == Some(kind))
                        .map(|sub| {
                            let n = sub.get("name").and_then(Value::as_str).unwrap_or("");
                            match sub.get("namespace").and_then(Value::as_str) {
                                Some(ns) if kind == "ServiceAccount" => format!("{ns}/{n}"),
                                _ => n.to_owned(),
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                vec![
                    name,
                    json!(role),
                    json!(created),
                    json!(subjects("User")),
                    json!(subjects("Group")),
                    json!(subjects("ServiceAccount")),
                ]
            }
            Self::Generic => {
                let at = get(o, &["metadata", "creationTimestamp"])
                    .and_then(Value::as_str)
                    .and_then(|t| t.parse::<Timestamp>().ok())
                    .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_owned());
                vec![name, json!(at)]
            }
        }
    }
}
