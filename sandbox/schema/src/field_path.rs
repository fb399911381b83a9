//! Field paths as the apiserver prints them in errors: `spec.list[0].name`, `spec.labels[key]`.

/// `parent.name`, or `name` at the root.
pub(crate) fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// `parent[i]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// `parent[key]`, the `field.Path` form for map entries.
pub(crate) fn key(parent: &str, key: &str) -> String {
    format!("{parent}[{key}]")
}
