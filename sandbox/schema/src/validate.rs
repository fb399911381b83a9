//! OpenAPI value validation as kube-apiserver runs it for custom resources (kube-openapi's
//! validator, then its results mapped to field errors): types, required, enum, bounds,
//! lengths, patterns, formats, item and property counts, and `allOf`/`anyOf`/`oneOf`/`not`.
//!
//! Paths follow kube-openapi: `spec.list[0].name`, and `spec.labels.key` under
//! `additionalProperties`.

use crate::error::{FieldError, FieldErrorKind};
use crate::field_path::{child, index};
use crate::format;
use crate::gofmt;
use crate::json_equal::json_equal;
use crate::listtype::correlate_item;
use crate::node::{Additional, JsonType, Node};
use serde_json::{Number, Value, json};

/// Validates `value` against `node`; `root` skips `metadata`, which the server validates itself.
///
/// With `old` (an update), validation ratchets as in Kubernetes 1.30+: a failing value that is
/// unchanged from the old object is tolerated, except for `required` and anything under
/// `allOf`/`anyOf`/`oneOf`/`not`. Values are matched to the old object by property name, map
/// key, and the keys of `x-kubernetes-list-type: map` items.
pub(crate) fn validate(
    node: &Node,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
) -> Vec<FieldError> {
    let mut out = Errors::default();
    validate_into(node, value, old, path, root, &mut out);
    out.found.into_iter().map(|(e, _)| e).collect()
}

/// Errors found so far, each flagged when ratcheting must never drop it.
#[derive(Default)]
struct Errors {
    found: Vec<(FieldError, bool)>,
    /// Inside a value the update left unchanged: ratcheting drops every error but the sticky
    /// ones, so the others are neither kept nor looked for.
    sticky_only: bool,
}

impl Errors {
    fn push(&mut self, e: FieldError) {
        let sticky = e.kind == FieldErrorKind::Required;
        if sticky || !self.sticky_only {
            self.found.push((e, sticky));
        }
    }

    fn push_sticky(&mut self, e: FieldError) {
        self.found.push((e, true));
    }
}

/// Checks `value` and below. A value equal to its old value is ratcheted: of the errors in it,
/// only the sticky ones count.
fn validate_into(
    node: &Node,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    out: &mut Errors,
) {
    let outer = out.sticky_only;
    // Below an unchanged value everything is unchanged (or ratcheted with it): no need to
    // compare again.
    out.sticky_only = outer || old.is_some_and(|o| json_equal(o, value));
    if !out.sticky_only || node.sticky_below {
        check_node(node, value, old, path, root, out);
    }
    out.sticky_only = outer;
}

fn check_node(
    node: &Node,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    errs: &mut Errors,
) {
    if value.is_null() {
        if let Some(ty) = node.ty
            && !node.nullable
        {
            errs.push(type_error(path, ty.name(), "null"));
        }
        return;
    }
    if let Some(ty) = node.ty
        && !ty.accepts(value)
    {
        let actual = JsonType::of(value).map(JsonType::name).unwrap_or("null");
        errs.push(type_error(path, ty.name(), actual));
        return;
    }
    // The apiserver gives int-or-string fields the type list "integer,string".
    if node.int_or_string
        && node.ty.is_none()
        && !(JsonType::Integer.accepts(value) || value.is_string())
    {
        let actual = JsonType::of(value).map(JsonType::name).unwrap_or("null");
        errs.push(type_error(path, "integer,string", actual));
        return;
    }

    let mut composite_errors = Vec::new();
    composition(node, value, path, &mut composite_errors);
    for e in composite_errors {
        errs.push_sticky(e);
    }

    match value {
        // Neither yields a sticky error.
        Value::String(_) | Value::Number(_) if errs.sticky_only => {}
        Value::String(s) => string_checks(node, s, value, path, errs),
        Value::Number(n) => number_checks(node, n, value, path, errs),
        Value::Array(items) => array_checks(node, items, old, path, errs),
        Value::Object(map) => object_checks(node, map, old, path, root, errs),
        Value::Bool(_) | Value::Null => {}
    }

    if let Some(allowed) = &node.enumeration
        && !errs.sticky_only
        && !allowed.iter().any(|a| json_equal(a, value))
    {
        let supported: Vec<String> = allowed
            .iter()
            .map(|a| match a {
                Value::String(s) => gofmt::quote(s),
                other => gofmt::quote(&other.to_string()),
            })
            .collect();
        errs.push(FieldError::new(
            path,
            FieldErrorKind::NotSupported,
            Some(value.clone()),
            format!("supported values: {}", supported.join(", ")),
        ));
    }
}

