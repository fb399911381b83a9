//! The `EIPAssociation` kind's external client. The association is named
//! `<allocationId>:<instanceId>` (the EIP and the instance it binds) and observed through the
//! EIP (`DescribeEipAddresses`): it exists while the EIP is associated with that instance.
//! `AssociateEipAddress` makes it (with a ClientToken from the object), `UnassociateEipAddress`
//! undoes it. The instance is an ECS instance or, with `instanceType: Nat`, a NAT gateway. An
//! association undone elsewhere is made again at the next poll; an EIP associated
//! with another resource is never taken from it (`EIPInUse`), and deleting never unassociates
//! an EIP from a resource this object does not name.

use alibaba_sdk::vpc::{EipAddress, EipTarget, eip_status};
use ferroplane_apis::alibabacloud::{
    EIPAssociation, EIPAssociationInstanceType, EIPAssociationObservation,
};
use ferroplane_runtime::references::REFERENCE_NOT_RESOLVED;
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, Update,
};

use crate::cloud_connector::CloudClients;
use crate::cloud_fields::non_empty;
use crate::reasons::{EIP_IN_USE, INVALID_SPEC};

/// The VPC API's code for an EIP that does not exist.
const EIP_NOT_FOUND: &str = "InvalidAllocationId.NotFound";

/// What one association binds.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pair {
    allocation_id: String,
    instance_id: String,
    instance_type: &'static str,
}

impl Pair {
    /// The association's external name.
    fn name(&self) -> String {
        format!("{}:{}", self.allocation_id, self.instance_id)
    }

    /// From an external name `<allocationId>:<instanceId>`.
    fn parse(name: &str, instance_type: &'static str) -> Option<Self> {
        let (allocation_id, instance_id) = name.split_once(':')?;
        (!allocation_id.is_empty() && !instance_id.is_empty()).then(|| Self {
            allocation_id: allocation_id.to_owned(),
            instance_id: instance_id.to_owned(),
            instance_type,
        })
    }

    fn target(&self) -> EipTarget<'_> {
        EipTarget {
            allocation_id: &self.allocation_id,
            instance_id: &self.instance_id,
            instance_type: self.instance_type,
        }
    }

    /// Whether `eip` is associated (or being associated or unassociated) with this pair's
    /// instance.
    fn bound(&self, eip: &EipAddress) -> bool {
        eip.instance_id == self.instance_id
            && (eip.instance_type.is_empty() || eip.instance_type == self.instance_type)
    }
}

fn instance_type(mr: &EIPAssociation) -> &'static str {
    mr.spec
        .for_provider
        .instance_type
        .unwrap_or(EIPAssociationInstanceType::EcsInstance)
        .as_str()
}

/// The pair the spec asks for; both IDs are set once the references are resolved.
fn wanted(mr: &EIPAssociation) -> Result<Pair, ReconcileError> {
    let p = &mr.spec.for_provider;
    match (&p.allocation_id, &p.instance_id) {
        (Some(allocation_id), Some(instance_id)) => Ok(Pair {
            allocation_id: allocation_id.clone(),
            instance_id: instance_id.clone(),
            instance_type: instance_type(mr),
        }),
        _ => Err(ReconcileError::dependency(
            REFERENCE_NOT_RESOLVED,
            "the EIP or the instance is not known yet: set allocationId / allocationIdRef / allocationIdSelector and instanceId / instanceIdRef / instanceIdSelector (natGatewayIdRef / natGatewayIdSelector for a NAT gateway)",
        )),
    }
}

/// The pair to observe: the one the external name records, else the spec's.
fn observed_pair(mr: &EIPAssociation, ext: &ExternalRef) -> Result<Pair, ReconcileError> {
    let Some(name) = ext.name() else {
        return wanted(mr);
    };
    Pair::parse(name, instance_type(mr)).ok_or_else(|| {
        ReconcileError::terminal(
            INVALID_SPEC,
            format!("the external name {name:?} is not <allocationId>:<instanceId>: correct or remove the ferroplane.io/external-name annotation"),
        )
    })
}

fn details(pair: &Pair, ip: &str) -> ConnectionDetails {
    ConnectionDetails::new()
        .with("allocationId", pair.allocation_id.as_bytes())
        .with("instanceId", pair.instance_id.as_bytes())
        .with("ipAddress", ip.as_bytes())
}

