//! The mock's own record of every resource, whatever its kind and account: one row per live
//! instance, VPC, vSwitch, security group, security group rule, disk, key pair, EIP, EIP
//! association, NAT gateway, SNAT entry and DNAT entry ([`ResourceRecord`]), as tests
//! read them to find duplicates and leaks; and the whole state of one resource a call names,
//! which the ledger compares before and after the call.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::network::network_status;
use crate::store::Store;

/// The kinds of resource the mock keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ResourceKind {
    Instance,
    Vpc,
    VSwitch,
    SecurityGroup,
    Disk,
    KeyPair,
    Eip,
    /// An EIP's association with a resource, `<allocationId>:<instanceId>`, while it lasts.
    EipAssociation,
    NatGateway,
    SnatEntry,
    /// A DNAT entry (the API's forward entry).
    ForwardEntry,
    /// One rule of a security group, `sgr-…`.
    SecurityGroupRule,
}

/// One live resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRecord {
    pub kind: ResourceKind,
    /// `i-…`, `vpc-…`, `vsw-…`, `sg-…`, `sgr-…`, `d-…`, `eip-…`, a key pair's `skp-…`, an EIP
    /// association's `eip-…:i-…` (or `eip-…:ngw-…`), `ngw-…`, `snat-…` or `fwd-…`.
    pub id: String,
    pub account_id: String,
    pub region_id: String,
    /// The resource's name (a key pair's name is its handle in the API).
    pub name: String,
    /// As the API reports it (`Running`, `Available`, `In_use`, …).
    pub status: String,
    pub tags: BTreeMap<String, String>,
}

/// A resource's record and a digest of everything the mock keeps about it.
pub(crate) struct ResourceState {
    pub record: ResourceRecord,
    pub digest: u64,
}

fn digest(state: &impl std::fmt::Debug) -> u64 {
    let mut hasher = DefaultHasher::new();
    format!("{state:?}").hash(&mut hasher);
    hasher.finish()
}

/// A record's fields, in the order of [`ResourceRecord`].
type Fields<'a> = (
    ResourceKind,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a [(String, String)],
);

fn row((kind, account, id, region, name, status, tags): Fields<'_>) -> ResourceRecord {
    ResourceRecord {
        kind,
        id: id.to_owned(),
        account_id: account.to_owned(),
        region_id: region.to_owned(),
        name: name.to_owned(),
        status: status.to_owned(),
        tags: tags.iter().cloned().collect(),
    }
}

/// The state of the resource `handle` names (an ID, or a key pair's name in `region_id`) in
/// `account_id`, if there is one.
pub(crate) fn state_of(
    store: &mut Store,
    account_id: &Arc<str>,
    region_id: Option<&'static str>,
    handle: &str,
    now: Timestamp,
) -> Option<ResourceState> {
    let account: &str = account_id;
    if let Some(i) = store.get(handle).filter(|i| i.account_id == *account_id) {
        let status = i.status(now).as_str();
        return Some(ResourceState {
            record: row((
                ResourceKind::Instance,
                account,
                &i.id,
                i.region_id,
                &i.name,
                status,
                &i.tags,
            )),
            digest: digest(i),
        });
    }
    let network = store.network.account(account_id);
    if let Some(v) = network.vpcs.get(handle) {
        let status = network_status(v.ready_at, now);
        return Some(ResourceState {
            record: row((
                ResourceKind::Vpc,
                account,
                &v.id,
                v.region_id,
                &v.name,
                status,
                &v.tags,
            )),
            digest: digest(v),
        });
    }
    if let Some(v) = network.vswitches.get(handle) {
        let status = network_status(v.ready_at, now);
        let kind = ResourceKind::VSwitch;
        return Some(ResourceState {
            record: row((kind, account, &v.id, v.region_id, &v.name, status, &v.tags)),
            digest: digest(v),
        });
    }
    if let Some(g) = network.groups.get(handle) {
        let kind = ResourceKind::SecurityGroup;
        return Some(ResourceState {
            record: row((
                kind,
                account,
                &g.id,
                g.region_id,
                &g.name,
                "Available",
                &g.tags,
            )),
            digest: digest(g),
        });
    }
    if let Some(e) = store
        .eips
        .get(handle)
        .filter(|e| e.account_id == *account_id)
    {
        let status = e.status(now);
        let kind = ResourceKind::Eip;
        return Some(ResourceState {
            record: row((kind, account, &e.id, e.region_id, &e.name, status, &e.tags)),
            digest: digest(e),
        });
    }
    if let Some(r) = nat_state(store, account_id, handle, now) {
        return Some(r);
    }
    store.disks.settle(now);
    if let Ok(d) = store.disks.find(account_id, handle) {
        return Some(ResourceState {
            record: row((
                ResourceKind::Disk,
                account,
                &d.id,
                d.region_id,
                &d.name,
                d.status(),
                &d.tags,
            )),
            digest: digest(d),
        });
    }
    let region_id = region_id?;
    let k = store.key_pairs.get(account_id, region_id, handle)?;
    Some(ResourceState {
        record: row((
            ResourceKind::KeyPair,
            account,
            &k.id,
            region_id,
            &k.name,
            "Available",
            &k.tags,
        )),
        digest: digest(k),
    })
}

