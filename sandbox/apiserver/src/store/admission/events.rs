//! Event validation as kube-apiserver does it, on the stored (core v1) form whatever version the
//! request came through: every Event passes the legacy rules (its namespace agrees with the
//! object it is about; an Event with an `eventTime` names its reporter, instance, action and
//! reason), and an Event created through `events.k8s.io/v1` also needs an `eventTime`, a type of
//! Normal or Warning and a well-formed series. Field paths are the internal type's.

use serde_json::Value;

use super::object_meta;
use crate::error::Cause;
use crate::meta;

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

/// Fields an update through `events.k8s.io/v1` may not change, by their stored (core) names:
/// what makes an event that event. Only its series (and metadata) moves.
const IMMUTABLE: &[&str] = &[
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
];

/// The causes of an invalid Event written through `events.k8s.io/v1` (`through_events_api`)
/// or core v1; `old` is the stored Event on updates.
pub fn validate(event: &Value, old: Option<&Value>, through_events_api: bool) -> Vec<Cause> {
    let mut causes = legacy(event, through_events_api);
    if !through_events_api {
        return causes;
    }
    match old {
        None => causes.extend(strict(event)),
        Some(old) => {
            if event.get("series") != old.get("series") {
                causes.extend(series(event));
            }
            for field in IMMUTABLE {
                let new_value = event.get(*field).unwrap_or(&Value::Null);
                if new_value != old.get(*field).unwrap_or(&Value::Null) {
                    let shown = match new_value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let path = if *field == "reportingComponent" {
                        "reportingController"
                    } else {
                        field
                    };
                    causes.push(invalid(path, &shown, "field is immutable"));
                }
            }
        }
    }
    causes
}

/// What a create through `events.k8s.io/v1` needs beyond the legacy rules.
fn strict(event: &Value) -> Vec<Cause> {
    let mut causes = series(event);
    if text(event, "/eventTime").is_empty() {
        causes.push(required("eventTime"));
    }
    let kind = text(event, "/type");
    if kind != "Normal" && kind != "Warning" {
        causes.push(invalid("type", "", &format!("has invalid value: {kind}")));
    }
    causes
}

fn text<'a>(event: &'a Value, pointer: &str) -> &'a str {
    meta::str_at(event, pointer)
}

fn required(field: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: "Required value".into(),
        field: field.into(),
    }
}

fn invalid(field: &str, value: &str, why: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value:?}: {why}"),
        field: field.into(),
    }
}

fn legacy(event: &Value, through_events_api: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let namespace = text(event, "/metadata/namespace");
    let about = text(event, "/involvedObject/namespace");
    let mismatch = || {
        invalid(
            "involvedObject.namespace",
            about,
            "does not match event.namespace",
        )
    };
    if text(event, "/eventTime").is_empty() {
        // An old-style Event: its namespace is the object's (or empty/default when the object
        // has none).
        let agrees = if about.is_empty() {
            namespace.is_empty() || namespace == "default"
        } else {
            namespace == about
        };
        if !agrees {
            causes.push(mismatch());
        }
        return causes;
    }
    if about.is_empty() && namespace != "default" && namespace != "kube-system" {
        causes.push(mismatch());
    }
    let controller_field = if through_events_api {
        "reportingController"
    } else {
        "reportingComponent"
    };
    let controller = text(event, "/reportingComponent");
    if controller.is_empty() {
        causes.push(required(controller_field));
    }
    causes.extend(object_meta::qualified_name(controller, controller_field));
    for (field, limit) in [
        ("reportingInstance", REPORTING_INSTANCE_LIMIT),
        ("action", ACTION_LIMIT),
        ("reason", REASON_LIMIT),
    ] {
        let value = text(event, &format!("/{field}"));
        if value.is_empty() {
            causes.push(required(field));
        }
        if value.len() > limit {
            causes.push(invalid(
                field,
                "",
                &format!("can have at most {limit} characters"),
            ));
        }
    }
    if text(event, "/message").len() > NOTE_LIMIT {
        causes.push(invalid(
            "message",
            "",
            &format!("can have at most {NOTE_LIMIT} characters"),
        ));
    }
    causes
}

fn series(event: &Value) -> Vec<Cause> {
    let Some(series) = event.get("series").filter(|s| !s.is_null()) else {
        return Vec::new();
    };
    let mut causes = Vec::new();
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        causes.push(invalid("series.count", "", "should be at least 2"));
    }
    if text(series, "/lastObservedTime").is_empty() {
        causes.push(required("series.lastObservedTime"));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(fields: Value) -> Value {
        let mut event = json!({
            "metadata": {"name": "e", "namespace": "team-a"},
            "involvedObject": {"kind": "ConfigMap", "name": "c", "namespace": "team-a"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingComponent": "ferroplane.io/ecsinstance",
            "reportingInstance": "ferroplane-0",
            "action": "Reconcile",
            "reason": "Created",
            "type": "Normal",
        });
        for (k, v) in fields.as_object().expect("an object") {
            event[k] = v.clone();
        }
        event
    }

    fn fields(causes: Vec<Cause>) -> Vec<String> {
        causes.into_iter().map(|c| c.field).collect()
    }

    #[test]
    fn what_the_recorder_sends_is_valid() {
        assert!(validate(&event(json!({})), None, true).is_empty());
    }

    #[test]
    fn the_object_must_be_in_the_events_namespace() {
        let elsewhere = event(json!({"involvedObject": {"kind": "Node", "name": "n"}}));
        assert_eq!(
            fields(validate(&elsewhere, None, true)),
            vec!["involvedObject.namespace"]
        );
        let old_style = event(json!({
            "eventTime": null,
            "involvedObject": {"kind": "ConfigMap", "name": "c", "namespace": "other"},
        }));
        assert_eq!(
            fields(validate(&old_style, None, false)),
            vec!["involvedObject.namespace"]
        );
        let new_style_elsewhere = event(json!({
            "involvedObject": {"kind": "ConfigMap", "name": "c", "namespace": "other"},
        }));
        assert!(validate(&new_style_elsewhere, None, true).is_empty());
    }

    #[test]
    fn an_update_moves_only_the_series() {
        let created = event(json!({"message": "created i-1"}));
        let repeated = event(json!({
            "message": "created i-1",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
        }));
        assert!(validate(&repeated, Some(&created), true).is_empty());
        let reworded = event(json!({"message": "created i-1 again"}));
        let causes = validate(&reworded, Some(&created), true);
        assert_eq!(
            causes
                .iter()
                .map(|c| c.message.as_str())
                .collect::<Vec<_>>(),
            vec!["Invalid value: \"created i-1 again\": field is immutable"]
        );
        assert_eq!(causes[0].field, "message");
        // Through core v1, an Event is as writable as any object.
        assert!(validate(&reworded, Some(&created), false).is_empty());
    }

    #[test]
    fn events_api_creates_need_time_type_and_reporter() {
        let bare = event(json!({
            "eventTime": null, "type": "Fine",
        }));
        assert_eq!(
            fields(validate(&bare, None, true)),
            vec!["eventTime", "type"]
        );
        let anonymous = event(json!({
            "reportingComponent": "", "reportingInstance": "", "action": "",
        }));
        assert_eq!(
            fields(validate(&anonymous, None, true)),
            vec![
                "reportingController",
                "reportingController",
                "reportingInstance",
                "action"
            ]
        );
        let once = event(json!({"series": {"count": 1}}));
        assert_eq!(
            fields(validate(&once, None, true)),
            vec!["series.count", "series.lastObservedTime"]
        );
    }
}