fn in_use_elsewhere(pair: &Pair, eip: &EipAddress) -> ReconcileError {
    ReconcileError::new(
        EIP_IN_USE,
        format!(
            "EIP {} is associated with {} {}, not with {}: unassociate it there first, or name another EIP",
            pair.allocation_id, eip.instance_type, eip.instance_id, pair.instance_id
        ),
        ferroplane_runtime::RetryClass::Backoff,
    )
}

/// The observation of `pair` through its EIP, given whether the object records the
/// association (its external name) already and whether it is being deleted.
fn observed(
    pair: &Pair,
    eip: &EipAddress,
    named: bool,
    deleting: bool,
) -> Result<Observation, ReconcileError> {
    let bound = pair.bound(eip);
    if !bound && (!named || deleting) {
        // Not made yet (or the EIP serves another resource, which create reports), or undone
        // for a deletion.
        return Ok(Observation::missing());
    }
    let status = serde_json::json!({
        "atProvider": EIPAssociationObservation {
            association_id: Some(pair.name()),
            ip_address: non_empty(&eip.ip_address),
            status: non_empty(&eip.status),
        }
    });
    let mut observation = Observation::found(pair.name())
        .with_status(status)?
        .with_connection_details(details(pair, &eip.ip_address));
    observation = match (bound, eip.status.as_str()) {
        (true, eip_status::IN_USE) => observation.with_readiness(Readiness::Available),
        (true, eip_status::ASSOCIATING) => observation
            .with_readiness(Readiness::Creating)
            .in_transition(),
        (true, _) => observation
            .with_readiness(Readiness::Unavailable(format!(
                "EIP {} is {}",
                pair.allocation_id, eip.status
            )))
            .in_transition(),
        (false, _) if eip.instance_id.is_empty() => observation
            .with_readiness(Readiness::Unavailable(format!(
                "EIP {} is not associated with {}",
                pair.allocation_id, pair.instance_id
            )))
            .with_diff(format!(
                "EIP {} was unassociated from {} outside ferroplane: it is associated again",
                pair.allocation_id, pair.instance_id
            )),
        (false, _) => observation
            .with_readiness(Readiness::Unavailable(format!(
                "EIP {} is associated with {} {} instead of {}",
                pair.allocation_id, eip.instance_type, eip.instance_id, pair.instance_id
            )))
            .with_diff(format!(
                "EIP {} is associated with {} instead",
                pair.allocation_id, eip.instance_id
            )),
    };
    Ok(observation)
}

impl CloudClients {
    async fn find_pair_eip(&self, pair: &Pair) -> Result<Option<EipAddress>, ReconcileError> {
        // By ID only: the UID search of `find_eip` is never used, the ID is always known.
        self.find_eip(Some(&pair.allocation_id), "").await
    }

    async fn associate(&self, pair: &Pair, token: Option<&str>) -> Result<(), ReconcileError> {
        self.call(
            "AssociateEipAddress",
            self.region.vpc.associate_eip_address(&pair.target(), token),
        )
        .await
        .map(drop)
    }
}

