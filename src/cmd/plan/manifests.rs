//! The objects `ferroplane plan` looks at: ECSInstances and the kinds of `cloud_kinds` from
//! manifests (`-f FILE|DIR|-`, as kubectl takes them: a directory's `.yaml`, `.yml` and `.json`
//! files, multi-document YAML) or from the cluster (`-n`, `-l`, `--all-namespaces`), ECSFleets
//! too. Other kinds are counted, not planned.

use std::io::Read as _;
use std::path::Path;

use anyhow::Context as _;
use ferroplane_apis::alibabacloud::{ECSFleet, ECSInstance};
use kube::api::ListParams;
use kube::{Api, Resource as _, ResourceExt as _};
use serde_json::Value;

use super::cloud_kinds::{self, KINDS};

/// What was read.
#[derive(Debug, Default)]
pub struct Objects {
    pub instances: Vec<ECSInstance>,
    /// Objects of `cloud_kinds::KINDS`: the kind and the document (its namespace set).
    pub cloud: Vec<(&'static str, Value)>,
    pub fleets: Vec<ECSFleet>,
    /// `Kind name` of every other object, which this version does not plan.
    pub skipped: Vec<String>,
}

/// The API group of ferroplane's Alibaba kinds.
const GROUP: &str = "alibabacloud.ferroplane.io/";

/// The documents of `text`, each an ECSInstance (given `namespace` when it names none) or a
/// skipped object.
pub fn parse(text: &str, source: &str, namespace: &str, into: &mut Objects) -> anyhow::Result<()> {
    let docs: Vec<Value> = ferroplane::manifest_yaml::documents(text)
        .with_context(|| format!("{source} is not YAML or JSON"))?;
    for doc in docs.into_iter().filter(|d| !d.is_null()) {
        let kind = doc["kind"].as_str().unwrap_or_default().to_owned();
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        if kind == ECSInstance::kind(&()) && api_version.starts_with(GROUP) {
            let mut instance: ECSInstance = serde_json::from_value(doc)
                .with_context(|| format!("{source}: not a valid ECSInstance"))?;
            if instance.metadata.namespace.is_none() {
                instance.metadata.namespace = Some(namespace.to_owned());
            }
            into.instances.push(instance);
        } else if kind == ECSFleet::kind(&()) && api_version.starts_with(GROUP) {
            let mut fleet: ECSFleet = serde_json::from_value(doc)
                .with_context(|| format!("{source}: not a valid ECSFleet"))?;
            if fleet.metadata.namespace.is_none() {
                fleet.metadata.namespace = Some(namespace.to_owned());
            }
            into.fleets.push(fleet);
        } else if let Some(cloud_kind) = KINDS
            .iter()
            .find(|k| **k == kind && api_version.starts_with(GROUP))
        {
            let mut doc = doc;
            if doc["metadata"]["namespace"]
                .as_str()
                .is_none_or(str::is_empty)
            {
                doc["metadata"]["namespace"] = Value::from(namespace);
            }
            into.cloud.push((cloud_kind, doc));
        } else {
            let name = doc["metadata"]["name"].as_str().unwrap_or_default();
            into.skipped.push(format!("{kind} {name}"));
        }
    }
    Ok(())
}

/// The manifests at `path` (`-` for stdin).
pub fn read(path: &Path, namespace: &str) -> anyhow::Result<Objects> {
    let mut objects = Objects::default();
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        parse(&text, "stdin", namespace, &mut objects)?;
        return Ok(objects);
    }
    let files = if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            })
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        parse(&text, &file.display().to_string(), namespace, &mut objects)?;
    }
    Ok(objects)
}

/// The planned objects of `namespace` (all when `None`) matching `selector`.
pub async fn list(
    client: &kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> anyhow::Result<Objects> {
    let api: Api<ECSInstance> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let mut params = ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    let mut instances = api
        .list(&params)
        .await
        .context("cannot list ECSInstances")?
        .items;
    instances.sort_by_key(|i| (i.namespace(), i.name_any()));
    let mut cloud = Vec::new();
    for kind in KINDS {
        for doc in cloud_kinds::list(kind, client, namespace, selector).await? {
            cloud.push((kind, doc));
        }
    }
    let fleets = super::fleets::list(client, namespace, selector).await?;
    Ok(Objects {
        instances,
        cloud,
        fleets,
        skipped: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planned_kinds_are_taken_with_a_namespace_and_other_kinds_are_counted() {
        let text = r#"
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: web
spec:
  forProvider:
    regionId: cn-beijing
    imageId: ubuntu
    instanceType: ecs.g7.large
---
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: VPC
metadata:
  name: net
---
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: EIPAssociation
metadata:
  name: bind
---
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSFleet
metadata:
  name: web
spec:
  replicas: 2
  template:
    spec:
      forProvider: {regionId: cn-beijing, imageId: ubuntu}
  placement:
    zones: [{zoneId: cn-beijing-h, vSwitchIdRef: {name: vsw}}]
    instanceTypes: [ecs.g7.large]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
---
"#;
        let mut objects = Objects::default();
        parse(text, "test", "prod", &mut objects).unwrap();
        assert_eq!(objects.instances.len(), 1);
        assert_eq!(objects.instances[0].namespace().as_deref(), Some("prod"));
        assert_eq!(objects.cloud.len(), 2);
        assert_eq!(objects.cloud[0].0, "VPC");
        assert_eq!(objects.cloud[0].1["metadata"]["namespace"], "prod");
        assert_eq!(objects.cloud[1].0, "EIPAssociation");
        assert_eq!(objects.fleets.len(), 1);
        assert_eq!(objects.fleets[0].namespace().as_deref(), Some("prod"));
        assert_eq!(objects.skipped, ["ConfigMap settings"]);
    }

    #[test]
    fn a_malformed_instance_is_an_error_naming_its_source() {
        let text = "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ECSInstance\nmetadata: {name: x}\nspec: 3\n";
        let error = parse(text, "a.yaml", "ns", &mut Objects::default()).unwrap_err();
        assert!(format!("{error:#}").contains("a.yaml"), "{error:#}");
    }
}
