//! The `VPC` kind's external client: `CreateVpc`, `DescribeVpcs` (by ID, or by the UID tag when
//! the ID was never recorded), `DeleteVpc`; the name, description and tags change in place
//! (`ModifyVpcAttribute`, `TagResources`, `UnTagResources`), and a change made elsewhere is
//! reverted at the next poll.

use alibaba_sdk::vpc::{self, CreateVpcRequest, Tag};
use ferroplane_apis::alibabacloud::{VPC, VPCObservation, VPCParameters};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, UID_TAG, Update,
};

use super::attributes::{self, AttributeDiff, Compared};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::{non_empty, uid_tagged};

/// Connection Secret key.
const CONN_VPC_ID: &str = "vpcId";

fn readiness(status: &str) -> Readiness {
    match status {
        vpc::status::AVAILABLE => Readiness::Available,
        vpc::status::PENDING => Readiness::Creating,
        other => Readiness::Unavailable(format!("the VPC is {other}")),
    }
}

/// The spec's name, description and tags against the VPC's.
fn attribute_diff(p: &VPCParameters, found: &vpc::Vpc) -> AttributeDiff {
    attributes::diff(&Compared {
        name_field: "vpcName",
        want_name: p.vpc_name.as_deref(),
        have_name: &found.vpc_name,
        want_description: p.description.as_deref(),
        have_description: &found.description,
        want_tags: p.tags.as_ref(),
        have_tags: found.tags.pairs().collect(),
    })
}

fn observed(p: &VPCParameters, found: &vpc::Vpc) -> Result<Observation, ReconcileError> {
    let status = serde_json::json!({
        "atProvider": VPCObservation {
            vpc_id: non_empty(&found.vpc_id),
            status: non_empty(&found.status),
            cidr_block: non_empty(&found.cidr_block),
            v_router_id: non_empty(&found.vrouter_id),
            ipv6_cidr_block: non_empty(&found.ipv6_cidr_block),
        }
    });
    let mut observation = Observation::found(&found.vpc_id)
        .with_owner_tag(found.tag(UID_TAG))
        .with_status(status)?
        .with_late_init(serde_json::json!({"cidrBlock": non_empty(&found.cidr_block)}))?
        .with_readiness(readiness(&found.status))
        .with_connection_details(
            ConnectionDetails::new().with(CONN_VPC_ID, found.vpc_id.as_bytes()),
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
    async fn find_vpc(&self, ext: &ExternalRef) -> Result<Option<vpc::Vpc>, ReconcileError> {
        let (ids, tags) = match ext.name() {
            Some(id) => (vec![id.to_owned()], Vec::new()),
            None => (Vec::new(), vec![Tag::new(UID_TAG, &ext.uid)]),
        };
        let found = self
            .call("DescribeVpcs", self.region.vpc.describe_vpcs(&ids, &tags))
            .await?;
        // By ID the API answers the one VPC or nothing; by tag, the first created wins if a crash
        // ever left two (the ClientToken makes that nearly impossible).
        Ok(found
            .into_iter()
            .filter(|v| ext.name().is_none_or(|id| v.vpc_id == id))
            .min_by(|a, b| a.vpc_id.cmp(&b.vpc_id)))
    }
}

impl ExternalClient<VPC> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns VPC IDs: a named one that is not found is never created again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(&self, mr: &VPC, ext: &ExternalRef) -> Result<Observation, ReconcileError> {
        match self.find_vpc(ext).await? {
            Some(found) => observed(&mr.spec.for_provider, &found),
            None => Ok(Observation::missing()),
        }
    }

    async fn create(&self, mr: &VPC, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let request = CreateVpcRequest {
            cidr_block: p.cidr_block.clone(),
            vpc_name: p.vpc_name.clone(),
            description: p.description.clone(),
            tags: uid_tagged(p.tags.as_ref(), key.uid(), |k, v| Tag::new(k, v)),
            client_token: Some(key.token().to_owned()),
            enable_ipv6: p.enable_ipv6.unwrap_or(false),
        };
        let created = self
            .call("CreateVpc", self.region.vpc.create_vpc(&request))
            .await?;
        Ok(Creation::new(&created.vpc_id).with_connection_details(
            ConnectionDetails::new().with(CONN_VPC_ID, created.vpc_id.as_bytes()),
        ))
    }

    async fn update(&self, mr: &VPC, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let Some(found) = self.find_vpc(ext).await? else {
            return Ok(Update::done());
        };
        let diff = attribute_diff(&mr.spec.for_provider, &found);
        let id = &found.vpc_id;
        if diff.has_attributes() {
            self.call(
                "ModifyVpcAttribute",
                self.region.vpc.modify_vpc_attribute(
                    id,
                    diff.name.as_deref(),
                    diff.description.as_deref(),
                ),
            )
            .await?;
        }
        self.sync_vpc_api_tags("VPC", id, &diff).await?;
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &VPC, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let id = ext.name().unwrap_or_default();
        self.call(
            "TagResources",
            self.region
                .vpc
                .tag_resource("VPC", id, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
        .map(drop)
    }

    async fn delete(&self, _mr: &VPC, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        match self.raw("DeleteVpc", self.region.vpc.delete_vpc(id)).await {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.is_not_found() => Ok(Deletion::Gone),
            Err(e) if e.is_dependency_violation() => Ok(Deletion::Waiting(format!(
                "VPC {id} still has vSwitches, security groups or other resources ({}); it is deleted once they are gone",
                e.code().unwrap_or_default()
            ))),
            Err(e) => Err(self.error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uid_tag_is_added_and_cannot_be_forged() {
        let p = ferroplane_apis::alibabacloud::VPCParameters {
            tags: Some(
                [
                    (UID_TAG.to_owned(), "forged".to_owned()),
                    ("team".into(), "a".into()),
                ]
                .into(),
            ),
            ..ferroplane_apis::alibabacloud::VPCParameters::default()
        };
        assert_eq!(
            uid_tagged(p.tags.as_ref(), "real", |k, v| Tag::new(k, v)),
            vec![Tag::new("team", "a"), Tag::new(UID_TAG, "real")]
        );
    }

    #[test]
    fn pending_is_creating_and_in_transition() {
        let vpc = vpc::Vpc {
            vpc_id: "vpc-1".into(),
            status: "Pending".into(),
            cidr_block: "10.0.0.0/8".into(),
            ..vpc::Vpc::default()
        };
        let o = observed(&VPCParameters::default(), &vpc).unwrap();
        assert_eq!(o.readiness, Readiness::Creating);
        assert!(o.in_transition);
        assert_eq!(o.external_name.as_deref(), Some("vpc-1"));
        assert_eq!(readiness("Available"), Readiness::Available);
    }
}