fn type_error(path: &str, expected: &str, actual: &str) -> FieldError {
    FieldError::new(
        path,
        FieldErrorKind::TypeInvalid,
        Some(json!(actual)),
        format!(
            "{path} in body must be of type {expected}: {}",
            gofmt::quote(actual)
        ),
    )
}

/// A failure of a composite keyword: reported at the root path with an empty value, exactly as
/// the apiserver turns kube-openapi's composite errors into field errors.
fn composite(detail: String) -> FieldError {
    FieldError::invalid("", json!(""), detail)
}

fn composition(node: &Node, value: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if node.any_of.is_empty()
        && node.one_of.is_empty()
        && node.all_of.is_empty()
        && node.not.is_none()
    {
        return;
    }
    let quoted = gofmt::quote(path);
    if !node.any_of.is_empty() {
        let results: Vec<Vec<FieldError>> = node
            .any_of
            .iter()
            .map(|b| validate(b, value, None, path, false))
            .collect();
        if !results.iter().any(Vec::is_empty) {
            errs.push(composite(format!(
                "{quoted} must validate at least one schema (anyOf)"
            )));
            errs.extend(fewest(results));
        }
    }
    if !node.one_of.is_empty() {
        let results: Vec<Vec<FieldError>> = node
            .one_of
            .iter()
            .map(|b| validate(b, value, None, path, false))
            .collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        if valid == 0 {
            errs.push(composite(format!(
                "{quoted} must validate one and only one schema (oneOf). Found none valid"
            )));
            errs.extend(fewest(results));
        } else if valid > 1 {
            errs.push(composite(format!(
                "{quoted} must validate one and only one schema (oneOf). Found {valid} valid alternatives"
            )));
        }
    }
    if !node.all_of.is_empty() {
        let mut valid = 0;
        for branch in &node.all_of {
            let r = validate(branch, value, None, path, false);
            if r.is_empty() {
                valid += 1;
            }
            errs.extend(r);
        }
        if valid != node.all_of.len() {
            let suffix = if valid == 0 { ". None validated" } else { "" };
            errs.push(composite(format!(
                "{quoted} must validate all the schemas (allOf){suffix}"
            )));
        }
    }
    if let Some(not) = &node.not
        && validate(not, value, None, path, false).is_empty()
    {
        errs.push(composite(format!(
            "{quoted} must not validate the schema (not)"
        )));
    }
}

/// The failures of the branch that came closest to matching.
fn fewest(results: Vec<Vec<FieldError>>) -> Vec<FieldError> {
    results.into_iter().min_by_key(Vec::len).unwrap_or_default()
}

