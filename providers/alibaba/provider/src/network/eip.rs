//! The `EIP` kind's external client: `AllocateEipAddress` (with a ClientToken from the
//! object), then `TagResources` with the UID tag and the spec's tags (AllocateEipAddress takes
//! none); `DescribeEipAddresses` by ID, or by the UID tag when the ID was never recorded;
//! bandwidth, name and description changed in place (`ModifyEipAddressAttribute`), tags by
//! `TagResources` / `UnTagResources` and deletion protection by `DeletionProtection`, a change
//! made elsewhere reverted at the next poll; `ReleaseEipAddress`, which waits while the EIP is
//! associated with anything, and is refused while the EIP is protected unless the spec turns
//! the protection off.

use alibaba_sdk::vpc::{AllocateEipAddressRequest, EipAddress, Protected, Tag, eip_status};
use ferroplane_apis::alibabacloud::{EIP, EIPObservation, EIPParameters};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, UID_TAG, Update,
};

use super::attributes::{self, AttributeDiff, Compared};
use super::deletion_protection;
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::non_empty;

/// The VPC API's resource type of EIPs in `TagResources`.
const RESOURCE_TYPE: &str = "EIP";
/// Connection Secret keys.
const CONN_ALLOCATION_ID: &str = "allocationId";
const CONN_IP_ADDRESS: &str = "ipAddress";

/// What differs between the spec and the EIP: the attribute diff (name, description, tags), the
/// bandwidth and the deletion protection.
struct EipDiff {
    attributes: AttributeDiff,
    bandwidth: Option<u32>,
    protection: Option<bool>,
    lines: Vec<String>,
}

fn diff(p: &EIPParameters, found: &EipAddress) -> EipDiff {
    let attributes = attributes::diff(&Compared {
        name_field: "name",
        want_name: p.name.as_deref(),
        have_name: &found.name,
        want_description: p.description.as_deref(),
        have_description: &found.description,
        want_tags: p.tags.as_ref(),
        have_tags: found.tags.pairs().collect(),
    });
    let mut lines = attributes.lines.clone();
    let bandwidth = p
        .bandwidth
        .and_then(|b| u32::try_from(b).ok())
        .filter(|b| *b != found.bandwidth);
    if let Some(b) = bandwidth {
        lines.push(format!("bandwidth: {} → {b}", found.bandwidth));
    }
    let protection = deletion_protection::drift(p.deletion_protection, found.deletion_protection);
    lines.extend(protection.map(deletion_protection::diff_line));
    EipDiff {
        attributes,
        bandwidth,
        protection,
        lines,
    }
}

fn details(allocation_id: &str, ip: &str) -> ConnectionDetails {
    ConnectionDetails::new()
        .with(CONN_ALLOCATION_ID, allocation_id.as_bytes())
        .with(CONN_IP_ADDRESS, ip.as_bytes())
}

/// Associating and unassociating are the EIP's own transitions: nothing can be changed then.
fn in_transition(status: &str) -> bool {
    matches!(
        status,
        eip_status::ASSOCIATING | eip_status::UNASSOCIATING | eip_status::RELEASING
    )
}

fn observed(p: &EIPParameters, found: &EipAddress) -> Result<Observation, ReconcileError> {
    let status = serde_json::json!({
        "atProvider": EIPObservation {
            allocation_id: non_empty(&found.allocation_id),
            ip_address: non_empty(&found.ip_address),
            status: non_empty(&found.status),
            bandwidth: i32::try_from(found.bandwidth).ok(),
            instance_id: non_empty(&found.instance_id),
            instance_type: non_empty(&found.instance_type),
        }
    });
    let readiness = match found.status.as_str() {
        eip_status::RELEASING => Readiness::Unavailable("the EIP is being released".into()),
        _ => Readiness::Available,
    };
    let mut observation = Observation::found(&found.allocation_id)
        .with_owner_tag(found.tag(UID_TAG))
        .with_status(status)?
        // Only the in-place bandwidth: the fields set at allocation are refused at admission
        // when they appear later, so they are never late-initialized.
        .with_late_init(serde_json::json!({"bandwidth": found.bandwidth}))?
        .with_readiness(readiness)
        .with_connection_details(details(&found.allocation_id, &found.ip_address));
    if in_transition(&found.status) {
        observation = observation.in_transition();
    } else {
        let d = diff(p, found);
        if !d.lines.is_empty() {
            observation = observation.with_diff(d.lines.join("; "));
        }
    }
    Ok(observation)
}

