//! `Disk`: a cloud disk, optionally attached to an instance; grown and given another performance
//! level in place, never shrunk.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, Tags, tag_values_schema,
};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector, TargetKind};

/// The `ECSInstance` kind, as references name it.
pub const ECS_INSTANCE_KIND: TargetKind = TargetKind {
    group: "alibabacloud.ferroplane.io",
    version: "v1alpha1",
    kind: "ECSInstance",
    plural: "ecsinstances",
};

/// `instanceId` from `instanceIdRef` / `instanceIdSelector`.
pub const INSTANCE_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "instanceId",
    reference: "instanceIdRef",
    selector: "instanceIdSelector",
    many: false,
    target: ECS_INSTANCE_KIND,
    value: ReferenceValue::ExternalName,
};

managed_spec! {
    columns: [
        printcolumn(name = "SIZE", type_ = "integer", json_path = ".spec.forProvider.size"),
        printcolumn(name = "STATUS", type_ = "string", json_path = ".status.atProvider.status"),
        printcolumn(
            name = "INSTANCE",
            type_ = "string",
            json_path = ".status.atProvider.instanceId"
        ),
    ];
    /// A cloud disk.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "Disk",
        plural = "disks",
        singular = "disk",
        status = "DiskStatus",
        shortname = "ecsdisk",
        doc = "An Alibaba Cloud ECS cloud disk. ferroplane creates it with CreateDisk, attaches it to the instance named by instanceId (or the ECSInstance named by instanceIdRef / instanceIdSelector) with AttachDisk, grows it with ResizeDisk (online while attached to a running instance), changes a cloud_essd disk's performance level with ModifyDiskSpec, and on deletion detaches it and releases it with DeleteDisk (unless deletionPolicy is Orphan). A disk never shrinks."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct DiskSpec {
        /// `Delete` releases the disk with the object (detaching it first); `Orphan` leaves it.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `diskId` to this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired disk, with ECS's parameter names.
        pub for_provider: DiskParameters,
    }
}

/// CreateDisk parameters, and the instance to attach the disk to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.size) || has(self.snapshotId)").message("set size (GiB) or snapshotId"))]
#[x_kube(validation = Rule::new("!has(self.performanceLevel) || (has(self.category) && self.category == 'cloud_essd')").message("performanceLevel applies to category cloud_essd only"))]
#[x_kube(validation = Rule::new("!has(self.kmsKeyId) || (has(self.encrypted) && self.encrypted)").message("kmsKeyId needs encrypted: true"))]
#[x_kube(validation = Rule::new("!has(oldSelf.size) || has(self.size)").message("size cannot be removed once set; disks never shrink"))]
pub struct DiskParameters {
    /// Region, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable; create a new Disk in the other region"))]
    pub region_id: String,
    /// Zone, e.g. `cn-beijing-h`; a disk attaches only to instances of its zone. Immutable.
    #[schemars(length(min = 4, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("zoneId is immutable; a disk stays in its zone: create a new Disk in the other zone"))]
    pub zone_id: String,
    /// `cloud`, `cloud_efficiency`, `cloud_ssd`, `cloud_essd` (default `cloud`),
    /// `cloud_auto` or `cloud_essd_entry`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["cloud", "cloud_efficiency", "cloud_ssd", "cloud_essd", "cloud_auto", "cloud_essd_entry"]))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("category is immutable; create a new Disk of the other category"))]
    pub category: Option<String>,
    /// Size in GiB (per category: cloud 5–2000, cloud_efficiency and cloud_ssd 20–32768,
    /// cloud_essd 20–65536 at PL1, 1 at PL0, 461 at PL2, 1261 at PL3). Grown in place with
    /// ResizeDisk; never shrinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65536))]
    #[x_kube(validation = Rule::new("self >= oldSelf").message("size cannot shrink: ECS only grows disks; create a new, smaller Disk and copy the data"))]
    pub size: Option<i32>,
    /// `PL0` to `PL3` (cloud_essd only; `PL1` by default). Changed in place with ModifyDiskSpec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["PL0", "PL1", "PL2", "PL3"]))]
    pub performance_level: Option<String>,
    /// Encrypt the disk. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("encrypted is immutable; create a new Disk"))]
    pub encrypted: Option<bool>,
    /// The KMS key that encrypts the disk (needs `encrypted`). Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("kmsKeyId is immutable; create a new Disk"))]
    pub kms_key_id: Option<String>,
    /// Create the disk from this snapshot. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^s-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("snapshotId is immutable; create a new Disk from the other snapshot"))]
    pub snapshot_id: Option<String>,
    /// Name, 2 to 128 characters starting with a letter. Changed in place
    /// (ModifyDiskAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 128))]
    pub disk_name: Option<String>,
    /// Description, 2 to 256 characters. Changed in place (ModifyDiskAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 256))]
    pub description: Option<String>,
    /// Release the disk's automatic snapshots with it (ECS's default: true). Changed in place
    /// (ModifyDiskAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_auto_snapshot: Option<bool>,
    /// Tags. Changed in place (TagResources / UntagResources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 19))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<Tags>,
    /// The instance to attach the disk to, `i-...` (same zone). Changed in place: a change
    /// detaches the disk (DetachDisk) and attaches it (AttachDisk); removing it (and the
    /// reference) detaches it. Written by ferroplane from `instanceIdRef` / `instanceIdSelector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^i-[a-z0-9]+$"))]
    pub instance_id: Option<String>,
    /// An `ECSInstance` object of this namespace whose instance ID becomes `instanceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id_ref: Option<Reference>,
    /// Labels of an `ECSInstance` object of this namespace whose instance ID becomes
    /// `instanceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id_selector: Option<Selector>,
}

/// What ferroplane observed of the disk.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiskObservation {
    /// `d-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_id: Option<String>,
    /// `Available` or `In_use` (or a transition such as `Attaching`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `data` or `system`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub performance_level: Option<String>,
    /// The instance it is attached to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// Its device on that instance, e.g. `/dev/xvdb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_auto_snapshot: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<String>,
}

/// Observed state of a Disk.
pub type DiskStatus = CloudStatus<DiskObservation>;

crate::impl_managed!(Disk, provider_config, references = &[INSTANCE_ID_REFERENCE]);
