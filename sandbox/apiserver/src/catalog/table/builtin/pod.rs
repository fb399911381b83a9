//! The Pod printer's row: READY, the STATUS reason kubectl users know (`Init:0/1`,
//! `ImagePullBackOff`, `Terminating`, ...), RESTARTS with the time of the last one.

use super::fields::{get, items, or_none, s};
use crate::catalog::table::age::human_duration;
use jiff::Timestamp;
use serde_json::{Value, json};

pub(super) fn pod_cells(o: &Value, name: Value, created: String, now: Timestamp) -> Vec<Value> {
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
        Some(t) => format!("{restarts} ({} ago)", human_duration(now.duration_since(t))),
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
