//! From what was read and selected to the manifests: resources ferroplane already manages (its
//! owner tag) are skipped with a note, the others get unique object names and their kind's
//! mapping, with references between them wired. Pure.

use super::compute::{self, Refs};
use super::fields::owned;
use super::inventory::Inventory;
use super::manifest::{Common, Manifest};
use super::network;
use super::object_names::Names;
use super::selection::Selection;

/// The import's result: manifests in dependency order (VPCs, vSwitches, groups, key pairs,
/// instances, disks), and notes for stderr.
#[derive(Debug, Default)]
pub struct Imported {
    pub manifests: Vec<Manifest>,
    pub notes: Vec<String>,
}

pub fn assemble(
    inventory: &Inventory,
    selection: &Selection,
    region: &str,
    common: &Common,
) -> Imported {
    let mut notes = Vec::new();
    let mut skip = |kind: &str, id: &str, is_owned: bool| {
        if is_owned {
            notes.push(format!(
                "skipped {kind} {id}: already managed by ferroplane (it carries the ferroplane.io/uid tag)"
            ));
        }
        !is_owned
    };
    let vpcs: Vec<_> = inventory
        .vpcs
        .iter()
        .filter(|v| selection.vpcs.contains(&v.vpc_id))
        .filter(|v| skip("VPC", &v.vpc_id, owned(v.tags.pairs())))
        .collect();
    let vswitches: Vec<_> = inventory
        .vswitches
        .iter()
        .filter(|v| selection.vswitches.contains(&v.vswitch_id))
        .filter(|v| skip("VSwitch", &v.vswitch_id, owned(v.tags.pairs())))
        .collect();
    let groups: Vec<_> = inventory
        .groups
        .iter()
        .filter(|g| selection.groups.contains(&g.group.security_group_id))
        .filter(|g| {
            skip(
                "SecurityGroup",
                &g.group.security_group_id,
                owned(g.group.tags.pairs()),
            )
        })
        .collect();
    let key_pairs: Vec<_> = inventory
        .key_pairs
        .iter()
        .filter(|k| selection.key_pairs.contains(&k.key_pair_name))
        .filter(|k| skip("KeyPair", &k.key_pair_name, owned(k.tags.pairs())))
        .collect();
    let instances: Vec<_> = inventory
        .instances
        .iter()
        .filter(|i| selection.instances.contains(&i.instance_id))
        .filter(|i| skip("ECSInstance", &i.instance_id, owned(i.tags.pairs())))
        .collect();
    let disks: Vec<_> = inventory
        .disks
        .iter()
        .filter(|d| selection.disks.contains(&d.disk_id))
        .filter(|d| skip("Disk", &d.disk_id, owned(d.tags.pairs())))
        .collect();

    let vpc_names = Names::assign(
        vpcs.iter()
            .map(|v| (v.vpc_id.as_str(), v.vpc_name.as_str())),
    );
    let vswitch_names = Names::assign(
        vswitches
            .iter()
            .map(|v| (v.vswitch_id.as_str(), v.vswitch_name.as_str())),
    );
    let group_names = Names::assign(groups.iter().map(|g| {
        (
            g.group.security_group_id.as_str(),
            g.group.security_group_name.as_str(),
        )
    }));
    let key_pair_names = Names::assign(
        key_pairs
            .iter()
            .map(|k| (k.key_pair_name.as_str(), k.key_pair_name.as_str())),
    );
    let instance_names = Names::assign(
        instances
            .iter()
            .map(|i| (i.instance_id.as_str(), i.instance_name.as_str())),
    );
    let disk_names = Names::assign(
        disks
            .iter()
            .map(|d| (d.disk_id.as_str(), d.disk_name.as_str())),
    );
    let name = |names: &Names, id: &str| {
        names
            .get(id)
            .expect("every imported resource is named")
            .to_owned()
    };

    let mut manifests = Vec::new();
    for v in &vpcs {
        manifests.push(network::vpc(
            common,
            &name(&vpc_names, &v.vpc_id),
            region,
            v,
        ));
    }
    for v in &vswitches {
        manifests.push(network::vswitch(
            common,
            &name(&vswitch_names, &v.vswitch_id),
            region,
            v,
            &vpc_names,
        ));
    }
    for g in &groups {
        let id = &g.group.security_group_id;
        let (manifest, unlisted) =
            network::security_group(common, &name(&group_names, id), region, g, &vpc_names);
        if unlisted {
            notes.push(format!(
                "SecurityGroup {id}: some rules name a group, an IPv6 block or a prefix list, which the spec does not list; its rulesPolicy is Additive so that they are kept (manage them as SecurityGroupRule objects)"
            ));
        }
        manifests.push(manifest);
    }
    for k in &key_pairs {
        manifests.push(compute::key_pair(
            common,
            &name(&key_pair_names, &k.key_pair_name),
            region,
            k,
        ));
    }
    let refs = Refs {
        vswitches: &vswitch_names,
        groups: &group_names,
        key_pairs: &key_pair_names,
        instances: &instance_names,
    };
    for i in &instances {
        manifests.push(compute::instance(
            common,
            &name(&instance_names, &i.instance_id),
            i,
            &refs,
        ));
    }
    for d in &disks {
        manifests.push(compute::disk(
            common,
            &name(&disk_names, &d.disk_id),
            region,
            d,
            &refs,
        ));
    }
    Imported { manifests, notes }
}
