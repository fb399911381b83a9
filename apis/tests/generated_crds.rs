//! `deploy/crds/`, the Helm chart's `deploy/helm/ferroplane/crds/` and the Crossplane package's
//! `package/crds/` must be exactly what the types generate; samples must fit their types; the
//! package's permission requests are deploy/'s rules outside ferroplane's own API groups.
//!
//! To refresh the three after changing a type: `FERROPLANE_UPDATE_CRDS=1 cargo test -p
//! ferroplane-apis` (that run writes the files and fails, saying so; the next run checks them).

use std::path::{Path, PathBuf};

use ferroplane_apis::{crd_file_name, crd_yaml, crds};

fn deploy_dir(sub: &str) -> PathBuf {
    workspace_dir(&format!("deploy/{sub}"))
}

fn workspace_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(sub)
}

/// The directories (from the workspace root) that hold the generated CRDs: deploy/'s, the Helm
/// chart's (whose `crds/` Helm installs before the templates) and the Crossplane package's.
const CRD_DIRS: [&str; 3] = ["deploy/crds", "deploy/helm/ferroplane/crds", "package/crds"];

#[test]
fn deploy_crds_match_the_types() {
    let update = std::env::var_os("FERROPLANE_UPDATE_CRDS").is_some();
    let mut refreshed = Vec::new();
    for sub in CRD_DIRS {
        let dir = workspace_dir(sub);
        if update {
            std::fs::create_dir_all(&dir).expect("create the CRD directory");
        }
        let mut expected_files = Vec::new();
        for crd in crds() {
            let file = crd_file_name(&crd);
            let path = dir.join(&file);
            let generated = crd_yaml(&crd).expect("CRD renders as YAML");
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            if update && on_disk != generated {
                std::fs::write(&path, &generated).expect("write CRD file");
                refreshed.push(path.display().to_string());
            } else {
                assert!(
                    on_disk == generated,
                    "{} is stale; run `FERROPLANE_UPDATE_CRDS=1 cargo test -p ferroplane-apis`",
                    path.display()
                );
            }
            expected_files.push(file);
        }
        let mut present: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{} exists: {e}", dir.display()))
            .map(|entry| {
                entry
                    .expect("dir entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        present.sort();
        expected_files.sort();
        assert_eq!(
            present,
            expected_files,
            "{} holds a file no type generates",
            dir.display()
        );
    }
    // A refresh is never a check: the run that writes fails, and the next one checks.
    assert!(
        !update,
        "FERROPLANE_UPDATE_CRDS is set: refreshed {} file(s) {refreshed:?}; run the test again \
         without it to check them",
        refreshed.len(),
    );
}

#[test]
fn every_kind_has_status_subresource_and_categories() {
    for crd in crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let version = &crd.spec.versions[0];
        assert!(
            version
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some(),
            "{name} has no status subresource"
        );
        let categories = crd.spec.names.categories.clone().unwrap_or_default();
        assert!(
            categories.contains(&"ferroplane".to_owned()),
            "{name} not in category ferroplane"
        );
        let columns: Vec<String> = version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| c.name.clone())
            .collect();
        assert!(
            columns.contains(&"AGE".to_owned()),
            "{name} has no AGE column"
        );
        let managed = categories.contains(&"managed".to_owned());
        if managed {
            for column in ["READY", "SYNCED", "EXTERNAL-NAME"] {
                assert!(
                    columns.contains(&column.to_owned()),
                    "{name} lacks column {column}"
                );
            }
        }
    }
}

/// Every field a sample sets must survive a round trip through its Rust type: a field the type
/// does not know would be pruned by the API server and silently ignored.
fn assert_sample_fits<K>(file: &str)
where
    K: serde::de::DeserializeOwned + serde::Serialize,
{
    let text = std::fs::read_to_string(deploy_dir("samples").join(file)).expect("sample exists");
    let sample: serde_json::Value = serde_saphyr::from_str(&text).expect("sample is YAML");
    assert_fits::<K>(&sample, file);
}

fn assert_fits<K>(sample: &serde_json::Value, file: &str)
where
    K: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: K = serde_json::from_value(sample.clone())
        .unwrap_or_else(|e| panic!("{file} does not fit its type: {e}"));
    let back = serde_json::to_value(&typed).expect("serializes");
    assert_subset(sample, &back, file, "");
}

