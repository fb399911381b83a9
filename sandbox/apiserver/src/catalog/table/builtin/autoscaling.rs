//! Rows of the HorizontalPodAutoscaler printer: the target as `Kind/name`, the metrics as
//! `cpu: <current>/<target>` (at most two, then `+ N more...`), the replica bounds and the
//! current replicas.

use super::fields::{get, items, s};
use serde_json::{Value, json};

/// Most metrics the TARGETS column lists.
const SHOWN: usize = 2;

fn utilization(status: Option<&Value>, source: &str) -> String {
    status
        .and_then(|s| s.pointer(&format!("/{source}/current/averageUtilization")))
        .and_then(Value::as_i64)
        .map(|u| format!("{u}%"))
        .unwrap_or_else(|| "<unknown>".to_owned())
}

fn average_value(status: Option<&Value>, path: &str) -> String {
    status
        .and_then(|s| s.pointer(path))
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| v.to_string())
        })
        .unwrap_or_else(|| "<unknown>".to_owned())
}

fn quantity(v: Option<&Value>) -> String {
    v.map(|v| {
        v.as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| v.to_string())
    })
    .unwrap_or_default()
}

/// One metric of the TARGETS column, as kube-apiserver's printer words it.
fn metric(spec: &Value, status: Option<&Value>) -> String {
    let kind = spec.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "Resource" | "ContainerResource" => {
            let source = if kind == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let name = spec
                .pointer(&format!("/{source}/name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let target = spec.pointer(&format!("/{source}/target"));
            if let Some(avg) = target.and_then(|t| t.get("averageValue")) {
                let current = average_value(status, &format!("/{source}/current/averageValue"));
                format!("{name}: {current}/{}", quantity(Some(avg)))
            } else {
                let goal = target
                    .and_then(|t| t.get("averageUtilization"))
                    .and_then(Value::as_i64)
                    .map(|u| format!("{u}%"))
                    .unwrap_or_else(|| "<auto>".to_owned());
                format!("{name}: {}/{goal}", utilization(status, source))
            }
        }
        "Pods" => format!(
            "{}/{}",
            average_value(status, "/pods/current/averageValue"),
            quantity(spec.pointer("/pods/target/averageValue"))
        ),
        "Object" | "External" => {
            let source = if kind == "Object" {
                "object"
            } else {
                "external"
            };
            match spec.pointer(&format!("/{source}/target/averageValue")) {
                Some(avg) => format!(
                    "{}/{} (avg)",
                    average_value(status, &format!("/{source}/current/averageValue")),
                    quantity(Some(avg))
                ),
                None => format!(
                    "{}/{}",
                    average_value(status, &format!("/{source}/current/value")),
                    quantity(spec.pointer(&format!("/{source}/target/value")))
                ),
            }
        }
        _ => "<unknown type>".to_owned(),
    }
}

fn targets(o: &Value) -> String {
    let specs = items(o, &["spec", "metrics"]);
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let statuses = items(o, &["status", "currentMetrics"]);
    let listed: Vec<String> = specs
        .iter()
        .enumerate()
        .take(SHOWN)
        .map(|(i, spec)| metric(spec, statuses.get(i)))
        .collect();
    let text = listed.join(", ");
    if specs.len() > SHOWN {
        format!("{text} + {} more...", specs.len() - SHOWN)
    } else {
        text
    }
}

pub(super) fn autoscaler_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    let reference = format!(
        "{}/{}",
        s(o, &["spec", "scaleTargetRef", "kind"]),
        s(o, &["spec", "scaleTargetRef", "name"])
    );
    let min = get(o, &["spec", "minReplicas"])
        .and_then(Value::as_i64)
        .map(|m| m.to_string())
        .unwrap_or_else(|| "<unset>".to_owned());
    let max = get(o, &["spec", "maxReplicas"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let current = get(o, &["status", "currentReplicas"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    vec![
        name,
        json!(reference),
        json!(targets(o)),
        json!(min),
        json!(max),
        json!(current),
        json!(created),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_autoscaler_without_metrics_shows_unknown_utilization() {
        let hpa = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]},
            "status": {"currentReplicas": 2}});
        let cells = autoscaler_cells(&hpa, json!("web"), "1m".into());
        assert_eq!(
            cells,
            [
                json!("web"),
                json!("Deployment/web"),
                json!("cpu: <unknown>/60%"),
                json!("2"),
                json!(5),
                json!(2),
                json!("1m")
            ]
        );
        let none = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}});
        let cells = autoscaler_cells(&none, json!("web"), "1m".into());
        assert_eq!(
            (cells[2].clone(), cells[3].clone()),
            (json!("<none>"), json!("<unset>"))
        );
    }
}
