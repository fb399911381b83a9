//! The elastic IP addresses of every account: each EIP with its settings, tags and the one
//! resource it is associated with ([`Binding`]), the ClientToken answers of AllocateEipAddress,
//! and the EIPs released but still listed during the visibility lag. Statuses are computed
//! lazily from timestamps, like instances': `Associating` and `Unassociating` last the transition
//! delay, then `InUse` / `Available`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

use jiff::Timestamp;

use crate::error::ErrorResponse;
use crate::tags::Tags;

/// Most EIPs per account and region (the API's default quota).
pub const EIP_QUOTA: usize = 20;

/// The kind of resource an EIP is associated with (`InstanceType`). The mock associates ECS
/// instances, NAT gateways and network interfaces (the instances' primary ones, the only ENIs
/// it has); CLB instances, HaVips and IP addresses are the API's other kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoundKind {
    EcsInstance,
    Nat,
    NetworkInterface,
}

impl BoundKind {
    /// From `InstanceType` (absent: `EcsInstance`, the API's default).
    pub fn parse(value: Option<&str>) -> Result<Self, ErrorResponse> {
        match value.unwrap_or("EcsInstance") {
            "EcsInstance" => Ok(Self::EcsInstance),
            "Nat" => Ok(Self::Nat),
            "NetworkInterface" => Ok(Self::NetworkInterface),
            _ => Err(ErrorResponse::bad_request(
                "InvalidInstanceType.ValueNotSupported",
                "The specified value of InstanceType is not supported.",
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::EcsInstance => "EcsInstance",
            Self::Nat => "Nat",
            Self::NetworkInterface => "NetworkInterface",
        }
    }
}

/// What an EIP is associated with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub kind: BoundKind,
    /// `i-…`, `ngw-…` or `eni-…`.
    pub instance_id: String,
    /// The private IP of a network interface the EIP maps to (`NetworkInterface` only).
    pub private_ip: Option<Ipv4Addr>,
    /// `Associating` until then, `InUse` after.
    pub settled_at: Timestamp,
    /// Set by UnassociateEipAddress: `Unassociating` until then, unbound after.
    pub unbinding_until: Option<Timestamp>,
    /// The ClientToken of the AssociateEipAddress that made it, and of the
    /// UnassociateEipAddress that undoes it: a repeat with the same token is answered again.
    pub associated_with_token: Option<String>,
    pub unassociated_with_token: Option<String>,
}

/// One EIP.
#[derive(Debug, Clone)]
pub struct Eip {
    /// `eip-…`.
    pub id: String,
    pub seq: u64,
    pub account_id: Arc<str>,
    pub region_id: &'static str,
    pub ip: Ipv4Addr,
    /// Mbit/s.
    pub bandwidth: u32,
    /// `PayByBandwidth` or `PayByTraffic`.
    pub internet_charge_type: &'static str,
    /// `BGP` or `BGP_PRO`.
    pub isp: &'static str,
    pub name: String,
    pub description: String,
    pub resource_group_id: &'static str,
    pub tags: Tags,
    /// Set by `DeletionProtection` (`Type=EIP`): ReleaseEipAddress refuses the EIP.
    pub deletion_protection: bool,
    pub allocated_at: Timestamp,
    /// When it starts to show in listings (allocation plus the visibility lag).
    pub visible_from: Timestamp,
    pub binding: Option<Binding>,
}

impl Eip {
    /// `Available`, `Associating`, `InUse` or `Unassociating` at `now`.
    pub fn status(&self, now: Timestamp) -> &'static str {
        match &self.binding {
            None => "Available",
            Some(Binding {
                unbinding_until: Some(until),
                ..
            }) if now < *until => "Unassociating",
            Some(Binding {
                unbinding_until: Some(_),
                ..
            }) => "Available",
            Some(b) if now < b.settled_at => "Associating",
            Some(_) => "InUse",
        }
    }

    /// The resource it is associated with at `now` (none once an unassociation has ended).
    pub fn bound(&self, now: Timestamp) -> Option<&Binding> {
        self.binding
            .as_ref()
            .filter(|b| b.unbinding_until.is_none_or(|until| now < until))
    }

    /// The association record's ID, `<allocationId>:<instanceId>`, while it is associated.
    pub fn association_id(&self, now: Timestamp) -> Option<String> {
        self.bound(now)
            .filter(|b| b.unbinding_until.is_none())
            .map(|b| format!("{}:{}", self.id, b.instance_id))
    }
}

/// `InvalidAllocationId.NotFound` (404).
pub fn eip_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidAllocationId.NotFound",
        "Specified allocation ID is not found",
    )
}

/// `IncorrectEipStatus` (400).
pub fn incorrect_eip_status() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorrectEipStatus",
        "Current elastic IP status does not support this operation.",
    )
}

/// Every EIP of the mock.
#[derive(Debug, Default)]
pub struct EipStore {
    eips: HashMap<String, Eip>,
    /// Answers of AllocateEipAddress by (account, ClientToken), with the parameters' fingerprint.
    tokens: HashMap<(Arc<str>, String), (u64, serde_json::Value)>,
    /// Released EIPs still listed (`Releasing`) until the instant beside them.
    released: Vec<(Timestamp, Eip)>,
    next_seq: u64,
}

