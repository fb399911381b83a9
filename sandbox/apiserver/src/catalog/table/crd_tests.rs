//! `kubectl get` tables for the project's own CRDs (deploy/crds) and samples (deploy/samples).

use super::{IncludeObject, Printer, render_table};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn repo_file(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(sub)
}

fn load(sub: &str) -> Value {
    let path = repo_file(sub);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn printer(crd_file: &str) -> Printer {
    let crd = load(crd_file);
    let version = &crd["spec"]["versions"][0];
    Printer::try_for_crd_version(version).unwrap_or_else(|e| panic!("{crd_file}: {e}"))
}

#[test]
fn every_crd_printer_parses_and_renders_its_sample() {
    let pairs = [
        (
            "deploy/crds/alibabacloud.ferroplane.io_ecsinstances.yaml",
            "deploy/samples/ecsinstance.yaml",
        ),
        (
            "deploy/crds/etcd.ferroplane.io_etcdclusters.yaml",
            "deploy/samples/etcdcluster.yaml",
        ),
        (
            "deploy/crds/apps.ferroplane.io_applications.yaml",
            "deploy/samples/application.yaml",
        ),
        (
            "deploy/crds/alibabacloud.ferroplane.io_providerconfigs.yaml",
            "deploy/samples/providerconfig.yaml",
        ),
        (
            "deploy/crds/alibabacloud.ferroplane.io_clusterproviderconfigs.yaml",
            "deploy/samples/clusterproviderconfig.yaml",
        ),
    ];
    let now = "2024-05-01T12:00:00Z".parse().expect("timestamp");
    for (crd, sample) in pairs {
        let printer = printer(crd);
        let mut object = load(sample);
        object["metadata"]["creationTimestamp"] = json!("2024-05-01T11:00:00Z");
        let table = render_table(
            &printer,
            &[&object],
            IncludeObject::Metadata,
            "9",
            None,
            now,
        );
        let columns = table["columnDefinitions"].as_array().expect("columns");
        let cells = table["rows"][0]["cells"].as_array().expect("cells");
        assert_eq!(columns.len(), cells.len(), "{crd}");
        assert_eq!(columns[0]["name"], "Name", "{crd}");
        assert_eq!(cells[0], object["metadata"]["name"], "{crd}");
        assert_eq!(cells.last(), Some(&json!("60m")), "{crd}: AGE last");
    }
}

#[test]
fn ecs_instance_columns_read_conditions_and_external_name() {
    let printer = printer("deploy/crds/alibabacloud.ferroplane.io_ecsinstances.yaml");
    let names: Vec<String> = printer.columns().into_iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "Name",
            "READY",
            "SYNCED",
            "EXTERNAL-NAME",
            "STATUS",
            "PUBLIC-IP",
            "PRIVATE-IP",
            "TYPE",
            "AGE"
        ]
    );
    let mut object = load("deploy/samples/ecsinstance.yaml");
    object["metadata"]["creationTimestamp"] = json!("2024-05-01T11:58:30Z");
    object["metadata"]["annotations"] = json!({"ferroplane.io/external-name": "i-2ze0abc"});
    object["status"] = json!({
        "atProvider": {"status": "Running", "publicIpAddress": "47.1.2.3"},
        "conditions": [
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
            {"type": "Ready", "status": "True", "reason": "Available"}
        ]
    });
    let now = "2024-05-01T12:00:00Z".parse().expect("timestamp");
    assert_eq!(
        Value::Array(printer.cells(&object, now)),
        json!([
            "ins-0702",
            "True",
            "True",
            "i-2ze0abc",
            "Running",
            "47.1.2.3",
            null,
            "ecs.g6.large",
            "90s"
        ])
    );
}
