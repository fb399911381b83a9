//! Figures for the per-request work of the schema crate on the project's own CRDs: compiling
//! a CRD version, admitting (prune + default + validate, CEL included) a create and an update.
//! Run with `cargo bench -p ferroplane-sandbox-schema --bench admission`; it prints figures,
//! asserts nothing. (Rendering a `kubectl get` table is measured in the sandbox crate.)

use ferroplane_sandbox_schema::CompiledSchema;
use serde_json::{Value, json};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

fn load(sub: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(sub);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// Runs `f` repeatedly for about `budget` and returns the mean time per call.
fn measure(budget: Duration, mut f: impl FnMut()) -> (Duration, u64) {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        f();
        n += 1;
    }
    (start.elapsed() / n.max(1) as u32, n)
}

fn report(what: &str, (per_call, n): (Duration, u64)) {
    let per_sec = if per_call.is_zero() {
        f64::INFINITY
    } else {
        1.0 / per_call.as_secs_f64()
    };
    println!("{what:<52} {per_call:>12.2?}/op {per_sec:>12.0} op/s  ({n} runs)");
}

fn main() {
    let budget = Duration::from_millis(700);
    let crd = load("deploy/crds/alibabacloud.ferroplane.io_ecsinstances.yaml");
    let version = &crd["spec"]["versions"][0];
    let schema_json = &version["schema"]["openAPIV3Schema"];
    let sample = load("deploy/samples/ecsinstance.yaml");

    report(
        "compile ECSInstance v1alpha1 schema (regex + CEL)",
        measure(budget, || {
            black_box(CompiledSchema::compile(black_box(schema_json)).ok());
        }),
    );

    let schema = CompiledSchema::compile(schema_json).unwrap_or_else(|e| panic!("{e}"));
    report(
        "admit ECSInstance sample (create)",
        measure(budget, || {
            let mut object = sample.clone();
            black_box(schema.admit(&mut object, None));
        }),
    );

    let mut stored = sample.clone();
    schema.admit(&mut stored, None);
    let mut changed = stored.clone();
    changed["spec"]["forProvider"]["instanceName"] = json!("renamed");
    report(
        "admit ECSInstance update (transition rules, ratcheting)",
        measure(budget, || {
            let mut object = changed.clone();
            black_box(schema.admit(&mut object, Some(&stored)));
        }),
    );
}
