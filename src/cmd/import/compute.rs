//! ECSInstance, Disk and KeyPair manifests of existing resources. An instance's spec is
//! provider-alibaba's [`ecs_instance_imported_parameters`] (the spec whose first reconcile
//! plans no change), with its vSwitch, security groups and key pair by reference when the import
//! names them; a disk names its instance by `instanceIdRef` the same way. Pure.

use alibaba_sdk::ecs::{Disk as CloudDisk, Instance, KeyPair as CloudKeyPair};
use ferroplane_apis::alibabacloud::{
    Disk, DiskParameters, DiskSpec, ECSInstance, ECSInstanceSpec, KeyPair, KeyPairParameters,
    KeyPairSpec,
};
use ferroplane_apis::common::LocalSecretReference;
use ferroplane_apis::references::Reference;
use provider_alibaba::ecs_instance_imported_parameters;

use super::fields::{letter_name, text, user_tags};
use super::manifest::{Common, Manifest};
use super::network::reference;
use super::object_names::Names;

/// Most tags a spec of these kinds takes.
const MAX_TAGS: usize = 19;

/// The imported objects' names of every kind an instance or disk refers to.
pub struct Refs<'a> {
    pub vswitches: &'a Names,
    pub groups: &'a Names,
    pub key_pairs: &'a Names,
    pub instances: &'a Names,
}

pub fn instance(common: &Common, name: &str, found: &Instance, refs: &Refs<'_>) -> Manifest {
    let mut p = ecs_instance_imported_parameters(found);
    if let Some(id) = p.v_switch_id.take() {
        (p.v_switch_id, p.v_switch_id_ref) = reference(refs.vswitches, &id);
    }
    if let Some(ids) = p.security_group_ids.take() {
        // All by reference, or all as IDs: the two lists are not merged.
        let names: Option<Vec<Reference>> = ids
            .iter()
            .map(|id| {
                refs.groups
                    .get(id)
                    .map(|n| Reference { name: n.to_owned() })
            })
            .collect();
        match names {
            Some(names) => p.security_group_id_refs = Some(names),
            None => p.security_group_ids = Some(ids),
        }
    }
    if let Some(key) = p.key_pair_name.take() {
        (p.key_pair_name, p.key_pair_name_ref) = reference(refs.key_pairs, &key);
    }
    let object = ECSInstance {
        metadata: common.metadata(name, &found.instance_id),
        spec: ECSInstanceSpec {
            deletion_policy: common.management.deletion_policy(),
            management_policies: common.management.policies(),
            provider_config_ref: common.provider_config.clone(),
            write_connection_secret_to_ref: None,
            for_provider: p,
        },
        status: None,
    };
    Manifest::of("ECSInstance", name, &object)
}

pub fn disk(
    common: &Common,
    name: &str,
    region: &str,
    found: &CloudDisk,
    refs: &Refs<'_>,
) -> Manifest {
    let (instance_id, instance_id_ref) = reference(refs.instances, &found.instance_id);
    let essd = found.category == "cloud_essd";
    let object = Disk {
        metadata: common.metadata(name, &found.disk_id),
        spec: DiskSpec {
            deletion_policy: common.management.deletion_policy(),
            management_policies: common.management.policies(),
            provider_config_ref: common.provider_config.clone(),
            write_connection_secret_to_ref: None,
            for_provider: DiskParameters {
                region_id: region.to_owned(),
                zone_id: found.zone_id.clone(),
                category: (!found.category.is_empty()).then(|| found.category.clone()),
                size: i32::try_from(found.size).ok(),
                performance_level: (essd && !found.performance_level.is_empty())
                    .then(|| found.performance_level.clone()),
                encrypted: found.encrypted.then_some(true),
                kms_key_id: (found.encrypted && !found.kms_key_id.is_empty())
                    .then(|| found.kms_key_id.clone()),
                snapshot_id: None,
                disk_name: letter_name(&found.disk_name, 2, 128),
                description: text(&found.description, 2, 256),
                delete_auto_snapshot: Some(found.delete_auto_snapshot),
                tags: user_tags(found.tags.pairs(), MAX_TAGS),
                instance_id,
                instance_id_ref,
                instance_id_selector: None,
            },
        },
        status: None,
    };
    Manifest::of("Disk", name, &object)
}

/// A key pair. The cloud never hands out a private key again, so none is written; when it does
/// not report the public key either, the schema wants a connection Secret (`<name>-key-pair`),
/// which then gets the name and fingerprint.
pub fn key_pair(common: &Common, name: &str, region: &str, found: &CloudKeyPair) -> Manifest {
    let public_key = (!found.public_key.is_empty()).then(|| found.public_key.clone());
    let secret = public_key.is_none().then(|| LocalSecretReference {
        name: format!("{name}-key-pair"),
    });
    let object = KeyPair {
        metadata: common.metadata(name, &found.key_pair_name),
        spec: KeyPairSpec {
            deletion_policy: common.management.deletion_policy(),
            management_policies: common.management.policies(),
            provider_config_ref: common.provider_config.clone(),
            write_connection_secret_to_ref: secret,
            for_provider: KeyPairParameters {
                region_id: region.to_owned(),
                key_pair_name: Some(found.key_pair_name.clone()),
                public_key,
                tags: user_tags(found.tags.pairs(), MAX_TAGS).filter(|t| !t.is_empty()),
            },
        },
        status: None,
    };
    Manifest::of("KeyPair", name, &object)
}
