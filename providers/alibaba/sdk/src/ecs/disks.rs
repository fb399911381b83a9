//! Cloud disks: their requests, responses and typed actions on [`EcsClient`] (CreateDisk,
//! DescribeDisks, AttachDisk, DetachDisk, ResizeDisk, ModifyDiskSpec, ModifyDiskAttribute,
//! DeleteDisk and disk tags).

use serde::Deserialize;

use super::client::EcsClient;
use super::request::{resolve_client_token, set_tags};
use super::response::{AckResponse, Tag, TagList};
use crate::error::Error;
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// Most disk IDs one `DescribeDisks` takes.
pub const MAX_DISK_IDS_PER_CALL: usize = 100;

/// `CreateDisk` parameters: a pay-as-you-go data disk in a zone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateDiskRequest {
    /// `ZoneId`.
    pub zone_id: String,
    /// `DiskCategory` (`cloud` when absent).
    pub disk_category: Option<String>,
    /// `Size` in GiB.
    pub size: Option<u32>,
    /// `PerformanceLevel` (`PL0`–`PL3`, `cloud_essd` only).
    pub performance_level: Option<String>,
    /// `SnapshotId`.
    pub snapshot_id: Option<String>,
    /// `Encrypted`.
    pub encrypted: Option<bool>,
    /// `KMSKeyId` (needs `encrypted`).
    pub kms_key_id: Option<String>,
    /// `DiskName`.
    pub disk_name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `Tag.N`.
    pub tags: Vec<Tag>,
    /// `ClientToken`; a fresh one when absent.
    pub client_token: Option<String>,
}

impl CreateDiskRequest {
    /// The API parameters (the ClientToken is added by [`EcsClient::create_disk`]).
    pub fn to_params(&self) -> Params {
        let mut p = Params::new();
        p.set("ZoneId", &self.zone_id)
            .opt("DiskCategory", self.disk_category.as_ref())
            .opt("Size", self.size)
            .opt("PerformanceLevel", self.performance_level.as_ref())
            .opt("SnapshotId", self.snapshot_id.as_ref())
            .opt("Encrypted", self.encrypted)
            .opt("KMSKeyId", self.kms_key_id.as_ref())
            .opt("DiskName", self.disk_name.as_ref())
            .opt("Description", self.description.as_ref());
        set_tags(&mut p, &self.tags);
        p
    }
}

/// `CreateDisk` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateDiskResponse {
    /// The request ID.
    pub request_id: String,
    /// `d-...`.
    pub disk_id: String,
}

/// One disk as `DescribeDisks` reports it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Disk {
    /// `d-...`.
    pub disk_id: String,
    pub disk_name: String,
    pub description: String,
    /// `system` or `data`.
    #[serde(rename = "Type")]
    pub disk_type: String,
    /// E.g. `cloud_essd`.
    pub category: String,
    /// GiB.
    pub size: u32,
    /// `PL0`–`PL3` for `cloud_essd`, else empty.
    pub performance_level: String,
    pub encrypted: bool,
    #[serde(rename = "KMSKeyId")]
    pub kms_key_id: String,
    pub source_snapshot_id: String,
    pub image_id: String,
    /// `In_use`, `Available`, `Attaching`, `Detaching`, `Creating`, `ReIniting`.
    pub status: String,
    /// The instance it is attached to, empty when none.
    pub instance_id: String,
    pub region_id: String,
    pub zone_id: String,
    pub device: String,
    pub delete_with_instance: bool,
    pub delete_auto_snapshot: bool,
    pub enable_auto_snapshot: bool,
    pub portable: bool,
    pub creation_time: String,
    pub attached_time: String,
    pub detached_time: String,
    pub tags: TagList,
}

impl Disk {
    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }

    /// Whether it is attached to an instance.
    pub fn is_attached(&self) -> bool {
        !self.instance_id.is_empty()
    }
}

wrapped_list!(DiskList, "Disk", Disk);

/// `DescribeDisks` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeDisksResponse {
    /// The request ID.
    pub request_id: String,
    /// Matches across all pages.
    pub total_count: u64,
    /// This page's number.
    pub page_number: u32,
    /// This page.
    pub disks: DiskList,
}

