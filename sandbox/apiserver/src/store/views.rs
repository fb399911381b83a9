//! How a stored object looks through one resource version, and back.
//!
//! Objects are stored once per resource; a request through another version only sees another
//! `apiVersion` (CRD versions share one schema here, as with conversion strategy `None`). Core
//! `v1` Events are the stored form of `events.k8s.io/v1` Events, converted field by field as the
//! apiserver does, so that kube-runtime's recorder and `kubectl describe` see the same events.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::catalog::registry::ResourceDef;

/// `(core v1 field, events.k8s.io/v1 field)`.
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

fn is_events_v1(def: &ResourceDef) -> bool {
    def.group == "events.k8s.io" && def.plural == "events"
}

fn rename(object: &Value, to_new: bool) -> Value {
    let Value::Object(map) = object else {
        return object.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let renamed = EVENT_FIELDS
            .iter()
            .find(|(core, new)| if to_new { core == key } else { new == key })
            .map(|(core, new)| if to_new { *new } else { *core })
            .unwrap_or(key);
        out.insert(renamed.to_owned(), value.clone());
    }
    Value::Object(out)
}

/// The stored object as `def` presents it.
pub fn to_view(def: &ResourceDef, stored: &Value) -> Value {
    let mut out = if is_events_v1(def) {
        rename(stored, true)
    } else {
        stored.clone()
    };
    if let Value::Object(map) = &mut out {
        map.insert("apiVersion".into(), Value::String(def.api_version()));
        map.insert("kind".into(), Value::String(def.kind.clone()));
    }
    if is_events_v1(def)
        && let Value::Object(map) = &mut out
        && map
            .get("reportingController")
            .is_none_or(|v| v.as_str().is_some_and(str::is_empty))
        && let Some(component) = map
            .get("deprecatedSource")
            .and_then(|s| s.get("component"))
            .cloned()
    {
        map.insert("reportingController".into(), component);
    }
    out
}

/// The stored object as `def` presents it, borrowed when that is the stored object itself
/// (the common case: the stored `apiVersion` and `kind` are already `def`'s), so that encoding
/// a response or a watch event needs no copy.
pub fn view_of<'a>(def: &ResourceDef, stored: &'a Value) -> Cow<'a, Value> {
    let presented_as_stored = !is_events_v1(def)
        && stored.get("kind").and_then(Value::as_str) == Some(def.kind.as_str())
        && stored
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| is_api_version(def, v));
    if presented_as_stored {
        Cow::Borrowed(stored)
    } else {
        Cow::Owned(to_view(def, stored))
    }
}

/// Whether `api_version` is `def.api_version()`, without building that string.
fn is_api_version(def: &ResourceDef, api_version: &str) -> bool {
    if def.group.is_empty() {
        api_version == def.version
    } else {
        api_version
            .strip_prefix(def.group.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            == Some(def.version.as_str())
    }
}

/// Sets `apiVersion` and `kind` of an object in the stored form.
pub fn set_stored_type(def: &ResourceDef, object: &mut Value) {
    let (api_version, kind) = if is_events_v1(def) {
        ("v1".to_owned(), "Event".to_owned())
    } else {
        (def.api_version(), def.kind.clone())
    };
    if let Value::Object(map) = object {
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(kind));
    }
}

/// A request body in `def`'s form as it is stored.
pub fn from_view(def: &ResourceDef, body: Value) -> Value {
    if !is_events_v1(def) {
        return body;
    }
    let mut out = rename(&body, false);
    if let Value::Object(map) = &mut out {
        map.insert("apiVersion".into(), Value::String("v1".into()));
        map.insert("kind".into(), Value::String("Event".into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::registry::Registry;
    use serde_json::json;

    #[test]
    fn events_round_trip_between_the_two_apis() {
        let registry = Registry::default();
        let new_def = registry
            .find("events.k8s.io", "v1", "events")
            .expect("served");
        let core_def = registry.find("", "v1", "events").expect("served");
        let body = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
            "regarding": {"kind": "Deployment", "name": "web"}, "note": "scaled", "reason": "Scaled",
            "reportingController": "ctl", "type": "Normal"});
        let stored = from_view(&new_def, body.clone());
        assert_eq!(stored["involvedObject"]["name"], "web");
        assert_eq!(stored["message"], "scaled");
        assert_eq!(stored["apiVersion"], "v1");
        let core = to_view(&core_def, &stored);
        assert_eq!(core["reportingComponent"], "ctl");
        assert_eq!(to_view(&new_def, &stored), body);
    }

    #[test]
    fn view_of_borrows_only_when_the_view_is_the_stored_object() {
        let registry = Registry::default();
        let cm = registry.find("", "v1", "configmaps").expect("served");
        let stored = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        assert!(matches!(view_of(&cm, &stored), Cow::Borrowed(_)));
        let other_version = json!({"apiVersion": "v2", "kind": "ConfigMap"});
        let view = view_of(&cm, &other_version);
        assert!(matches!(view, Cow::Owned(_)));
        assert_eq!(*view, to_view(&cm, &other_version));
        let events = registry
            .find("events.k8s.io", "v1", "events")
            .expect("served");
        let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "message": "m"});
        assert_eq!(*view_of(&events, &event), to_view(&events, &event));
        let deployments = registry.find("apps", "v1", "deployments").expect("served");
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert!(matches!(
            view_of(&deployments, &deployment),
            Cow::Borrowed(_)
        ));
        let wrong_group = json!({"apiVersion": "appsx/v1", "kind": "Deployment"});
        assert!(matches!(view_of(&deployments, &wrong_group), Cow::Owned(_)));
    }
}
