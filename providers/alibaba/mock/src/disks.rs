//! Cloud disks: the disk model, the size and performance-level rules of each category, and the
//! disk store with ECS's rules for creating, attaching, detaching, resizing, changing and
//! releasing disks. RunInstances creates the system disk and the `DataDisk.N` of each instance
//! here; releasing an instance releases its disks marked `DeleteWithInstance` and detaches the
//! others.
//!
//! AttachDisk and DetachDisk leave the disk `Attaching` / `Detaching` for the mock's transition
//! delay, as ECS does; other disk operations are refused meanwhile.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use rand::Rng as _;

use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::store::{fingerprint, idempotent_mismatch};

/// Disk categories ECS sells for cloud disks.
pub const CATEGORIES: &[&str] = &[
    "cloud",
    "cloud_efficiency",
    "cloud_ssd",
    "cloud_essd",
    "cloud_auto",
    "cloud_essd_entry",
];

/// ESSD performance levels.
pub const PERFORMANCE_LEVELS: &[&str] = &["PL0", "PL1", "PL2", "PL3"];

/// Largest system disk, in GiB.
pub const MAX_SYSTEM_DISK_GIB: u32 = 2048;

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

/// The size range, in GiB, of a data disk of `category` (for `cloud_essd`, of its performance
/// level, `PL1` by default).
pub fn size_range(category: &str, performance_level: Option<&str>) -> (u32, u32) {
    match (category, performance_level.unwrap_or("PL1")) {
        ("cloud", _) => (5, 2000),
        ("cloud_essd", "PL0") => (1, 65_536),
        ("cloud_essd", "PL2") => (461, 65_536),
        ("cloud_essd", "PL3") => (1261, 65_536),
        ("cloud_essd", _) => (20, 65_536),
        ("cloud_auto", _) => (1, 65_536),
        ("cloud_essd_entry", _) => (10, 32_768),
        _ => (20, 32_768),
    }
}

/// Resolves a category name to its `'static` form; `InvalidDiskCategory.ValueNotSupported`
/// otherwise.
pub fn category(name: &str) -> Result<&'static str, ErrorResponse> {
    CATEGORIES
        .iter()
        .copied()
        .find(|c| *c == name)
        .ok_or_else(|| {
            ErrorResponse::bad_request(
                "InvalidDiskCategory.ValueNotSupported",
                format!(
                    "The specified parameter \"DiskCategory\" is not valid: use one of {}.",
                    CATEGORIES.join(", ")
                ),
            )
        })
}

/// Resolves a performance level for a disk of `category`: only `cloud_essd` disks have one
/// (`PL1` by default).
pub fn performance_level(
    category: &str,
    level: Option<&str>,
) -> Result<Option<&'static str>, ErrorResponse> {
    match (category, level) {
        ("cloud_essd", None) => Ok(Some("PL1")),
        ("cloud_essd", Some(level)) => PERFORMANCE_LEVELS
            .iter()
            .copied()
            .find(|l| *l == level)
            .map(Some)
            .ok_or_else(malformed_performance_level),
        (_, None) => Ok(None),
        (_, Some(_)) => Err(ErrorResponse::bad_request(
            "InvalidParameter.Conflict",
            "PerformanceLevel applies to cloud_essd disks only; omit it or use DiskCategory cloud_essd.",
        )),
    }
}

fn malformed_performance_level() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidPerformanceLevel.Malformed",
        "The specified parameter PerformanceLevel is not valid: use PL0, PL1, PL2 or PL3.",
    )
}

fn level_size_mismatch(level: &str, size: u32) -> ErrorResponse {
    let (min, max) = size_range("cloud_essd", Some(level));
    ErrorResponse::forbidden(
        "OperationDenied.PerformanceLevelNotMatch",
        format!(
            "The specified PerformanceLevel and disk size do not match: {level} needs {min} to {max} GiB, the disk has {size} GiB; resize the disk first."
        ),
    )
}

