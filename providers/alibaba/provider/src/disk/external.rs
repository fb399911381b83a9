//! The `Disk` kind's external client: `CreateDisk` (ClientToken from the object's UID, UID tag),
//! `DescribeDisks` (by ID, or by the UID tag), the calls of a [`DiskPlan`] to follow the spec,
//! and on deletion `DetachDisk` then `DeleteDisk`. The instance a disk is created for, or moved
//! to, is checked first (`zone`).

use alibaba_sdk::Error;
use alibaba_sdk::ecs::{
    CreateDiskRequest, DescribeDisksRequest, Disk as CloudDisk, ResizeType, Tag,
};
use ferroplane_apis::alibabacloud::{Disk, DiskObservation};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, ReconcileError, UID_TAG, Update,
};
use tracing::info;

use super::plan::DiskPlan;
use super::readiness::readiness;
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::{non_empty, uid_tagged};

/// Connection Secret key.
const CONN_DISK_ID: &str = "diskId";

/// Disk statuses that settle by themselves: a disk being made, and a change of attachment
/// (ECS answers AttachDisk / DetachDisk at once and changes the disk in about a minute).
const TRANSITIONS: &[&str] = &["Creating", "Attaching", "Detaching", "ReIniting"];

fn observation(disk: &CloudDisk) -> DiskObservation {
    DiskObservation {
        disk_id: non_empty(&disk.disk_id),
        status: non_empty(&disk.status),
        r#type: non_empty(&disk.disk_type),
        category: non_empty(&disk.category),
        size: Some(i64::from(disk.size)),
        performance_level: non_empty(&disk.performance_level),
        instance_id: non_empty(&disk.instance_id),
        device: non_empty(&disk.device),
        zone_id: non_empty(&disk.zone_id),
        encrypted: Some(disk.encrypted),
        delete_auto_snapshot: Some(disk.delete_auto_snapshot),
        creation_time: non_empty(&disk.creation_time),
    }
}

impl CloudClients {
    async fn find_disk(&self, ext: &ExternalRef) -> Result<Option<CloudDisk>, ReconcileError> {
        let request = match ext.name() {
            Some(id) => DescribeDisksRequest {
                disk_ids: vec![id.to_owned()],
                ..DescribeDisksRequest::default()
            },
            None => DescribeDisksRequest {
                tags: vec![Tag::new(UID_TAG, &ext.uid)],
                ..DescribeDisksRequest::default()
            },
        };
        let found = self
            .call("DescribeDisks", self.region.ecs.describe_disks(&request))
            .await?;
        Ok(found
            .into_iter()
            .filter(|d| ext.name().is_none_or(|id| d.disk_id == id))
            .min_by(|a, b| a.disk_id.cmp(&b.disk_id)))
    }

    /// ResizeDisk: online while attached (ECS grows it at once), else offline; an attached disk
    /// whose instance is not running is grown offline (effective after the next restart).
    async fn grow(&self, disk: &CloudDisk, size: u32) -> Result<(), ReconcileError> {
        let how = if disk.is_attached() {
            ResizeType::Online
        } else {
            ResizeType::Offline
        };
        match self
            .raw(
                "ResizeDisk",
                self.region.ecs.resize_disk(&disk.disk_id, size, how),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if how == ResizeType::Online && is_code(&e, "IncorrectInstanceStatus") => {
                info!(disk = %disk.disk_id, "instance not running: resizing offline");
                self.call(
                    "ResizeDisk",
                    self.region
                        .ecs
                        .resize_disk(&disk.disk_id, size, ResizeType::Offline),
                )
                .await
                .map(drop)
            }
            Err(e) => Err(self.error(&e)),
        }
    }
}

fn is_code(err: &Error, code: &str) -> bool {
    err.code() == Some(code)
}

