//! The guarantees, checked from the mock's own records (its ledger and its live resources)
//! after a case: no duplicate, no leak, no change to a resource the case's objects do not own,
//! no one-time secret lost, a status that matches the cloud.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;

use alibaba_mock::{Change, LedgerEntry, MockServer, ResourceRecord, secret_digest};
use ferroplane_runtime::UID_TAG;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject};

use super::objects::{self, Objects};
use super::registration::{Naming, Registration};

/// What broke the guarantees, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Audit {
    /// Resources beyond the first made for one object.
    pub duplicates: u32,
    /// Resources left behind by objects deleted with policy Delete.
    pub leaks: u32,
    /// Changes or deletions of resources the changing object did not own.
    pub foreign_changes: u32,
    /// Generated private keys that did not reach their connection Secret.
    pub lost_secrets: u32,
    /// Statuses that did not describe the cloud's resource.
    pub status_mismatches: u32,
}

impl Audit {
    pub fn is_clean(&self) -> bool {
        *self == Self::default()
    }
}

impl AddAssign for Audit {
    fn add_assign(&mut self, other: Self) {
        self.duplicates += other.duplicates;
        self.leaks += other.leaks;
        self.foreign_changes += other.foreign_changes;
        self.lost_secrets += other.lost_secrets;
        self.status_mismatches += other.status_mismatches;
    }
}

/// What a case tells the audit.
#[derive(Debug, Default)]
pub struct Tracked {
    /// The case's accounts.
    pub accounts: BTreeSet<String>,
    /// The UIDs of the case's objects.
    pub uids: BTreeSet<String>,
    /// Unowned resources that at most one of the case's objects may take over.
    pub claimable: BTreeSet<String>,
    /// For a kind named [`Naming::Binding`]: its resources, which carry no owner tag; those
    /// made in the case's account are the case's objects'.
    pub binding: Option<alibaba_mock::ResourceKind>,
    /// Ledger entries before this one happened before the case (hand-made resources, seeds).
    pub since: u64,
    /// Counted by the checks made while the objects lived.
    pub audit: Audit,
    /// What each count stands for.
    pub findings: Vec<String>,
    /// Resources whose one-time secret was found lost (counted once each).
    lost: BTreeSet<String>,
}

fn owner(entry: &LedgerEntry) -> Option<&str> {
    entry.tags.get(UID_TAG).map(String::as_str)
}

impl Tracked {
    fn entries(&self, mock: &MockServer) -> Vec<LedgerEntry> {
        mock.ledger()
            .into_iter()
            .filter(|e| e.seq >= self.since && self.accounts.contains(&e.account_id))
            .collect()
    }

    fn live(&self, mock: &MockServer) -> Vec<ResourceRecord> {
        mock.resources()
            .into_iter()
            .filter(|r| self.accounts.contains(&r.account_id))
            .collect()
    }

