//! The Job, CronJob, ReplicaSet and Node printers: kube-apiserver's cells for `kubectl get`.

use serde_json::{Value, json};

use super::fields::{containers, get, int, items, label_selector, or_none, s};

/// The pod template's containers of a CronJob's job template.
fn job_template_containers(o: &Value, field: &str) -> String {
    items(
        o,
        &[
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "spec",
            "containers",
        ],
    )
    .iter()
    .filter_map(|c| c.get(field).and_then(Value::as_str))
    .collect::<Vec<_>>()
    .join(",")
}

fn has_condition(o: &Value, kind: &str) -> bool {
    items(o, &["status", "conditions"])
        .iter()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// NAME, STATUS, COMPLETIONS, DURATION, AGE, CONTAINERS, IMAGES, SELECTOR.
pub fn job_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let succeeded = int(o, &["status", "succeeded"]).unwrap_or(0);
    let completions = match (
        int(o, &["spec", "completions"]),
        int(o, &["spec", "parallelism"]),
    ) {
        (Some(c), _) => format!("{succeeded}/{c}"),
        (None, Some(p)) if p > 1 => format!("{succeeded}/1 of {p}"),
        (None, _) => format!("{succeeded}/1"),
    };
    vec![
        name,
        json!(status),
        json!(completions),
        json!(""),
        json!(created),
        json!(containers(o, "name")),
        json!(containers(o, "image")),
        json!(label_selector(get(o, &["spec", "selector"]))),
    ]
}

/// NAME, SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE, AGE, CONTAINERS, IMAGES, SELECTOR.
pub fn cronjob_cells(o: &Value, name: Value, created: String, last: String) -> Vec<Value> {
    let suspend = match get(o, &["spec", "suspend"]).and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    vec![
        name,
        json!(s(o, &["spec", "schedule"])),
        json!(or_none(s(o, &["spec", "timeZone"]))),
        json!(suspend),
        json!(items(o, &["status", "active"]).len()),
        json!(last),
        json!(created),
        json!(job_template_containers(o, "name")),
        json!(job_template_containers(o, "image")),
        json!(label_selector(get(
            o,
            &["spec", "jobTemplate", "spec", "selector"]
        ))),
    ]
}

/// NAME, DESIRED, CURRENT, READY, AGE, CONTAINERS, IMAGES, SELECTOR.
pub fn replicaset_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    vec![
        name,
        json!(int(o, &["spec", "replicas"]).unwrap_or(1)),
        json!(int(o, &["status", "replicas"]).unwrap_or(0)),
        json!(int(o, &["status", "readyReplicas"]).unwrap_or(0)),
        json!(created),
        json!(containers(o, "name")),
        json!(containers(o, "image")),
        json!(label_selector(get(o, &["spec", "selector"]))),
    ]
}

/// NAME, STATUS, ROLES, AGE, VERSION, INTERNAL-IP, EXTERNAL-IP, OS-IMAGE, KERNEL-VERSION,
/// CONTAINER-RUNTIME.
pub fn node_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    let mut status = if has_condition(o, "Ready") {
        "Ready".to_owned()
    } else if items(o, &["status", "conditions"])
        .iter()
        .any(|c| c["type"] == "Ready")
    {
        "NotReady".to_owned()
    } else {
        "Unknown".to_owned()
    };
    if get(o, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = get(o, &["metadata", "labels"])
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .keys()
                .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    let address = |kind: &str| {
        items(o, &["status", "addresses"])
            .iter()
            .find(|a| a["type"] == kind)
            .and_then(|a| a["address"].as_str())
            .unwrap_or("<none>")
            .to_owned()
    };
    let info = |field: &str| s(o, &["status", "nodeInfo", field]);
    let os_image = match info("osImage").as_str() {
        "" => "<unknown>".to_owned(),
        image => image.to_owned(),
    };
    let kernel = match (info("kernelVersion"), info("architecture")) {
        (kernel, arch) if arch.is_empty() => or_unknown(kernel),
        (kernel, arch) => format!("{} ({arch})", or_unknown(kernel)),
    };
    vec![
        name,
        json!(status),
        json!(or_none(roles.join(","))),
        json!(created),
        json!(info("kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(os_image),
        json!(kernel),
        json!(or_unknown(info("containerRuntimeVersion"))),
    ]
}

fn or_unknown(value: String) -> String {
    if value.is_empty() {
        "<unknown>".to_owned()
    } else {
        value
    }
}