impl ExternalClient<Disk> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns disk IDs: a named one that is not found is never created again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(&self, mr: &Disk, ext: &ExternalRef) -> Result<Observation, ReconcileError> {
        let Some(disk) = self.find_disk(ext).await? else {
            return Ok(Observation::missing());
        };
        let readiness = readiness(&mr.spec.for_provider, &disk);
        let mut observation = Observation::found(&disk.disk_id)
            .with_owner_tag(disk.tag(UID_TAG))
            .with_status(serde_json::json!({"atProvider": observation(&disk)}))?
            .with_late_init(serde_json::json!({
                "category": non_empty(&disk.category),
                "performanceLevel": non_empty(&disk.performance_level),
                "size": (disk.size > 0).then_some(disk.size),
            }))?
            .with_readiness(readiness)
            .with_connection_details(
                ConnectionDetails::new().with(CONN_DISK_ID, disk.disk_id.as_bytes()),
            );
        if TRANSITIONS.contains(&disk.status.as_str()) {
            return Ok(observation.in_transition());
        }
        let plan = DiskPlan::new(&mr.spec.for_provider, &disk);
        if !plan.is_empty() {
            observation = observation.with_diff(plan.describe(&disk));
        }
        Ok(observation)
    }

    async fn create(&self, mr: &Disk, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        // A disk that could never attach to its instance is not made (see `zone`).
        if let Some(instance) = p.instance_id.as_deref() {
            self.check_instance_zone(mr, instance).await?;
        }
        let request = CreateDiskRequest {
            zone_id: p.zone_id.clone(),
            disk_category: p.category.clone(),
            size: p.size.and_then(|s| u32::try_from(s).ok()),
            performance_level: p.performance_level.clone(),
            snapshot_id: p.snapshot_id.clone(),
            encrypted: p.encrypted,
            kms_key_id: p.kms_key_id.clone(),
            disk_name: p.disk_name.clone(),
            description: p.description.clone(),
            tags: uid_tagged(p.tags.as_ref(), key.uid(), |k, v| Tag::new(k, v)),
            client_token: Some(key.token().to_owned()),
        };
        let created = self
            .call("CreateDisk", self.region.ecs.create_disk(&request))
            .await?;
        // Attaching and the attributes CreateDisk does not take follow in the first update.
        Ok(Creation::new(&created.disk_id).with_connection_details(
            ConnectionDetails::new().with(CONN_DISK_ID, created.disk_id.as_bytes()),
        ))
    }

    async fn update(&self, mr: &Disk, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let Some(disk) = self.find_disk(ext).await? else {
            return Ok(Update::in_progress());
        };
        if TRANSITIONS.contains(&disk.status.as_str()) {
            return Ok(Update::in_progress());
        }
        let plan = DiskPlan::new(&mr.spec.for_provider, &disk);
        let ecs = &self.region.ecs;
        let id = disk.disk_id.as_str();
        // What works whether or not the disk is attached comes first; a detach leaves the disk
        // Detaching for a while, so an attach elsewhere waits for a later cycle.
        if let Some(size) = plan.grow_to {
            self.grow(&disk, size).await?;
        }
        if let Some(level) = &plan.performance_level {
            self.call(
                "ModifyDiskSpec",
                ecs.modify_disk_performance_level(id, level),
            )
            .await?;
        }
        if !plan.attribute.is_empty() {
            self.call(
                "ModifyDiskAttribute",
                ecs.modify_disk_attribute(id, &plan.attribute),
            )
            .await?;
        }
        if !plan.tag.is_empty() {
            let tags: Vec<Tag> = plan.tag.iter().map(|(k, v)| Tag::new(k, v)).collect();
            self.call("TagResources", ecs.tag_disk(id, &tags)).await?;
        }
        if !plan.untag.is_empty() {
            self.call("UntagResources", ecs.untag_disk(id, &plan.untag))
                .await?;
        }
        // An instance it cannot attach to is refused before the disk leaves the one it is on.
        if let Some(to) = &plan.attach_to {
            self.check_instance_zone(mr, to).await?;
        }
        if let Some(from) = &plan.detach_from {
            self.call("DetachDisk", ecs.detach_disk(id, from)).await?;
            return Ok(if plan.attach_to.is_some() {
                Update::in_progress()
            } else {
                Update::done()
            });
        }
        if let Some(to) = &plan.attach_to {
            self.call("AttachDisk", ecs.attach_disk(id, to, None))
                .await?;
        }
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &Disk, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let id = ext.name().unwrap_or_default();
        self.call(
            "TagResources",
            self.region.ecs.tag_disk(id, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
    }

    async fn delete(&self, _mr: &Disk, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        if ext.name().is_none() {
            return Ok(Deletion::Gone);
        }
        let Some(disk) = self.find_disk(ext).await? else {
            return Ok(Deletion::Gone);
        };
        let ecs = &self.region.ecs;
        if TRANSITIONS.contains(&disk.status.as_str()) {
            // Being attached or detached: released once that is over.
            return Ok(Deletion::InProgress);
        }
        if disk.is_attached() {
            // A disk is released only once detached.
            self.call(
                "DetachDisk",
                ecs.detach_disk(&disk.disk_id, &disk.instance_id),
            )
            .await?;
            return Ok(Deletion::InProgress);
        }
        match self.raw("DeleteDisk", ecs.delete_disk(&disk.disk_id)).await {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.is_not_found() => Ok(Deletion::Gone),
            Err(e) if is_code(&e, "DiskStillAttached") || is_code(&e, "IncorrectDiskStatus") => {
                Ok(Deletion::Waiting(format!(
                    "disk {} is still attached ({}); it is released once detached",
                    disk.disk_id,
                    e.code().unwrap_or_default()
                )))
            }
            Err(e) => Err(self.error(&e)),
        }
    }
}
