//! The `NATGateway` kind's external client: `CreateNatGateway` (enhanced, with a ClientToken
//! from the object), then `TagResources` (`NATGATEWAY`) with the UID tag and the spec's tags;
//! `DescribeNatGateways` by ID, or by the UID tag when the ID was never recorded; name and
//! description changed in place (`ModifyNatGatewayAttribute`) and tags by `TagResources` /
//! `UnTagResources` and deletion protection by `DeletionProtection`, a change made elsewhere
//! reverted at the next poll; `DeleteNatGateway` without `Force`, which waits while SNAT or
//! DNAT entries or bound EIPs hold the gateway and names them, and is refused while the gateway
//! is protected unless the spec turns the protection off.

use alibaba_sdk::Error;
use alibaba_sdk::vpc::{
    CreateNatGatewayRequest, NatGateway, Protected, Tag, nat_gateway_dependency, nat_gateway_status,
};
use ferroplane_apis::alibabacloud::{NATGateway, NATGatewayObservation, NATGatewayParameters};
use ferroplane_runtime::references::REFERENCE_NOT_RESOLVED;
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, UID_TAG, Update,
};

use super::attributes::{self, AttributeDiff, Compared};
use super::deletion_protection;
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::non_empty;

/// The VPC API's resource type of NAT gateways in `TagResources`.
const RESOURCE_TYPE: &str = "NATGATEWAY";
/// The VPC API's code for a gateway that does not exist.
const NOT_FOUND: &str = "InvalidNatGatewayId.NotFound";

/// The name, description and tags; and the deletion protection to set, if it differs.
fn diff(p: &NATGatewayParameters, found: &NatGateway) -> (AttributeDiff, Option<bool>) {
    let mut attributes = attributes::diff(&Compared {
        name_field: "name",
        want_name: p.name.as_deref(),
        have_name: &found.name,
        want_description: p.description.as_deref(),
        have_description: &found.description,
        want_tags: p.tags.as_ref(),
        have_tags: found.tags.pairs().collect(),
    });
    let protection = deletion_protection::drift(p.deletion_protection, found.deletion_protection);
    attributes
        .lines
        .extend(protection.map(deletion_protection::diff_line));
    (attributes, protection)
}

fn details(found: &NatGateway) -> ConnectionDetails {
    ConnectionDetails::new()
        .with("natGatewayId", found.nat_gateway_id.as_bytes())
        .with("snatTableId", found.snat_table_id().as_bytes())
        .with("forwardTableId", found.forward_table_id().as_bytes())
}

fn at_provider(found: &NatGateway) -> NATGatewayObservation {
    NATGatewayObservation {
        nat_gateway_id: non_empty(&found.nat_gateway_id),
        status: non_empty(&found.status),
        snat_table_id: non_empty(found.snat_table_id()),
        forward_table_id: non_empty(found.forward_table_id()),
        private_ip_address: non_empty(&found.nat_gateway_private_info.private_ip_address),
        ip_addresses: found
            .ip_lists
            .items
            .iter()
            .map(|ip| ip.ip_address.clone())
            .collect(),
    }
}

fn observed(p: &NATGatewayParameters, found: &NatGateway) -> Result<Observation, ReconcileError> {
    let status = serde_json::json!({ "atProvider": at_provider(found) });
    let mut observation = Observation::found(&found.nat_gateway_id)
        .with_owner_tag(found.tag(UID_TAG))
        .with_status(status)?
        .with_connection_details(details(found));
    observation = match found.status.as_str() {
        nat_gateway_status::AVAILABLE => {
            let (d, _) = diff(p, found);
            let observation = observation.with_readiness(Readiness::Available);
            if d.is_empty() {
                observation
            } else {
                observation.with_diff(d.lines.join("; "))
            }
        }
        nat_gateway_status::CREATING => observation
            .with_readiness(Readiness::Creating)
            .in_transition(),
        nat_gateway_status::DELETING => observation.with_readiness(Readiness::Unavailable(
            "the NAT gateway is being deleted".into(),
        )),
        // Modifying, Converting: nothing can be changed until it settles.
        other => observation
            .with_readiness(Readiness::Unavailable(format!(
                "the NAT gateway is {other}"
            )))
            .in_transition(),
    };
    Ok(observation)
}

