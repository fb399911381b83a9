//! One disk as DescribeDisks reports it: the mock's state, plus what the API reports for the
//! features the mock does not serve.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::action::merged;
use crate::disks::{self, Disk};
use crate::tags;

fn second_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The instance the disk is attached to, as both `Attachments` and `MountInstances` list it.
fn attachment_elements(disk: &Disk) -> Vec<Value> {
    disk.instance_id
        .iter()
        .map(|i| {
            json!({
                "InstanceId": i,
                "Device": disk.device,
                "AttachedTime": disk.attached_at.map(second_time).unwrap_or_default(),
            })
        })
        .collect()
}

/// One disk as DescribeDisks reports it.
pub fn disk_view(disk: &Disk) -> Value {
    let attachments = attachment_elements(disk);
    let base = json!({
        "DiskId": disk.id,
        "DiskName": disk.name,
        "Description": disk.description,
        "Type": disk.disk_type.as_str(),
        "Category": disk.category,
        "Size": disk.size,
        "PerformanceLevel": disk.performance_level.unwrap_or_default(),
        "Encrypted": disk.encrypted,
        "KMSKeyId": disk.kms_key_id,
        "SourceSnapshotId": disk.source_snapshot_id,
        "ImageId": disk.image_id,
        "Status": disk.status(),
        "InstanceId": disk.instance_id.clone().unwrap_or_default(),
        "RegionId": disk.region_id,
        "ZoneId": disk.zone_id,
        "Device": disk.device,
        "DeleteWithInstance": disk.delete_with_instance,
        "DeleteAutoSnapshot": disk.delete_auto_snapshot,
        "EnableAutoSnapshot": disk.enable_auto_snapshot,
        "Portable": disk.disk_type == disks::DiskType::Data,
        "DiskChargeType": "PostPaid",
        "MultiAttach": "Disabled",
        "CreationTime": second_time(disk.created_at),
        "AttachedTime": disk.attached_at.map(second_time).unwrap_or_default(),
        "DetachedTime": disk.detached_at.map(second_time).unwrap_or_default(),
        "ExpiredTime": "2999-09-08T16:00Z",
        "Attachments": {"Attachment": attachments},
        "OperationLocks": {"OperationLock": []},
        "Tags": tags::ecs_view(&disk.tags),
    });
    merged(base, unserved_features(disk))
}

/// The fields of features the mock does not serve, for a disk that uses none of them: what the
/// API reports then, or the neutral value of the type where the docs give none (marked).
fn unserved_features(disk: &Disk) -> Value {
    let mounts = attachment_elements(disk);
    json!({
        "MountInstanceNum": mounts.len(),
        "MountInstances": {"MountInstance": mounts},
        "ResourceGroupId": disk.resource_group_id,
        // The mock's images are all public ones, whose `ProductCode` is empty (no Alibaba
        // Cloud Marketplace product), so a disk made from one has none either.
        "ProductCode": "",
        // No automatic snapshot policy is applied (the mock serves none).
        "AutoSnapshotPolicyId": "",
        "EnableAutomatedSnapshotPolicy": false,
        // ESSD AutoPL's provisioned performance and bursting, not served.
        "ProvisionedIops": 0,
        "BurstingEnabled": false,
        // Neutral: the docs give no formula the mock could derive these from.
        "IOPS": 0,
        "IOPSRead": 0,
        "IOPSWrite": 0,
        "Throughput": 0,
        "ThroughputRead": 0,
        "ThroughputWrite": 0,
        // Neutral: no PCIe BDF, serial number, zone-redundant placement, copied source disk,
        // dedicated block storage cluster or storage set in the mock.
        "BdfId": "",
        "SerialNumber": "",
        "Placement": {"ZoneIds": ""},
        "SourceDiskId": "",
        "StorageClusterId": "",
        "StorageSetId": "",
        "StorageSetPartitionNumber": 0,
    })
}