impl CloudClients {
    /// The EIP the object names, or the one carrying its UID tag.
    pub(crate) async fn find_eip(
        &self,
        id: Option<&str>,
        uid: &str,
    ) -> Result<Option<EipAddress>, ReconcileError> {
        let (ids, tags) = match id {
            Some(id) => (vec![id.to_owned()], Vec::new()),
            None => (Vec::new(), vec![Tag::new(UID_TAG, uid)]),
        };
        let found = self
            .call(
                "DescribeEipAddresses",
                self.region.vpc.describe_eip_addresses(&ids, &tags),
            )
            .await?;
        Ok(found
            .into_iter()
            .filter(|e| id.is_none_or(|id| e.allocation_id == id))
            .min_by(|a, b| a.allocation_id.cmp(&b.allocation_id)))
    }
}

impl ExternalClient<EIP> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns allocation IDs: a named EIP that is not found is never allocated again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(&self, mr: &EIP, ext: &ExternalRef) -> Result<Observation, ReconcileError> {
        match self.find_eip(ext.name(), &ext.uid).await? {
            Some(found) => observed(&mr.spec.for_provider, &found),
            None => Ok(Observation::missing()),
        }
    }

    async fn create(&self, mr: &EIP, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let request = AllocateEipAddressRequest {
            bandwidth: p.bandwidth.and_then(|b| u32::try_from(b).ok()),
            internet_charge_type: p.internet_charge_type.map(|c| c.as_str().to_owned()),
            isp: p.isp.clone(),
            name: p.name.clone(),
            description: p.description.clone(),
            resource_group_id: p.resource_group_id.clone(),
            client_token: Some(key.token().to_owned()),
        };
        let allocated = self
            .call(
                "AllocateEipAddress",
                self.region.vpc.allocate_eip_address(&request),
            )
            .await?;
        self.tag_created(
            RESOURCE_TYPE,
            &allocated.allocation_id,
            p.tags.as_ref(),
            key.uid(),
        )
        .await?;
        Ok(Creation::new(&allocated.allocation_id)
            .with_connection_details(details(&allocated.allocation_id, &allocated.eip_address)))
    }

    async fn update(&self, mr: &EIP, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let Some(found) = self.find_eip(ext.name(), &ext.uid).await? else {
            return Ok(Update::done());
        };
        let d = diff(&mr.spec.for_provider, &found);
        let id = &found.allocation_id;
        if d.bandwidth.is_some() || d.attributes.has_attributes() {
            self.call(
                "ModifyEipAddressAttribute",
                self.region.vpc.modify_eip_address_attribute(
                    id,
                    d.bandwidth,
                    d.attributes.name.as_deref(),
                    d.attributes.description.as_deref(),
                ),
            )
            .await?;
        }
        self.sync_vpc_api_tags(RESOURCE_TYPE, id, &d.attributes)
            .await?;
        if let Some(enable) = d.protection {
            self.set_deletion_protection(Protected::Eip, id, enable)
                .await?;
        }
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &EIP, ext: &ExternalRef) -> Result<(), ReconcileError> {
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

    async fn delete(&self, mr: &EIP, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let Some(found) = self.find_eip(ext.name(), &ext.uid).await? else {
            return Ok(Deletion::Gone);
        };
        let id = &found.allocation_id;
        match found.status.as_str() {
            eip_status::RELEASING => return Ok(Deletion::InProgress),
            eip_status::AVAILABLE => {}
            status => return Ok(Deletion::Waiting(still_associated(&found, status))),
        }
        self.lift_deletion_protection(
            Protected::Eip,
            id,
            found.deletion_protection,
            mr.spec.for_provider.deletion_protection,
        )
        .await?;
        match self
            .raw("ReleaseEipAddress", self.region.vpc.release_eip_address(id))
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.code() == Some("InvalidAllocationId.NotFound") => Ok(Deletion::Gone),
            Err(e) if e.code() == Some("IncorrectEipStatus") => Ok(Deletion::Waiting(format!(
                "EIP {id} cannot be released in its current state ({}); ferroplane tries again",
                e.code().unwrap_or_default()
            ))),
            Err(e) => Err(self.error(&e)),
        }
    }
}