/// Checks a data disk's size against its category and performance level.
pub fn check_data_disk_size(
    category: &str,
    level: Option<&str>,
    size: u32,
    code: &'static str,
) -> Result<(), ErrorResponse> {
    let (min, max) = size_range(category, level);
    if (min..=max).contains(&size) {
        return Ok(());
    }
    if let Some(level) = level.filter(|_| category == "cloud_essd" && size <= 65_536) {
        return Err(level_size_mismatch(level, size));
    }
    Err(ErrorResponse::bad_request(
        code,
        format!(
            "The size of a {category} disk must be between {min} and {max} GiB; {size} was given."
        ),
    ))
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

fn new_disk_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let mut id = String::with_capacity(22);
    id.push_str("d-");
    for _ in 0..20 {
        id.push(char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]));
    }
    id
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
        let mut id = new_disk_id();
        while self.disks.contains_key(&id) {
            id = new_disk_id();
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
                delete_auto_snapshot: true,
                enable_auto_snapshot: false,
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
        instance_id: &str,
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
            disk.device = "/dev/xvda".to_owned();
            disk.attached_at = Some(now);
        }
        for spec in data {
            let id = self.insert(account_id, region_id, spec, DiskType::Data, now);
            let device = self.free_device(instance_id);
            if let Some(disk) = self.disks.get_mut(&id) {
                disk.instance_id = Some(instance_id.to_owned());
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

    /// AttachDisk: an `Available` disk of the instance's zone, to a Running or Stopped instance.
    /// With `bootable`, a detached system disk goes back to its own Stopped instance as its
    /// system disk.
    pub fn attach(
        &mut self,
        account_id: &str,
        disk_id: &str,
        instance: &InstanceFacts,
        delete_with_instance: Option<bool>,
        bootable: bool,
        (now, delay): (Timestamp, Duration),
    ) -> Result<(), ErrorResponse> {
        let has_system_disk = self
            .of_instance(&instance.id)
            .iter()
            .any(|d| d.disk_type == DiskType::System);
        let device = self.free_device(&instance.id);
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.zone_id != instance.zone_id {
            return Err(ErrorResponse::forbidden(
                "ResourcesNotInSameZone",
                format!(
                    "The specified instance and disk are not in the same zone: the disk is in {}, the instance in {}.",
                    disk.zone_id, instance.zone_id
                ),
            ));
        }
        if disk.status() != "Available" {
            return Err(ErrorResponse::forbidden(
                "IncorrectDiskStatus",
                format!(
                    "The operation is not supported in this status: the disk is {}, not Available.",
                    disk.status()
                ),
            ));
        }
        if bootable {
            if disk.home_instance_id.as_deref() != Some(instance.id.as_str()) || has_system_disk {
                return Err(ErrorResponse::forbidden(
                    "DiskId.ValueNotSupported",
                    "The specified parameter diskid is not supported: only a system disk detached from this instance can be attached as its system disk.",
                ));
            }
            if instance.status != Status::Stopped {
                return Err(instance_status_for(
                    "a system disk is attached only to a Stopped instance",
                ));
            }
        } else if !matches!(instance.status, Status::Running | Status::Stopped) {
            return Err(instance_status_for(
                "disks are attached only to Running or Stopped instances",
            ));
        }
        disk.instance_id = Some(instance.id.clone());
        disk.device = if bootable {
            "/dev/xvda".to_owned()
        } else {
            device
        };
        disk.attached_at = Some(now);
        disk.transition = until(now, delay).map(|t| (Transition::Attaching, t));
        if let Some(delete) = delete_with_instance {
            disk.delete_with_instance = delete;
        }
        Ok(())
    }

    /// DetachDisk: a data disk from a Running or Stopped instance, a system disk from a Stopped
    /// one only.
    pub fn detach(
        &mut self,
        account_id: &str,
        disk_id: &str,
        instance: &InstanceFacts,
        delete_with_instance: Option<bool>,
        (now, delay): (Timestamp, Duration),
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}; try again once it is In_use",
                disk.status()
            )));
        }
        match disk.instance_id.as_deref() {
            None => {
                return Err(incorrect_disk_status(
                    "only an attached (In_use) disk is detached",
                ));
            }
            Some(other) if other != instance.id => {
                return Err(ErrorResponse::forbidden(
                    "DependencyViolation",
                    "The specified disk has not been attached on the specified instance.",
                ));
            }
            Some(_) => {}
        }
        match (disk.disk_type, instance.status) {
            (DiskType::System, Status::Stopped) => {}
            (DiskType::System, _) => {
                return Err(instance_status_for(
                    "a system disk is detached only from a Stopped instance",
                ));
            }
            (DiskType::Data, Status::Running | Status::Stopped) => {}
            (DiskType::Data, _) => {
                return Err(instance_status_for(
                    "disks are detached only from Running or Stopped instances",
                ));
            }
        }
        match until(now, delay) {
            Some(t) => disk.transition = Some((Transition::Detaching, t)),
            None => {
                disk.instance_id = None;
                disk.device.clear();
                disk.detached_at = Some(now);
            }
        }
        disk.delete_with_instance = match disk.disk_type {
            DiskType::System => delete_with_instance.unwrap_or(true),
            DiskType::Data => false,
        };
        Ok(())
    }

    /// ResizeDisk: grows a disk (never shrinks it). `online` needs the disk attached to a
    /// Running instance; `instance` is the one it is attached to, if any.
    pub fn resize(
        &mut self,
        account_id: &str,
        disk_id: &str,
        new_size: u32,
        online: bool,
        instance: Option<&InstanceFacts>,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}",
                disk.status()
            )));
        }
        if new_size <= disk.size {
            return Err(ErrorResponse::forbidden(
                "InvalidDiskSize.TooSmall",
                format!(
                    "Specified new disk size is less than the original disk size: NewSize must be more than the current {} GiB; disks never shrink.",
                    disk.size
                ),
            ));
        }
        let max = match disk.disk_type {
            DiskType::System => MAX_SYSTEM_DISK_GIB,
            DiskType::Data => size_range(disk.category, disk.performance_level).1,
        };
        if new_size > max {
            return Err(ErrorResponse::forbidden(
                "InvalidDataDiskSize.ValueNotSupported",
                format!(
                    "The specified NewSize is beyond the permitted range: a {} {} disk holds at most {max} GiB.",
                    disk.category,
                    disk.disk_type.as_str()
                ),
            ));
        }
        if let Some(instance) = instance
            && !matches!(instance.status, Status::Running | Status::Stopped)
        {
            return Err(instance_status_for(
                "the disk's instance must be Running or Stopped",
            ));
        }
        if online {
            match instance {
                None => {
                    return Err(ErrorResponse::forbidden(
                        "IncorrectDiskStatus",
                        "The current status of the resource does not support resize online: the disk is not attached; resize it offline.",
                    ));
                }
                Some(i) if i.status != Status::Running => {
                    return Err(ErrorResponse::forbidden(
                        "IncorrectInstanceStatus",
                        "The current status of the resource does not support resize online: the instance is not Running; resize offline.",
                    ));
                }
                Some(_) => {}
            }
        }
        disk.size = new_size;
        Ok(())
    }

    /// ModifyDiskSpec: the performance level of a `cloud_essd` disk, or its category.
    pub fn modify_spec(
        &mut self,
        account_id: &str,
        disk_id: &str,
        new_category: Option<&'static str>,
        level: Option<&str>,
        instance: Option<&InstanceFacts>,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}",
                disk.status()
            )));
        }
        let category = new_category.unwrap_or(disk.category);
        if level.is_some() && category != "cloud_essd" {
            return Err(ErrorResponse::forbidden(
                "OperationDenied",
                "The type of the disk does not support the operation: only cloud_essd disks have a PerformanceLevel.",
            ));
        }
        let level = match level {
            Some(level) => Some(
                PERFORMANCE_LEVELS
                    .iter()
                    .copied()
                    .find(|l| *l == level)
                    .ok_or_else(malformed_performance_level)?,
            ),
            None if category == "cloud_essd" => disk.performance_level.or(Some("PL1")),
            None => None,
        };
        let (min, max) = size_range(category, level);
        if !(min..=max).contains(&disk.size) {
            return Err(match level {
                Some(level) => level_size_mismatch(level, disk.size),
                None => ErrorResponse::forbidden(
                    "OperationDenied",
                    format!(
                        "The type of the disk does not support the operation: a {category} disk holds {min} to {max} GiB."
                    ),
                ),
            });
        }
        if let Some(instance) = instance
            && !matches!(instance.status, Status::Running | Status::Stopped)
        {
            return Err(instance_status_for(
                "the disk's instance must be Running or Stopped",
            ));
        }
        disk.category = category;
        disk.performance_level = level;
        Ok(())
    }

    /// ModifyDiskAttribute: name, description and the release flags.
    pub fn modify_attribute(
        &mut self,
        account_id: &str,
        disk_id: &str,
        change: &AttributeChange,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if let Some(name) = &change.name {
            disk.name.clone_from(name);
        }
        if let Some(description) = &change.description {
            disk.description.clone_from(description);
        }
        if let Some(flag) = change.delete_with_instance {
            disk.delete_with_instance = flag;
        }
        if let Some(flag) = change.delete_auto_snapshot {
            disk.delete_auto_snapshot = flag;
        }
        if let Some(flag) = change.enable_auto_snapshot {
            disk.enable_auto_snapshot = flag;
        }
        Ok(())
    }

    /// Adds or overwrites tags on a disk.
    pub fn tag(
        &mut self,
        account_id: &str,
        disk_id: &str,
        tags: &crate::network_tags::Tags,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        crate::network_tags::merge(&mut disk.tags, tags)
    }

    /// Removes tag keys from a disk.
    pub fn untag(
        &mut self,
        account_id: &str,
        disk_id: &str,
        keys: &[String],
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        disk.tags.retain(|(k, _)| !keys.contains(k));
        Ok(())
    }

    /// DeleteDisk: releases an `Available` disk; an unknown ID is ignored, as ECS documents.
    pub fn delete(&mut self, account_id: &str, disk_id: &str) -> Result<(), ErrorResponse> {
        let Ok(disk) = self.find(account_id, disk_id) else {
            return Ok(());
        };
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}; release it once it is Available",
                disk.status()
            )));
        }
        if disk.instance_id.is_some() {
            return Err(ErrorResponse::forbidden(
                "DiskStillAttached",
                "The disk is still attached to an instance; detach it with DetachDisk first.",
            ));
        }
        self.disks.remove(disk_id);
        Ok(())
    }

    /// ReplaceSystemDisk: the instance's system disk is released and a new one, of the same
    /// category, performance level and encryption, made from `image_id` takes its place (a new
    /// disk ID). A size below the old disk's is refused. Returns the new disk's ID.
    pub fn replace_system_disk(
        &mut self,
        instance_id: &str,
        image: (&str, u32),
        size: Option<u32>,
        now: Timestamp,
    ) -> Result<String, ErrorResponse> {
        let (image_id, image_size) = image;
        let old = self
            .disks
            .values()
            .find(|d| {
                d.disk_type == DiskType::System && d.instance_id.as_deref() == Some(instance_id)
            })
            .cloned()
            .ok_or_else(|| instance_status_for("the instance has no system disk attached"))?;
        // ECS documents the default as Max{40, image size} and refuses less than the current
        // disk; the default here never shrinks the disk either.
        let size = size.unwrap_or(image_size.max(40).max(old.size));
        if size < old.size {
            return Err(ErrorResponse::bad_request(
                "InvalidSystemDiskSize.ValueNotSupported",
                format!(
                    "SystemDisk.Size cannot be smaller than the current system disk ({} GiB).",
                    old.size
                ),
            ));
        }
        let spec = DiskSpec {
            zone_id: old.zone_id.clone(),
            category: old.category,
            size,
            performance_level: old.performance_level,
            encrypted: old.encrypted,
            kms_key_id: old.kms_key_id.clone(),
            delete_with_instance: old.delete_with_instance,
            ..DiskSpec::default()
        };
        self.disks.remove(&old.id);
        let id = self.insert(&old.account_id, old.region_id, &spec, DiskType::System, now);
        if let Some(disk) = self.disks.get_mut(&id) {
            disk.image_id = image_id.to_owned();
            disk.home_instance_id = Some(instance_id.to_owned());
            disk.instance_id = Some(instance_id.to_owned());
            disk.device = old.device;
            disk.attached_at = Some(now);
        }
        Ok(id)
    }

    /// An instance was released: its disks marked `DeleteWithInstance` go with it, the others
    /// become `Available`.
    pub fn release_instance(&mut self, instance_id: &str, now: Timestamp) {
        let attached: Vec<String> = self
            .disks
            .values()
            .filter(|d| d.instance_id.as_deref() == Some(instance_id))
            .map(|d| d.id.clone())
            .collect();
        for id in attached {
            let release = self.disks.get(&id).is_some_and(|d| d.delete_with_instance);
            if release {
                self.disks.remove(&id);
            } else if let Some(disk) = self.disks.get_mut(&id) {
                disk.instance_id = None;
                disk.device.clear();
                disk.detached_at = Some(now);
                disk.transition = None;
            }
        }
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

    fn spec(size: u32) -> DiskSpec {
        DiskSpec {
            zone_id: "cn-hangzhou-b".into(),
            category: "cloud_essd",
            size,
            performance_level: Some("PL1"),
            ..DiskSpec::default()
        }
    }

    fn instance(status: Status) -> InstanceFacts {
        InstanceFacts {
            id: "i-1".into(),
            zone_id: "cn-hangzhou-b".into(),
            status,
        }
    }

    fn now() -> Timestamp {
        Timestamp::now()
    }

    fn at_once() -> (Timestamp, Duration) {
        (now(), Duration::ZERO)
    }

    #[test]
    fn sizes_follow_category_and_level() {
        assert!(check_data_disk_size("cloud_essd", Some("PL1"), 20, "X").is_ok());
        assert_eq!(
            check_data_disk_size("cloud_essd", Some("PL2"), 100, "X")
                .unwrap_err()
                .code,
            "OperationDenied.PerformanceLevelNotMatch"
        );
        assert_eq!(
            check_data_disk_size("cloud", None, 2001, "InvalidSize.ValueNotSupported")
                .unwrap_err()
                .code,
            "InvalidSize.ValueNotSupported"
        );
        assert_eq!(
            performance_level("cloud_ssd", Some("PL1"))
                .unwrap_err()
                .code,
            "InvalidParameter.Conflict"
        );
        assert_eq!(
            performance_level("cloud_essd", Some("PL9"))
                .unwrap_err()
                .code,
            "InvalidPerformanceLevel.Malformed"
        );
        assert_eq!(performance_level("cloud_essd", None).unwrap(), Some("PL1"));
    }

    #[test]
    fn attach_rules() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let id = store
            .create(&acct, "cn-hangzhou", &spec(40), None, now())
            .unwrap();
        let other_zone = InstanceFacts {
            zone_id: "cn-hangzhou-h".into(),
            ..instance(Status::Running)
        };
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.attach("1", &id, &other_zone, None, false, at_once())),
            "ResourcesNotInSameZone"
        );
        assert_eq!(
            code(store.attach("1", &id, &instance(Status::Pending), None, false, at_once())),
            "IncorrectInstanceStatus"
        );
        assert_eq!(
            code(store.attach("2", &id, &instance(Status::Running), None, false, at_once())),
            "InvalidDiskId.NotFound"
        );
        store
            .attach("1", &id, &instance(Status::Running), None, false, at_once())
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().status(), "In_use");
        assert_eq!(store.find("1", &id).unwrap().device, "/dev/xvdb");
        assert_eq!(
            code(store.attach("1", &id, &instance(Status::Running), None, false, at_once())),
            "IncorrectDiskStatus"
        );
        assert_eq!(code(store.delete("1", &id)), "DiskStillAttached");
        let elsewhere = InstanceFacts {
            id: "i-2".into(),
            ..instance(Status::Running)
        };
        assert_eq!(
            code(store.detach("1", &id, &elsewhere, None, at_once())),
            "DependencyViolation"
        );
        store
            .detach("1", &id, &instance(Status::Stopped), None, at_once())
            .unwrap();
        assert_eq!(
            code(store.detach("1", &id, &instance(Status::Stopped), None, at_once())),
            "IncorrectDiskStatus"
        );
        store.delete("1", &id).unwrap();
        assert!(store.find("1", &id).is_err());
        // An unknown disk is ignored, as ECS documents.
        store.delete("1", &id).unwrap();
    }

    #[test]
    fn system_disk_leaves_only_a_stopped_instance() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        store.create_for_instance(
            (&acct, "cn-hangzhou"),
            "i-1",
            "img",
            &spec(40),
            &[spec(100)],
            now(),
        );
        let disks: Vec<Disk> = store.of_instance("i-1").into_iter().cloned().collect();
        assert_eq!(disks.len(), 2);
        assert_eq!(disks[0].disk_type, DiskType::System);
        assert_eq!(disks[1].device, "/dev/xvdb");
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.detach(
                "1",
                &disks[0].id,
                &instance(Status::Running),
                None,
                at_once()
            )),
            "IncorrectInstanceStatus"
        );
        store
            .detach(
                "1",
                &disks[0].id,
                &instance(Status::Stopped),
                None,
                at_once(),
            )
            .unwrap();
        store
            .attach(
                "1",
                &disks[0].id,
                &instance(Status::Stopped),
                None,
                true,
                at_once(),
            )
            .unwrap();
        store.release_instance("i-1", now());
        // The system disk goes with the instance; the data disk (DeleteWithInstance false) stays.
        assert!(store.find("1", &disks[0].id).is_err());
        assert_eq!(store.find("1", &disks[1].id).unwrap().status(), "Available");
    }

    #[test]
    fn resize_and_spec_rules() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let id = store
            .create(&acct, "cn-hangzhou", &spec(40), None, now())
            .unwrap();
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.resize("1", &id, 40, false, None)),
            "InvalidDiskSize.TooSmall"
        );
        assert_eq!(
            code(store.resize("1", &id, 30, false, None)),
            "InvalidDiskSize.TooSmall"
        );
        assert_eq!(
            code(store.resize("1", &id, 50, true, None)),
            "IncorrectDiskStatus"
        );
        assert_eq!(
            code(store.resize("1", &id, 50, true, Some(&instance(Status::Stopped)))),
            "IncorrectInstanceStatus"
        );
        store
            .resize("1", &id, 50, true, Some(&instance(Status::Running)))
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().size, 50);
        assert_eq!(
            code(store.modify_spec("1", &id, None, Some("PL2"), None)),
            "OperationDenied.PerformanceLevelNotMatch"
        );
        store
            .modify_spec("1", &id, None, Some("PL0"), None)
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().performance_level, Some("PL0"));
        assert_eq!(
            code(store.modify_spec("1", &id, None, Some("PLX"), None)),
            "InvalidPerformanceLevel.Malformed"
        );
        let ssd = store
            .create(
                &acct,
                "cn-hangzhou",
                &DiskSpec {
                    category: "cloud_ssd",
                    performance_level: None,
                    ..spec(40)
                },
                None,
                now(),
            )
            .unwrap();
        assert_eq!(
            code(store.modify_spec("1", &ssd, None, Some("PL1"), None)),
            "OperationDenied"
        );
    }

    #[test]
    fn attaching_and_detaching_take_the_transition_delay() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let id = store
            .create(&acct, "cn-hangzhou", &spec(40), None, now())
            .unwrap();
        let t0 = now();
        let delay = Duration::from_secs(10);
        let at = |secs: i64| {
            t0.checked_add(jiff::SignedDuration::from_secs(secs))
                .unwrap()
        };
        let running = instance(Status::Running);
        store
            .attach("1", &id, &running, None, false, (t0, delay))
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().status(), "Attaching");
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.detach("1", &id, &running, None, (at(1), delay))),
            "IncorrectDiskStatus"
        );
        assert_eq!(
            code(store.resize("1", &id, 50, false, Some(&running))),
            "IncorrectDiskStatus"
        );
        store.settle(at(10));
        assert_eq!(store.find("1", &id).unwrap().status(), "In_use");
        store
            .detach("1", &id, &running, None, (at(11), delay))
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().status(), "Detaching");
        assert_eq!(
            store.find("1", &id).unwrap().instance_id.as_deref(),
            Some("i-1")
        );
        assert_eq!(code(store.delete("1", &id)), "IncorrectDiskStatus");
        store.settle(at(20));
        assert_eq!(store.find("1", &id).unwrap().status(), "Detaching");
        store.settle(at(21));
        let disk = store.find("1", &id).unwrap();
        assert_eq!(
            (disk.status(), disk.instance_id.as_deref()),
            ("Available", None)
        );
        store.delete("1", &id).unwrap();
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
