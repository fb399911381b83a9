//! The network an ECS instance launches into: `VPC`, `VSwitch` (a zone's subnet of a VPC) and
//! `SecurityGroup` (a VPC's firewall rules). The VPC of a vSwitch or security group is given as
//! `vpcId`, or as `vpcIdRef` / `vpcIdSelector` naming a `VPC` object of the same namespace.

use std::collections::BTreeMap;

use crate::references::{ReferenceField, ReferenceValue, TargetKind};

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
    value: ReferenceValue::ExternalName,
};

/// The CEL rule every kind's `tags` carries on its keys, and its message: the keys ECS and VPC
/// refuse (`Tag.N.Key`: 1 to 128 characters, no `aliyun` or `acs:` prefix in any case, no
/// `http://` or `https://` anywhere), and the UID tag that only ferroplane writes. Map keys cost
/// nothing in the API server's CEL cost estimate, so the rule stays within its budget.
pub const TAG_KEYS_RULE: &str = "self.all(k, size(k) >= 1 && size(k) <= 128 && !k.lowerAscii().startsWith('aliyun') && !k.lowerAscii().startsWith('acs:') && !k.contains('http://') && !k.contains('https://') && k != 'ferroplane.io/uid')";
pub const TAG_KEYS_MESSAGE: &str = "each tag key must be 1 to 128 characters, must not start with 'aliyun' or 'acs:' (in any case), must not contain 'http://' or 'https://', and must not be 'ferroplane.io/uid' (ferroplane sets it)";
/// The CEL rule on tag values (`Tag.N.Value`: may be empty, no `acs:` prefix, no `http://` or
/// `https://` anywhere); their length is the schema's `maxLength` ([`tag_values_schema`]), which
/// also keeps this rule within the cost budget.
pub const TAG_VALUES_RULE: &str = "self.all(k, !self[k].startsWith('acs:') && !self[k].contains('http://') && !self[k].contains('https://'))";
pub const TAG_VALUES_MESSAGE: &str =
    "tag values must not start with 'acs:' or contain 'http://' or 'https://'";

/// Tags: at most 20, keys of 1 to 128 characters not starting with `aliyun` or `acs:`, values up
/// to 128 characters; ferroplane adds `ferroplane.io/uid`. Every `tags` field carries
/// [`TAG_KEYS_RULE`], [`TAG_VALUES_RULE`] and values of at most 128 characters.
pub type Tags = BTreeMap<String, String>;

/// Gives a `tags` field's values the schema `maxLength` of 128 (`#[schemars(transform = …)]`):
/// the API server then refuses a long value by its own path, and knows the values' size when it
/// estimates [`TAG_VALUES_RULE`]'s cost.
pub fn tag_values_schema(schema: &mut schemars::Schema) {
    schema.insert(
        "additionalProperties".into(),
        serde_json::json!({"type": "string", "maxLength": 128}),
    );
}