fn still_associated(found: &EipAddress, status: &str) -> String {
    format!(
        "EIP {} is {status} with {} {}: it is released once unassociated (delete its EIPAssociation, or unassociate it)",
        found.allocation_id, found.instance_type, found.instance_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_fields::uid_tagged;
    use ferroplane_apis::alibabacloud::EIPParameters;

    fn cloud() -> EipAddress {
        EipAddress {
            allocation_id: "eip-1".into(),
            ip_address: "39.96.0.11".into(),
            status: "Available".into(),
            bandwidth: 5,
            name: "web".into(),
            description: "front".into(),
            ..EipAddress::default()
        }
    }

    fn spec() -> EIPParameters {
        EIPParameters {
            region_id: "cn-beijing".into(),
            bandwidth: Some(5),
            name: Some("web".into()),
            description: Some("front".into()),
            tags: Some([("team".to_owned(), "a".to_owned())].into()),
            ..EIPParameters::default()
        }
    }

    fn tagged(mut e: EipAddress) -> EipAddress {
        e.tags =
            serde_json::from_value(serde_json::json!({"Tag": [{"Key": "team", "Value": "a"}]}))
                .unwrap();
        e
    }

    #[test]
    fn each_in_place_field_differs_on_its_own() {
        assert!(diff(&spec(), &tagged(cloud())).lines.is_empty());
        let drifted = [
            EipAddress {
                bandwidth: 10,
                ..tagged(cloud())
            },
            EipAddress {
                name: "other".into(),
                ..tagged(cloud())
            },
            EipAddress {
                description: "other".into(),
                ..tagged(cloud())
            },
            cloud(),
        ];
        let protected = EIPParameters {
            deletion_protection: Some(true),
            ..spec()
        };
        let d = diff(&protected, &tagged(cloud()));
        assert_eq!(d.protection, Some(true));
        assert_eq!(d.lines, ["deletionProtection: false → true"]);
        for found in drifted {
            let d = diff(&spec(), &found);
            assert_eq!(d.lines.len(), 1, "{found:?}: {:?}", d.lines);
        }
        assert_eq!(
            diff(
                &spec(),
                &EipAddress {
                    bandwidth: 10,
                    ..tagged(cloud())
                }
            )
            .bandwidth,
            Some(5)
        );
    }

    #[test]
    fn an_associated_eip_is_in_transition_only_while_it_moves() {
        for (status, moving) in [
            ("Available", false),
            ("InUse", false),
            ("Associating", true),
            ("Unassociating", true),
            ("Releasing", true),
        ] {
            let found = EipAddress {
                status: status.into(),
                bandwidth: 10,
                ..cloud()
            };
            let o = observed(&spec(), &found).unwrap();
            assert_eq!(o.in_transition, moving, "{status}");
            // No change is planned while it moves: the VPC API would refuse it.
            let planned = matches!(o.up_to_date, ferroplane_runtime::UpToDate::No(_));
            assert_eq!(planned, !moving, "{status}");
        }
    }

    #[test]
    fn the_uid_tag_goes_with_the_spec_tags() {
        let p = spec();
        let tags = uid_tagged(p.tags.as_ref(), "uid-1", |k, v| Tag::new(k, v));
        assert_eq!(
            tags,
            vec![Tag::new("team", "a"), Tag::new(UID_TAG, "uid-1")]
        );
    }
}
