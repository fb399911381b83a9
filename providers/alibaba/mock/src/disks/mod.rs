//! Cloud disks: the disk model and the disk store, with ECS's rules for creating disks. The rules
//! of the rest are in the children: `rules` (sizes and performance levels of each category),
//! `attachment` (attaching, detaching, replacing a system disk, releasing an instance's disks)
//! and `changes` (resizing, changing spec and attributes, tags, deleting). RunInstances creates the system disk and the `DataDisk.N` of each instance
//! here; releasing an instance releases its disks marked `DeleteWithInstance` and detaches the
//! others.
//!
//! AttachDisk and DetachDisk leave the disk `Attaching` / `Detaching` for the mock's transition
//! delay, as ECS does; other disk operations are refused meanwhile.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

mod attachment;
mod changes;
pub mod rules;

use crate::error::ErrorResponse;
use crate::idempotency::{fingerprint, idempotent_mismatch};
use crate::ids::short_random_id;
use crate::instance::Status;

/// A change of attachment in progress: ECS answers AttachDisk and DetachDisk at once and the
/// disk is `Attaching` / `Detaching` for a while (the mock's transition delay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Attaching,
    Detaching,
}

impl Transition {
    /// The status ECS reports meanwhile.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Attaching => "Attaching",
            Self::Detaching => "Detaching",
        }
    }
}

/// Whether a disk is an instance's system disk or a data disk (`Type` in DescribeDisks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiskType {
    System,
    Data,
}

impl DiskType {
    /// `system` / `data`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Data => "data",
        }
    }
}

/// One cloud disk.
#[derive(Debug, Clone)]
pub struct Disk {
    /// `d-…`.
    pub id: String,
    /// Creation order.
    pub seq: u64,
    pub account_id: Arc<str>,
    pub region_id: &'static str,
    pub zone_id: String,
    pub name: String,
    pub description: String,
    pub disk_type: DiskType,
    pub category: &'static str,
    /// GiB.
    pub size: u32,
    /// `PL0`–`PL3` for `cloud_essd`.
    pub performance_level: Option<&'static str>,
    pub encrypted: bool,
    pub kms_key_id: String,
    pub source_snapshot_id: String,
    /// The image a system disk was made from.
    pub image_id: String,
    /// The instance it is attached to.
    pub instance_id: Option<String>,
    /// The instance a system disk belongs to (kept when it is detached).
    pub home_instance_id: Option<String>,
    pub device: String,
    pub delete_with_instance: bool,
    pub delete_auto_snapshot: bool,
    pub enable_auto_snapshot: bool,
    /// The instance's group for the disks RunInstances makes, else the account's default one
    /// (CreateDisk here takes no `ResourceGroupId`).
    pub resource_group_id: &'static str,
    pub created_at: Timestamp,
    pub attached_at: Option<Timestamp>,
    pub detached_at: Option<Timestamp>,
    pub tags: Vec<(String, String)>,
    /// An attach or detach in progress, and when it completes. While detaching, `instance_id`
    /// still names the instance.
    pub transition: Option<(Transition, Timestamp)>,
}

impl Disk {
    /// `Attaching` / `Detaching` during a change, else `In_use` when attached, else `Available`
    /// (as of the last [`DiskStore::settle`]).
    pub fn status(&self) -> &'static str {
        if let Some((transition, _)) = self.transition {
            return transition.as_str();
        }
        if self.instance_id.is_some() {
            "In_use"
        } else {
            "Available"
        }
    }
}

/// A disk as [`crate::MockServer::disks`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiskSummary {
    pub disk_id: String,
    pub account_id: String,
    pub region_id: String,
    pub zone_id: String,
    /// `system` or `data`.
    pub disk_type: String,
    pub category: String,
    pub size: u32,
    pub performance_level: Option<String>,
    /// `In_use` or `Available`.
    pub status: String,
    pub instance_id: Option<String>,
    pub delete_with_instance: bool,
    pub tags: std::collections::BTreeMap<String, String>,
}

impl Disk {
    /// The summary of this disk.
    pub fn summary(&self) -> DiskSummary {
        DiskSummary {
            disk_id: self.id.clone(),
            account_id: self.account_id.to_string(),
            region_id: self.region_id.to_owned(),
            zone_id: self.zone_id.clone(),
            disk_type: self.disk_type.as_str().to_owned(),
            category: self.category.to_owned(),
            size: self.size,
            performance_level: self.performance_level.map(str::to_owned),
            status: self.status().to_owned(),
            instance_id: self.instance_id.clone(),
            delete_with_instance: self.delete_with_instance,
            tags: self.tags.iter().cloned().collect(),
        }
    }
}

