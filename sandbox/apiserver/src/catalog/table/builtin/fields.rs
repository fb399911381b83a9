//! Reading fields of an object's JSON, and the apiserver's small formatting helpers.

use serde_json::Value;

pub(super) fn get<'a>(o: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(o, |v, k| v.get(*k))
}

pub(super) fn s(o: &Value, path: &[&str]) -> String {
    get(o, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(super) fn int(o: &Value, path: &[&str]) -> Option<i64> {
    get(o, path).and_then(Value::as_i64)
}

pub(super) fn items<'a>(o: &'a Value, path: &[&str]) -> &'a [Value] {
    get(o, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The number of entries of a map or list field (0 when absent).
pub(super) fn len(o: &Value, path: &[&str]) -> usize {
    match get(o, path) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    }
}

pub(super) fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".to_owned() } else { s }
}

pub(super) fn containers(o: &Value, field: &str) -> String {
    items(o, &["spec", "template", "spec", "containers"])
        .iter()
        .filter_map(|c| c.get(field).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.FormatLabelSelector`: requirements sorted by key, `<none>` when empty.
pub(super) fn label_selector(selector: Option<&Value>) -> String {
    let Some(sel) = selector else {
        return "<none>".to_owned();
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for expr in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
        let mut values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort_unstable();
        let text = match expr.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_owned(),
            Some("DoesNotExist") => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key.to_owned(), text));
    }
    reqs.sort();
    or_none(
        reqs.into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `labels.FormatLabels` of a plain map: `k=v,...` sorted, `<none>` when empty.
pub(super) fn labels(map: Option<&Value>) -> String {
    let mut pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    or_none(pairs.join(","))
}
