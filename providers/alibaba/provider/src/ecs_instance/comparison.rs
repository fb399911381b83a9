//! What a comparison of one `spec.forProvider` property sees ([`Observed`]) and yields
//! ([`Diff`], [`Change`]), and what a request fill reads ([`Wanted`]). Ground floor of the field
//! table: `field_diffs`, `field_classes`, `requests`, `diff` and the apply step share these types.

use alibaba_sdk::Secret;
use alibaba_sdk::ecs::{Disk, Instance, InstanceRenewAttribute, Tag};
use ferroplane_apis::alibabacloud::ECSInstanceParameters;

use super::applied_inputs::ChangedInputs;

/// What the comparisons see of the instance.
#[derive(Clone, Copy, Debug)]
pub struct Observed<'a> {
    pub instance: &'a Instance,
    /// The instance RAM role, when it was asked for (`DescribeInstanceRamRole`); `None` when
    /// not looked up, `Some("")` when the instance has none.
    pub ram_role: Option<&'a str>,
    /// Password and user data changed since they were applied.
    pub inputs: ChangedInputs,
    /// The instance's disks, when they were asked for (`DescribeDisks`); `None` when not
    /// looked up.
    pub disks: Option<&'a [Disk]>,
    /// The auto-renewal of a subscription instance, when it was asked for
    /// (`DescribeInstanceAutoRenewAttribute`); `None` when not looked up.
    pub renewal: Option<&'a InstanceRenewAttribute>,
}

impl Observed<'_> {
    /// The system disk, when the disks were looked up.
    pub fn system_disk(&self) -> Option<&Disk> {
        self.disks?.iter().find(|d| d.disk_type == "system")
    }
}

/// What a row's request fill reads: the spec, what was observed, and the login password from
/// its Secret (read only when applying).
#[derive(Clone, Copy, Debug)]
pub struct Wanted<'a> {
    pub spec: &'a ECSInstanceParameters,
    pub observed: &'a Observed<'a>,
    pub password: Option<&'a Secret>,
}

/// One change that makes the instance match a property of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The row's request is written by its fill, from the spec (and what was observed).
    Fill,
    /// Assign `assign` more IPv6 addresses to the primary interface `eni`, or release `release`.
    Ipv6Addresses {
        eni: String,
        assign: u32,
        release: Vec<String>,
    },
    Tags {
        set: Vec<Tag>,
        remove: Vec<String>,
    },
    RamRoleName {
        from: Option<String>,
        to: String,
    },
    ResourceGroupId(String),
    DeploymentSetId(String),
    KeyPairName {
        from: Option<String>,
        to: String,
    },
    /// Bill the instance as `to` (`PrePaid` for `period` `unit`s).
    InstanceChargeType {
        to: String,
        period: Option<u32>,
        unit: Option<String>,
    },
    SystemDiskSize {
        disk_id: String,
        size: u32,
    },
    SystemDiskPerformanceLevel {
        disk_id: String,
        level: String,
    },
    ImageId(String),
    /// Move to `vswitch_id` with `private_ip` (one ECS picks when `None`).
    VpcAttribute {
        vswitch_id: String,
        private_ip: Option<String>,
    },
    /// An immutable property differs in the cloud; the line says how.
    Immutable,
}

/// A change and its description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    pub change: Change,
    pub line: String,
}

/// Compares one property.
pub type DiffFn = fn(&ECSInstanceParameters, &Observed<'_>) -> Option<Diff>;
