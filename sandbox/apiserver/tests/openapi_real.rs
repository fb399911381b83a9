//! The bundled OpenAPI of the built-in kinds (`openapi/builtin-v3.json.gz`, where the sandbox's
//! list types and merge keys come from) held to a real kube-apiserver's `/openapi/v3`, and a
//! StatefulSet like EtcdCluster's re-applied 20 times on both servers: one volumeClaimTemplate,
//! generation 1 and the same managed fields. `FERROPLANE_UPDATE_OPENAPI=1` rewrites the bundled
//! file from the real server and fails (the next run compares). Starts the real control plane
//! of `ferroplane-testenv` (built on first use, then cached).

use std::io::{Read, Write};
use std::path::PathBuf;

use ferroplane_testenv::{ControlPlane, Options};
use ferroplane_testkit::TestCluster;
use http::Request;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Map, Value, json};

fn bundled_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi/builtin-v3.json.gz")
}

fn read_bundled() -> Value {
    let compressed = std::fs::read(bundled_path()).expect("the bundled OpenAPI exists");
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(compressed.as_slice())
        .read_to_end(&mut text)
        .expect("gzip");
    serde_json::from_slice(&text).expect("JSON")
}

async fn get_json(client: &kube::Client, path: &str) -> Value {
    let request = Request::builder()
        .uri(path)
        .body(Vec::new())
        .expect("a request");
    client.request::<Value>(request).await.expect("a document")
}

/// The GroupVersionKinds a schema belongs to, in one order.
fn sorted_gvks(schema: &mut Value) {
    if let Some(Value::Array(gvks)) = schema.get_mut("x-kubernetes-group-version-kind") {
        gvks.sort_by_key(|g| g.to_string());
    }
}

/// The union of the `components.schemas` of the group-versions, as the sandbox bundles them: a
/// schema several documents carry with different GroupVersionKind lists (DeleteOptions,
/// WatchEvent) keeps the union of the lists.
async fn capture(client: &kube::Client, group_versions: &[String]) -> Map<String, Value> {
    let mut schemas = Map::new();
    for path in group_versions {
        let document = get_json(client, &format!("/openapi/v3/{path}")).await;
        let Some(Value::Object(components)) = document.pointer("/components/schemas").cloned()
        else {
            panic!("/openapi/v3/{path} has no components.schemas");
        };
        for (name, mut schema) in components {
            sorted_gvks(&mut schema);
            match schemas.get_mut(&name) {
                Some(existing) if *existing != schema => {
                    let more = schema["x-kubernetes-group-version-kind"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    let Some(Value::Array(gvks)) =
                        existing.get_mut("x-kubernetes-group-version-kind")
                    else {
                        panic!("{name} differs between documents beyond its kinds");
                    };
                    for gvk in more {
                        if !gvks.contains(&gvk) {
                            gvks.push(gvk);
                        }
                    }
                    sorted_gvks(existing);
                }
                Some(_) => {}
                None => {
                    schemas.insert(name, schema);
                }
            }
        }
    }
    schemas
}

fn write_bundled(document: &Value) {
    let file = std::fs::File::create(bundled_path()).expect("writable");
    let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::best());
    encoder
        .write_all(&serde_json::to_vec(document).expect("JSON"))
        .expect("written");
    encoder.finish().expect("flushed");
}

/// Like the StatefulSet ferroplane renders for an EtcdCluster.
fn etcd_like_statefulset() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "etcd-demo", "namespace": "default", "labels": {"app": "etcd-demo"}},
        "spec": {
            "replicas": 3, "serviceName": "etcd-demo", "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "etcd-demo"}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "template": {
                "metadata": {"labels": {"app": "etcd-demo"}},
                "spec": {"containers": [{
                    "name": "etcd", "image": "quay.io/coreos/etcd:v3.5.21",
                    "command": ["etcd", "--data-dir=/var/lib/etcd"],
                    "ports": [{"name": "client", "containerPort": 2379},
                              {"name": "peer", "containerPort": 2380}],
                    "env": [{"name": "ETCD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "volumeMounts": [{"name": "data", "mountPath": "/var/lib/etcd"}],
                }]},
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    })
}

/// Re-applies the StatefulSet 20 times; the result and the applier's managed fields.
async fn reapply(client: &kube::Client) -> (StatefulSet, Value) {
    let api: Api<StatefulSet> = Api::namespaced(client.clone(), "default");
    let params = PatchParams::apply("ferroplane").force();
    let mut last = None;
    for _ in 0..20 {
        last = Some(
            api.patch("etcd-demo", &params, &Patch::Apply(etcd_like_statefulset()))
                .await
                .expect("applied"),
        );
    }
    let sts = last.expect("applied at least once");
    let owned = sts
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .find(|m| m.manager.as_deref() == Some("ferroplane"))
        .and_then(|m| m.fields_v1.as_ref())
        .map(|f| f.0.clone())
        .expect("the applier's fields");
    (sts, owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_schemas_and_apply_semantics_match_a_real_apiserver() {
    let real = ControlPlane::start(Options::default())
        .await
        .expect("the control plane starts");
    let client = real.client();

    let mut bundled = read_bundled();
    let group_versions: Vec<String> =
        serde_json::from_value(bundled["groupVersions"].clone()).expect("groupVersions");
    let captured = capture(&client, &group_versions).await;
    if std::env::var_os("FERROPLANE_UPDATE_OPENAPI").is_some() {
        bundled["schemas"] = Value::Object(captured.clone());
        write_bundled(&bundled);
        // A refresh is never a check: this run fails, the next one compares.
        panic!(
            "FERROPLANE_UPDATE_OPENAPI is set: the bundled OpenAPI was rewritten from the real \
             server ({} schemas); run the test again without it to compare",
            captured.len()
        );
    }
    let bundled_schemas = bundled["schemas"].as_object().expect("schemas");
    let differing: Vec<&String> = captured
        .keys()
        .chain(bundled_schemas.keys())
        .filter(|name| captured.get(*name) != bundled_schemas.get(*name))
        .collect();
    assert!(
        differing.is_empty(),
        "the bundled OpenAPI differs from the real server's in {} schemas ({:?}...); rerun with \
         FERROPLANE_UPDATE_OPENAPI=1",
        differing.len(),
        &differing[..differing.len().min(5)]
    );

    let sandbox = TestCluster::start().await;
    let (real_sts, real_owned) = reapply(&client).await;
    let (sandbox_sts, sandbox_owned) = reapply(&sandbox.client()).await;
    real.stop();
    sandbox.shutdown().await;
    for (server, sts) in [("real", &real_sts), ("sandbox", &sandbox_sts)] {
        let templates = sts
            .spec
            .as_ref()
            .and_then(|s| s.volume_claim_templates.as_ref())
            .map_or(0, Vec::len);
        assert_eq!(templates, 1, "{server}: one volumeClaimTemplate");
        assert_eq!(
            sts.metadata.generation,
            Some(1),
            "{server}: generation settled"
        );
    }
    assert_eq!(
        sandbox_owned, real_owned,
        "the applier owns the same fields on both servers"
    );
}
