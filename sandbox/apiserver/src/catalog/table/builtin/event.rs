//! The Event printer's row (`kubectl get events`), for core and `events.k8s.io` events.

use super::fields::{get, int, s};
use crate::catalog::table::age::age;
use jiff::Timestamp;
use serde_json::{Value, json};

pub(super) fn event_cells(o: &Value, now: Timestamp) -> Vec<Value> {
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
