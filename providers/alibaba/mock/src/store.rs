//! The instance store: instances indexed by ID and by (account, region) in creation order,
//! ClientToken records, and every mutation the actions need.
//!
//! All methods are synchronous and run under one mutex held by the server; none of them is
//! slower than a scan of one (account, region), and lookups by ID are hash lookups.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use rand::Rng as _;

use crate::disks::DiskStore;
use crate::error::ErrorResponse;
use crate::instance::{Lifecycle, Phase, Renewal, Status, StoredInstance};
use crate::key_pairs::KeyPairStore;
use crate::launch::LaunchSpec;
use crate::network::NetworkStore;
use crate::visibility::{Releasing, after_lag};

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

/// Hash of the parameters a ClientToken call was made with.
pub fn fingerprint(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// How DeleteInstance(s) was asked to release: `Force` and `TerminateSubscription`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Release {
    pub force: bool,
    pub terminate_subscription: bool,
}

#[cfg(test)]
impl Release {
    /// `Force` only.
    pub fn forced(force: bool) -> Self {
        Self {
            force,
            terminate_subscription: false,
        }
    }
}

/// Filters of `DescribeInstances`; `None`/empty means "any".
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub instance_ids: Option<Vec<String>>,
    pub status: Option<Status>,
    pub instance_name: Option<String>,
    pub tags: Vec<(String, Option<String>)>,
    pub zone_id: Option<String>,
    pub vpc_id: Option<String>,
    pub vswitch_id: Option<String>,
    pub instance_type: Option<String>,
    pub image_id: Option<String>,
}

/// How a listing is cut into pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// `PageNumber` (1-based) and `PageSize`.
    Pages { number: usize, size: usize },
    /// `NextToken` (the sequence number to continue after) and `MaxResults`.
    Token { after: Option<u64>, max: usize },
}

/// One page of a listing.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    pub total: usize,
    pub instances: Vec<&'a StoredInstance>,
    /// Continue after this sequence number; `None` at the end.
    pub next: Option<u64>,
}

/// `*` matches any run of characters; everything else literally.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = parts.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

impl Filters {
    fn matches(&self, i: &StoredInstance, now: Timestamp) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        self.status.is_none_or(|s| i.status(now) == s)
            && self
                .instance_name
                .as_deref()
                .is_none_or(|p| glob_match(p, &i.name))
            && eq(&self.zone_id, &i.zone_id)
            && eq(&self.vpc_id, &i.vpc_id)
            && eq(&self.vswitch_id, &i.vswitch_id)
            && eq(&self.instance_type, i.instance_type.id)
            && eq(&self.image_id, i.image.id)
            && self.has_tags(i)
    }

    fn has_tags(&self, i: &StoredInstance) -> bool {
        self.tags.iter().all(|(k, v)| i.has_tag(k, v.as_deref()))
    }
}

/// How many tagged instances a tag-filtered `DescribeInstances` considers, over all pages.
pub const MAX_TAG_FILTERED_INSTANCES: usize = 1000;

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
    /// How long creates and releases take to show in listings.
    pub visibility_lag: Duration,
    /// Released instances still listed during the lag.
    releasing: Releasing,
}

