//! The structural-schema rules kube-apiserver enforces when a CRD is created, so that a CRD
//! the sandbox accepts is one a real cluster accepts too:
//! - every specified field, array item and map value has a `type`, unless it is
//!   `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`;
//! - `x-kubernetes-int-or-string` has no `type`;
//! - `allOf`/`anyOf`/`oneOf`/`not` hold value validations only: no `type`, `default`,
//!   `description`, `additionalProperties` or `nullable` inside them;
//! - `properties` and `additionalProperties` exclude each other; `additionalProperties: false`
//!   and `uniqueItems: true` are not allowed.
//!
//! Messages follow the apiserver's, e.g.
//! `openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`.

use crate::error::SchemaError;
use serde_json::{Map, Value};

/// Where a schema node sits, which decides the wording of a missing `type`.
#[derive(Clone, Copy)]
enum Place {
    Root,
    Field,
    Item,
    MapValue,
    /// Inside `allOf`/`anyOf`/`oneOf`/`not`.
    Quantor,
}

/// The first structural violation in `schema`, if any.
pub(crate) fn check(schema: &Value) -> Result<(), SchemaError> {
    node(schema, "openAPIV3Schema", Place::Root)
}

fn error(path: String, message: &str) -> SchemaError {
    SchemaError::InvalidSchema {
        path,
        message: message.to_owned(),
    }
}

fn node(schema: &Value, path: &str, place: Place) -> Result<(), SchemaError> {
    let Some(obj) = schema.as_object() else {
        return Ok(());
    };
    let int_or_string = flag(obj, "x-kubernetes-int-or-string");
    let preserve = flag(obj, "x-kubernetes-preserve-unknown-fields");
    let has_type = obj
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());

    if let Place::Quantor = place {
        for key in [
            "type",
            "default",
            "description",
            "additionalProperties",
            "nullable",
        ] {
            if obj.contains_key(key) && !(key == "type" && int_or_string_branch(obj)) {
                return Err(error(
                    format!("{path}.{key}"),
                    "Forbidden: must be empty to be structural",
                ));
            }
        }
    } else if int_or_string && has_type {
        let t = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        return Err(error(
            format!("{path}.type"),
            &format!("Invalid value: {t:?}: must be empty if x-kubernetes-int-or-string is true"),
        ));
    } else if !has_type && !int_or_string && !preserve {
        let detail = match place {
            Place::Root => "must not be empty at the root",
            Place::Field => "must not be empty for specified object fields",
            Place::Item => "must not be empty for specified array items",
            Place::MapValue => "must not be empty for specified map values",
            Place::Quantor => unreachable!("handled above"),
        };
        return Err(error(
            format!("{path}.type"),
            &format!("Required value: {detail}"),
        ));
    }

    if obj.contains_key("properties") && obj.contains_key("additionalProperties") {
        return Err(error(
            format!("{path}.additionalProperties"),
            "Forbidden: additionalProperties and properties are mutual exclusive",
        ));
    }
    if obj.get("additionalProperties") == Some(&Value::Bool(false)) {
        return Err(error(
            format!("{path}.additionalProperties"),
            "Forbidden: additionalProperties cannot be set to false",
        ));
    }
    if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
        return Err(error(
            format!("{path}.uniqueItems"),
            "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }

    let inner = |p: Place| {
        if let Place::Quantor = place {
            Place::Quantor
        } else {
            p
        }
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            node(
                child,
                &format!("{path}.properties[{name}]"),
                inner(Place::Field),
            )?;
        }
    }
    if let Some(values) = obj.get("additionalProperties").filter(|v| v.is_object()) {
        node(
            values,
            &format!("{path}.additionalProperties"),
            inner(Place::MapValue),
        )?;
    }
    if let Some(items) = obj.get("items") {
        node(items, &format!("{path}.items"), inner(Place::Item))?;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = obj.get(key).and_then(Value::as_array) {
            for (i, branch) in list.iter().enumerate() {
                node(branch, &format!("{path}.{key}[{i}]"), Place::Quantor)?;
            }
        }
    }
    if let Some(not) = obj.get("not") {
        node(not, &format!("{path}.not"), Place::Quantor)?;
    }
    Ok(())
}

fn flag(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key) == Some(&Value::Bool(true))
}

/// The `anyOf: [{type: integer}, {type: string}]` branches int-or-string fields may carry.
fn int_or_string_branch(obj: &Map<String, Value>) -> bool {
    obj.len() == 1
        && matches!(
            obj.get("type").and_then(Value::as_str),
            Some("integer" | "string")
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(s: Value) -> Value {
        json!({"type": "object", "properties": {"spec": s}})
    }

    #[test]
    fn structural_schemas_pass() {
        let ok = [
            spec(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            spec(
                json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}),
            ),
            spec(json!({"x-kubernetes-preserve-unknown-fields": true})),
            spec(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            spec(
                json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            ),
        ];
        for schema in ok {
            assert_eq!(check(&schema), Ok(()), "{schema}");
        }
    }

    #[test]
    fn violations_are_named() {
        let cases = [
            (
                spec(json!({"properties": {"a": {"type": "string"}}})),
                "openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
            ),
            (
                json!({"properties": {}}),
                "openAPIV3Schema.type: Required value: must not be empty at the root",
            ),
            (
                spec(json!({"type": "array", "items": {}})),
                "openAPIV3Schema.properties[spec].items.type: Required value: must not be empty for specified array items",
            ),
            (
                spec(json!({"type": "object", "additionalProperties": {"description": "x"}})),
                "openAPIV3Schema.properties[spec].additionalProperties.type: Required value: must not be empty for specified map values",
            ),
            (
                spec(json!({"type": "string", "x-kubernetes-int-or-string": true})),
                "openAPIV3Schema.properties[spec].type: Invalid value: \"string\": must be empty if x-kubernetes-int-or-string is true",
            ),
            (
                spec(json!({"type": "string", "anyOf": [{"type": "string", "description": "x"}]})),
                "openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural",
            ),
            (
                spec(
                    json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
                ),
                "openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            ),
            (
                spec(json!({"type": "object", "additionalProperties": false})),
                "openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties cannot be set to false",
            ),
            (
                spec(json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}})),
                "openAPIV3Schema.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            ),
        ];
        for (schema, want) in cases {
            let err = check(&schema).expect_err("not structural");
            assert_eq!(err.to_string(), want);
        }
    }
}