fn string_checks(node: &Node, s: &str, value: &Value, path: &str, errs: &mut Errors) {
    let len = s.chars().count() as u64;
    if let Some(max) = node.max_length
        && len > max
    {
        let unit = if max == 1 { "byte" } else { "bytes" };
        errs.push(FieldError::new(
            path,
            FieldErrorKind::TooLong,
            Some(value.clone()),
            format!("may not be more than {max} {unit}"),
        ));
    }
    if let Some(min) = node.min_length
        && len < min
    {
        errs.push(FieldError::invalid(
            path,
            value.clone(),
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    if let Some(p) = &node.pattern
        && !p.regex.is_match(s)
    {
        errs.push(FieldError::invalid(
            path,
            value.clone(),
            format!("{path} in body should match '{}'", p.source),
        ));
    }
    if let Some(f) = &node.format
        && !format::is_valid(f, s)
    {
        errs.push(FieldError::new(
            path,
            FieldErrorKind::TypeInvalid,
            Some(value.clone()),
            format!("{path} in body must be of type {f}: {}", gofmt::quote(s)),
        ));
    }
}

fn number_checks(node: &Node, n: &Number, value: &Value, path: &str, errs: &mut Errors) {
    if let Some(m) = &node.multiple_of
        && !is_multiple(n, m)
    {
        errs.push(FieldError::invalid(
            path,
            value.clone(),
            format!(
                "{path} in body should be a multiple of {}",
                gofmt::float(m.as_f64().unwrap_or(f64::NAN))
            ),
        ));
    }
    if let Some(max) = &node.maximum {
        let ord = compare(n, &max.value);
        let fails = if max.exclusive {
            ord.is_ge()
        } else {
            ord.is_gt()
        };
        if fails {
            let rel = if max.exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            errs.push(FieldError::invalid(
                path,
                value.clone(),
                format!(
                    "{path} in body should be {rel} {}",
                    bound_text(n, &max.value)
                ),
            ));
        }
    }
    if let Some(min) = &node.minimum {
        let ord = compare(n, &min.value);
        let fails = if min.exclusive {
            ord.is_le()
        } else {
            ord.is_lt()
        };
        if fails {
            let rel = if min.exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errs.push(FieldError::invalid(
                path,
                value.clone(),
                format!(
                    "{path} in body should be {rel} {}",
                    bound_text(n, &min.value)
                ),
            ));
        }
    }
}

fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    let x = a.as_f64().unwrap_or(f64::NAN);
    let y = b.as_f64().unwrap_or(f64::NAN);
    x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
}

/// An integer value is checked against an integral bound as int64 (printed `9`), anything
/// else as float64 (printed with Go's `%v`).
fn bound_text(value: &Number, bound: &Number) -> String {
    let b = bound.as_f64().unwrap_or(f64::NAN);
    if !value.is_f64() && b.fract() == 0.0 && b.abs() < 9.0e15 {
        format!("{}", b as i64)
    } else {
        gofmt::float(b)
    }
}

fn is_multiple(n: &Number, m: &Number) -> bool {
    if let (Some(x), Some(y)) = (n.as_i64(), m.as_i64()) {
        return y != 0 && x % y == 0;
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    let y = m.as_f64().unwrap_or(f64::NAN);
    if y == 0.0 {
        return false;
    }
    let q = x / y;
    (q - q.round()).abs() < 1e-9
}

fn array_checks(node: &Node, items: &[Value], old: Option<&Value>, path: &str, errs: &mut Errors) {
    if let Some(schema) = node
        .items
        .as_deref()
        .filter(|schema| !errs.sticky_only || schema.sticky_below)
    {
        for (i, item) in items.iter().enumerate() {
            let old_item = correlate_item(node, item, old);
            validate_into(schema, item, old_item, &index(path, i), false, errs);
        }
    }
    let len = items.len() as u64;
    if let Some(min) = node.min_items
        && len < min
    {
        errs.push(FieldError::invalid(
            path,
            json!(len),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = node.max_items
        && len > max
    {
        errs.push(too_many(path, len, max));
    }
    if node.unique_items && has_duplicates(items) {
        errs.push(FieldError::invalid(
            path,
            json!(""),
            format!("{path} in body shouldn't contain duplicates"),
        ));
    }
}

fn too_many(path: &str, actual: u64, max: u64) -> FieldError {
    FieldError::new(
        path,
        FieldErrorKind::TooMany,
        Some(json!(actual)),
        format!("must have at most {max} items"),
    )
}

fn has_duplicates(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(i, a)| items[..i].iter().any(|b| json_equal(a, b)))
}

fn object_checks(
    node: &Node,
    map: &serde_json::Map<String, Value>,
    old: Option<&Value>,
    path: &str,
    root: bool,
    errs: &mut Errors,
) {
    let count = map.len() as u64;
    if let Some(min) = node.min_properties
        && count < min
    {
        errs.push(FieldError::invalid(
            path,
            json!(min),
            format!("{path} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = node.max_properties
        && count > max
    {
        errs.push(too_many(path, count, max));
    }
    for name in &node.required {
        if !map.contains_key(name) {
            errs.push(FieldError::required(child(path, name), ""));
        }
    }
    for (name, schema) in &node.properties {
        if root && name == "metadata" {
            continue;
        }
        if errs.sticky_only && !schema.sticky_below {
            continue;
        }
        if let Some(v) = map.get(name) {
            let old_v = old.and_then(|o| o.get(name));
            validate_into(schema, v, old_v, &child(path, name), false, errs);
        }
    }
    for (key, v) in map {
        if node.properties.contains_key(key) || (root && key == "metadata") {
            continue;
        }
        match &node.additional {
            Additional::Schema(schema) => {
                let old_v = old.and_then(|o| o.get(key));
                validate_into(schema, v, old_v, &child(path, key), false, errs);
            }
            Additional::Allowed(false) => errs.push(FieldError::invalid(
                path,
                json!(key),
                format!("{} in body is a forbidden property", child(path, key)),
            )),
            Additional::Allowed(true) | Additional::Unspecified => {}
        }
    }
    if node.embedded_resource {
        for field in ["apiVersion", "kind"] {
            match map.get(field) {
                Some(Value::String(s)) if !s.is_empty() => {}
                Some(Value::String(_)) | None => {
                    errs.push(FieldError::required(
                        child(path, field),
                        "must not be empty",
                    ));
                }
                Some(other) => errs.push(FieldError::new(
                    child(path, field),
                    FieldErrorKind::TypeInvalid,
                    Some(other.clone()),
                    "must be a string",
                )),
            }
        }
    }
}