impl ExternalClient<EIPAssociation> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// An association named by the object and gone with its EIP is never made again for it.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &EIPAssociation,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let pair = observed_pair(mr, ext)?;
        let Some(eip) = self.find_pair_eip(&pair).await? else {
            return Ok(Observation::missing());
        };
        if ext.name().is_some() {
            let want = wanted(mr)?;
            if want != pair {
                return Err(ReconcileError::terminal(
                    INVALID_SPEC,
                    format!(
                        "the external name names {}, the spec {}: make the annotation ferroplane.io/external-name and spec.forProvider agree",
                        pair.name(),
                        want.name()
                    ),
                ));
            }
        }
        let deleting = mr.metadata.deletion_timestamp.is_some();
        observed(&pair, &eip, ext.name().is_some(), deleting)
    }

    async fn create(
        &self,
        mr: &EIPAssociation,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        let pair = wanted(mr)?;
        if let Some(eip) = self.find_pair_eip(&pair).await?
            && !eip.instance_id.is_empty()
            && !pair.bound(&eip)
        {
            return Err(in_use_elsewhere(&pair, &eip));
        }
        self.associate(&pair, Some(key.token())).await?;
        Ok(Creation::new(pair.name()))
    }

    async fn update(
        &self,
        mr: &EIPAssociation,
        ext: &ExternalRef,
    ) -> Result<Update, ReconcileError> {
        let pair = observed_pair(mr, ext)?;
        let Some(eip) = self.find_pair_eip(&pair).await? else {
            return Ok(Update::done());
        };
        if pair.bound(&eip) {
            return Ok(Update::done());
        }
        if !eip.instance_id.is_empty() {
            return Err(in_use_elsewhere(&pair, &eip));
        }
        self.associate(&pair, None).await?;
        Ok(Update::done())
    }

    async fn delete(
        &self,
        mr: &EIPAssociation,
        ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let Some(name) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        let Some(pair) = Pair::parse(name, instance_type(mr)) else {
            return Ok(Deletion::Gone);
        };
        let Some(eip) = self.find_pair_eip(&pair).await? else {
            return Ok(Deletion::Gone);
        };
        if !pair.bound(&eip) {
            // Unassociated already, or serving another resource: nothing of ours is left.
            return Ok(Deletion::Gone);
        }
        match eip.status.as_str() {
            eip_status::IN_USE => {}
            eip_status::UNASSOCIATING => return Ok(Deletion::InProgress),
            status => {
                return Ok(Deletion::Waiting(format!(
                    "EIP {} is {status}: it is unassociated once the association settles",
                    pair.allocation_id
                )));
            }
        }
        match self
            .raw(
                "UnassociateEipAddress",
                self.region
                    .vpc
                    .unassociate_eip_address(&pair.target(), None),
            )
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.code() == Some(EIP_NOT_FOUND) => Ok(Deletion::Gone),
            Err(e) if e.code() == Some("IncorrectEipStatus") => Ok(Deletion::InProgress),
            Err(e) => Err(self.error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> Pair {
        Pair {
            allocation_id: "eip-1".into(),
            instance_id: "i-1".into(),
            instance_type: "EcsInstance",
        }
    }

    fn eip(status: &str, instance: &str) -> EipAddress {
        EipAddress {
            allocation_id: "eip-1".into(),
            ip_address: "39.96.0.11".into(),
            status: status.into(),
            instance_id: instance.into(),
            instance_type: if instance.is_empty() {
                ""
            } else {
                "EcsInstance"
            }
            .into(),
            ..EipAddress::default()
        }
    }

    #[test]
    fn the_name_round_trips() {
        assert_eq!(Pair::parse(&pair().name(), "EcsInstance"), Some(pair()));
        assert_eq!(Pair::parse("eip-1", "EcsInstance"), None);
        assert_eq!(Pair::parse(":i-1", "EcsInstance"), None);
    }

    #[test]
    fn an_association_is_found_only_through_its_instance() {
        let p = pair();
        // Not yet made: missing, so it is created.
        assert!(
            !observed(&p, &eip("Available", ""), false, false)
                .unwrap()
                .exists
        );
        // Serving another resource and not ours: missing too; create refuses with EIPInUse.
        assert!(
            !observed(&p, &eip("InUse", "i-2"), false, false)
                .unwrap()
                .exists
        );
        // Undone while the object is deleted: gone.
        assert!(
            !observed(&p, &eip("Available", ""), true, true)
                .unwrap()
                .exists
        );
        let ready = observed(&p, &eip("InUse", "i-1"), false, false).unwrap();
        assert_eq!(ready.readiness, Readiness::Available);
        assert_eq!(ready.external_name.as_deref(), Some("eip-1:i-1"));
        let moving = observed(&p, &eip("Associating", "i-1"), true, false).unwrap();
        assert!(moving.in_transition);
    }

    #[test]
    fn drift_is_planned_back_but_never_taken_from_another_resource() {
        let p = pair();
        let undone = observed(&p, &eip("Available", ""), true, false).unwrap();
        assert!(matches!(
            undone.up_to_date,
            ferroplane_runtime::UpToDate::No(_)
        ));
        let moved = observed(&p, &eip("InUse", "i-2"), true, false).unwrap();
        assert!(matches!(
            moved.up_to_date,
            ferroplane_runtime::UpToDate::No(_)
        ));
        assert_eq!(
            in_use_elsewhere(&p, &eip("InUse", "i-2")).reason(),
            EIP_IN_USE
        );
    }
}
