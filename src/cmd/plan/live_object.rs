//! A manifest planned against the object it would update: `kubectl apply` keeps the fields the
//! manifest does not set (the instance ID annotation, the fields the controller
//! late-initialized), so the object the next reconcile sees is the live one with the manifest's
//! fields over it. Without a live object the manifest is planned as it is (a create).

use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::names::EXTERNAL_NAME;
use kube::{Api, ResourceExt as _};

/// `manifest` as it would be after `kubectl apply` over `live`: its annotations and
/// `spec.forProvider` fields added to the live ones, the live object's UID, creation time and
/// deletion state kept.
pub fn applied_over(manifest: &ECSInstance, live: &ECSInstance) -> ECSInstance {
    let mut applied = manifest.clone();
    if let Some(name) = live.annotations().get(EXTERNAL_NAME) {
        applied
            .annotations_mut()
            .entry(EXTERNAL_NAME.to_owned())
            .or_insert_with(|| name.clone());
    }
    applied.metadata.deletion_timestamp = live.metadata.deletion_timestamp.clone();
    // The same object: its identity (the ownership step compares its UID with the tag's).
    applied.metadata.uid = live.metadata.uid.clone();
    applied.metadata.creation_timestamp = live.metadata.creation_timestamp.clone();
    let merged = serde_json::to_value(&live.spec.for_provider)
        .ok()
        .zip(serde_json::to_value(&manifest.spec.for_provider).ok())
        .and_then(|(mut base, over)| {
            let fields = base.as_object_mut()?;
            for (key, value) in over.as_object()? {
                if !value.is_null() {
                    fields.insert(key.clone(), value.clone());
                }
            }
            serde_json::from_value(base).ok()
        });
    if let Some(spec) = merged {
        applied.spec.for_provider = spec;
    }
    applied
}

/// The manifest's labels and annotations (the JSON of an object, `over`) added to those of
/// `merged`, the live object's JSON, as `kubectl apply` adds them.
pub fn merge_labels_and_annotations(merged: &mut serde_json::Value, over: &serde_json::Value) {
    for key in ["labels", "annotations"] {
        if let Some(entries) = over["metadata"][key].as_object() {
            let target = &mut merged["metadata"][key];
            if !target.is_object() {
                *target = serde_json::Value::Object(serde_json::Map::new());
            }
            if let Some(target) = target.as_object_mut() {
                target.extend(entries.clone());
            }
        }
    }
}

/// The live object of `manifest`, if the cluster has one.
pub async fn live(
    client: &kube::Client,
    manifest: &ECSInstance,
) -> anyhow::Result<Option<ECSInstance>> {
    let ns = manifest.namespace().unwrap_or_default();
    let api: Api<ECSInstance> = Api::namespaced(client.clone(), &ns);
    Ok(api.get_opt(&manifest.name_any()).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(yaml: &str) -> ECSInstance {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn the_manifest_wins_and_what_it_leaves_unset_stays_live() {
        let live = object(
            "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ECSInstance\nmetadata:\n  name: web\n  annotations: {ferroplane.io/external-name: i-1}\nspec:\n  forProvider: {regionId: cn-beijing, zoneId: cn-beijing-h, imageId: img, instanceType: ecs.g6.large, instanceName: web}\n",
        );
        let manifest = object(
            "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ECSInstance\nmetadata: {name: web}\nspec:\n  forProvider: {regionId: cn-beijing, imageId: img, instanceType: ecs.g6.xlarge}\n",
        );
        let applied = applied_over(&manifest, &live);
        assert_eq!(
            applied.annotations().get(EXTERNAL_NAME).map(String::as_str),
            Some("i-1")
        );
        let p = &applied.spec.for_provider;
        assert_eq!(p.instance_type, "ecs.g6.xlarge");
        assert_eq!(p.instance_name.as_deref(), Some("web"));
        assert_eq!(p.zone_id.as_deref(), Some("cn-beijing-h"));
    }
}
