//! Rows of the Service and Ingress printers.

use super::fields::{get, items, labels, or_none, s};
use serde_json::{Value, json};

pub(super) fn service_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
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

pub(super) fn ingress_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
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
