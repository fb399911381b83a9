//! The cost of rendering a `kubectl get` table of 1000 ECSInstances (the project's CRD, 8
//! printer columns). A figure, not a check: it asserts nothing about time and is ignored by
//! default. Run it optimised:
//! `cargo test --release -p ferroplane-sandbox -- --ignored --nocapture table_render_figures`.
//!
//! It measures a private function, so it lives next to it rather than in `benches/`, which
//! only reach the crate's public API.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use ferroplane_sandbox_schema::CompiledSchema;
use serde_json::{Value, json};

use super::{IncludeObject, Printer, render_table};

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

#[test]
#[ignore = "prints a figure; run with --release --ignored --nocapture"]
fn table_render_figures() {
    let crd = load("deploy/crds/alibabacloud.ferroplane.io_ecsinstances.yaml");
    let version = &crd["spec"]["versions"][0];
    let schema = CompiledSchema::compile(&version["schema"]["openAPIV3Schema"])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stored = load("deploy/samples/ecsinstance.yaml");
    schema.admit(&mut stored, None);
    let printer = Printer::for_crd_version(version);
    let objects: Vec<Value> = (0..1000)
        .map(|i| {
            let mut o = stored.clone();
            o["metadata"]["name"] = json!(format!("web-{i}"));
            o["metadata"]["creationTimestamp"] = json!("2024-05-01T11:00:00Z");
            o["status"] = json!({"conditions": [
                {"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}
            ], "atProvider": {"status": "Running", "publicIpAddress": "47.1.2.3"}});
            o
        })
        .collect();
    let refs: Vec<&Value> = objects.iter().collect();
    let now = "2024-05-01T12:00:00Z"
        .parse()
        .unwrap_or_else(|e| panic!("timestamp: {e}"));
    let (per_call, n) = measure(Duration::from_millis(700), || {
        black_box(render_table(
            &printer,
            &refs,
            IncludeObject::Metadata,
            "1",
            None,
            now,
        ));
    });
    let per_sec = if per_call.is_zero() {
        f64::INFINITY
    } else {
        1.0 / per_call.as_secs_f64()
    };
    println!(
        "{:<52} {per_call:>12.2?}/op {per_sec:>12.0} op/s  ({n} runs)",
        "render table of 1000 ECSInstances (8 printer columns)"
    );
}
