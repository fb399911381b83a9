//! The NAT gateways of every account (enhanced type only), each with its SNAT table and its
//! forward (DNAT) table, and the entries of those tables; the ClientToken answers of the three
//! create calls; and what was deleted but is still listed during the visibility lag. Statuses are
//! computed from timestamps: a gateway is `Creating` for the transition delay, an entry `Pending`
//! (or `Modifying` after a change) for it, then both `Available`; deleted ones list as
//! `Deleting`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

use jiff::Timestamp;

use crate::error::ErrorResponse;
use crate::tags::Tags;

/// Most SNAT entries in one SNAT table (the console's default quota).
pub const SNAT_ENTRY_QUOTA: usize = 40;
/// Most DNAT entries in one forward table (documented by CreateForwardEntry).
pub const FORWARD_ENTRY_QUOTA: usize = 100;

/// `internet` (binds EIPs) or `intranet` (a VPC NAT gateway, its private address only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetworkType {
    Internet,
    Intranet,
}

impl NetworkType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Internet => "internet",
            Self::Intranet => "intranet",
        }
    }
}

/// One NAT gateway.
#[derive(Debug, Clone)]
pub struct NatGateway {
    /// `ngw-…`.
    pub id: String,
    pub seq: u64,
    pub account_id: Arc<str>,
    pub region_id: &'static str,
    pub vpc_id: String,
    pub vswitch_id: String,
    pub zone_id: String,
    pub network_type: NetworkType,
    /// The gateway's address in its vSwitch.
    pub private_ip: Ipv4Addr,
    /// `stb-…` and `ftb-…`.
    pub snat_table_id: String,
    pub forward_table_id: String,
    pub name: String,
    pub description: String,
    pub tags: Tags,
    /// Set by `DeletionProtection` (`Type=NATGW`): DeleteNatGateway refuses the gateway.
    pub deletion_protection: bool,
    pub created_at: Timestamp,
    /// `Creating` until then.
    pub ready_at: Timestamp,
    pub visible_from: Timestamp,
}

impl NatGateway {
    pub fn status(&self, now: Timestamp) -> &'static str {
        if now < self.ready_at {
            "Creating"
        } else {
            "Available"
        }
    }
}

/// One SNAT entry.
#[derive(Debug, Clone)]
pub struct SnatEntry {
    /// `snat-…`.
    pub id: String,
    pub seq: u64,
    pub account_id: Arc<str>,
    pub region_id: &'static str,
    pub gateway_id: String,
    pub table_id: String,
    pub source_vswitch_id: Option<String>,
    /// The vSwitch's block when the entry names a vSwitch.
    pub source_cidr: String,
    /// Comma-separated addresses.
    pub snat_ip: String,
    pub name: String,
    /// `Pending` (or `Modifying` after a change) until then.
    pub ready_at: Timestamp,
    pub modified: bool,
    pub visible_from: Timestamp,
}

/// One DNAT (forward) entry.
#[derive(Debug, Clone)]
pub struct ForwardEntry {
    /// `fwd-…`.
    pub id: String,
    pub seq: u64,
    pub account_id: Arc<str>,
    pub region_id: &'static str,
    pub gateway_id: String,
    pub table_id: String,
    pub external_ip: String,
    /// A port, a range `a/b`, or `Any` with protocol `Any` (IP mapping).
    pub external_port: String,
    /// `TCP`, `UDP` or `Any`.
    pub ip_protocol: String,
    pub internal_ip: String,
    pub internal_port: String,
    pub name: String,
    pub ready_at: Timestamp,
    pub modified: bool,
    pub visible_from: Timestamp,
}

/// `Pending`/`Modifying` until `ready_at`, then `Available`.
pub fn entry_status(ready_at: Timestamp, modified: bool, now: Timestamp) -> &'static str {
    match (now < ready_at, modified) {
        (true, false) => "Pending",
        (true, true) => "Modifying",
        (false, _) => "Available",
    }
}

impl SnatEntry {
    pub fn status(&self, now: Timestamp) -> &'static str {
        entry_status(self.ready_at, self.modified, now)
    }

    /// The addresses of `SnatIp`.
    pub fn ips(&self) -> impl Iterator<Item = &str> {
        self.snat_ip.split(',').map(str::trim)
    }
}

impl ForwardEntry {
    pub fn status(&self, now: Timestamp) -> &'static str {
        entry_status(self.ready_at, self.modified, now)
    }
}

/// `InvalidNatGatewayId.NotFound` (404).
pub fn nat_gateway_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidNatGatewayId.NotFound",
        "The specified NatGatewayId does not exist in our records.",
    )
}

/// `IncorrectStatus.NatGateway` (400): the gateway is `Creating` or `Deleting`.
pub fn incorrect_gateway_status() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorrectStatus.NatGateway",
        "The status of the NAT gateway does not support this operation: wait until it is Available.",
    )
}

/// Something deleted but still listed, as `Deleting`, until the instant beside it.
#[derive(Debug, Clone)]
pub enum Deleted {
    Gateway(NatGateway),
    Snat(SnatEntry),
    Forward(ForwardEntry),
}

