//! The `VSwitch` kind's external client: `CreateVSwitch` in the resolved VPC,
//! `DescribeVSwitches` (by ID, or by the UID tag), `DeleteVSwitch`; the name, description and
//! tags change in place (`ModifyVSwitchAttribute`, `TagResources`, `UnTagResources`), and a
//! change made elsewhere is reverted at the next poll.

use alibaba_sdk::vpc::{self, CreateVSwitchRequest, Tag};
use ferroplane_apis::alibabacloud::{VSwitch, VSwitchObservation, VSwitchParameters};
use ferroplane_runtime::references::REFERENCE_NOT_RESOLVED;
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, UID_TAG, Update,
};

use super::attributes::{self, AttributeDiff, Compared};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::{non_empty, uid_tagged};

/// Connection Secret key.
const CONN_VSWITCH_ID: &str = "vSwitchId";

/// The spec's name, description and tags against the vSwitch's.
fn attribute_diff(p: &VSwitchParameters, found: &vpc::VSwitch) -> AttributeDiff {
    attributes::diff(&Compared {
        name_field: "vSwitchName",
        want_name: p.v_switch_name.as_deref(),
        have_name: &found.vswitch_name,
        want_description: p.description.as_deref(),
        have_description: &found.description,
        want_tags: p.tags.as_ref(),
        have_tags: found.tags.pairs().collect(),
    })
}

fn observed(p: &VSwitchParameters, found: &vpc::VSwitch) -> Result<Observation, ReconcileError> {
    let status = serde_json::json!({
        "atProvider": VSwitchObservation {
            v_switch_id: non_empty(&found.vswitch_id),
            status: non_empty(&found.status),
            vpc_id: non_empty(&found.vpc_id),
            available_ip_address_count: i64::try_from(found.available_ip_address_count).ok(),
            ipv6_cidr_block: non_empty(&found.ipv6_cidr_block),
        }
    });
    let readiness = match found.status.as_str() {
        vpc::status::AVAILABLE => Readiness::Available,
        vpc::status::PENDING => Readiness::Creating,
        other => Readiness::Unavailable(format!("the vSwitch is {other}")),
    };
    let mut observation = Observation::found(&found.vswitch_id)
        .with_owner_tag(found.tag(UID_TAG))
        .with_status(status)?
        .with_late_init(serde_json::json!({"vpcId": non_empty(&found.vpc_id)}))?
        .with_readiness(readiness)
        .with_connection_details(
            ConnectionDetails::new().with(CONN_VSWITCH_ID, found.vswitch_id.as_bytes()),
        );
    if found.status == vpc::status::PENDING {
        observation = observation.in_transition();
    } else {
        let diff = attribute_diff(p, found);
        if !diff.is_empty() {
            observation = observation.with_diff(diff.lines.join("; "));
        }
    }
    Ok(observation)
}

impl CloudClients {
    async fn find_vswitch(
        &self,
        ext: &ExternalRef,
    ) -> Result<Option<vpc::VSwitch>, ReconcileError> {
        let tags = [Tag::new(UID_TAG, &ext.uid)];
        let found = match ext.name() {
            Some(id) => {
                self.call(
                    "DescribeVSwitches",
                    self.region.vpc.describe_vswitches(Some(id), None, &[]),
                )
                .await?
            }
            None => {
                self.call(
                    "DescribeVSwitches",
                    self.region.vpc.describe_vswitches(None, None, &tags),
                )
                .await?
            }
        };
        Ok(found
            .into_iter()
            .filter(|v| ext.name().is_none_or(|id| v.vswitch_id == id))
            .min_by(|a, b| a.vswitch_id.cmp(&b.vswitch_id)))
    }
}

impl ExternalClient<VSwitch> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns vSwitch IDs: a named one that is not found is never created again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &VSwitch,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        match self.find_vswitch(ext).await? {
            Some(v) => observed(&mr.spec.for_provider, &v),
            None => Ok(Observation::missing()),
        }
    }

    async fn create(&self, mr: &VSwitch, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        // References are resolved before connect, and CEL requires one of the three: an empty
        // vpcId here means the reference has not been written yet.
        let Some(vpc_id) = p.vpc_id.clone() else {
            return Err(ReconcileError::dependency(
                REFERENCE_NOT_RESOLVED,
                "the VPC is not known yet: set spec.forProvider.vpcId, vpcIdRef or vpcIdSelector",
            ));
        };
        let request = CreateVSwitchRequest {
            vpc_id,
            zone_id: p.zone_id.clone(),
            cidr_block: p.cidr_block.clone(),
            vswitch_name: p.v_switch_name.clone(),
            description: p.description.clone(),
            tags: uid_tagged(p.tags.as_ref(), key.uid(), |k, v| Tag::new(k, v)),
            client_token: Some(key.token().to_owned()),
            ipv6_cidr_block: p.ipv6_cidr_block.and_then(|b| u8::try_from(b).ok()),
        };
        let created = self
            .call("CreateVSwitch", self.region.vpc.create_vswitch(&request))
            .await?;
        Ok(Creation::new(&created.vswitch_id).with_connection_details(
            ConnectionDetails::new().with(CONN_VSWITCH_ID, created.vswitch_id.as_bytes()),
        ))
    }

    async fn update(&self, mr: &VSwitch, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let Some(found) = self.find_vswitch(ext).await? else {
            return Ok(Update::done());
        };
        let diff = attribute_diff(&mr.spec.for_provider, &found);
        let id = &found.vswitch_id;
        if diff.has_attributes() {
            self.call(
                "ModifyVSwitchAttribute",
                self.region.vpc.modify_vswitch_attribute(
                    id,
                    diff.name.as_deref(),
                    diff.description.as_deref(),
                ),
            )
            .await?;
        }
        self.sync_vpc_api_tags("VSWITCH", id, &diff).await?;
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &VSwitch, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let id = ext.name().unwrap_or_default();
        self.call(
            "TagResources",
            self.region
                .vpc
                .tag_resource("VSWITCH", id, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
        .map(drop)
    }

    async fn delete(&self, _mr: &VSwitch, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        match self
            .raw("DeleteVSwitch", self.region.vpc.delete_vswitch(id))
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.is_not_found() => Ok(Deletion::Gone),
            Err(e) if e.is_dependency_violation() || e.is_wrong_state() => {
                Ok(Deletion::Waiting(format!(
                    "vSwitch {id} is still in use by instances or other resources ({}); it is deleted once they are gone",
                    e.code().unwrap_or_default()
                )))
            }
            Err(e) => Err(self.error(&e)),
        }
    }
}
