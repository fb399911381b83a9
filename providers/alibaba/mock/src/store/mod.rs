//! The instance store: instances indexed by ID and by (account, region) in creation order,
//! ClientToken records, and the lookups every action needs. Its mutations are in the children:
//! `launch` (RunInstances), `listing` (DescribeInstances' filters and pages) and `lifecycle`
//! (start, stop, reboot and release).
//!
//! All methods are synchronous and run under one mutex held by the server; none of them is
//! slower than a scan of one (account, region), and lookups by ID are hash lookups.

mod launch;
pub mod lifecycle;
pub mod listing;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use crate::disks::DiskStore;
use crate::eips::EipStore;
use crate::error::ErrorResponse;
use crate::instance::StoredInstance;
use crate::key_pairs::KeyPairStore;
use crate::nat_gateways::NatStore;
use crate::network::NetworkStore;
use crate::prefix_lists::PrefixListStore;
use crate::stock::Stock;
use crate::visibility::Releasing;

type Scope = (Arc<str>, &'static str);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TokenKey {
    account_id: Arc<str>,
    region_id: String,
    action: &'static str,
    token: String,
}

#[derive(Debug, Clone)]
struct TokenRecord {
    fingerprint: u64,
    instance_ids: Vec<String>,
}

/// Every instance of the mock.
#[derive(Default)]
pub struct Store {
    instances: HashMap<String, StoredInstance>,
    by_scope: HashMap<Scope, BTreeMap<u64, String>>,
    /// Instance IDs by tag (key, value), for tag filters without a scan: the candidates a
    /// filter still checks, so an entry left behind by an untag or a release does no harm.
    by_tag: HashMap<(String, String), HashSet<String>>,
    live_per_account: HashMap<Arc<str>, usize>,
    tokens: HashMap<TokenKey, TokenRecord>,
    next_seq: u64,
    created_total: u64,
    /// VPCs, vSwitches and security groups per account.
    pub network: NetworkStore,
    /// Cloud disks.
    pub disks: DiskStore,
    /// SSH key pairs.
    pub key_pairs: KeyPairStore,
    /// Elastic IP addresses.
    pub eips: EipStore,
    /// NAT gateways with their SNAT and DNAT entries.
    pub nat: NatStore,
    /// Capacity per (zone, instance type).
    pub stock: Stock,
    /// ECS prefix lists.
    pub prefix_lists: PrefixListStore,
    /// How long creates and releases take to show in listings.
    pub visibility_lag: Duration,
    /// Released instances still listed during the lag.
    releasing: Releasing,
}

/// The private address of the `seq`-th instance in a vSwitch's block (skipping the first 10
/// addresses, and wrapping in a full block), and its public one from 47.96.0.0/12.
fn addresses(seq: u64, block: crate::cidr::Cidr) -> (Ipv4Addr, Ipv4Addr) {
    let usable = block.size().saturating_sub(16).max(1);
    let private = block.address(10 + seq % usable);
    let n = u32::try_from(seq % ((1 << 20) - 16)).unwrap_or(0) + 10;
    let public = Ipv4Addr::from(u32::from(Ipv4Addr::new(47, 96, 0, 0)) + n);
    (private, public)
}

impl Store {
    /// The public address an instance gets when bandwidth is first granted.
    pub fn public_ip(seq: u64) -> Ipv4Addr {
        addresses(seq, crate::defaults::vpc_cidr()).1
    }

    /// An empty store whose listings lag creates and releases by `lag`.
    pub fn with_visibility_lag(lag: Duration) -> Self {
        Self {
            visibility_lag: lag,
            ..Self::default()
        }
    }

    /// Instances ever created.
    pub fn created_total(&self) -> u64 {
        self.created_total
    }

    /// The primary private IPs held in `vswitch_id`.
    pub fn private_ips(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        vswitch_id: &str,
    ) -> BTreeSet<Ipv4Addr> {
        self.in_region(account_id, region_id)
            .filter(|i| i.vswitch_id == vswitch_id)
            .map(|i| i.private_ip)
            .collect()
    }

    /// Instances not deleted.
    pub fn live(&self) -> usize {
        self.instances.len()
    }

    /// How many of `ids` name an instance that exists but is not listed yet (see
    /// `visibility_lag`).
    pub fn unlisted(&self, ids: &[String], now: Timestamp) -> usize {
        ids.iter()
            .filter(|id| {
                self.instances
                    .get(*id)
                    .is_some_and(|i| i.visible_from > now)
            })
            .count()
    }

    /// The instance, whoever owns it.
    pub fn get(&self, id: &str) -> Option<&StoredInstance> {
        self.instances.get(id)
    }

    /// The account's instances in a region, oldest first.
    pub fn in_region<'a>(
        &'a self,
        account_id: &Arc<str>,
        region_id: &'static str,
    ) -> impl Iterator<Item = &'a StoredInstance> + 'a {
        self.by_scope
            .get(&(account_id.clone(), region_id))
            .into_iter()
            .flat_map(|ids| ids.values())
            .filter_map(|id| self.instances.get(id))
    }

    /// Mutable [`Store::get`].
    pub fn get_mut(&mut self, id: &str) -> Option<&mut StoredInstance> {
        self.instances.get_mut(id)
    }

    /// The instance if it belongs to the account (and region, when given).
    pub fn find(
        &self,
        account_id: &str,
        region_id: Option<&str>,
        id: &str,
    ) -> Result<&StoredInstance, ErrorResponse> {
        self.instances
            .get(id)
            .filter(|i| &*i.account_id == account_id && region_id.is_none_or(|r| r == i.region_id))
            .ok_or_else(|| ErrorResponse::instance_not_found(id))
    }

    /// Records that instance `id` now carries tag (`key`, `value`).
    pub fn index_tag(&mut self, id: &str, key: &str, value: &str) {
        self.by_tag
            .entry((key.to_owned(), value.to_owned()))
            .or_default()
            .insert(id.to_owned());
    }

    /// Mutable [`Store::find`].
    pub fn find_mut(
        &mut self,
        account_id: &str,
        region_id: Option<&str>,
        id: &str,
    ) -> Result<&mut StoredInstance, ErrorResponse> {
        self.instances
            .get_mut(id)
            .filter(|i| &*i.account_id == account_id && region_id.is_none_or(|r| r == i.region_id))
            .ok_or_else(|| ErrorResponse::instance_not_found(id))
    }

    /// Instances of `account_id` in `region_id` that are in deployment set `id`.
    pub fn deployment_set_members(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        id: &str,
    ) -> usize {
        self.in_region(account_id, region_id)
            .filter(|i| i.deployment_set_id.as_deref() == Some(id))
            .count()
    }

    /// Every live instance, oldest first.
    pub fn all(&self) -> Vec<&StoredInstance> {
        let mut all: Vec<&StoredInstance> = self.instances.values().collect();
        all.sort_unstable_by_key(|i| i.seq);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch_spec::LaunchSpec;

    pub(super) fn spec() -> LaunchSpec {
        LaunchSpec::new(
            "cn-hangzhou",
            "centos_7_8_x64_20G_alibase_20200519.vhd",
            "ecs.g6.large",
        )
        .with_default_network()
    }

    pub(super) fn now() -> Timestamp {
        Timestamp::now()
    }

    #[test]
    fn addresses_are_distinct_per_sequence() {
        let block = crate::defaults::vswitch_cidr(1);
        assert_ne!(addresses(0, block), addresses(1, block));
        assert_eq!(addresses(0, block).0, Ipv4Addr::new(172, 16, 16, 10));
    }
}
