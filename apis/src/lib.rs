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
        etcd::EtcdCluster::crd(),
        application::Application::crd(),
    ]
    .into_iter()
    .map(reflow_descriptions)
    .collect()
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
    fn reflow_joins_lines_but_keeps_paragraphs() {
        assert_eq!(super::reflow("a b\nc d\n\ne"), "a b c d\n\ne");
        assert_eq!(super::reflow("single"), "single");
    }
}