impl EipStore {
    /// The next creation sequence number.
    pub fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// The public address of the `seq`-th EIP, from 39.96.0.0/12 (instances' own public
    /// addresses come from another block).
    pub fn address(seq: u64) -> Ipv4Addr {
        let n = u32::try_from(seq % ((1 << 20) - 16)).unwrap_or(0) + 10;
        Ipv4Addr::from(u32::from(Ipv4Addr::new(39, 96, 0, 0)) + n)
    }

    /// The earlier answer of an AllocateEipAddress repeated with its ClientToken (the same
    /// parameters), `IdempotentParameterMismatch` when they differ.
    pub fn replay(
        &self,
        account_id: &Arc<str>,
        token: Option<&str>,
        print: u64,
    ) -> Result<Option<serde_json::Value>, ErrorResponse> {
        let Some(token) = token else {
            return Ok(None);
        };
        match self.tokens.get(&(account_id.clone(), token.to_owned())) {
            None => Ok(None),
            Some((earlier, reply)) if *earlier == print => Ok(Some(reply.clone())),
            Some(_) => Err(crate::idempotency::idempotent_mismatch()),
        }
    }

    /// Keeps a new EIP, and the answer of its allocation under `token`.
    pub fn insert(&mut self, eip: Eip, token: Option<&str>, print: u64, reply: &serde_json::Value) {
        if let Some(token) = token {
            self.tokens.insert(
                (eip.account_id.clone(), token.to_owned()),
                (print, reply.clone()),
            );
        }
        self.eips.insert(eip.id.clone(), eip);
    }

    /// The account's EIPs in a region, oldest first.
    pub fn in_region(&self, account_id: &str, region_id: &str) -> Vec<&Eip> {
        let mut found: Vec<&Eip> = self
            .eips
            .values()
            .filter(|e| &*e.account_id == account_id && e.region_id == region_id)
            .collect();
        found.sort_unstable_by_key(|e| e.seq);
        found
    }

    /// Released EIPs of the account and region still listed at `now`.
    pub fn releasing(&self, account_id: &str, region_id: &str, now: Timestamp) -> Vec<&Eip> {
        self.released
            .iter()
            .filter(|(until, e)| {
                *until > now && &*e.account_id == account_id && e.region_id == region_id
            })
            .map(|(_, e)| e)
            .collect()
    }

    /// The account's EIP in `region_id`, or `InvalidAllocationId.NotFound`.
    pub fn find(&self, account_id: &str, region_id: &str, id: &str) -> Result<&Eip, ErrorResponse> {
        self.eips
            .get(id)
            .filter(|e| &*e.account_id == account_id && e.region_id == region_id)
            .ok_or_else(eip_not_found)
    }

    /// Mutable [`Self::find`].
    pub fn find_mut(
        &mut self,
        account_id: &str,
        region_id: &str,
        id: &str,
    ) -> Result<&mut Eip, ErrorResponse> {
        self.eips
            .get_mut(id)
            .filter(|e| &*e.account_id == account_id && e.region_id == region_id)
            .ok_or_else(eip_not_found)
    }

    /// The EIP of any account, for the mock's records.
    pub fn get(&self, id: &str) -> Option<&Eip> {
        self.eips.get(id)
    }

    /// The EIP associated with `instance_id` at `now`, if one is.
    pub fn bound_to(&self, instance_id: &str, now: Timestamp) -> Option<&Eip> {
        self.eips
            .values()
            .find(|e| e.bound(now).is_some_and(|b| b.instance_id == instance_id))
    }

    /// The EIP associated with the private IP `ip` of the network interface `eni` at `now`.
    pub fn bound_to_private_ip(&self, eni: &str, ip: Ipv4Addr, now: Timestamp) -> Option<&Eip> {
        self.eips.values().find(|e| {
            e.bound(now)
                .is_some_and(|b| b.instance_id == eni && b.private_ip == Some(ip))
        })
    }

    /// Every EIP associated with `instance_id` at `now` (a NAT gateway takes several), oldest
    /// first.
    pub fn bound_all(&self, instance_id: &str, now: Timestamp) -> Vec<&Eip> {
        let mut found: Vec<&Eip> = self
            .eips
            .values()
            .filter(|e| e.bound(now).is_some_and(|b| b.instance_id == instance_id))
            .collect();
        found.sort_unstable_by_key(|e| e.seq);
        found
    }

    /// Releases an EIP; it stays listed as `Releasing` until `listed_until`.
    pub fn release(&mut self, id: &str, now: Timestamp, listed_until: Timestamp) {
        self.released.retain(|(until, _)| *until > now);
        if let Some(eip) = self.eips.remove(id)
            && listed_until > now
        {
            self.released.push((listed_until, eip));
        }
    }

    /// Drops the association of every EIP with `instance_id` (the instance was released, or its
    /// primary network interface with it, or the NAT gateway deleted): the EIPs stay, `Available`
    /// (DeleteInstance's reference: EIPs are not released along with the instance).
    pub fn instance_released(&mut self, instance_id: &str) {
        for eip in self.eips.values_mut() {
            if eip
                .binding
                .as_ref()
                .is_some_and(|b| b.instance_id == instance_id)
            {
                eip.binding = None;
            }
        }
    }

    /// Every EIP, oldest first.
    pub fn all(&self) -> Vec<&Eip> {
        let mut all: Vec<&Eip> = self.eips.values().collect();
        all.sort_unstable_by_key(|e| e.seq);
        all
    }
}