fn new_instance_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let mut id = String::with_capacity(22);
    id.push_str("i-");
    for _ in 0..20 {
        id.push(char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]));
    }
    id
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
    ) -> std::collections::BTreeSet<Ipv4Addr> {
        self.in_region(account_id, region_id)
            .filter(|i| i.vswitch_id == vswitch_id)
            .map(|i| i.private_ip)
            .collect()
    }

    /// Instances not deleted.
    pub fn live(&self) -> usize {
        self.instances.len()
    }

    /// Creates `amount` instances (or returns the earlier ones for a repeated ClientToken).
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        account_id: &Arc<str>,
        spec: &LaunchSpec,
        amount: usize,
        now: Timestamp,
        delay: Duration,
        quota: Option<usize>,
    ) -> Result<Vec<String>, ErrorResponse> {
        let resolved = spec.resolve(self.network.account(account_id), now)?;
        self.check_key_pair(account_id, resolved.region.id, resolved.image, spec)?;
        let token_key = spec.client_token.as_ref().map(|token| TokenKey {
            account_id: account_id.clone(),
            region_id: spec.region_id.clone(),
            action: "RunInstances",
            token: token.clone(),
        });
        let print = fingerprint(&(spec, amount));
        if let Some(record) = token_key.as_ref().and_then(|key| self.tokens.get(key)) {
            return if record.fingerprint == print {
                Ok(record.instance_ids.clone())
            } else {
                Err(idempotent_mismatch())
            };
        }
        let live = self.live_per_account.get(account_id).copied().unwrap_or(0);
        if let Some(limit) = quota
            && live + amount > limit
        {
            return Err(ErrorResponse::forbidden(
                "QuotaExceed.ElasticQuota",
                format!(
                    "The number of instances would exceed the quota of this account ({limit}); {live} exist. Release instances or ask for a higher quota."
                ),
            ));
        }
        let mut held = self.private_ips(
            account_id,
            resolved.region.id,
            &resolved.placement.vswitch_id,
        );
        let asked = spec
            .private_ip_address
            .as_deref()
            .map(|text| {
                let ip = crate::private_ip::parse(text)?;
                crate::private_ip::check(
                    ip,
                    resolved.placement.vswitch_cidr,
                    &held,
                    crate::private_ip::Asked::AtLaunch,
                )
            })
            .transpose()?;
        if let Some(set) = spec.deployment_set_id.as_deref() {
            if !crate::deployment_sets::exists(resolved.region.id, set) {
                return Err(crate::deployment_sets::not_found());
            }
            let members =
                crate::deployment_sets::members(self, account_id, resolved.region.id, set);
            if members + amount > crate::deployment_sets::INSTANCES_PER_SET {
                return Err(crate::deployment_sets::full());
            }
        }
        let ipv6_block = self.ipv6_at_launch(account_id, &resolved, spec)?;
        if asked.is_some() && amount > 1 {
            // Every instance after the first would hold the same address.
            return Err(crate::private_ip::duplicated());
        }
        let scope = (account_id.clone(), resolved.region.id);
        let mut ids = Vec::with_capacity(amount);
        for _ in 0..amount {
            let mut id = new_instance_id();
            while self.instances.contains_key(&id) {
                id = new_instance_id();
            }
            let seq = self.next_seq;
            self.next_seq += 1;
            let (start, public_ip) = addresses(seq, resolved.placement.vswitch_cidr);
            let private_ip = match asked {
                Some(ip) => ip,
                // The mock never runs a vSwitch out of addresses (its scale tests hold more
                // instances than a block has; ECS would answer InvalidVSwitchId.IpNotEnough):
                // once every usable address is held, the sequence's address is reused.
                None if crate::private_ip::exhausted(resolved.placement.vswitch_cidr, &held) => {
                    start
                }
                None => crate::private_ip::allocate(resolved.placement.vswitch_cidr, start, &held)?,
            };
            held.insert(private_ip);
            let ipv6_addresses = match (ipv6_block, spec.ipv6_address_count) {
                (Some(block), Some(n)) => {
                    let taken = self.ipv6_held(account_id, &resolved);
                    crate::ipv6::allocate(block, &taken, n)
                }
                _ => Vec::new(),
            };
            let instance = StoredInstance {
                id: id.clone(),
                seq,
                account_id: account_id.clone(),
                region_id: resolved.region.id,
                zone_id: resolved.placement.zone_id.clone(),
                name: spec.instance_name.clone().unwrap_or_else(|| id.clone()),
                description: spec.description.clone().unwrap_or_default(),
                host_name: spec
                    .host_name
                    .clone()
                    .unwrap_or_else(|| format!("iZ{}Z", &id[2..])),
                instance_type: resolved.instance_type,
                image: resolved.image,
                charge_type: resolved.charge_type,
                expires_at: resolved.subscription.map(|s| s.expiry(now)),
                spot_strategy: resolved.spot_strategy,
                internet_charge_type: resolved.internet_charge_type,
                bandwidth_out: spec.internet_max_bandwidth_out,
                vpc_id: resolved.placement.vpc_id.clone(),
                vswitch_id: resolved.placement.vswitch_id.clone(),
                private_ip,
                public_ip: (spec.internet_max_bandwidth_out > 0).then_some(public_ip),
                security_group_ids: spec.security_group_ids.clone(),
                tags: spec.tags.clone(),
                deletion_protection: spec.deletion_protection,
                key_pair_name: spec.key_pair_name.clone().unwrap_or_default(),
                user_data: spec.user_data.clone(),
                password: crate::password::InstancePassword::at_launch(
                    spec.password_digest.clone(),
                ),
                created_at: now,
                visible_from: after_lag(now, self.visibility_lag),
                lifecycle: Lifecycle::new(Phase::Created, now, delay),
                stopped_mode: "KeepCharging",
                client_token: spec.client_token.clone(),
                ram_role_name: spec.ram_role_name.clone(),
                metadata: resolved.metadata,
                resource_group_id: resolved.resource_group_id.clone(),
                spot: resolved.spot,
                credit_specification: resolved.credit_specification,
                ipv6_addresses,
                deployment_set_id: spec.deployment_set_id.clone(),
                renewal: resolved.subscription.map(|s| Renewal {
                    auto_renew: s.auto_renew,
                    duration: s.auto_renew_period,
                    unit: match s.unit {
                        crate::subscription::PeriodUnit::Month => "Month",
                        crate::subscription::PeriodUnit::Week => "Week",
                    },
                }),
            };
            self.by_scope
                .entry(scope.clone())
                .or_default()
                .insert(seq, id.clone());
            for tag in &instance.tags {
                self.by_tag
                    .entry(tag.clone())
                    .or_default()
                    .insert(id.clone());
            }
            self.instances.insert(id.clone(), instance);
            self.disks.create_for_instance(
                (account_id, resolved.region.id),
                &id,
                resolved.image.id,
                &resolved.system_disk,
                &resolved.data_disks,
                now,
            );
            ids.push(id);
        }
        *self.live_per_account.entry(account_id.clone()).or_default() += amount;
        self.created_total += amount as u64;
        if let Some(key) = token_key {
            self.tokens.insert(
                key,
                TokenRecord {
                    fingerprint: print,
                    instance_ids: ids.clone(),
                },
            );
        }
        Ok(ids)
    }

    /// RunInstances' `Ipv6AddressCount` rules (those of AssignIpv6Addresses): the vSwitch has
    /// IPv6 turned on and the type's interface holds that many. The vSwitch's `/64` when
    /// addresses are asked for.
    fn ipv6_at_launch(
        &mut self,
        account_id: &Arc<str>,
        resolved: &crate::launch::ResolvedLaunch,
        spec: &LaunchSpec,
    ) -> Result<Option<u128>, ErrorResponse> {
        let Some(count) = spec.ipv6_address_count.filter(|n| *n > 0) else {
            return Ok(None);
        };
        let vswitch_id = &resolved.placement.vswitch_id;
        let block = self
            .network
            .account(account_id)
            .vswitch(resolved.region.id, vswitch_id)?
            .ipv6_block
            .ok_or_else(|| crate::ipv6::not_turned_on(vswitch_id))?;
        let limit = crate::ipv6::limit_for(resolved.instance_type.cpu);
        if count > limit {
            return Err(ErrorResponse::forbidden(
                "InvalidOperation.Ipv6CountExceeded",
                format!(
                    "The number of ipv6 address exceeds the limit({limit}). target instanceType {}. Expecting assign:{count}.",
                    resolved.instance_type.id
                ),
            ));
        }
        Ok(Some(block))
    }

    /// The IPv6 addresses held in the launch's vSwitch.
    fn ipv6_held(
        &self,
        account_id: &Arc<str>,
        resolved: &crate::launch::ResolvedLaunch,
    ) -> std::collections::BTreeSet<std::net::Ipv6Addr> {
        self.in_region(account_id, resolved.region.id)
            .filter(|i| i.vswitch_id == resolved.placement.vswitch_id)
            .flat_map(|i| i.ipv6_addresses.iter().copied())
            .collect()
    }

    /// RunInstances' key-pair rules: `KeyPairName` must name a key pair of the account in the
    /// region, and Windows instances take none.
    pub fn check_key_pair(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        image: &crate::catalog::Image,
        spec: &LaunchSpec,
    ) -> Result<(), ErrorResponse> {
        let Some(name) = spec.key_pair_name.as_deref().filter(|n| !n.is_empty()) else {
            return Ok(());
        };
        if image.os_type == "windows" {
            return Err(ErrorResponse::forbidden(
                "DependencyViolation.WindowsInstance",
                "The instance creating is windows, cannot use ssh key pair to login",
            ));
        }
        if self.key_pairs.get(account_id, region_id, name).is_none() {
            return Err(crate::key_pairs::not_found(404, name));
        }
        Ok(())
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

    /// A page of the account's instances in a region, oldest first.
    pub fn describe(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        filters: &Filters,
        paging: Paging,
        now: Timestamp,
    ) -> Page<'_> {
        let scope = (account_id.clone(), region_id);
        let in_scope = |ids: &mut dyn Iterator<Item = &String>| {
            let mut found: Vec<&StoredInstance> = ids
                .filter_map(|id| self.instances.get(id))
                .filter(|i| i.account_id == *account_id && i.region_id == region_id)
                .collect();
            found.sort_unstable_by_key(|i| i.seq);
            found.dedup_by_key(|i| i.seq);
            found
        };
        // A filter on a tag with a value: only the instances indexed under it can match.
        let tagged = filters.tags.iter().find_map(|(key, value)| {
            let value = value.as_ref()?;
            Some(self.by_tag.get(&(key.clone(), value.clone())))
        });
        let matching: Box<dyn Iterator<Item = &StoredInstance>> =
            match (&filters.instance_ids, tagged) {
                (Some(ids), _) => Box::new(in_scope(&mut ids.iter()).into_iter()),
                (None, Some(ids)) => Box::new(in_scope(&mut ids.into_iter().flatten()).into_iter()),
                (None, None) => Box::new(
                    self.by_scope
                        .get(&scope)
                        .into_iter()
                        .flat_map(|ids| ids.values())
                        .filter_map(|id| self.instances.get(id)),
                ),
            };
        let matching = matching.filter(|i| i.visible_from <= now);
        let released: Vec<&StoredInstance> = self
            .releasing
            .listed(account_id, region_id, now)
            .into_iter()
            .filter(|i| {
                filters
                    .instance_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&i.id))
            })
            .collect();
        let matching: Box<dyn Iterator<Item = &StoredInstance>> = if released.is_empty() {
            Box::new(matching)
        } else {
            let mut all: Vec<&StoredInstance> = matching.chain(released).collect();
            all.sort_unstable_by_key(|i| i.seq);
            Box::new(all.into_iter())
        };
        let mut total = 0;
        let mut page = Vec::new();
        let mut more = false;
        let (skip, size, after) = match paging {
            Paging::Pages { number, size } => {
                (number.saturating_sub(1).saturating_mul(size), size, None)
            }
            Paging::Token { after, max } => (0, max, after),
        };
        let mut skipped = 0;
        // ECS resolves a tag filter to at most 1,000 tagged instances and lists only those (its
        // reference for `Tag.N.Key`): a larger tagged fleet is listed incompletely, silently.
        let mut tagged = 0;
        let capped = matching.take_while(|i| {
            if filters.tags.is_empty() || !filters.has_tags(i) {
                return true;
            }
            tagged += 1;
            tagged <= MAX_TAG_FILTERED_INSTANCES
        });
        for instance in capped.filter(|i| filters.matches(i, now)) {
            total += 1;
            if after.is_some_and(|a| instance.seq <= a) {
                continue;
            }
            if skipped < skip {
                skipped += 1;
            } else if page.len() < size {
                page.push(instance);
            } else {
                more = true;
            }
        }
        let next = if more {
            page.last().map(|i| i.seq)
        } else {
            None
        };
        Page {
            total,
            instances: page,
            next,
        }
    }

    /// Starts a Stopped instance.
    pub fn start(
        &mut self,
        account_id: &str,
        id: &str,
        now: Timestamp,
        delay: Duration,
    ) -> Result<(), ErrorResponse> {
        let ip_seq = self.next_seq;
        let i = self.find_mut(account_id, None, id)?;
        if i.status(now) != Status::Stopped {
            return Err(ErrorResponse::incorrect_status());
        }
        i.lifecycle = Lifecycle::new(Phase::Started, now, delay);
        i.password.on_start();
        // Stopped without charging, it lost its public IP: it gets a new one.
        let new_ip = i.bandwidth_out > 0 && i.public_ip.is_none();
        if new_ip {
            i.public_ip = Some(Store::public_ip(ip_seq));
        }
        i.stopped_mode = "KeepCharging";
        if new_ip {
            self.next_seq += 1;
        }
        Ok(())
    }

    /// Stops a Running instance.
    pub fn stop(
        &mut self,
        account_id: &str,
        id: &str,
        stop_charging: bool,
        now: Timestamp,
        delay: Duration,
    ) -> Result<(), ErrorResponse> {
        let i = self.find_mut(account_id, None, id)?;
        if i.status(now) != Status::Running {
            return Err(ErrorResponse::incorrect_status());
        }
        i.lifecycle = Lifecycle::new(Phase::Stopped, now, delay);
        // Economical mode applies to pay-as-you-go instances only; a subscription keeps charging.
        let stop_charging = stop_charging && i.expires_at.is_none();
        i.stopped_mode = if stop_charging {
            "StopCharging"
        } else {
            "KeepCharging"
        };
        if stop_charging {
            // Its vCPUs and memory are released with its public IP.
            i.public_ip = None;
        }
        Ok(())
    }

    /// Reboots a Running instance.
    pub fn reboot(
        &mut self,
        account_id: &str,
        id: &str,
        now: Timestamp,
        delay: Duration,
    ) -> Result<(), ErrorResponse> {
        let i = self.find_mut(account_id, None, id)?;
        if i.status(now) != Status::Running {
            return Err(ErrorResponse::incorrect_status());
        }
        i.lifecycle = Lifecycle::new(Phase::Started, now, delay);
        i.password.on_start();
        Ok(())
    }

    /// Checks that an instance may be released now: not protected, pay-as-you-go or an expired
    /// subscription released with `TerminateSubscription`, and Stopped (or Running with
    /// `Force`).
    fn check_deletable(
        i: &StoredInstance,
        release: Release,
        now: Timestamp,
    ) -> Result<(), ErrorResponse> {
        if i.deletion_protection {
            return Err(ErrorResponse::forbidden(
                "InvalidOperation.DeletionProtection",
                "The instance is protected from deletion; turn DeletionProtection off with ModifyInstanceAttribute first.",
            ));
        }
        if i.expires_at.is_some()
            && (i.unexpired_subscription(now) || !release.terminate_subscription)
        {
            return Err(ErrorResponse::charge_type_violation());
        }
        match (i.status(now), release.force) {
            (Status::Stopped, _) | (Status::Running, true) => Ok(()),
            // Right after RunInstances, ECS refuses a release with this code.
            (Status::Pending, _) => Err(ErrorResponse::initializing()),
            _ => Err(ErrorResponse::incorrect_status()),
        }
    }

    /// Releases instances, all or none. With a ClientToken, repeating the same call succeeds.
    pub fn delete(
        &mut self,
        account_id: &Arc<str>,
        region_id: Option<&str>,
        ids: &[String],
        release: Release,
        client_token: Option<&str>,
        now: Timestamp,
    ) -> Result<(), ErrorResponse> {
        let token_key = client_token.map(|token| TokenKey {
            account_id: account_id.clone(),
            region_id: region_id.unwrap_or_default().to_owned(),
            action: "DeleteInstances",
            token: token.to_owned(),
        });
        let print = fingerprint(&(ids, release));
        if let Some(record) = token_key.as_ref().and_then(|k| self.tokens.get(k)) {
            return if record.fingerprint == print {
                Ok(())
            } else {
                Err(idempotent_mismatch())
            };
        }
        for id in ids {
            Self::check_deletable(self.find(account_id, region_id, id)?, release, now)?;
        }
        for id in ids {
            if let Some(instance) = self.instances.remove(id) {
                self.disks.release_instance(id, now);
                if !self.visibility_lag.is_zero() {
                    self.releasing
                        .push(instance.clone(), now, self.visibility_lag);
                }
                if let Some(scope) = self
                    .by_scope
                    .get_mut(&(instance.account_id.clone(), instance.region_id))
                {
                    scope.remove(&instance.seq);
                }
                if let Some(live) = self.live_per_account.get_mut(&instance.account_id) {
                    *live = live.saturating_sub(1);
                }
            }
        }
        if let Some(key) = token_key {
            self.tokens.insert(
                key,
                TokenRecord {
                    fingerprint: print,
                    instance_ids: ids.to_vec(),
                },
            );
        }
        Ok(())
    }

    /// Every live instance, oldest first.
    pub fn all(&self) -> Vec<&StoredInstance> {
        let mut all: Vec<&StoredInstance> = self.instances.values().collect();
        all.sort_unstable_by_key(|i| i.seq);
        all
    }
}