/// What holds a gateway that `DeleteNatGateway` refused with `code`, for the waiting message.
async fn holders(
    clients: &CloudClients,
    found: &NatGateway,
    code: &str,
) -> Result<String, ReconcileError> {
    let vpc = &clients.region.vpc;
    let (what, ids): (&str, Vec<String>) = match code {
        nat_gateway_dependency::SNAT_ENTRY => {
            let entries = clients
                .call(
                    "DescribeSnatTableEntries",
                    vpc.describe_snat_entries(found.snat_table_id(), None),
                )
                .await?;
            (
                "SNAT entries",
                entries.into_iter().map(|e| e.snat_entry_id).collect(),
            )
        }
        nat_gateway_dependency::FORWARD_ENTRY => {
            let entries = clients
                .call(
                    "DescribeForwardTableEntries",
                    vpc.describe_forward_entries(found.forward_table_id(), None),
                )
                .await?;
            (
                "DNAT entries",
                entries.into_iter().map(|e| e.forward_entry_id).collect(),
            )
        }
        _ => (
            "bound EIPs",
            found
                .ip_lists
                .items
                .iter()
                .map(|ip| ip.allocation_id.clone())
                .collect(),
        ),
    };
    Ok(waiting_for(&found.nat_gateway_id, what, &ids))
}

fn waiting_for(gateway: &str, what: &str, ids: &[String]) -> String {
    let named = if ids.is_empty() {
        String::new()
    } else {
        format!(" ({})", ids.join(", "))
    };
    format!(
        "NAT gateway {gateway} still has {what}{named}: it is deleted once they are gone (delete their SNATEntry, DNATEntry or EIPAssociation objects); ferroplane never deletes it with Force"
    )
}

fn is_dependency(e: &Error) -> Option<&str> {
    e.code().filter(|c| {
        [
            nat_gateway_dependency::SNAT_ENTRY,
            nat_gateway_dependency::FORWARD_ENTRY,
            nat_gateway_dependency::EIPS,
        ]
        .contains(c)
    })
}

impl CloudClients {
    /// The NAT gateway the object names, or the one carrying its UID tag.
    pub(crate) async fn find_nat_gateway(
        &self,
        id: Option<&str>,
        uid: &str,
    ) -> Result<Option<NatGateway>, ReconcileError> {
        let tags = match id {
            Some(_) => Vec::new(),
            None => vec![Tag::new(UID_TAG, uid)],
        };
        let found = self
            .call(
                "DescribeNatGateways",
                self.region.vpc.describe_nat_gateways(id, &tags),
            )
            .await?;
        Ok(found
            .into_iter()
            .filter(|g| id.is_none_or(|id| g.nat_gateway_id == id))
            .min_by(|a, b| a.nat_gateway_id.cmp(&b.nat_gateway_id)))
    }
}

