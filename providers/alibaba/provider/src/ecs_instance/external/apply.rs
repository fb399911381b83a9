//! Sends the planned rows of one phase (in place, or while the instance is stopped): every
//! shared request the rows fill goes out once, and the rows with calls of their own make them,
//! in one fixed order. Which rows exist and what they fill is the field table's business
//! (`field_classes`); this is the order and the sending. Also the power switch.

use alibaba_sdk::ecs::{
    AutoRenewChange, KeyPairBindResponse, MetadataOptionsChange, ModifyInstanceAttributeRequest,
    ModifyInstanceSpecRequest, NetworkSpecChange, ResizeType,
};
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_runtime::ReconcileError;

use super::EcsExternal;
use crate::ecs_instance::comparison::{Change, Wanted};
use crate::ecs_instance::diff::{Power, status};
use crate::ecs_instance::requests::{Planned, batch, own};
use crate::ecs_instance::wire_names::stopped_mode;
use crate::reasons::{INVALID_SPEC, KEY_PAIR_NOT_BOUND};

impl EcsExternal {
    /// Makes the changes of `rows` (one phase of a plan) on instance `id`.
    pub(super) async fn apply(
        &self,
        id: &str,
        rows: &[Planned],
        wanted: &Wanted<'_>,
    ) -> Result<(), ReconcileError> {
        let ecs = &self.client.ecs;
        let observed = wanted.observed.instance;
        if let Some(image) = own(rows, |c| match c {
            Change::ImageId(image) => Some(image),
            _ => None,
        }) {
            // A new system disk: the login comes from the spec's key pair or password.
            let size = wanted
                .spec
                .system_disk
                .as_ref()
                .and_then(|d| d.size)
                .and_then(|s| u32::try_from(s).ok());
            let key_pair = wanted.spec.key_pair_name.as_deref();
            self.call(
                "ReplaceSystemDisk",
                ecs.replace_system_disk(id, image, size, key_pair, wanted.password),
            )
            .await?;
        }
        if let Some((vswitch, private_ip)) = own(rows, |c| match c {
            Change::VpcAttribute {
                vswitch_id,
                private_ip,
            } => Some((vswitch_id, private_ip)),
            _ => None,
        }) {
            self.call(
                "ModifyInstanceVpcAttribute",
                ecs.modify_instance_vpc_attribute(id, vswitch, private_ip.as_deref()),
            )
            .await?;
        }
        let base = ModifyInstanceSpecRequest {
            instance_id: id.to_owned(),
            ..ModifyInstanceSpecRequest::default()
        };
        if let Some(request) = batch(rows, base, wanted) {
            self.call("ModifyInstanceSpec", ecs.modify_instance_spec(&request))
                .await?;
        }
        let base = ModifyInstanceAttributeRequest {
            instance_id: id.to_owned(),
            ..ModifyInstanceAttributeRequest::default()
        };
        // A password Secret that went away changes nothing: no call for an empty request.
        if let Some(request) = batch(rows, base.clone(), wanted).filter(|r| *r != base) {
            self.call(
                "ModifyInstanceAttribute",
                ecs.modify_instance_attribute(&request),
            )
            .await?;
        }
        if let Some(request) = batch(rows, NetworkSpecChange::default(), wanted) {
            self.call(
                "ModifyInstanceNetworkSpec",
                ecs.modify_instance_network_spec(id, &request),
            )
            .await?;
        }
        // ECS requires HttpEndpoint: the current one unless a row changes it.
        let base = MetadataOptionsChange {
            http_endpoint: Some(observed.metadata_options.http_endpoint.clone())
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "enabled".to_owned()),
            http_tokens: None,
            http_put_response_hop_limit: None,
        };
        if let Some(request) = batch(rows, base, wanted) {
            self.call(
                "ModifyInstanceMetadataOptions",
                ecs.modify_instance_metadata_options(id, &request),
            )
            .await?;
        }
        let ids = [id.to_owned()];
        if let Some((attached, wanted_role)) = own(rows, |c| match c {
            Change::RamRoleName { from, to } => Some((from, to)),
            _ => None,
        }) {
            // An instance holds one role: the old one goes first.
            if let Some(old) = attached {
                self.call(
                    "DetachInstanceRamRole",
                    ecs.detach_instance_ram_role(&ids, Some(old)),
                )
                .await?;
            }
            self.call(
                "AttachInstanceRamRole",
                ecs.attach_instance_ram_role(&ids, wanted_role),
            )
            .await?;
        }
        if let Some((bound, wanted_pair)) = own(rows, |c| match c {
            Change::KeyPairName { from, to } => Some((from, to)),
            _ => None,
        }) {
            if let Some(old) = bound {
                let r = self
                    .call("DetachKeyPair", ecs.detach_key_pair(old, &ids))
                    .await?;
                key_pair_outcome("DetachKeyPair", id, &r)?;
            }
            let r = self
                .call("AttachKeyPair", ecs.attach_key_pair(wanted_pair, &ids))
                .await?;
            key_pair_outcome("AttachKeyPair", id, &r)?;
        }
        if let Some((disk, size)) = own(rows, |c| match c {
            Change::SystemDiskSize { disk_id, size } => Some((disk_id, *size)),
            _ => None,
        }) {
            // Online while it runs (no restart); offline otherwise, effective at the next start.
            let how = if observed.status == status::RUNNING {
                ResizeType::Online
            } else {
                ResizeType::Offline
            };
            self.call("ResizeDisk", ecs.resize_disk(disk, size, how))
                .await?;
        }
        if let Some((disk, level)) = own(rows, |c| match c {
            Change::SystemDiskPerformanceLevel { disk_id, level } => Some((disk_id, level)),
            _ => None,
        }) {
            self.call(
                "ModifyDiskSpec",
                ecs.modify_disk_performance_level(disk, level),
            )
            .await?;
        }
        if let Some((to, period, unit)) = own(rows, |c| match c {
            Change::InstanceChargeType { to, period, unit } => Some((to, *period, unit)),
            _ => None,
        }) {
            if to == "PrePaid" && period.is_none() {
                return Err(ReconcileError::terminal(
                    INVALID_SPEC,
                    format!(
                        "instance {id}: instanceChargeType PrePaid needs spec.forProvider.period (and periodUnit, Month by default): ECS buys the subscription for that long"
                    ),
                ));
            }
            self.call(
                "ModifyInstanceChargeType",
                ecs.modify_instance_charge_type(id, to, period, unit.as_deref()),
            )
            .await?;
        }
        let base = AutoRenewChange {
            auto_renew: false,
            duration: None,
            period_unit: None,
        };
        if let Some(request) = batch(rows, base, wanted) {
            self.call(
                "ModifyInstanceAutoRenewAttribute",
                ecs.modify_instance_auto_renew_attribute(id, &request),
            )
            .await?;
        }
        if let Some(set) = own(rows, |c| match c {
            Change::DeploymentSetId(set) => Some(set),
            _ => None,
        }) {
            self.call(
                "ModifyInstanceDeployment",
                ecs.modify_instance_deployment(id, set),
            )
            .await?;
        }
        if let Some((eni, assign, release)) = own(rows, |c| match c {
            Change::Ipv6Addresses {
                eni,
                assign,
                release,
            } => Some((eni, *assign, release)),
            _ => None,
        }) {
            if assign > 0 {
                self.call(
                    "AssignIpv6Addresses",
                    ecs.assign_ipv6_addresses(eni, assign),
                )
                .await?;
            }
            if !release.is_empty() {
                self.call(
                    "UnassignIpv6Addresses",
                    ecs.unassign_ipv6_addresses(eni, release),
                )
                .await?;
            }
        }
        if let Some(group) = own(rows, |c| match c {
            Change::ResourceGroupId(group) => Some(group),
            _ => None,
        }) {
            self.call("JoinResourceGroup", ecs.join_resource_group(id, group))
                .await?;
        }
        if let Some((set, remove)) = own(rows, |c| match c {
            Change::Tags { set, remove } => Some((set, remove)),
            _ => None,
        }) {
            if !set.is_empty() {
                self.call("TagResources", ecs.tag_resources(&ids, set))
                    .await?;
            }
            if !remove.is_empty() {
                self.call("UntagResources", ecs.untag_resources(&ids, remove))
                    .await?;
            }
        }
        Ok(())
    }

    pub(super) async fn power(
        &self,
        mr: &ECSInstance,
        id: &str,
        power: Power,
    ) -> Result<(), ReconcileError> {
        match power {
            Power::Start => {
                self.call("StartInstance", self.client.ecs.start_instance(id))
                    .await?
            }
            Power::Stop => {
                self.call(
                    "StopInstance",
                    self.client.ecs.stop_instance(
                        id,
                        false,
                        mr.spec.for_provider.stopped_mode.map(stopped_mode),
                    ),
                )
                .await?
            }
        };
        Ok(())
    }
}

/// `AttachKeyPair` / `DetachKeyPair` answer per instance: a failure for this one is an error.
fn key_pair_outcome(
    action: &str,
    id: &str,
    response: &KeyPairBindResponse,
) -> Result<(), ReconcileError> {
    match response.failures().first() {
        None => Ok(()),
        Some(failed) => Err(ReconcileError::retryable(
            KEY_PAIR_NOT_BOUND,
            format!(
                "{action} for instance {id} failed: {} ({}) [request id {}]",
                failed.message, failed.code, response.request_id
            ),
        )),
    }
}