/// The NAT gateway, SNAT entry or DNAT entry `handle` names in `account_id`. A gateway's digest
/// leaves out its entries, which are records of their own.
fn nat_state(
    store: &Store,
    account_id: &Arc<str>,
    handle: &str,
    now: Timestamp,
) -> Option<ResourceState> {
    let nat = &store.nat;
    if let Some(g) = nat
        .gateways
        .get(handle)
        .filter(|g| g.account_id == *account_id)
    {
        let kind = ResourceKind::NatGateway;
        let status = g.status(now);
        return Some(ResourceState {
            record: row((
                kind,
                account_id,
                &g.id,
                g.region_id,
                &g.name,
                status,
                &g.tags,
            )),
            digest: digest(g),
        });
    }
    if let Some(e) = nat
        .snat_entries
        .get(handle)
        .filter(|e| e.account_id == *account_id)
    {
        let kind = ResourceKind::SnatEntry;
        let status = e.status(now);
        return Some(ResourceState {
            record: row((kind, account_id, &e.id, e.region_id, &e.name, status, &[])),
            digest: digest(e),
        });
    }
    let e = nat
        .forward_entries
        .get(handle)
        .filter(|e| e.account_id == *account_id)?;
    let kind = ResourceKind::ForwardEntry;
    let status = e.status(now);
    Some(ResourceState {
        record: row((kind, account_id, &e.id, e.region_id, &e.name, status, &[])),
        digest: digest(e),
    })
}

fn rule_state(
    account: &str,
    group: &crate::network::SecurityGroup,
    rule: &crate::network::Rule,
) -> ResourceState {
    let kind = ResourceKind::SecurityGroupRule;
    ResourceState {
        record: row((
            kind,
            account,
            &rule.id,
            group.region_id,
            // A rule has no name; its description is what names it to a person.
            &rule.description,
            "Available",
            &[],
        )),
        digest: digest(rule),
    }
}

/// The rules `handle` names in `account_id`: every rule of a group (an Authorize call names
/// only its group, and the rule it adds has no ID in the answer), or the one rule of a rule ID.
pub(crate) fn rules_of(
    store: &mut Store,
    account_id: &Arc<str>,
    handle: &str,
) -> Vec<ResourceState> {
    let account: &str = account_id;
    let network = store.network.account(account_id);
    if let Some(g) = network.groups.get(handle) {
        return g.rules.iter().map(|r| rule_state(account, g, r)).collect();
    }
    if !handle.starts_with("sgr-") {
        return Vec::new();
    }
    network
        .groups
        .values()
        .flat_map(|g| g.rules.iter().map(move |r| (g, r)))
        .filter(|(_, r)| r.id == handle)
        .map(|(g, r)| rule_state(account, g, r))
        .collect()
}

/// The association of the EIP `handle` names in `account_id`, while it lasts: its own record,
/// so the ledger tells an association from a change of the EIP's settings.
pub(crate) fn association_of(
    store: &Store,
    account_id: &Arc<str>,
    handle: &str,
    now: Timestamp,
) -> Option<ResourceState> {
    let e = store
        .eips
        .get(handle)
        .filter(|e| e.account_id == *account_id)?;
    let id = e.association_id(now)?;
    let binding = e.bound(now)?;
    Some(ResourceState {
        record: row((
            ResourceKind::EipAssociation,
            account_id,
            &id,
            e.region_id,
            "",
            e.status(now),
            &[],
        )),
        digest: digest(&(binding.kind, &binding.instance_id)),
    })
}

