//! The ready-to-apply examples in `deploy/samples/`, which the end-to-end tests apply as a user
//! would.

use std::path::PathBuf;

/// Path of `deploy/samples/<file>`, as kubectl's `-f` takes it.
pub fn path(file: &str) -> String {
    // This crate sits at `<workspace>/testkit`.
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/samples")
        .join(file)
        .to_string_lossy()
        .into_owned()
}

/// The text of `deploy/samples/<file>`.
pub fn read(file: &str) -> String {
    let path = path(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The sample without its `namespace:` lines, so that it lands in kubectl's namespace.
pub fn without_namespace(file: &str) -> String {
    read(file)
        .lines()
        .filter(|l| !l.trim_start().starts_with("namespace:"))
        .collect::<Vec<_>>()
        .join("\n")
}
