//! `deploy/crds/` must be exactly what the types generate; samples must fit their types.
//!
//! To refresh `deploy/crds/` after changing a type: `FERROPLANE_UPDATE_CRDS=1 cargo test -p
//! ferroplane-apis` (that run writes the files and fails, saying so; the next run checks them).

use std::path::{Path, PathBuf};

use ferroplane_apis::{crd_file_name, crd_yaml, crds};

fn deploy_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(sub)
}

#[test]
fn deploy_crds_match_the_types() {
    let dir = deploy_dir("crds");
    let update = std::env::var_os("FERROPLANE_UPDATE_CRDS").is_some();
    let mut expected_files = Vec::new();
    let mut refreshed = Vec::new();
    for crd in crds() {
        let file = crd_file_name(&crd);
        let path = dir.join(&file);
        let generated = crd_yaml(&crd).expect("CRD renders as YAML");
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        if update && on_disk != generated {
            std::fs::write(&path, &generated).expect("write CRD file");
            refreshed.push(file.clone());
        } else {
            assert!(
                on_disk == generated,
                "{} is stale; run `FERROPLANE_UPDATE_CRDS=1 cargo test -p ferroplane-apis`",
                path.display()
            );
        }
        expected_files.push(file);
    }
    // A refresh is never a check: the run that writes fails, and the next one checks.
    assert!(
        !update,
        "FERROPLANE_UPDATE_CRDS is set: refreshed {} file(s) in {} {refreshed:?}; run the test \
         again without it to check them",
        refreshed.len(),
        dir.display()
    );
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .expect("deploy/crds exists")
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
        present, expected_files,
        "deploy/crds holds a file no type generates"
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
    let stack = std::fs::read_to_string(deploy_dir("samples").join("stack.yaml")).unwrap();
    for doc in stack.split("\n---\n") {
        let value: serde_json::Value = serde_saphyr::from_str(doc).expect("stack document");
        match value["kind"].as_str() {
            Some("VPC") => assert_fits::<alibabacloud::VPC>(&value, "stack.yaml VPC"),
            Some("VSwitch") => assert_fits::<alibabacloud::VSwitch>(&value, "stack.yaml VSwitch"),
            Some("SecurityGroup") => {
                assert_fits::<alibabacloud::SecurityGroup>(&value, "stack.yaml SecurityGroup")
            }
            Some("ECSInstance") => {
                assert_fits::<alibabacloud::ECSInstance>(&value, "stack.yaml ECSInstance")
            }
            other => panic!("stack.yaml: unexpected kind {other:?}"),
        }
    }
    let eip = std::fs::read_to_string(deploy_dir("samples").join("eip.yaml")).unwrap();
    let mut kinds = Vec::new();
    for doc in eip.split("\n---\n") {
        let value: serde_json::Value = serde_saphyr::from_str(doc).expect("eip.yaml document");
        match value["kind"].as_str() {
            Some("ECSInstance") => {
                assert_fits::<alibabacloud::ECSInstance>(&value, "eip.yaml ECSInstance")
            }
            Some("EIP") => assert_fits::<alibabacloud::EIP>(&value, "eip.yaml EIP"),
            Some("EIPAssociation") => {
                assert_fits::<alibabacloud::EIPAssociation>(&value, "eip.yaml EIPAssociation")
            }
            other => panic!("eip.yaml: unexpected kind {other:?}"),
        }
        kinds.push(value["kind"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(kinds, ["ECSInstance", "EIP", "EIPAssociation"]);
    let rules =
        std::fs::read_to_string(deploy_dir("samples").join("securitygrouprule.yaml")).unwrap();
    let mut rule_count = 0;
    for doc in rules.split("\n---\n") {
        let value: serde_json::Value =
            serde_saphyr::from_str(doc).expect("securitygrouprule.yaml document");
        match value["kind"].as_str() {
            Some("VPC") => assert_fits::<alibabacloud::VPC>(&value, "securitygrouprule.yaml VPC"),
            Some("SecurityGroup") => assert_fits::<alibabacloud::SecurityGroup>(
                &value,
                "securitygrouprule.yaml SecurityGroup",
            ),
            Some("SecurityGroupRule") => {
                rule_count += 1;
                assert_fits::<alibabacloud::SecurityGroupRule>(
                    &value,
                    "securitygrouprule.yaml SecurityGroupRule",
                )
            }
            other => panic!("securitygrouprule.yaml: unexpected kind {other:?}"),
        }
    }
    assert_eq!(rule_count, 4);
    let nat = std::fs::read_to_string(deploy_dir("samples").join("nat-gateway.yaml")).unwrap();
    let mut kinds = Vec::new();
    for doc in nat.split("\n---\n") {
        let value: serde_json::Value =
            serde_saphyr::from_str(doc).expect("nat-gateway.yaml document");
        match value["kind"].as_str() {
            Some("VPC") => assert_fits::<alibabacloud::VPC>(&value, "nat-gateway.yaml VPC"),
            Some("VSwitch") => {
                assert_fits::<alibabacloud::VSwitch>(&value, "nat-gateway.yaml VSwitch")
            }
            Some("NATGateway") => {
                assert_fits::<alibabacloud::NATGateway>(&value, "nat-gateway.yaml NATGateway")
            }
            Some("EIP") => assert_fits::<alibabacloud::EIP>(&value, "nat-gateway.yaml EIP"),
            Some("EIPAssociation") => assert_fits::<alibabacloud::EIPAssociation>(
                &value,
                "nat-gateway.yaml EIPAssociation",
            ),
            Some("SNATEntry") => {
                assert_fits::<alibabacloud::SNATEntry>(&value, "nat-gateway.yaml SNATEntry")
            }
            Some("DNATEntry") => {
                assert_fits::<alibabacloud::DNATEntry>(&value, "nat-gateway.yaml DNATEntry")
            }
            other => panic!("nat-gateway.yaml: unexpected kind {other:?}"),
        }
        kinds.push(value["kind"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(
        kinds,
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
