//! The network an ECS instance launches into: `VPC`, `VSwitch` (a zone's subnet of a VPC) and
//! `SecurityGroup` (a VPC's firewall rules). The VPC of a vSwitch or security group is given as
//! `vpcId`, or as `vpcIdRef` / `vpcIdSelector` naming a `VPC` object of the same namespace.

use std::collections::BTreeMap;

use crate::references::{ReferenceField, TargetKind};

const GROUP: &str = "alibabacloud.ferroplane.io";
const VERSION: &str = "v1alpha1";

/// The `VPC` kind, as references name it.
pub const VPC_KIND: TargetKind = TargetKind {
    group: GROUP,
    version: VERSION,
    kind: "VPC",
    plural: "vpcs",
};
/// The `VSwitch` kind, as references name it.
pub const VSWITCH_KIND: TargetKind = TargetKind {
    group: GROUP,
    version: VERSION,
    kind: "VSwitch",
    plural: "vswitches",
};
/// The `SecurityGroup` kind, as references name it.
pub const SECURITY_GROUP_KIND: TargetKind = TargetKind {
    group: GROUP,
    version: VERSION,
    kind: "SecurityGroup",
    plural: "securitygroups",
};

/// `vpcId` from `vpcIdRef` / `vpcIdSelector`.
pub const VPC_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "vpcId",
    reference: "vpcIdRef",
    selector: "vpcIdSelector",
    many: false,
    target: VPC_KIND,
};

/// The CEL rule every kind's `tags` carries, and its message: the limits ECS and VPC enforce
/// on tags, and the UID tag that only ferroplane writes.
pub const TAGS_RULE: &str = "self.all(k, !k.startsWith('aliyun') && !k.startsWith('acs:') && k != 'ferroplane.io/uid' && size(k) <= 128 && size(self[k]) <= 128)";
pub const TAGS_MESSAGE: &str = "tag keys and values must be at most 128 characters; keys must not start with 'aliyun' or 'acs:' or be 'ferroplane.io/uid'";

/// Tags: at most 20, keys up to 128 characters not starting with `aliyun` or `acs:`, values up to
/// 128 characters; ferroplane adds `ferroplane.io/uid`.
pub type Tags = BTreeMap<String, String>;