impl ExternalClient<NATGateway> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns gateway IDs: a named gateway that is not found is never created again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &NATGateway,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        match self.find_nat_gateway(ext.name(), &ext.uid).await? {
            Some(found) => observed(&mr.spec.for_provider, &found),
            None => Ok(Observation::missing()),
        }
    }

    async fn create(
        &self,
        mr: &NATGateway,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let (Some(vpc_id), Some(vswitch_id)) = (&p.vpc_id, &p.v_switch_id) else {
            return Err(ReconcileError::dependency(
                REFERENCE_NOT_RESOLVED,
                "the VPC or the vSwitch is not known yet: set vpcId / vpcIdRef / vpcIdSelector and vSwitchId / vSwitchIdRef / vSwitchIdSelector",
            ));
        };
        let request = CreateNatGatewayRequest {
            vpc_id: vpc_id.clone(),
            vswitch_id: vswitch_id.clone(),
            network_type: p.network_type.map(|t| t.as_str().to_owned()),
            name: p.name.clone(),
            description: p.description.clone(),
            client_token: Some(key.token().to_owned()),
        };
        let created = self
            .call(
                "CreateNatGateway",
                self.region.vpc.create_nat_gateway(&request),
            )
            .await?;
        self.tag_created(
            RESOURCE_TYPE,
            &created.nat_gateway_id,
            p.tags.as_ref(),
            key.uid(),
        )
        .await?;
        Ok(Creation::new(&created.nat_gateway_id))
    }

    async fn update(&self, mr: &NATGateway, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let Some(found) = self.find_nat_gateway(ext.name(), &ext.uid).await? else {
            return Ok(Update::done());
        };
        let (d, protection) = diff(&mr.spec.for_provider, &found);
        let id = &found.nat_gateway_id;
        if d.has_attributes() {
            self.call(
                "ModifyNatGatewayAttribute",
                self.region.vpc.modify_nat_gateway_attribute(
                    id,
                    d.name.as_deref(),
                    d.description.as_deref(),
                ),
            )
            .await?;
        }
        self.sync_vpc_api_tags(RESOURCE_TYPE, id, &d).await?;
        if let Some(enable) = protection {
            self.set_deletion_protection(Protected::NatGateway, id, enable)
                .await?;
        }
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &NATGateway, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let id = ext.name().unwrap_or_default();
        self.call(
            "TagResources",
            self.region
                .vpc
                .tag_resource(RESOURCE_TYPE, id, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
        .map(drop)
    }

    async fn delete(&self, mr: &NATGateway, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let Some(found) = self.find_nat_gateway(ext.name(), &ext.uid).await? else {
            return Ok(Deletion::Gone);
        };
        let id = &found.nat_gateway_id;
        match found.status.as_str() {
            nat_gateway_status::DELETING => return Ok(Deletion::InProgress),
            nat_gateway_status::AVAILABLE => {}
            status => {
                return Ok(Deletion::Waiting(format!(
                    "NAT gateway {id} is {status}: it is deleted once it is Available"
                )));
            }
        }
        self.lift_deletion_protection(
            Protected::NatGateway,
            id,
            found.deletion_protection,
            mr.spec.for_provider.deletion_protection,
        )
        .await?;
        match self
            .raw("DeleteNatGateway", self.region.vpc.delete_nat_gateway(id))
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.code() == Some(NOT_FOUND) => Ok(Deletion::Gone),
            Err(e) if is_dependency(&e).is_some() => {
                let code = is_dependency(&e).unwrap_or_default().to_owned();
                Ok(Deletion::Waiting(holders(self, &found, &code).await?))
            }
            Err(e) if e.code() == Some("IncorrectStatus.NatGateway") => {
                Ok(Deletion::Waiting(format!(
                    "NAT gateway {id} cannot be deleted in its current state; ferroplane tries again"
                )))
            }
            Err(e) => Err(self.error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloud(status: &str) -> NatGateway {
        serde_json::from_value(serde_json::json!({
            "NatGatewayId": "ngw-1", "Status": status, "Name": "egress", "Description": "out",
            "SnatTableIds": {"SnatTableId": ["stb-1"]},
            "ForwardTableIds": {"ForwardTableId": ["ftb-1"]},
            "IpLists": {"IpList": [{"AllocationId": "eip-1", "IpAddress": "39.96.0.1"}]},
            "Tags": {"Tag": [{"Key": "team", "Value": "a"}]},
        }))
        .unwrap()
    }

    fn spec() -> NATGatewayParameters {
        NATGatewayParameters {
            region_id: "cn-beijing".into(),
            name: Some("egress".into()),
            description: Some("out".into()),
            tags: Some([("team".to_owned(), "a".to_owned())].into()),
            ..NATGatewayParameters::default()
        }
    }

    #[test]
    fn each_in_place_field_differs_on_its_own() {
        assert!(diff(&spec(), &cloud("Available")).0.is_empty());
        let mut renamed = cloud("Available");
        renamed.name = "other".into();
        let mut described = cloud("Available");
        described.description = "other".into();
        let mut untagged = cloud("Available");
        untagged.tags = Default::default();
        for found in [renamed, described, untagged] {
            assert_eq!(diff(&spec(), &found).0.lines.len(), 1, "{found:?}");
        }
        let protected = NATGatewayParameters {
            deletion_protection: Some(true),
            ..spec()
        };
        let (d, protection) = diff(&protected, &cloud("Available"));
        assert_eq!(protection, Some(true));
        assert_eq!(d.lines, ["deletionProtection: false → true"]);
        assert!(!d.has_attributes(), "DeletionProtection is its own call");
    }

    #[test]
    fn the_tables_are_reported_and_changes_wait_for_a_settled_gateway() {
        let seen = at_provider(&cloud("Available"));
        assert_eq!(seen.snat_table_id.as_deref(), Some("stb-1"));
        assert_eq!(seen.forward_table_id.as_deref(), Some("ftb-1"));
        assert_eq!(seen.ip_addresses, ["39.96.0.1"]);
        let o = observed(&spec(), &cloud("Available")).unwrap();
        assert_eq!(o.readiness, Readiness::Available);
        let mut drifted = cloud("Modifying");
        drifted.name = "other".into();
        let o = observed(&spec(), &drifted).unwrap();
        assert!(o.in_transition);
        assert!(!matches!(o.up_to_date, ferroplane_runtime::UpToDate::No(_)));
        assert_eq!(
            observed(&spec(), &cloud("Creating")).unwrap().readiness,
            Readiness::Creating
        );
    }

    #[test]
    fn the_waiting_message_names_what_holds_the_gateway() {
        let m = waiting_for("ngw-1", "SNAT entries", &["snat-1".into(), "snat-2".into()]);
        assert!(m.contains("ngw-1") && m.contains("snat-1, snat-2"), "{m}");
        assert!(m.contains("never deletes it with Force"), "{m}");
    }
}
