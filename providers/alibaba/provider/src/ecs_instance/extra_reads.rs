//! The reads the observe step makes besides `DescribeInstances`, each only for an instance whose
//! spec sets a field that needs it: the RAM role (`ramRoleName`), the disks (`systemDisk`,
//! `dataDisks`) and a subscription's auto-renewal (`autoRenew`, `autoRenewPeriod`). The observe
//! step and `ferroplane plan` decide and read them here, so both compare the same fields.

use alibaba_sdk::Error;
use alibaba_sdk::ecs::{DescribeDisksRequest, Disk, EcsClient, Instance, InstanceRenewAttribute};
use ferroplane_apis::alibabacloud::ECSInstanceParameters;

/// What the extra reads found; `None` where the spec did not need the read (not compared).
#[derive(Clone, Debug, Default)]
pub struct ExtraReads {
    /// The instance's RAM role, `""` when it has none.
    pub ram_role: Option<String>,
    pub disks: Option<Vec<Disk>>,
    pub renewal: Option<InstanceRenewAttribute>,
}

pub const RAM_ROLE_ACTION: &str = "DescribeInstanceRamRole";
pub const DISKS_ACTION: &str = "DescribeDisks";
pub const RENEWAL_ACTION: &str = "DescribeInstanceAutoRenewAttribute";

pub fn wants_ram_role(spec: &ECSInstanceParameters) -> bool {
    spec.ram_role_name.is_some()
}

pub fn wants_disks(spec: &ECSInstanceParameters) -> bool {
    spec.system_disk.is_some() || spec.data_disks.is_some()
}

/// Only a subscription (PrePaid) instance renews.
pub fn wants_renewal(spec: &ECSInstanceParameters, instance: &Instance) -> bool {
    instance.instance_charge_type == "PrePaid"
        && (spec.auto_renew.is_some() || spec.auto_renew_period.is_some())
}

/// The RAM role of instance `id` (`""`: none).
pub async fn ram_role(ecs: &EcsClient, id: &str) -> Result<String, Error> {
    let ids = [id.to_owned()];
    let roles = ecs.describe_instance_ram_roles(&ids).await?;
    Ok(roles
        .into_iter()
        .find(|r| r.instance_id == id)
        .map(|r| r.ram_role_name)
        .unwrap_or_default())
}

/// The disks of instance `id`.
pub async fn disks(ecs: &EcsClient, id: &str) -> Result<Vec<Disk>, Error> {
    let request = DescribeDisksRequest {
        instance_id: Some(id.to_owned()),
        ..DescribeDisksRequest::default()
    };
    ecs.describe_disks(&request).await
}

/// The auto-renewal of instance `id`.
pub async fn renewal(ecs: &EcsClient, id: &str) -> Result<Option<InstanceRenewAttribute>, Error> {
    let ids = [id.to_owned()];
    let found = ecs.describe_instance_auto_renew_attribute(&ids).await?;
    Ok(found.into_iter().find(|r| r.instance_id == id))
}

/// Every extra read `spec` needs for `instance`, for `ferroplane plan`; a failed read names its
/// action.
pub async fn read_all(
    ecs: &EcsClient,
    spec: &ECSInstanceParameters,
    instance: &Instance,
) -> Result<ExtraReads, (&'static str, Error)> {
    let id = instance.instance_id.as_str();
    let mut reads = ExtraReads::default();
    if wants_ram_role(spec) {
        reads.ram_role = Some(ram_role(ecs, id).await.map_err(|e| (RAM_ROLE_ACTION, e))?);
    }
    if wants_disks(spec) {
        reads.disks = Some(disks(ecs, id).await.map_err(|e| (DISKS_ACTION, e))?);
    }
    if wants_renewal(spec, instance) {
        reads.renewal = renewal(ecs, id).await.map_err(|e| (RENEWAL_ACTION, e))?;
    }
    Ok(reads)
}
