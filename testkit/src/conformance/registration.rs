//! What a managed kind tells the conformance suite about itself: one [`Registration`] per kind,
//! a few lines each (the kind, a valid object, the cloud actions of each lifecycle step, where
//! its resources are in the mock's records, who names them).

use alibaba_mock::ResourceKind;
use serde_json::Value;

/// Who chooses a resource's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// The cloud assigns the ID (ECS instances, VPCs, …): the external name is that ID.
    CloudAssigned,
    /// The user chooses it (key pairs): the external name is the name the spec gives.
    UserChosen,
    /// The resource binds others and carries no owner tag: an EIP association (named
    /// `<allocationId>:<instanceId>` after the two it binds) or a security group rule (named by
    /// the ID the cloud gives it in its group). The case's account is its own,
    /// so every binding made in it is its objects'; the hand-made resources it binds are
    /// changed by design; and the cases about taking over an unowned resource do not apply
    /// (objects naming the same two resources share their binding).
    Binding,
}

/// A resource a valid object needs that the suite makes by hand (unowned) in the case's
/// account before the object exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prerequisite {
    /// A VPC (`10.0.0.0/16`), for vSwitches and security groups.
    Vpc,
    /// A vSwitch (`10.0.0.0/24` in the case's zone) of the case's VPC (made too, when the
    /// registration does not list [`Prerequisite::Vpc`] before it), for NAT gateways.
    VSwitch,
    /// An EIP, one per object of the case (for EIP associations).
    /// A security group in the region's default VPC, untagged (no SecurityGroup object keeps
    /// its rules), shared by the case's objects (for security group rules).
    SecurityGroup,
    Eip,
    /// A running ECS instance without a public IP, one per object of the case.
    Instance,
    /// An internet NAT gateway in a hand-made vSwitch of the case's VPC, with one EIP bound to
    /// it per object of the case (in [`Build::eip_ids`]), for SNAT and DNAT entries.
    NatGateway,
}

/// What a registration's builders get: the names and prerequisites of one object.
#[derive(Debug, Clone)]
pub struct Build {
    /// The object's name, also the resource's name in the cloud.
    pub name: String,
    /// Which of the case's objects this is (from 0), for what must differ between them (a
    /// vSwitch's CIDR block).
    pub index: u8,
    pub region: String,
    /// A zone of `region`.
    pub zone: String,
    /// The hand-made VPC, when the kind asked for [`Prerequisite::Vpc`].
    pub vpc_id: Option<String>,
    /// The hand-made vSwitch of that VPC, when the kind asked for [`Prerequisite::VSwitch`] or
    /// [`Prerequisite::NatGateway`].
    pub vswitch_id: Option<String>,
    /// The hand-made NAT gateway ([`Prerequisite::NatGateway`]).
    pub nat_gateway_id: Option<String>,
    /// The hand-made EIPs and instances ([`Prerequisite::Eip`], [`Prerequisite::Instance`]):
    /// the object of `index` takes the one at `index`.
    pub eip_ids: Vec<String>,
    pub instance_ids: Vec<String>,
    /// The hand-made group ([`Prerequisite::SecurityGroup`]).
    pub security_group_id: Option<String>,
}

/// The cloud actions of one lifecycle step: each is answered once with the fault of the case.
pub type Actions = &'static [&'static str];

/// The cloud actions of each step of the lifecycle.
#[derive(Debug, Clone, Copy)]
pub struct Steps {
    /// The first look at a new object (the search by owner tag or by name).
    pub first_look: Actions,
    pub create: Actions,
    /// The poll of a Ready object.
    pub poll: Actions,
    /// Applying [`Registration::update`]; empty when nothing updates in place.
    pub update: Actions,
    pub delete: Actions,
}

/// A spec edit that the kind applies in place.
#[derive(Debug, Clone, Copy)]
pub struct InPlaceUpdate {
    /// A merge patch of `spec.forProvider`.
    pub patch: fn(&Build) -> Value,
    /// The resource name the cloud shows once it is applied.
    pub cloud_name: fn(&Build) -> String,
}

/// One managed kind, as the conformance suite runs it.
#[derive(Debug, Clone, Copy)]
pub struct Registration {
    /// The kind, e.g. `VPC`; group, version and plural come from the CRDs.
    pub kind: &'static str,
    /// Where its resources are in the mock's records.
    pub resource: ResourceKind,
    pub naming: Naming,
    pub prerequisites: &'static [Prerequisite],
    /// A valid `spec.forProvider` whose resource name (where the kind has one) is
    /// `build.name`.
    pub for_provider: fn(&Build) -> Value,
    /// A spec edit the kind applies in place; `None` when nothing changes in place.
    pub update: Option<InPlaceUpdate>,
    pub steps: Steps,
    /// The `status.atProvider` field that holds the resource's ID (or name).
    pub status_id: &'static str,
    /// The connection Secret key holding a secret the cloud gives out once (a generated
    /// private key), when the kind has one.
    pub one_time_secret: Option<&'static str>,
    /// Whether the kind writes a connection Secret.
    pub writes_connection_secret: bool,
    /// An external name that names nothing (the import of a missing ID).
    pub missing_external_name: &'static str,
}