    /// Counts duplicates, leaks and foreign changes once every object of the case is gone.
    pub fn finish(&mut self, mock: &MockServer) {
        let entries = self.entries(mock);
        let mut made_for: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut owned = BTreeSet::new();
        for e in entries.iter().filter(|e| e.change == Change::Created) {
            if self.binding == Some(e.kind) {
                owned.insert(e.resource_id.as_str());
            }
            if let Some(uid) = owner(e).filter(|u| self.uids.contains(*u)) {
                made_for.entry(uid).or_default().insert(&e.resource_id);
                owned.insert(e.resource_id.as_str());
            }
        }
        // A resource created untagged and then tagged by one of the case's objects (an EIP:
        // AllocateEipAddress takes no tags, its owner tag follows at once) is that object's.
        let untagged: BTreeSet<&str> = entries
            .iter()
            .filter(|e| e.change == Change::Created && owner(e).is_none())
            .map(|e| e.resource_id.as_str())
            .collect();
        for e in entries.iter().filter(|e| e.change == Change::Modified) {
            let id = e.resource_id.as_str();
            if !untagged.contains(id) || owned.contains(id) {
                continue;
            }
            if let Some(uid) = owner(e).filter(|u| self.uids.contains(*u)) {
                made_for.entry(uid).or_default().insert(id);
                owned.insert(id);
            }
        }
        for (uid, made) in &made_for {
            if made.len() > 1 {
                self.audit.duplicates += made.len() as u32 - 1;
                self.findings
                    .push(format!("duplicate: object {uid} made {made:?}"));
            }
        }
        let created_here: BTreeSet<&str> = entries
            .iter()
            .filter(|e| e.change == Change::Created)
            .map(|e| e.resource_id.as_str())
            .collect();
        for r in self.live(mock) {
            let tagged = r.tags.get(UID_TAG).is_some_and(|u| self.uids.contains(u));
            if tagged || created_here.contains(r.id.as_str()) {
                self.audit.leaks += 1;
                self.findings
                    .push(format!("leak: {:?} {} still exists", r.kind, r.id));
            }
        }
        let mut claimers: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in entries.iter().filter(|e| e.change != Change::Created) {
            let id = e.resource_id.as_str();
            if owned.contains(id) {
                continue;
            }
            if self.claimable.contains(id) {
                if let Some(uid) = owner(e).filter(|u| self.uids.contains(*u)) {
                    claimers.entry(id).or_default().insert(uid);
                }
                continue;
            }
            self.audit.foreign_changes += 1;
            self.findings.push(format!(
                "foreign change: {} {:?} {} it did not own",
                e.action, e.change, id
            ));
        }
        for (id, uids) in claimers {
            if uids.len() > 1 {
                self.audit.foreign_changes += uids.len() as u32 - 1;
                self.findings
                    .push(format!("claimed twice: {id} changed by {uids:?}"));
            }
        }
    }

    /// Checks that a Ready object's status describes its resource in the cloud of `account`,
    /// and that a generated one-time secret reached its connection Secret.
    pub async fn check_status(
        &mut self,
        mock: &MockServer,
        registration: &Registration,
        objects: &Objects,
        name: &str,
        account: &str,
    ) {
        let Some(object) = objects.get(name).await else {
            return;
        };
        if !objects::is_ready(&object) {
            return;
        }
        let Some(external) = objects::external_name(&object) else {
            self.mismatch(format!("{name} is Ready without an external name"));
            return;
        };
        let found = mock.resources().into_iter().find(|r| {
            r.account_id == account
                && r.kind == registration.resource
                && match registration.naming {
                    Naming::CloudAssigned | Naming::Binding => r.id == external,
                    Naming::UserChosen => r.name == external,
                }
        });
        let Some(resource) = found else {
            self.mismatch(format!(
                "{name} is Ready but {external} is not in the cloud"
            ));
            return;
        };
        let shown = object.data["status"]["atProvider"][registration.status_id].as_str();
        if shown != Some(external.as_str()) {
            self.mismatch(format!(
                "{name}: status.atProvider.{} is {shown:?}, the cloud has {external}",
                registration.status_id
            ));
        }
        self.check_secret(mock, registration, objects, &object, &resource)
            .await;
    }

    fn mismatch(&mut self, finding: String) {
        self.audit.status_mismatches += 1;
        self.findings.push(format!("status: {finding}"));
    }

    async fn check_secret(
        &mut self,
        mock: &MockServer,
        registration: &Registration,
        objects: &Objects,
        object: &DynamicObject,
        resource: &ResourceRecord,
    ) {
        let Some(key) = registration.one_time_secret else {
            return;
        };
        let generated = mock
            .ledger()
            .into_iter()
            .find(|e| e.resource_id == resource.id && e.change == Change::Created)
            .and_then(|e| e.secret_digest);
        let Some(generated) = generated else {
            return;
        };
        let secret_name = object.data["spec"]["writeConnectionSecretToRef"]["name"].as_str();
        let stored = match secret_name {
            Some(secret) => Api::<Secret>::namespaced(objects.client.clone(), &objects.namespace)
                .get_opt(secret)
                .await
                .ok()
                .flatten()
                .and_then(|s| s.data)
                .and_then(|d| d.get(key).map(|v| v.0.clone())),
            None => None,
        };
        let stored = stored.map(|bytes| secret_digest(&String::from_utf8_lossy(&bytes)));
        if stored.as_deref() != Some(generated.as_str()) && self.lost.insert(resource.id.clone()) {
            self.audit.lost_secrets += 1;
            self.findings.push(format!(
                "lost secret: the generated {key} of {} is not in Secret {secret_name:?}",
                resource.name
            ));
        }
    }
}