fn assert_subset(sample: &serde_json::Value, typed: &serde_json::Value, file: &str, path: &str) {
    match (sample, typed) {
        (serde_json::Value::Object(s), serde_json::Value::Object(t)) => {
            for (key, value) in s {
                let field = format!("{path}.{key}");
                let other = t
                    .get(key)
                    .unwrap_or_else(|| panic!("{file}: field {field} is unknown to the type"));
                assert_subset(value, other, file, &field);
            }
        }
        (serde_json::Value::Array(s), serde_json::Value::Array(t)) => {
            assert_eq!(s.len(), t.len(), "{file}: {path}");
            for (i, (a, b)) in s.iter().zip(t).enumerate() {
                assert_subset(a, b, file, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

#[test]
fn samples_fit_their_types() {
    use ferroplane_apis::{alibabacloud, application, etcd, etcd_backup};
    assert_sample_fits::<alibabacloud::ECSInstance>("ecsinstance.yaml");
    assert_sample_fits::<alibabacloud::ProviderConfig>("providerconfig.yaml");
    assert_sample_fits::<alibabacloud::ClusterProviderConfig>("clusterproviderconfig.yaml");
    assert_sample_fits::<etcd::EtcdCluster>("etcdcluster.yaml");
    assert_sample_fits::<etcd::EtcdCluster>("etcdcluster-tls.yaml");
    assert_sample_fits::<etcd_backup::EtcdBackup>("etcdbackup.yaml");
    assert_sample_fits::<application::Application>("application.yaml");
    assert_eq!(
        network_sample_kinds("network.yaml"),
        ["VPC", "VSwitch", "SecurityGroup", "ECSInstance"]
    );
    assert_eq!(
        network_sample_kinds("eip.yaml"),
        ["ECSInstance", "EIP", "EIPAssociation"]
    );
    assert_eq!(
        network_sample_kinds("securitygrouprule.yaml"),
        [
            "VPC",
            "SecurityGroup",
            "SecurityGroup",
            "SecurityGroupRule",
            "SecurityGroupRule",
            "SecurityGroupRule",
            "SecurityGroupRule"
        ]
    );
    assert_eq!(
        network_sample_kinds("nat-gateway.yaml"),
        [
            "VPC",
            "VSwitch",
            "VSwitch",
            "NATGateway",
            "EIP",
            "EIPAssociation",
            "SNATEntry",
            "DNATEntry"
        ]
    );
    assert_eq!(
        network_sample_kinds("stack.yaml"),
        [
            "VPC",
            "VSwitch",
            "VSwitch",
            "SecurityGroup",
            "SecurityGroupRule",
            "SecurityGroupRule",
            "NATGateway",
            "EIP",
            "EIPAssociation",
            "SNATEntry",
            "ECSInstance",
            "EIP",
            "EIPAssociation",
            "ECSInstance",
            "DNATEntry"
        ]
    );
}

/// Checks that every document of a multi-document sample of Alibaba Cloud kinds fits its type;
/// returns the kinds in file order.
fn network_sample_kinds(file: &str) -> Vec<String> {
    use ferroplane_apis::alibabacloud;
    let text = std::fs::read_to_string(deploy_dir("samples").join(file)).unwrap();
    let mut kinds = Vec::new();
    for doc in text.split("\n---\n") {
        let value: serde_json::Value = serde_saphyr::from_str(doc)
            .unwrap_or_else(|e| panic!("{file}: a document that is not YAML: {e}"));
        let kind = value["kind"].as_str().unwrap_or_default().to_owned();
        let what = format!("{file} {kind}");
        match kind.as_str() {
            "VPC" => assert_fits::<alibabacloud::VPC>(&value, &what),
            "VSwitch" => assert_fits::<alibabacloud::VSwitch>(&value, &what),
            "SecurityGroup" => assert_fits::<alibabacloud::SecurityGroup>(&value, &what),
            "SecurityGroupRule" => assert_fits::<alibabacloud::SecurityGroupRule>(&value, &what),
            "ECSInstance" => assert_fits::<alibabacloud::ECSInstance>(&value, &what),
            "EIP" => assert_fits::<alibabacloud::EIP>(&value, &what),
            "EIPAssociation" => assert_fits::<alibabacloud::EIPAssociation>(&value, &what),
            "NATGateway" => assert_fits::<alibabacloud::NATGateway>(&value, &what),
            "SNATEntry" => assert_fits::<alibabacloud::SNATEntry>(&value, &what),
            "DNATEntry" => assert_fits::<alibabacloud::DNATEntry>(&value, &what),
            other => panic!("{file}: unexpected kind {other:?}"),
        }
        kinds.push(kind);
    }
    kinds
}

#[test]
fn classic_sample_uses_the_ecs_api_names() {
    let text = std::fs::read_to_string(deploy_dir("samples").join("ecsinstance.yaml")).unwrap();
    let sample: ferroplane_apis::alibabacloud::ECSInstance = serde_saphyr::from_str(&text).unwrap();
    let p = &sample.spec.for_provider;
    assert_eq!(p.image_id, "centos_7_8_x64_20G_alibase_20200519.vhd");
    assert_eq!(p.instance_type, "ecs.g6.large");
    assert_eq!(p.region_id, "cn-beijing");
    assert_eq!(p.instance_name.as_deref(), Some("ins-0702"));
}
