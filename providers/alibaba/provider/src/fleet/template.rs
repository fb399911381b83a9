//! A fleet's template → the ECSInstance objects it makes, and the hash that tells instances of
//! the current template from old ones.
//!
//! The hash covers what only a new instance can take: the `providerConfigRef` and the
//! `forProvider` properties that ECSInstance's field table classes restart-bound or immutable
//! (`imageId`, `userData`, `dataDisks`, …). A change to any other property (in place or
//! management: tags, name, security groups, bandwidth, …) keeps the hash and is written to every
//! instance object, whose own controller applies it in place.

use std::collections::BTreeSet;

use ferroplane_apis::alibabacloud::{
    ECSFleet, ECSInstance, FLEET_LABEL, FleetZone, TEMPLATE_HASH_LABEL,
};
use kube::{Resource, ResourceExt};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::placement::Placement;

/// Top-level `forProvider` properties a changed value of which needs a new instance: those with
/// a restart-bound or immutable row (nested rows count for their top-level property).
pub fn replacing_properties() -> BTreeSet<&'static str> {
    crate::ecs_instance::field_classes()
        .into_iter()
        .filter(|(_, class)| matches!(*class, "restart" | "immutable"))
        .map(|(path, _)| path.split('.').next().unwrap_or(path))
        .collect()
}