/// `IdempotentParameterMismatch` (400): a ClientToken reused with other parameters.
pub(crate) fn idempotent_mismatch() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IdempotentParameterMismatch",
        "The ClientToken was already used with different parameters; use a new ClientToken for a different request.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec::new(
            "cn-hangzhou",
            "centos_7_8_x64_20G_alibase_20200519.vhd",
            "ecs.g6.large",
        )
        .with_default_network()
    }

    fn now() -> Timestamp {
        Timestamp::now()
    }

    #[test]
    fn glob() {
        assert!(glob_match("web", "web"));
        assert!(!glob_match("web", "web1"));
        assert!(glob_match("web*", "web-1"));
        assert!(glob_match("*-1", "web-1"));
        assert!(glob_match("w*b*1", "web-1"));
        assert!(!glob_match("w*x*1", "web-1"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("ab*ba", "aba"));
    }

    #[test]
    fn a_tag_filter_lists_at_most_1000_tagged_instances() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let tagged = LaunchSpec {
            tags: vec![("team".into(), "a".into())],
            ..spec()
        };
        store
            .launch(&acct, &tagged, 100, now(), Duration::ZERO, None)
            .unwrap();
        store
            .launch(&acct, &spec(), 5, now(), Duration::ZERO, None)
            .unwrap();
        for _ in 0..10 {
            store
                .launch(&acct, &tagged, 100, now(), Duration::ZERO, None)
                .unwrap();
        }
        let listed = |store: &Store, tags: Vec<(String, Option<String>)>| {
            let filters = Filters {
                tags,
                ..Filters::default()
            };
            let (mut count, mut after) = (0, None);
            loop {
                let page = store.describe(
                    &acct,
                    "cn-hangzhou",
                    &filters,
                    Paging::Token { after, max: 100 },
                    now(),
                );
                count += page.instances.len();
                match page.next {
                    Some(next) => after = Some(next),
                    None => return count,
                }
            }
        };
        // 1,100 carry the tag; by key alone or by key and value, 1,000 of them are listed.
        assert_eq!(
            listed(&store, vec![("team".into(), None)]),
            MAX_TAG_FILTERED_INSTANCES
        );
        assert_eq!(
            listed(&store, vec![("team".into(), Some("a".into()))]),
            MAX_TAG_FILTERED_INSTANCES
        );
        // Without a tag filter every instance is listed.
        assert_eq!(listed(&store, Vec::new()), 1105);
    }

    #[test]
    fn launch_describe_and_tokens() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let s = LaunchSpec {
            client_token: Some("tok".into()),
            ..spec()
        };
        let ids = store
            .launch(&acct, &s, 3, now(), Duration::ZERO, None)
            .unwrap();
        assert_eq!(ids.len(), 3);
        assert_eq!(
            store
                .launch(&acct, &s, 3, now(), Duration::ZERO, None)
                .unwrap(),
            ids
        );
        assert_eq!(
            store
                .launch(&acct, &s, 2, now(), Duration::ZERO, None)
                .unwrap_err()
                .code,
            "IdempotentParameterMismatch"
        );
        assert_eq!(store.created_total(), 3);
        let page = store.describe(
            &acct,
            "cn-hangzhou",
            &Filters::default(),
            Paging::Token {
                after: None,
                max: 2,
            },
            now(),
        );
        assert_eq!((page.total, page.instances.len()), (3, 2));
        let rest = store.describe(
            &acct,
            "cn-hangzhou",
            &Filters::default(),
            Paging::Token {
                after: page.next,
                max: 2,
            },
            now(),
        );
        assert_eq!((rest.instances.len(), rest.next), (1, None));
        let other: Arc<str> = Arc::from("2");
        assert_eq!(
            store
                .describe(
                    &other,
                    "cn-hangzhou",
                    &Filters::default(),
                    Paging::Pages {
                        number: 1,
                        size: 10
                    },
                    now()
                )
                .total,
            0
        );
        assert!(store.find("2", None, &ids[0]).is_err());
    }

    #[test]
    fn quota_and_delete_rules() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let ids = store
            .launch(
                &acct,
                &LaunchSpec {
                    deletion_protection: true,
                    ..spec()
                },
                2,
                now(),
                Duration::ZERO,
                Some(2),
            )
            .unwrap();
        assert_eq!(
            store
                .launch(&acct, &spec(), 1, now(), Duration::ZERO, Some(2))
                .unwrap_err()
                .code,
            "QuotaExceed.ElasticQuota"
        );
        assert_eq!(
            store
                .delete(&acct, None, &ids, Release::forced(true), None, now())
                .unwrap_err()
                .code,
            "InvalidOperation.DeletionProtection"
        );
        store
            .find_mut("1", None, &ids[0])
            .unwrap()
            .deletion_protection = false;
        assert_eq!(
            store
                .delete(&acct, None, &ids[..1], Release::forced(false), None, now())
                .unwrap_err()
                .code,
            "IncorrectInstanceStatus"
        );
        store
            .delete(&acct, None, &ids[..1], Release::forced(true), None, now())
            .unwrap();
        assert_eq!(store.live(), 1);
        assert!(
            store
                .launch(&acct, &spec(), 1, now(), Duration::ZERO, Some(2))
                .is_ok()
        );
    }

    #[test]
    fn no_release_while_starting_or_stopping() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let t0 = now();
        let delay = Duration::from_secs(10);
        let at = |secs: i64| {
            t0.checked_add(jiff::SignedDuration::from_secs(secs))
                .unwrap()
        };
        let ids = store.launch(&acct, &spec(), 1, t0, delay, None).unwrap();
        let code = |store: &mut Store, force: bool, t: Timestamp| {
            store
                .delete(&acct, None, &ids, Release::forced(force), None, t)
                .unwrap_err()
                .code
        };
        assert_eq!(
            code(&mut store, true, at(5)),
            "IncorrectInstanceStatus.Initializing"
        );
        assert_eq!(code(&mut store, true, at(15)), "IncorrectInstanceStatus");
        assert_eq!(code(&mut store, false, at(25)), "IncorrectInstanceStatus");
        store.stop("1", &ids[0], false, at(25), delay).unwrap();
        assert_eq!(code(&mut store, true, at(30)), "IncorrectInstanceStatus");
        store
            .delete(&acct, None, &ids, Release::forced(false), None, at(40))
            .unwrap();
    }

    #[test]
    fn addresses_are_distinct_per_sequence() {
        let block = crate::defaults::vswitch_cidr(1);
        assert_ne!(addresses(0, block), addresses(1, block));
        assert_eq!(addresses(0, block).0, Ipv4Addr::new(172, 16, 16, 10));
    }
}