/// `DescribeDisks` filters; empty means "any".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescribeDisksRequest {
    /// `DiskIds` (sent in chunks of [`MAX_DISK_IDS_PER_CALL`]).
    pub disk_ids: Vec<String>,
    /// `InstanceId`.
    pub instance_id: Option<String>,
    /// `ZoneId`.
    pub zone_id: Option<String>,
    /// `DiskType`: `system`, `data` or `all`.
    pub disk_type: Option<String>,
    /// `Tag.N`: every tag must be present.
    pub tags: Vec<Tag>,
}

/// `ResizeDisk` how: `online` (attached to a Running instance, no restart) or `offline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResizeType {
    /// Takes effect at once.
    Online,
    /// Takes effect after a restart of the instance (any disk).
    Offline,
}

impl ResizeType {
    /// `online` / `offline`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Offline => "offline",
        }
    }
}

/// `ModifyDiskAttribute` changes; absent fields are left as they are.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModifyDiskAttributeRequest {
    /// `DiskName`.
    pub disk_name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `DeleteWithInstance`.
    pub delete_with_instance: Option<bool>,
    /// `DeleteAutoSnapshot`.
    pub delete_auto_snapshot: Option<bool>,
}

impl ModifyDiskAttributeRequest {
    /// Whether the request changes nothing.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

impl EcsClient {
    /// `CreateDisk`: returns the new disk's ID (a repeat with the same ClientToken returns the
    /// same disk).
    pub async fn create_disk(
        &self,
        request: &CreateDiskRequest,
    ) -> Result<CreateDiskResponse, Error> {
        let token = resolve_client_token("CreateDisk", request.client_token.as_deref())?;
        let mut p = request.to_params();
        p.set("ClientToken", token);
        self.call_typed("CreateDisk", &p).await
    }