/// Every NAT gateway and entry of the mock.
#[derive(Debug, Default)]
pub struct NatStore {
    pub gateways: HashMap<String, NatGateway>,
    pub snat_entries: HashMap<String, SnatEntry>,
    pub forward_entries: HashMap<String, ForwardEntry>,
    /// Answers by (account, action, ClientToken), with the parameters' fingerprint.
    tokens: HashMap<(Arc<str>, &'static str, String), (u64, serde_json::Value)>,
    deleted: Vec<(Timestamp, Deleted)>,
    next_seq: u64,
}

impl NatStore {
    pub fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// The earlier answer of a create repeated with its ClientToken (the same parameters),
    /// `IdempotentParameterMismatch` when they differ.
    pub fn replay(
        &self,
        account_id: &Arc<str>,
        action: &'static str,
        token: Option<&str>,
        print: u64,
    ) -> Result<Option<serde_json::Value>, ErrorResponse> {
        let Some(token) = token else {
            return Ok(None);
        };
        match self
            .tokens
            .get(&(account_id.clone(), action, token.to_owned()))
        {
            None => Ok(None),
            Some((earlier, reply)) if *earlier == print => Ok(Some(reply.clone())),
            Some(_) => Err(crate::idempotency::idempotent_mismatch()),
        }
    }

    /// Keeps the answer of a create under its ClientToken.
    pub fn remember(
        &mut self,
        account_id: &Arc<str>,
        action: &'static str,
        token: Option<&str>,
        print: u64,
        reply: &serde_json::Value,
    ) {
        if let Some(token) = token {
            self.tokens.insert(
                (account_id.clone(), action, token.to_owned()),
                (print, reply.clone()),
            );
        }
    }

    /// The account's gateway in `region_id`, or `InvalidNatGatewayId.NotFound`.
    pub fn gateway(
        &self,
        account_id: &str,
        region_id: &str,
        id: &str,
    ) -> Result<&NatGateway, ErrorResponse> {
        self.gateways
            .get(id)
            .filter(|g| &*g.account_id == account_id && g.region_id == region_id)
            .ok_or_else(nat_gateway_not_found)
    }

    /// The account's gateway whose SNAT table (or, with `forward`, forward table) is `table_id`.
    pub fn gateway_of_table(
        &self,
        account_id: &str,
        region_id: &str,
        table_id: &str,
        forward: bool,
    ) -> Option<&NatGateway> {
        self.gateways.values().find(|g| {
            &*g.account_id == account_id
                && g.region_id == region_id
                && if forward {
                    g.forward_table_id == table_id
                } else {
                    g.snat_table_id == table_id
                }
        })
    }

    /// The account's gateways in a region, oldest first.
    pub fn in_region(&self, account_id: &str, region_id: &str) -> Vec<&NatGateway> {
        let mut found: Vec<&NatGateway> = self
            .gateways
            .values()
            .filter(|g| &*g.account_id == account_id && g.region_id == region_id)
            .collect();
        found.sort_unstable_by_key(|g| g.seq);
        found
    }

    /// The SNAT entries of a table, oldest first.
    pub fn snat_of(&self, table_id: &str) -> Vec<&SnatEntry> {
        let mut found: Vec<&SnatEntry> = self
            .snat_entries
            .values()
            .filter(|e| e.table_id == table_id)
            .collect();
        found.sort_unstable_by_key(|e| e.seq);
        found
    }

    /// The DNAT entries of a table, oldest first.
    pub fn forward_of(&self, table_id: &str) -> Vec<&ForwardEntry> {
        let mut found: Vec<&ForwardEntry> = self
            .forward_entries
            .values()
            .filter(|e| e.table_id == table_id)
            .collect();
        found.sort_unstable_by_key(|e| e.seq);
        found
    }

    /// Whether an entry uses the public address `ip` (an EIP bound to the gateway).
    pub fn uses_ip(&self, gateway_id: &str, ip: &str) -> (bool, bool) {
        let snat = self
            .snat_entries
            .values()
            .any(|e| e.gateway_id == gateway_id && e.ips().any(|i| i == ip));
        let forward = self
            .forward_entries
            .values()
            .any(|e| e.gateway_id == gateway_id && e.external_ip == ip);
        (snat, forward)
    }

    /// Deletes a gateway or an entry; it stays listed as `Deleting` until `listed_until`.
    pub fn delete(&mut self, id: &str, now: Timestamp, listed_until: Timestamp) {
        self.deleted.retain(|(until, _)| *until > now);
        let gone = if let Some(g) = self.gateways.remove(id) {
            Deleted::Gateway(g)
        } else if let Some(e) = self.snat_entries.remove(id) {
            Deleted::Snat(e)
        } else if let Some(e) = self.forward_entries.remove(id) {
            Deleted::Forward(e)
        } else {
            return;
        };
        if listed_until > now {
            self.deleted.push((listed_until, gone));
        }
    }

    /// What was deleted and is still listed at `now`.
    pub fn deleting(&self, now: Timestamp) -> impl Iterator<Item = &Deleted> {
        self.deleted
            .iter()
            .filter(move |(until, _)| *until > now)
            .map(|(_, d)| d)
    }

    /// Every gateway, oldest first.
    pub fn all(&self) -> Vec<&NatGateway> {
        let mut all: Vec<&NatGateway> = self.gateways.values().collect();
        all.sort_unstable_by_key(|g| g.seq);
        all
    }
}
