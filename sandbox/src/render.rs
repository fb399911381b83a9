//! `meta.k8s.io/v1 Table` answers for `kubectl get`: the one place that calls `crate::table`.

use serde_json::{Value, json};

use crate::codec::partial_metadata;
use crate::registry::ResourceDef;

/// `includeObject`: what each row carries in `object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

impl IncludeObject {
    pub fn parse(raw: Option<&str>) -> Self {
        match raw {
            Some("None") => Self::None,
            Some("Object") => Self::Object,
            _ => Self::Metadata,
        }
    }
}

/// Renders `objects` (in `def`'s view) as a Table; `resource_version` and `continue_token` go
/// into the list metadata.
pub fn table(def: &ResourceDef, objects: &[Value], resource_version: &str, continue_token: Option<&str>, include: IncludeObject) -> Value {
    let (columns, cells) = columns_and_cells(def, objects);
    let rows: Vec<Value> = objects
        .iter()
        .zip(cells)
        .map(|(object, cells)| {
            let mut row = json!({"cells": cells});
            match include {
                IncludeObject::None => {}
                IncludeObject::Metadata => row["object"] = partial_metadata(object),
                IncludeObject::Object => row["object"] = object.clone(),
            }
            row
        })
        .collect();
    let mut metadata = json!({"resourceVersion": resource_version});
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// Name and age, the apiserver's default columns.
fn columns_and_cells(_def: &ResourceDef, objects: &[Value]) -> (Vec<Value>, Vec<Vec<Value>>) {
    let columns = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
        json!({"name": "Age", "type": "string", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}),
    ];
    let now = jiff::Timestamp::now();
    let cells = objects
        .iter()
        .map(|o| {
            let created = o.pointer("/metadata/creationTimestamp").and_then(Value::as_str).and_then(|t| t.parse::<jiff::Timestamp>().ok());
            let age = created.map(|c| human_duration(now.as_second() - c.as_second())).unwrap_or_else(|| "<unknown>".into());
            vec![json!(crate::meta::name_of(o)), json!(age)]
        })
        .collect();
    (columns, cells)
}

/// kubectl's `HumanDuration` of a number of seconds.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let seconds = seconds.max(0);
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let d = (hours / 24) % 365;
        return if d == 0 { format!("{}y", hours / 24 / 365) } else { format!("{}y{d}d", hours / 24 / 365) };
    }
    format!("{}y", hours / 24 / 365)
}