/// What a new disk is made of (CreateDisk, or a disk of RunInstances).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct DiskSpec {
    pub zone_id: String,
    pub name: String,
    pub description: String,
    pub category: &'static str,
    pub size: u32,
    pub performance_level: Option<&'static str>,
    pub encrypted: bool,
    pub kms_key_id: String,
    pub tags: Vec<(String, String)>,
    pub delete_with_instance: bool,
}

/// What an instance looks like to the disk rules.
#[derive(Debug, Clone)]
pub struct InstanceFacts {
    pub id: String,
    pub zone_id: String,
    pub status: Status,
}

fn incorrect_disk_status(doing: &str) -> ErrorResponse {
    ErrorResponse::forbidden(
        "IncorrectDiskStatus",
        format!("The current disk status does not support this operation: {doing}."),
    )
}

fn instance_status_for(doing: &str) -> ErrorResponse {
    ErrorResponse::forbidden(
        "IncorrectInstanceStatus",
        format!("The current status of the resource does not support this operation: {doing}."),
    )
}

/// `InvalidDiskId.NotFound` (404).
pub fn disk_not_found(id: &str) -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidDiskId.NotFound",
        format!(
            "The specified disk \"{}\" does not exist.",
            crate::error::truncate(id, 64)
        ),
    )
}

/// When a change started at `now` completes; `None` when it completes at once.
fn until(now: Timestamp, delay: Duration) -> Option<Timestamp> {
    if delay.is_zero() {
        return None;
    }
    let delay = jiff::SignedDuration::try_from(delay).ok()?;
    now.checked_add(delay).ok()
}

/// Every disk of the mock, with CreateDisk's ClientTokens.
#[derive(Debug, Default)]
pub struct DiskStore {
    disks: HashMap<String, Disk>,
    /// (account, region, token) → (fingerprint of the request, disk ID).
    tokens: HashMap<(Arc<str>, &'static str, String), (u64, String)>,
    next_seq: u64,
}

impl DiskStore {
    /// Completes the attaches and detaches whose time has come.
    pub fn settle(&mut self, now: Timestamp) {
        for disk in self.disks.values_mut() {
            match disk.transition {
                Some((Transition::Detaching, until)) if until <= now => {
                    disk.instance_id = None;
                    disk.device.clear();
                    disk.detached_at = Some(until);
                    disk.transition = None;
                }
                Some((Transition::Attaching, until)) if until <= now => disk.transition = None,
                _ => {}
            }
        }
    }

    /// The disk if it belongs to the account.
    pub fn find(&self, account_id: &str, id: &str) -> Result<&Disk, ErrorResponse> {
        self.disks
            .get(id)
            .filter(|d| &*d.account_id == account_id)
            .ok_or_else(|| disk_not_found(id))
    }

    fn find_mut(&mut self, account_id: &str, id: &str) -> Result<&mut Disk, ErrorResponse> {
        self.disks
            .get_mut(id)
            .filter(|d| &*d.account_id == account_id)
            .ok_or_else(|| disk_not_found(id))
    }

    /// The account's disks in a region, oldest first.
    pub fn in_region(&self, account_id: &str, region_id: &str) -> Vec<&Disk> {
        let mut found: Vec<&Disk> = self
            .disks
            .values()
            .filter(|d| &*d.account_id == account_id && d.region_id == region_id)
            .collect();
        found.sort_unstable_by_key(|d| d.seq);
        found
    }

    /// Every disk, oldest first.
    pub fn all(&self) -> Vec<&Disk> {
        let mut all: Vec<&Disk> = self.disks.values().collect();
        all.sort_unstable_by_key(|d| d.seq);
        all
    }

