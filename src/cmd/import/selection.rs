//! Applies a [`Selector`] to what was read ([`select`]). Pure.
//!
//! Beyond what the selector names, the selection takes what the selected resources stand on, so
//! that every reference of the manifests resolves inside the import: an instance brings its VPC,
//! vSwitch, security groups and key pair; a vSwitch or group brings its VPC. `--vpc-id` and
//! `--instance-ids` also bring the data disks attached to the selected instances; `--tag` takes
//! the disks carrying the tags.

use std::collections::BTreeSet;

use super::inventory::Inventory;
use super::selector::{Selector, TagFilter};

/// The IDs (names, for key pairs) chosen of each kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub vpcs: BTreeSet<String>,
    pub vswitches: BTreeSet<String>,
    pub groups: BTreeSet<String>,
    pub instances: BTreeSet<String>,
    pub disks: BTreeSet<String>,
    pub key_pairs: BTreeSet<String>,
}

fn has_all<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>, tags: &[TagFilter]) -> bool {
    let pairs: Vec<(&str, &str)> = pairs.collect();
    !tags.is_empty()
        && tags
            .iter()
            .all(|t| pairs.iter().any(|(k, v)| *k == t.key && *v == t.value))
}

/// The resources of `inventory` that `selector` takes, with what they stand on.
pub fn select(inventory: &Inventory, selector: &Selector) -> Selection {
    let mut s = Selection::default();
    match selector {
        Selector::All => {
            s.vpcs
                .extend(inventory.vpcs.iter().map(|v| v.vpc_id.clone()));
            s.vswitches
                .extend(inventory.vswitches.iter().map(|v| v.vswitch_id.clone()));
            s.groups.extend(
                inventory
                    .groups
                    .iter()
                    .map(|g| g.group.security_group_id.clone()),
            );
            s.instances
                .extend(inventory.instances.iter().map(|i| i.instance_id.clone()));
            s.disks
                .extend(inventory.disks.iter().map(|d| d.disk_id.clone()));
            s.key_pairs
                .extend(inventory.key_pairs.iter().map(|k| k.key_pair_name.clone()));
        }
        Selector::Vpc(id) => {
            s.vpcs.insert(id.clone());
            s.vswitches.extend(
                inventory
                    .vswitches
                    .iter()
                    .filter(|v| &v.vpc_id == id)
                    .map(|v| v.vswitch_id.clone()),
            );
            s.groups.extend(
                inventory
                    .groups
                    .iter()
                    .filter(|g| &g.group.vpc_id == id)
                    .map(|g| g.group.security_group_id.clone()),
            );
            s.instances.extend(
                inventory
                    .instances
                    .iter()
                    .filter(|i| &i.vpc_attributes.vpc_id == id)
                    .map(|i| i.instance_id.clone()),
            );
            attached_disks(inventory, &mut s);
        }
        Selector::Instances(ids) => {
            s.instances.extend(
                inventory
                    .instances
                    .iter()
                    .filter(|i| ids.contains(&i.instance_id))
                    .map(|i| i.instance_id.clone()),
            );
            attached_disks(inventory, &mut s);
        }
        Selector::Tags(tags) => {
            s.vpcs.extend(
                inventory
                    .vpcs
                    .iter()
                    .filter(|v| has_all(v.tags.pairs(), tags))
                    .map(|v| v.vpc_id.clone()),
            );
            s.vswitches.extend(
                inventory
                    .vswitches
                    .iter()
                    .filter(|v| has_all(v.tags.pairs(), tags))
                    .map(|v| v.vswitch_id.clone()),
            );
            s.groups.extend(
                inventory
                    .groups
                    .iter()
                    .filter(|g| has_all(g.group.tags.pairs(), tags))
                    .map(|g| g.group.security_group_id.clone()),
            );
            s.instances.extend(
                inventory
                    .instances
                    .iter()
                    .filter(|i| has_all(i.tags.pairs(), tags))
                    .map(|i| i.instance_id.clone()),
            );
            s.disks.extend(
                inventory
                    .disks
                    .iter()
                    .filter(|d| has_all(d.tags.pairs(), tags))
                    .map(|d| d.disk_id.clone()),
            );
            s.key_pairs.extend(
                inventory
                    .key_pairs
                    .iter()
                    .filter(|k| has_all(k.tags.pairs(), tags))
                    .map(|k| k.key_pair_name.clone()),
            );
        }
    }
    dependencies(inventory, &mut s);
    s
}

/// The data disks attached to the selected instances.
fn attached_disks(inventory: &Inventory, s: &mut Selection) {
    s.disks.extend(
        inventory
            .disks
            .iter()
            .filter(|d| s.instances.contains(&d.instance_id))
            .map(|d| d.disk_id.clone()),
    );
}

/// What the selected instances, vSwitches and groups stand on.
fn dependencies(inventory: &Inventory, s: &mut Selection) {
    for i in inventory
        .instances
        .iter()
        .filter(|i| s.instances.contains(&i.instance_id))
    {
        s.vswitches.insert(i.vpc_attributes.vswitch_id.clone());
        s.vpcs.insert(i.vpc_attributes.vpc_id.clone());
        s.groups.extend(i.security_group_ids.items.iter().cloned());
        if !i.key_pair_name.is_empty() {
            s.key_pairs.insert(i.key_pair_name.clone());
        }
    }
    for v in inventory
        .vswitches
        .iter()
        .filter(|v| s.vswitches.contains(&v.vswitch_id))
    {
        s.vpcs.insert(v.vpc_id.clone());
    }
    for g in inventory
        .groups
        .iter()
        .filter(|g| s.groups.contains(&g.group.security_group_id))
    {
        if !g.group.vpc_id.is_empty() {
            s.vpcs.insert(g.group.vpc_id.clone());
        }
    }
    s.vswitches.retain(|id| !id.is_empty());
    s.vpcs.retain(|id| !id.is_empty());
}
