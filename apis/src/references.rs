//! References between managed resources of one namespace, declared by the referencing kind and
//! resolved by the runtime (the same way for every kind): `vpcIdRef: {name: main}` or
//! `vpcIdSelector: {matchLabels: {...}}` beside the literal `vpcId`, which the resolved external
//! name is written into.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Another managed resource of this namespace, by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Reference {
    /// The referenced object's `metadata.name`.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Managed resources of this namespace, by labels. The first Ready match (by name) is used, and
/// kept once resolved.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Selector {
    /// Labels the object must carry, all of them.
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
}

/// The kind a reference points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
}

/// One reference a kind declares: properties of `spec.forProvider`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceField {
    /// The literal the resolved ID is written into (`vpcId`, or a list such as
    /// `securityGroupIds`).
    pub field: &'static str,
    /// The by-name reference (`vpcIdRef`; for a list, a list of references).
    pub reference: &'static str,
    /// The by-labels selector (`vpcIdSelector`).
    pub selector: &'static str,
    /// Whether `field` is a list.
    pub many: bool,
    /// What is referenced.
    pub target: TargetKind,
    /// What of the referenced object becomes the literal.
    pub value: ReferenceValue,
}

/// The value a reference takes from the object it names (always a Ready one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceValue {
    /// Its external name: the cloud resource's ID.
    ExternalName,
    /// A field of one element of a list its status reports: `field` of the first element of the
    /// list at the JSON pointer `list` whose `key` is `equals` (an ECSInstance's primary network
    /// interface: `networkInterfaceId` of the `/status/atProvider/networkInterfaces` element
    /// whose `type` is `Primary`).
    StatusListItem {
        list: &'static str,
        key: &'static str,
        equals: &'static str,
        field: &'static str,
    },
}

/// Kinds with references say so; the runtime reads the table.
pub trait HasReferences {
    /// The references of this kind, empty for most.
    fn reference_fields() -> &'static [ReferenceField] {
        &[]
    }
}