    /// `DescribeDisks` matching `request`, all pages.
    pub async fn describe_disks(&self, request: &DescribeDisksRequest) -> Result<Vec<Disk>, Error> {
        let chunks: Vec<&[String]> = if request.disk_ids.is_empty() {
            vec![&[]]
        } else {
            request.disk_ids.chunks(MAX_DISK_IDS_PER_CALL).collect()
        };
        let mut found = Vec::new();
        for chunk in chunks {
            let before = found.len();
            for page in 1u32.. {
                let mut p = Params::new();
                if !chunk.is_empty() {
                    let ids = serde_json::to_string(chunk).expect("strings serialize");
                    p.set("DiskIds", ids);
                }
                p.opt("InstanceId", request.instance_id.as_ref())
                    .opt("ZoneId", request.zone_id.as_ref())
                    .opt("DiskType", request.disk_type.as_ref());
                set_tags(&mut p, &request.tags);
                p.set("PageNumber", page).set("PageSize", 100u32);
                let r: DescribeDisksResponse = self.call_typed("DescribeDisks", &p).await?;
                let empty = r.disks.items.is_empty();
                found.extend(r.disks.items);
                if empty || (found.len() - before) as u64 >= r.total_count {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// The disk with this ID, if it exists.
    pub async fn describe_disk(&self, disk_id: &str) -> Result<Option<Disk>, Error> {
        let request = DescribeDisksRequest {
            disk_ids: vec![disk_id.to_owned()],
            ..DescribeDisksRequest::default()
        };
        Ok(self
            .describe_disks(&request)
            .await?
            .into_iter()
            .find(|d| d.disk_id == disk_id))
    }

    /// `AttachDisk` as a data disk (same zone; the instance Running or Stopped; the disk
    /// Available).
    pub async fn attach_disk(
        &self,
        disk_id: &str,
        instance_id: &str,
        delete_with_instance: Option<bool>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("DiskId", disk_id)
            .set("InstanceId", instance_id)
            .opt("DeleteWithInstance", delete_with_instance);
        self.call_typed("AttachDisk", &p).await
    }

    /// `DetachDisk` (a system disk only from a Stopped instance).
    pub async fn detach_disk(
        &self,
        disk_id: &str,
        instance_id: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("DiskId", disk_id).set("InstanceId", instance_id);
        self.call_typed("DetachDisk", &p).await
    }

    /// `ResizeDisk` to `new_size` GiB (larger than now: disks never shrink).
    pub async fn resize_disk(
        &self,
        disk_id: &str,
        new_size: u32,
        how: ResizeType,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("DiskId", disk_id)
            .set("NewSize", new_size)
            .set("Type", how.as_str())
            .set("ClientToken", resolve_client_token("ResizeDisk", None)?);
        self.call_typed("ResizeDisk", &p).await
    }

    /// `ModifyDiskSpec`: the performance level of a `cloud_essd` disk.
    pub async fn modify_disk_performance_level(
        &self,
        disk_id: &str,
        performance_level: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("DiskId", disk_id)
            .set("PerformanceLevel", performance_level);
        self.call_typed("ModifyDiskSpec", &p).await
    }

    /// `ModifyDiskAttribute`.
    pub async fn modify_disk_attribute(
        &self,
        disk_id: &str,
        request: &ModifyDiskAttributeRequest,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("DiskId", disk_id)
            .opt("DiskName", request.disk_name.as_ref())
            .opt("Description", request.description.as_ref())
            .opt("DeleteWithInstance", request.delete_with_instance)
            .opt("DeleteAutoSnapshot", request.delete_auto_snapshot);
        self.call_typed("ModifyDiskAttribute", &p).await
    }

    /// `TagResources` on one disk: adds or overwrites these tags.
    pub async fn tag_disk(&self, disk_id: &str, tags: &[Tag]) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("ResourceType", "disk").set("ResourceId.1", disk_id);
        set_tags(&mut p, tags);
        self.call_typed::<AckResponse>("TagResources", &p).await?;
        Ok(())
    }

    /// `UntagResources` on one disk: removes these keys.
    pub async fn untag_disk(&self, disk_id: &str, keys: &[String]) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("ResourceType", "disk").set("ResourceId.1", disk_id);
        for (i, key) in keys.iter().enumerate() {
            p.set(format!("TagKey.{}", i + 1), key);
        }
        self.call_typed::<AckResponse>("UntagResources", &p).await?;
        Ok(())
    }

    /// `DeleteDisk` (an Available disk; an unknown ID is ignored by ECS).
    pub async fn delete_disk(&self, disk_id: &str) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("DiskId", disk_id);
        self.call_typed("DeleteDisk", &p).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_parameters() {
        let p = CreateDiskRequest {
            zone_id: "cn-beijing-a".into(),
            disk_category: Some("cloud_essd".into()),
            size: Some(40),
            performance_level: Some("PL1".into()),
            kms_key_id: None,
            tags: vec![Tag::new("team", "a")],
            ..CreateDiskRequest::default()
        }
        .to_params();
        assert_eq!(p.get("ZoneId"), Some("cn-beijing-a"));
        assert_eq!(p.get("Size"), Some("40"));
        assert_eq!(p.get("PerformanceLevel"), Some("PL1"));
        assert_eq!(p.get("KMSKeyId"), None);
        assert_eq!(p.get("Tag.1.Key"), Some("team"));
    }

    #[test]
    fn decodes_a_described_disk() {
        let r: DescribeDisksResponse = serde_json::from_str(
            r#"{"RequestId":"R","TotalCount":1,"PageNumber":1,"Disks":{"Disk":[
                {"DiskId":"d-1","Type":"data","Category":"cloud_essd","Size":40,"PerformanceLevel":"PL1",
                 "KMSKeyId":"k","Status":"In_use","InstanceId":"i-1","Tags":{"Tag":[{"TagKey":"a","TagValue":"b"}]}}]}}"#,
        )
        .unwrap();
        let disk = &r.disks.items[0];
        assert_eq!(disk.disk_type, "data");
        assert_eq!(disk.kms_key_id, "k");
        assert!(disk.is_attached());
        assert_eq!(disk.tag("a"), Some("b"));
        assert!(ModifyDiskAttributeRequest::default().is_empty());
    }
}
