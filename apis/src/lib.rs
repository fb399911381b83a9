//! ferroplane-apis: the CustomResourceDefinition types of every ferroplane kind, and nothing else.
//!
//! Dependencies point one way: this crate ← `ferroplane-runtime` ← providers ← the binary.
//! The CRDs in `deploy/crds/` are generated from these types by [`crds`] (`ferroplane crds`).

// `#[kube(printcolumn(type_ = "string", ...), printcolumn(type_ = "string", ...))]` repeats keys
// across separate columns, which this lint mistakes for one attribute given twice.
#![allow(clippy::duplicated_attributes)]

pub mod alibabacloud;
pub mod application;
pub mod common;
pub mod deploy;
pub mod etcd;
pub mod etcd_backup;
mod managed_kind;
pub mod references;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// A CRD could not be rendered as YAML.
#[derive(Debug, thiserror::Error)]
#[error("cannot render CRD {name} as YAML: {source}")]
pub struct RenderError {
    name: String,
    #[source]
    source: serde_saphyr::ser::Error,
}

/// Every CRD ferroplane serves, in the order they should be applied.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        alibabacloud::ProviderConfig::crd(),
        alibabacloud::ClusterProviderConfig::crd(),
        alibabacloud::ECSInstance::crd(),
        alibabacloud::ECSFleet::crd(),
        alibabacloud::VPC::crd(),
        alibabacloud::VSwitch::crd(),
        alibabacloud::SecurityGroup::crd(),
        alibabacloud::SecurityGroupRule::crd(),
        alibabacloud::Disk::crd(),
        alibabacloud::KeyPair::crd(),
        alibabacloud::EIP::crd(),
        alibabacloud::EIPAssociation::crd(),
        alibabacloud::NATGateway::crd(),
        alibabacloud::SNATEntry::crd(),
        alibabacloud::DNATEntry::crd(),
        etcd::EtcdCluster::crd(),
        etcd_backup::EtcdBackup::crd(),
        application::Application::crd(),
    ]
    .into_iter()
    .map(reflow_descriptions)
    .map(non_nullable_enums)
    .collect()
}

/// An optional enum field comes out of the schema generator as `nullable` with `null` among its
/// values, so a wrong value's error lists `null` as a choice. The API server prunes a `null` in a
/// non-nullable field before validation, so dropping both keeps `null` meaning "absent" and
/// lists only the real choices.
fn non_nullable_enums(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Array(choices)) = map.get_mut("enum")
                    && choices.iter().any(serde_json::Value::is_null)
                {
                    choices.retain(|c| !c.is_null());
                    map.remove("nullable");
                }
                map.values_mut().for_each(walk);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(&crd).expect("a CRD serializes to JSON");
    walk(&mut value);
    serde_json::from_value(value).expect("non-nullable enums keep the CRD valid")
}

/// Doc comments are wrapped at 100 columns; `kubectl explain` wraps again, so a hard line break
/// inside a paragraph shows up as a ragged line. Join the lines of each paragraph.
fn reflow_descriptions(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match child {
                        serde_json::Value::String(text) if key == "description" => {
                            *text = reflow(text);
                        }
                        _ => walk(child),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(&crd).expect("a CRD serializes to JSON");
    walk(&mut value);
    serde_json::from_value(value).expect("reflowed descriptions keep the CRD valid")
}

fn reflow(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// One CRD as a YAML document (without the `---` separator).
pub fn crd_yaml(crd: &CustomResourceDefinition) -> Result<String, RenderError> {
    serde_saphyr::to_string(crd).map_err(|source| RenderError {
        name: crd.metadata.name.clone().unwrap_or_default(),
        source,
    })
}

/// Every CRD as one multi-document YAML stream.
pub fn crds_yaml() -> Result<String, RenderError> {
    let mut out = String::new();
    for crd in crds() {
        out.push_str("---\n");
        out.push_str(&crd_yaml(&crd)?);
    }
    Ok(out)
}

/// The file name of a CRD in `deploy/crds/`: `<group>_<plural>.yaml`.
pub fn crd_file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_enum_lists_null_as_a_choice() {
        for crd in super::crds() {
            let text = serde_json::to_string(&crd).unwrap();
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            let mut stack = vec![&value];
            while let Some(v) = stack.pop() {
                match v {
                    serde_json::Value::Object(map) => {
                        if let Some(serde_json::Value::Array(choices)) = map.get("enum") {
                            assert!(
                                !choices.iter().any(serde_json::Value::is_null),
                                "{}: {choices:?}",
                                crd.spec.names.kind
                            );
                        }
                        stack.extend(map.values());
                    }
                    serde_json::Value::Array(items) => stack.extend(items),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn reflow_joins_lines_but_keeps_paragraphs() {
        assert_eq!(super::reflow("a b\nc d\n\ne"), "a b c d\n\ne");
        assert_eq!(super::reflow("single"), "single");
    }
}
