//! Printers of built-in kinds, with the columns kube-apiserver serves for them (all columns,
//! including the `priority: 1` ones kubectl shows only with `-o wide`), computed from the
//! object's JSON the way the apiserver's Go printers compute them from typed objects.

use super::age::age;
use super::{CREATION_TIMESTAMP_DESCRIPTION, ColumnDefinition, NAME_DESCRIPTION};
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
    Ingress,
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
            ("networking.k8s.io", "Ingress") => Self::Ingress,
            ("policy", "PodDisruptionBudget") => Self::PodDisruptionBudget,
            ("coordination.k8s.io", "Lease") => Self::Lease,
            ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
                Self::RoleBinding
            }
            _ => Self::Generic,
        }
    }

    pub(crate) fn columns(self) -> Vec<ColumnDefinition> {
        let name = ColumnDefinition::name_column();
        let age = col("Age", "string", CREATION_TIMESTAMP_DESCRIPTION);
        match self {
            Self::Namespace => vec![
                name,
                col("Status", "string", "The status of the namespace"),
                age,
            ],
            Self::Secret => vec![
                name,
                col(
                    "Type",
                    "string",
                    "Used to facilitate programmatic handling of secret data.",
                ),
                col("Data", "string", "Data contains the secret data."),
                age,
            ],
            Self::ConfigMap => vec![
                name,
                col("Data", "string", "Data contains the configuration data."),
                age,
            ],
            Self::Event => vec![
                col(
                    "Last Seen",
                    "string",
                    "The time at which the most recent occurrence of this event was recorded.",
                ),
                col(
                    "Type",
                    "string",
                    "Type of this event (Normal, Warning), new types could be added in the future",
                ),
                col(
                    "Reason",
                    "string",
                    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
                ),
                col("Object", "string", "The object that this event is about."),
                wide(
                    "Subobject",
                    "string",
                    "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.",
                ),
                wide("Source", "string", "The component reporting this event."),
                col(
                    "Message",
                    "string",
                    "A human-readable description of the status of this operation.",
                ),
                wide(
                    "First Seen",
                    "string",
                    "The time at which the event was first recorded.",
                ),
                wide(
                    "Count",
                    "string",
                    "The number of times this event has occurred.",
                ),
                ColumnDefinition {
                    priority: 1,
                    ..ColumnDefinition::name_column()
                },
            ],
            Self::Service => vec![
                name,
                col(
                    "Type",
                    "string",
                    "type determines how the Service is exposed.",
                ),
                col(
                    "Cluster-IP",
                    "string",
                    "clusterIP is the IP address of the service.",
                ),
                col(
                    "External-IP",
                    "string",
                    "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
                ),
                col(
                    "Port(s)",
                    "string",
                    "The list of ports that are exposed by this service.",
                ),
                age,
                wide(
                    "Selector",
                    "string",
                    "Route service traffic to pods with label keys and values matching this selector.",
                ),
            ],
            Self::Pod => vec![
                name,
                col(
                    "Ready",
                    "string",
                    "The aggregate readiness state of this pod for accepting traffic.",
                ),
                col(
                    "Status",
                    "string",
                    "The aggregate status of the containers in this pod.",
                ),
                col(
                    "Restarts",
                    "string",
                    "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
                ),
                age,
                wide("IP", "string", "podIP address allocated to the pod."),
                wide(
                    "Node",
                    "string",
                    "NodeName indicates in which node this pod is scheduled.",
                ),
                wide(
                    "Nominated Node",
                    "string",
                    "nominatedNodeName is set only when this pod preempts other pods on the node.",
                ),
                wide(
                    "Readiness Gates",
                    "string",
                    "If specified, all readiness gates will be evaluated for pod readiness.",
                ),
            ],
            Self::ServiceAccount => vec![
                name,
                col(
                    "Secrets",
                    "string",
                    "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
                ),
                age,
            ],
            Self::Deployment => vec![
                name,
                col("Ready", "string", "Number of the pod with ready state"),
                col(
                    "Up-to-date",
                    "string",
                    "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                ),
                col(
                    "Available",
                    "string",
                    "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                ),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
                wide(
                    "Selector",
                    "string",
                    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
                ),
            ],
            Self::StatefulSet => vec![
                name,
                col("Ready", "string", "Number of the pod with ready state"),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
            ],
            Self::Ingress => vec![
                name,
                col(
                    "Class",
                    "string",
                    "The name of the IngressClass resource that should be used for this Ingress.",
                ),
                col(
                    "Hosts",
                    "string",
                    "Hosts that incoming requests are matched against before the ingress rule",
                ),
                col(
                    "Address",
                    "string",
                    "Address is a list containing ingress points for the load-balancer",
                ),
                col("Ports", "string", "Ports of TLS configurations that open"),
                age,
            ],
            Self::PodDisruptionBudget => vec![
                name,
                col(
                    "Min Available",
                    "string",
                    "The minimum number of pods that must be available.",
                ),
                col(
                    "Max Unavailable",
                    "string",
                    "The maximum number of pods that may be unavailable.",
                ),
                col(
                    "Allowed Disruptions",
                    "integer",
                    "Calculated number of pods that may be disrupted at this time.",
                ),
                age,
            ],
            Self::Lease => vec![
                name,
                col(
                    "Holder",
                    "string",
                    "holderIdentity contains the identity of the holder of a current lease.",
                ),
                age,
            ],
            Self::RoleBinding => vec![
                name,
                col(
                    "Role",
                    "string",
                    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
                ),
                age,
                wide("Users", "string", "Users in the roleBinding"),
                wide("Groups", "string", "Groups in the roleBinding"),
                wide(
                    "ServiceAccounts",
                    "string",
                    "ServiceAccounts in the roleBinding",
                ),
            ],
            Self::Generic => vec![
                name,
                ColumnDefinition {
                    name: "Created At".to_owned(),
                    type_: "date".to_owned(),
                    format: String::new(),
                    description: CREATION_TIMESTAMP_DESCRIPTION.to_owned(),
                    priority: 0,
                },
            ],
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
            Self::Event => event_cells(o, now),
            Self::Service => service_cells(o, name, created),
            Self::Pod => pod_cells(o, name, created, now),
            Self::ServiceAccount => vec![name, json!(len(o, &["secrets"])), json!(created)],
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
            Self::Ingress => ingress_cells(o, name, created),
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

fn col(name: &str, type_: &str, description: &str) -> ColumnDefinition {
    ColumnDefinition {
        name: name.to_owned(),
        type_: type_.to_owned(),
        format: String::new(),
        description: description.to_owned(),
        priority: 0,
    }
}

fn wide(name: &str, type_: &str, description: &str) -> ColumnDefinition {
    ColumnDefinition {
        priority: 1,
        ..col(name, type_, description)
    }
}

impl ColumnDefinition {
    pub(crate) fn name_column() -> Self {
        Self {
            name: "Name".to_owned(),
            type_: "string".to_owned(),
            format: "name".to_owned(),
            description: NAME_DESCRIPTION.to_owned(),
            priority: 0,
        }
    }
}

fn get<'a>(o: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(o, |v, k| v.get(*k))
}

fn s(o: &Value, path: &[&str]) -> String {
    get(o, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn int(o: &Value, path: &[&str]) -> Option<i64> {
    get(o, path).and_then(Value::as_i64)
}

fn items<'a>(o: &'a Value, path: &[&str]) -> &'a [Value] {
    get(o, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The number of entries of a map or list field (0 when absent).
fn len(o: &Value, path: &[&str]) -> usize {
    match get(o, path) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    }
}

fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".to_owned() } else { s }
}

fn containers(o: &Value, field: &str) -> String {
    items(o, &["spec", "template", "spec", "containers"])
        .iter()
        .filter_map(|c| c.get(field).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.FormatLabelSelector`: requirements sorted by key, `<none>` when empty.
fn label_selector(selector: Option<&Value>) -> String {
    let Some(sel) = selector else {
        return "<none>".to_owned();
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for expr in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
        let mut values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort_unstable();
        let text = match expr.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_owned(),
            Some("DoesNotExist") => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key.to_owned(), text));
    }
    reqs.sort();
    or_none(
        reqs.into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `labels.FormatLabels` of a plain map: `k=v,...` sorted, `<none>` when empty.
fn labels(map: Option<&Value>) -> String {
    let mut pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    or_none(pairs.join(","))
}

fn event_cells(o: &Value, now: Timestamp) -> Vec<Value> {
    let ts = |paths: &[&[&str]]| -> Option<String> {
        paths
            .iter()
            .find_map(|p| get(o, p).and_then(Value::as_str).filter(|s| !s.is_empty()))
            .map(|t| age(Some(t), now))
    };
    let first = ts(&[&["firstTimestamp"], &["deprecatedFirstTimestamp"]])
        .or_else(|| ts(&[&["eventTime"]]))
        .unwrap_or_else(|| "<unknown>".to_owned());
    let mut last =
        ts(&[&["lastTimestamp"], &["deprecatedLastTimestamp"]]).unwrap_or_else(|| first.clone());
    let mut count = int(o, &["count"])
        .or_else(|| int(o, &["deprecatedCount"]))
        .unwrap_or(0);
    if let Some(series) = o.get("series").filter(|s| s.is_object()) {
        last = age(series.get("lastObservedTime").and_then(Value::as_str), now);
        count = series.get("count").and_then(Value::as_i64).unwrap_or(count);
    } else if count == 0 {
        count = 1;
    }
    let involved = o
        .get("involvedObject")
        .or_else(|| o.get("regarding"))
        .cloned()
        .unwrap_or(Value::Null);
    let kind = involved
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let target = match involved.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => format!("{kind}/{n}"),
        _ => kind,
    };
    let first_non_empty = |a: &[&[&str]]| -> String {
        a.iter()
            .map(|p| s(o, p))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    };
    let component = first_non_empty(&[
        &["source", "component"],
        &["deprecatedSource", "component"],
        &["reportingController"],
    ]);
    let instance = first_non_empty(&[
        &["source", "host"],
        &["deprecatedSource", "host"],
        &["reportingInstance"],
    ]);
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    let message = o
        .get("message")
        .or_else(|| o.get("note"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    vec![
        json!(last),
        json!(s(o, &["type"])),
        json!(s(o, &["reason"])),
        json!(target),
        json!(
            involved
                .get("fieldPath")
                .and_then(Value::as_str)
                .unwrap_or_default()
        ),
        json!(source),
        json!(message),
        json!(first),
        json!(count),
        json!(s(o, &["metadata", "name"])),
    ]
}

fn service_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    let svc_type = get(o, &["spec", "type"])
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_owned();
    let cluster_ip = items(o, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| s(o, &["spec", "clusterIP"]));
    let external_ips: Vec<String> = items(o, &["spec", "externalIPs"])
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let external = match svc_type.as_str() {
        "ClusterIP" | "NodePort" => or_none(external_ips.join(",")),
        "LoadBalancer" => {
            let mut all = load_balancer_ips(get(o, &["status", "loadBalancer"]));
            all.extend(external_ips);
            if all.is_empty() {
                "<pending>".to_owned()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => s(o, &["spec", "externalName"]),
        _ => "<unknown>".to_owned(),
    };
    let ports: Vec<String> = items(o, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(np) if np > 0 => format!("{port}:{np}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    vec![
        name,
        json!(svc_type),
        json!(or_none(cluster_ip)),
        json!(external),
        json!(or_none(ports.join(","))),
        json!(created),
        json!(labels(get(o, &["spec", "selector"]))),
    ]
}

fn load_balancer_ips(status: Option<&Value>) -> Vec<String> {
    status
        .and_then(|s| s.get("ingress"))
        .and_then(Value::as_array)
        .map(|ing| {
            ing.iter()
                .filter_map(|i| {
                    i.get("ip")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .or_else(|| i.get("hostname").and_then(Value::as_str))
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn ingress_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    let rules = items(o, &["spec", "rules"]);
    const MAX: usize = 3;
    let hosts: Vec<&str> = rules
        .iter()
        .filter_map(|r| {
            r.get("host")
                .and_then(Value::as_str)
                .filter(|h| !h.is_empty())
        })
        .take(MAX)
        .collect();
    let mut host_text = if hosts.is_empty() {
        "*".to_owned()
    } else {
        hosts.join(",")
    };
    if rules.len() > MAX {
        host_text = format!("{host_text} + {} more...", rules.len() - MAX);
    }
    let ports = if items(o, &["spec", "tls"]).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        name,
        json!(or_none(s(o, &["spec", "ingressClassName"]))),
        json!(host_text),
        json!(load_balancer_ips(get(o, &["status", "loadBalancer"])).join(",")),
        json!(ports),
        json!(created),
    ]
}

fn pod_cells(o: &Value, name: Value, created: String, now: Timestamp) -> Vec<Value> {
    let spec_containers = items(o, &["spec", "containers"]).len();
    let init_specs = items(o, &["spec", "initContainers"]).len();
    let mut reason = s(o, &["status", "phase"]);
    let status_reason = s(o, &["status", "reason"]);
    if !status_reason.is_empty() {
        reason = status_reason.clone();
    }
    let mut restarts: i64 = 0;
    let mut last_restart: Option<Timestamp> = None;
    let mut note_restart = |c: &Value, restarts: &mut i64| {
        *restarts += c.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
        if let Some(t) = c
            .pointer("/lastState/terminated/finishedAt")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
            && last_restart.is_none_or(|l| t > l)
        {
            last_restart = Some(t);
        }
    };

    let mut initializing = false;
    for (i, c) in items(o, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        note_restart(c, &mut restarts);
        let terminated = c.pointer("/state/terminated");
        if terminated
            .and_then(|t| t.get("exitCode"))
            .and_then(Value::as_i64)
            == Some(0)
        {
            continue;
        }
        if let Some(t) = terminated {
            let r = t.get("reason").and_then(Value::as_str).unwrap_or_default();
            reason = if !r.is_empty() {
                format!("Init:{r}")
            } else if let Some(sig) = t.get("signal").and_then(Value::as_i64).filter(|s| *s != 0) {
                format!("Init:Signal:{sig}")
            } else {
                format!(
                    "Init:ExitCode:{}",
                    t.get("exitCode").and_then(Value::as_i64).unwrap_or(0)
                )
            };
        } else if let Some(w) = c
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            reason = format!("Init:{w}");
        } else {
            reason = format!("Init:{i}/{init_specs}");
        }
        initializing = true;
        break;
    }

    let mut ready = 0;
    if !initializing {
        restarts = 0;
        let mut has_running = false;
        for c in items(o, &["status", "containerStatuses"]).iter().rev() {
            note_restart(c, &mut restarts);
            let waiting = c
                .pointer("/state/waiting/reason")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let terminated = c.pointer("/state/terminated");
            let term_reason = terminated
                .and_then(|t| t.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if !term_reason.is_empty() {
                reason = term_reason.to_owned();
            } else if let Some(t) = terminated {
                reason = match t.get("signal").and_then(Value::as_i64).filter(|s| *s != 0) {
                    Some(sig) => format!("Signal:{sig}"),
                    None => format!(
                        "ExitCode:{}",
                        t.get("exitCode").and_then(Value::as_i64).unwrap_or(0)
                    ),
                };
            } else if c.get("ready").and_then(Value::as_bool) == Some(true)
                && c.pointer("/state/running").is_some()
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = items(o, &["status", "conditions"]).iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            });
            reason = if pod_ready { "Running" } else { "NotReady" }.to_owned();
        }
    }
    if get(o, &["metadata", "deletionTimestamp"]).is_some_and(|v| !v.is_null()) {
        reason = if status_reason == "NodeLost" {
            "Unknown"
        } else {
            "Terminating"
        }
        .to_owned();
    }
    let restarts_text = match last_restart {
        Some(t) => format!(
            "{restarts} ({} ago)",
            super::age::human_duration(now.duration_since(t))
        ),
        None => restarts.to_string(),
    };
    let gates = items(o, &["spec", "readinessGates"]);
    let gates_text = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conditions = items(o, &["status", "conditions"]);
        let passed = gates
            .iter()
            .filter(|g| {
                let t = g.get("conditionType");
                conditions.iter().any(|c| {
                    c.get("type") == t && c.get("status").and_then(Value::as_str) == Some("True")
                })
            })
            .count();
        format!("{passed}/{}", gates.len())
    };
    vec![
        name,
        json!(format!("{ready}/{spec_containers}")),
        json!(reason),
        json!(restarts_text),
        json!(created),
        json!(or_none(s(o, &["status", "podIP"]))),
        json!(or_none(s(o, &["spec", "nodeName"]))),
        json!(or_none(s(o, &["status", "nominatedNodeName"]))),
        json!(gates_text),
    ]
}