/// Every live resource of every account: instances, then VPCs, vSwitches, security groups
/// (each account's default network included), disks, key pairs, EIPs, EIP associations, NAT
/// gateways, SNAT entries, DNAT entries and security group rules; oldest first per kind.
pub(crate) fn all(store: &mut Store, now: Timestamp) -> Vec<ResourceRecord> {
    let mut records = Vec::new();
    for i in store.all() {
        let status = i.status(now).as_str();
        records.push(row((
            ResourceKind::Instance,
            &i.account_id,
            &i.id,
            i.region_id,
            &i.name,
            status,
            &i.tags,
        )));
    }
    let mut network = Vec::new();
    for (account, net) in store.network.accounts() {
        for v in net.vpcs.values() {
            let status = network_status(v.ready_at, now);
            let r = row((
                ResourceKind::Vpc,
                account,
                &v.id,
                v.region_id,
                &v.name,
                status,
                &v.tags,
            ));
            network.push((v.seq, r));
        }
        for v in net.vswitches.values() {
            let status = network_status(v.ready_at, now);
            let kind = ResourceKind::VSwitch;
            network.push((
                v.seq,
                row((kind, account, &v.id, v.region_id, &v.name, status, &v.tags)),
            ));
        }
        for g in net.groups.values() {
            let kind = ResourceKind::SecurityGroup;
            let r = row((
                kind,
                account,
                &g.id,
                g.region_id,
                &g.name,
                "Available",
                &g.tags,
            ));
            network.push((g.seq, r));
        }
    }
    network.sort_by(|(a, ra), (b, rb)| (ra.kind, a).cmp(&(rb.kind, b)));
    records.extend(network.into_iter().map(|(_, r)| r));
    store.disks.settle(now);
    for d in store.disks.all() {
        records.push(row((
            ResourceKind::Disk,
            &d.account_id,
            &d.id,
            d.region_id,
            &d.name,
            d.status(),
            &d.tags,
        )));
    }
    let mut pairs: Vec<_> = store.key_pairs.all().collect();
    pairs.sort_by_key(|(_, _, k)| k.seq);
    for (account, region, k) in pairs {
        let kind = ResourceKind::KeyPair;
        records.push(row((
            kind,
            account,
            &k.id,
            region,
            &k.name,
            "Available",
            &k.tags,
        )));
    }
    let eips = store.eips.all();
    for e in &eips {
        let status = e.status(now);
        let kind = ResourceKind::Eip;
        let r = row((
            kind,
            &e.account_id,
            &e.id,
            e.region_id,
            &e.name,
            status,
            &e.tags,
        ));
        records.push(r);
    }
    for e in &eips {
        if let Some(state) = association_of(store, &e.account_id, &e.id, now) {
            records.push(state.record);
        }
    }
    let gateways = store.nat.all();
    let mut entries: Vec<(u64, ResourceRecord)> = Vec::new();
    for g in &gateways {
        records.extend(nat_state(store, &g.account_id, &g.id, now).map(|s| s.record));
        for e in store.nat.snat_of(&g.snat_table_id) {
            entries.extend(nat_state(store, &e.account_id, &e.id, now).map(|s| (e.seq, s.record)));
        }
        for e in store.nat.forward_of(&g.forward_table_id) {
            entries.extend(nat_state(store, &e.account_id, &e.id, now).map(|s| (e.seq, s.record)));
        }
    }
    entries.sort_by(|(a, ra), (b, rb)| (ra.kind, a).cmp(&(rb.kind, b)));
    records.extend(entries.into_iter().map(|(_, r)| r));
    for (account, net) in store.network.accounts() {
        let mut groups: Vec<_> = net.groups.values().collect();
        groups.sort_by_key(|g| g.seq);
        for g in groups {
            records.extend(g.rules.iter().map(|r| rule_state(account, g, r).record));
        }
    }
    records
}