    fn insert(
        &mut self,
        account_id: &Arc<str>,
        region_id: &'static str,
        spec: &DiskSpec,
        disk_type: DiskType,
        now: Timestamp,
    ) -> String {
        let mut id = short_random_id("d");
        while self.disks.contains_key(&id) {
            id = short_random_id("d");
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.disks.insert(
            id.clone(),
            Disk {
                id: id.clone(),
                seq,
                account_id: account_id.clone(),
                region_id,
                zone_id: spec.zone_id.clone(),
                name: spec.name.clone(),
                description: spec.description.clone(),
                disk_type,
                category: spec.category,
                size: spec.size,
                performance_level: spec.performance_level,
                encrypted: spec.encrypted,
                kms_key_id: spec.kms_key_id.clone(),
                source_snapshot_id: String::new(),
                image_id: String::new(),
                instance_id: None,
                home_instance_id: None,
                device: String::new(),
                delete_with_instance: spec.delete_with_instance,
                // ECS's defaults: a released disk keeps its automatic snapshots, and a new cloud
                // disk is covered by automatic snapshot policies.
                delete_auto_snapshot: false,
                enable_auto_snapshot: true,
                resource_group_id: crate::resource_groups::DEFAULT,
                created_at: now,
                attached_at: None,
                detached_at: None,
                tags: spec.tags.clone(),
                transition: None,
            },
        );
        id
    }

    /// CreateDisk: a new `Available` data disk (or the one an earlier call with the same
    /// ClientToken created).
    pub fn create(
        &mut self,
        account_id: &Arc<str>,
        region_id: &'static str,
        spec: &DiskSpec,
        client_token: Option<&str>,
        now: Timestamp,
    ) -> Result<String, ErrorResponse> {
        let print = fingerprint(spec);
        let key = client_token.map(|t| (account_id.clone(), region_id, t.to_owned()));
        if let Some((earlier, id)) = key.as_ref().and_then(|k| self.tokens.get(k)) {
            return if *earlier == print {
                Ok(id.clone())
            } else {
                Err(idempotent_mismatch())
            };
        }
        let id = self.insert(account_id, region_id, spec, DiskType::Data, now);
        if let Some(key) = key {
            self.tokens.insert(key, (print, id.clone()));
        }
        Ok(id)
    }

    /// The disks RunInstances creates with an instance, attached at once: the system disk
    /// first, then the data disks in order.
    pub fn create_for_instance(
        &mut self,
        (account_id, region_id): (&Arc<str>, &'static str),
        (instance_id, resource_group_id): (&str, &'static str),
        image_id: &str,
        system: &DiskSpec,
        data: &[DiskSpec],
        now: Timestamp,
    ) {
        let id = self.insert(account_id, region_id, system, DiskType::System, now);
        if let Some(disk) = self.disks.get_mut(&id) {
            disk.image_id = image_id.to_owned();
            disk.home_instance_id = Some(instance_id.to_owned());
            disk.instance_id = Some(instance_id.to_owned());
            disk.resource_group_id = resource_group_id;
            disk.device = "/dev/xvda".to_owned();
            disk.attached_at = Some(now);
        }
        for spec in data {
            let id = self.insert(account_id, region_id, spec, DiskType::Data, now);
            let device = self.free_device(instance_id);
            if let Some(disk) = self.disks.get_mut(&id) {
                disk.instance_id = Some(instance_id.to_owned());
                disk.resource_group_id = resource_group_id;
                disk.device = device;
                disk.attached_at = Some(now);
            }
        }
    }

    /// The first `/dev/xvdX` (from `b`) no disk of the instance uses.
    fn free_device(&self, instance_id: &str) -> String {
        let used: Vec<&str> = self
            .disks
            .values()
            .filter(|d| d.instance_id.as_deref() == Some(instance_id))
            .map(|d| d.device.as_str())
            .collect();
        (b'b'..=b'z')
            .map(|c| format!("/dev/xvd{}", char::from(c)))
            .find(|dev| !used.contains(&dev.as_str()))
            .unwrap_or_else(|| "/dev/xvdz".to_owned())
    }

    /// The disks attached to an instance, system disk first.
    pub fn of_instance(&self, instance_id: &str) -> Vec<&Disk> {
        let mut found: Vec<&Disk> = self
            .disks
            .values()
            .filter(|d| d.instance_id.as_deref() == Some(instance_id))
            .collect();
        found.sort_unstable_by_key(|d| (d.disk_type == DiskType::Data, d.seq));
        found
    }
}

/// The changes of a ModifyDiskAttribute call.
#[derive(Debug, Clone, Default)]
pub struct AttributeChange {
    pub name: Option<String>,
    pub description: Option<String>,
    pub delete_with_instance: Option<bool>,
    pub delete_auto_snapshot: Option<bool>,
    pub enable_auto_snapshot: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn spec(size: u32) -> DiskSpec {
        DiskSpec {
            zone_id: "cn-hangzhou-b".into(),
            category: "cloud_essd",
            size,
            performance_level: Some("PL1"),
            ..DiskSpec::default()
        }
    }

    pub(super) fn instance(status: Status) -> InstanceFacts {
        InstanceFacts {
            id: "i-1".into(),
            zone_id: "cn-hangzhou-b".into(),
            status,
        }
    }

    pub(super) fn now() -> Timestamp {
        Timestamp::now()
    }

    pub(super) fn at_once() -> (Timestamp, Duration) {
        (now(), Duration::ZERO)
    }

    #[test]
    fn client_token_returns_the_same_disk() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let a = store
            .create(&acct, "cn-hangzhou", &spec(40), Some("t"), now())
            .unwrap();
        let b = store
            .create(&acct, "cn-hangzhou", &spec(40), Some("t"), now())
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(
            store
                .create(&acct, "cn-hangzhou", &spec(50), Some("t"), now())
                .unwrap_err()
                .code,
            "IdempotentParameterMismatch"
        );
        assert_eq!(store.all().len(), 1);
    }
}