/// The template hash: 8 hex digits of SHA-256 over the provider config and the replacing
/// properties the template sets, in a canonical (sorted) JSON form.
pub fn template_hash(fleet: &ECSFleet, replacing: &BTreeSet<&str>) -> String {
    let spec = &fleet.spec.template.spec;
    let kept: Map<String, Value> = spec
        .for_provider
        .0
        .iter()
        .filter(|(key, _)| replacing.contains(key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // serde_json's Map is ordered by key (no `preserve_order`), so this text is canonical.
    let text =
        json!({"providerConfigRef": spec.provider_config_ref, "forProvider": kept}).to_string();
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// The name of the `ordinal`th instance object of a template.
pub fn member_name(fleet: &str, hash: &str, ordinal: u32) -> String {
    format!("{fleet}-{hash}-{ordinal}")
}

/// The ordinal at the end of a member's name, if it is one of `fleet`'s.
pub fn ordinal_of(fleet: &str, name: &str) -> Option<u32> {
    let rest = name.strip_prefix(fleet)?.strip_prefix('-')?;
    let (_hash, ordinal) = rest.split_once('-')?;
    ordinal.parse().ok()
}

/// The new instance object for `placement`.
pub fn render_member(
    fleet: &ECSFleet,
    hash: &str,
    ordinal: u32,
    placement: &Placement,
) -> Result<ECSInstance, serde_json::Error> {
    let fleet_name = fleet.name_any();
    let template = &fleet.spec.template;
    let mut labels = template.metadata.labels.clone();
    labels.insert(FLEET_LABEL.to_owned(), fleet_name.clone());
    labels.insert(TEMPLATE_HASH_LABEL.to_owned(), hash.to_owned());
    let mut for_provider = template.spec.for_provider.0.clone();
    let zone: &FleetZone = &fleet.spec.placement.zones[placement.zone];
    for_provider.insert("zoneId".into(), json!(zone.zone_id));
    for_provider.insert("instanceType".into(), json!(placement.instance_type));
    if let Some(id) = &zone.v_switch_id {
        for_provider.insert("vSwitchId".into(), json!(id));
    }
    if let Some(reference) = &zone.v_switch_id_ref {
        for_provider.insert("vSwitchIdRef".into(), serde_json::to_value(reference)?);
    }
    if let Some(selector) = &zone.v_switch_id_selector {
        for_provider.insert("vSwitchIdSelector".into(), serde_json::to_value(selector)?);
    }
    let owner = fleet.controller_owner_ref(&()).map(|mut o| {
        o.block_owner_deletion = Some(true);
        o
    });
    serde_json::from_value(json!({
        "apiVersion": ECSInstance::api_version(&()),
        "kind": ECSInstance::kind(&()),
        "metadata": {
            "name": member_name(&fleet_name, hash, ordinal),
            "namespace": fleet.namespace(),
            "labels": labels,
            "annotations": template.metadata.annotations,
            "ownerReferences": owner.into_iter().collect::<Vec<_>>(),
        },
        "spec": {
            "deletionPolicy": fleet.spec.deletion_policy,
            "managementPolicies": ["*"],
            "providerConfigRef": template.spec.provider_config_ref,
            "forProvider": for_provider,
        }
    }))
}

/// The merge patch that brings an existing member's in-place properties, labels and
/// annotations to the template's, or `None` when it already has them. Replacing properties are
/// left alone (an old member keeps its own until it is replaced), and so are properties the
/// template does not set (the instance may have late-initialized them from the cloud).
pub fn in_place_patch(
    fleet: &ECSFleet,
    member: &ECSInstance,
    replacing: &BTreeSet<&str>,
) -> Option<Value> {
    let template = &fleet.spec.template;
    let current = serde_json::to_value(&member.spec.for_provider).ok()?;
    let mut for_provider = Map::new();
    for (key, wanted) in &template.spec.for_provider.0 {
        if replacing.contains(key.as_str()) {
            continue;
        }
        if current.get(key) != Some(wanted) {
            let change = match current.get(key) {
                Some(had) => merge_diff(had, wanted),
                None => wanted.clone(),
            };
            for_provider.insert(key.clone(), change);
        }
    }
    let labels: Map<String, Value> = template
        .metadata
        .labels
        .iter()
        .filter(|(k, v)| member.labels().get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let annotations: Map<String, Value> = template
        .metadata
        .annotations
        .iter()
        .filter(|(k, v)| member.annotations().get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let deletion_policy = (member.spec.deletion_policy != fleet.spec.deletion_policy)
        .then(|| json!(fleet.spec.deletion_policy));
    if for_provider.is_empty()
        && labels.is_empty()
        && annotations.is_empty()
        && deletion_policy.is_none()
    {
        return None;
    }
    let mut patch = json!({});
    if !labels.is_empty() || !annotations.is_empty() {
        patch["metadata"] = json!({"labels": labels, "annotations": annotations});
    }
    if !for_provider.is_empty() {
        patch["spec"]["forProvider"] = Value::Object(for_provider);
    }
    if let Some(policy) = deletion_policy {
        patch["spec"]["deletionPolicy"] = policy;
    }
    Some(patch)
}

/// The JSON merge patch (RFC 7386) that turns `had` into `wanted`: objects member by member,
/// with `null` for a member `wanted` no longer has (a tag removed from the template is removed
/// from the member); anything else whole.
fn merge_diff(had: &Value, wanted: &Value) -> Value {
    match (had, wanted) {
        (Value::Object(old), Value::Object(new)) => {
            let mut patch = Map::new();
            for (key, value) in new {
                match old.get(key) {
                    Some(was) if was == value => {}
                    Some(was) => {
                        patch.insert(key.clone(), merge_diff(was, value));
                    }
                    None => {
                        patch.insert(key.clone(), value.clone());
                    }
                }
            }
            for key in old.keys().filter(|k| !new.contains_key(*k)) {
                patch.insert(key.clone(), Value::Null);
            }
            Value::Object(patch)
        }
        _ => wanted.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(for_provider: Value) -> ECSFleet {
        let mut fleet: ECSFleet = serde_json::from_value(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ECSFleet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "u-1"},
            "spec": {
                "replicas": 2,
                "template": {"spec": {"forProvider": for_provider}},
                "placement": {
                    "zones": [{"zoneId": "cn-hangzhou-b", "vSwitchIdRef": {"name": "vsw-b"}}],
                    "instanceTypes": ["ecs.g6.large"],
                },
            }
        }))
        .unwrap();
        fleet.metadata.uid = Some("u-1".into());
        fleet
    }

    fn base() -> Value {
        json!({"regionId": "cn-hangzhou", "imageId": "img-1", "instanceName": "web", "securityGroupIds": ["sg-1"]})
    }

    #[test]
    fn only_a_change_that_needs_a_new_instance_changes_the_hash() {
        let replacing = replacing_properties();
        assert!(replacing.contains("imageId") && replacing.contains("userData"));
        assert!(!replacing.contains("instanceName") && !replacing.contains("tags"));
        let h = template_hash(&fleet(base()), &replacing);
        assert_eq!(h.len(), 8);
        let mut renamed = base();
        renamed["instanceName"] = json!("web-2");
        assert_eq!(template_hash(&fleet(renamed), &replacing), h);
        let mut new_image = base();
        new_image["imageId"] = json!("img-2");
        assert_ne!(template_hash(&fleet(new_image), &replacing), h);
    }

    #[test]
    fn a_member_gets_its_placement_labels_and_owner() {
        let f = fleet(base());
        let placement = Placement {
            zone: 0,
            instance_type: "ecs.g6.large".into(),
        };
        let member = render_member(&f, "abcd1234", 3, &placement).unwrap();
        assert_eq!(member.name_any(), "web-abcd1234-3");
        assert_eq!(ordinal_of("web", "web-abcd1234-3"), Some(3));
        assert_eq!(ordinal_of("web", "webx-abcd1234-3"), None);
        assert_eq!(member.labels()[FLEET_LABEL], "web");
        assert_eq!(member.labels()[TEMPLATE_HASH_LABEL], "abcd1234");
        let p = &member.spec.for_provider;
        assert_eq!(p.zone_id.as_deref(), Some("cn-hangzhou-b"));
        assert_eq!(p.instance_type, "ecs.g6.large");
        assert_eq!(
            p.v_switch_id_ref.as_ref().map(|r| r.name.as_str()),
            Some("vsw-b")
        );
        let owner = &member.owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("ECSFleet", "u-1")
        );
        assert_eq!(owner.controller, Some(true));
    }

    #[test]
    fn the_in_place_patch_carries_only_what_differs_and_never_a_replacing_property() {
        let replacing = replacing_properties();
        let f = fleet(base());
        let placement = Placement {
            zone: 0,
            instance_type: "ecs.g6.large".into(),
        };
        let member = render_member(&f, "h", 0, &placement).unwrap();
        assert_eq!(in_place_patch(&f, &member, &replacing), None);
        let mut changed = base();
        changed["instanceName"] = json!("web-2");
        changed["imageId"] = json!("img-2");
        let patch = in_place_patch(&fleet(changed), &member, &replacing).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"forProvider": {"instanceName": "web-2"}}})
        );
        // A tag removed from the template is removed from the member; a kept one is not sent.
        let mut tagged = base();
        tagged["tags"] = json!({"team": "web", "tier": "front"});
        let member = render_member(&fleet(tagged), "h", 0, &placement).unwrap();
        let mut fewer = base();
        fewer["tags"] = json!({"team": "web"});
        let patch = in_place_patch(&fleet(fewer), &member, &replacing).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"forProvider": {"tags": {"tier": null}}}})
        );
    }
}
