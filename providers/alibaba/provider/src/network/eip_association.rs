//! The `EIPAssociation` kind's external client. The association is named
//! `<allocationId>:<instanceId>` (the EIP and the instance it binds) and observed through the
//! EIP (`DescribeEipAddresses`): it exists while the EIP is associated with that instance.
//! `AssociateEipAddress` makes it (with a ClientToken from the object), `UnassociateEipAddress`
//! undoes it. The instance is an ECS instance or, with `instanceType: Nat`, a NAT gateway or,
//! with `instanceType: NetworkInterface`, one private IP of a network interface (`privateIpAddress`;
//! unset, the interface's primary one, looked up with DescribeNetworkInterfaces and
//! late-initialized from the EIP). An association undone elsewhere is made again at the next
//! poll; an EIP associated with another resource (or another private IP) is never taken from it
//! (`EIPInUse`), and deleting never unassociates an EIP from a resource this object does not
//! name.

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
use crate::reasons::{EIP_IN_USE, INVALID_SPEC, NETWORK_INTERFACE_NOT_FOUND};

/// The VPC API's code for an EIP that does not exist.
const EIP_NOT_FOUND: &str = "InvalidAllocationId.NotFound";

/// What one association binds.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pair {
    allocation_id: String,
    instance_id: String,
    instance_type: &'static str,
    /// The network interface's private IP the EIP maps to, when the spec names it.
    private_ip: Option<String>,
}

impl Pair {
    /// The association's external name.
    fn name(&self) -> String {
        format!("{}:{}", self.allocation_id, self.instance_id)
    }

    /// From an external name `<allocationId>:<instanceId>`.
    fn parse(name: &str, instance_type: &'static str, private_ip: Option<&str>) -> Option<Self> {
        let (allocation_id, instance_id) = name.split_once(':')?;
        (!allocation_id.is_empty() && !instance_id.is_empty()).then(|| Self {
            allocation_id: allocation_id.to_owned(),
            instance_id: instance_id.to_owned(),
            instance_type,
            private_ip: private_ip.map(str::to_owned),
        })
    }

    fn is_network_interface(&self) -> bool {
        self.instance_type == EIPAssociationInstanceType::NetworkInterface.as_str()
    }

    /// The call's target, with the private IP `private_ip` for a network interface.
    fn target<'a>(&'a self, private_ip: Option<&'a str>) -> EipTarget<'a> {
        EipTarget {
            allocation_id: &self.allocation_id,
            instance_id: &self.instance_id,
            instance_type: self.instance_type,
            private_ip_address: private_ip,
        }
    }

    /// Whether `eip` is associated (or being associated or unassociated) with this pair's
    /// instance (and, for a network interface whose private IP the spec names, that IP).
    fn bound(&self, eip: &EipAddress) -> bool {
        eip.instance_id == self.instance_id
            && (eip.instance_type.is_empty() || eip.instance_type == self.instance_type)
            && self
                .private_ip
                .as_deref()
                .is_none_or(|ip| eip.private_ip_address.is_empty() || eip.private_ip_address == ip)
    }
}

fn instance_type(mr: &EIPAssociation) -> &'static str {
    mr.spec
        .for_provider
        .instance_type
        .unwrap_or(EIPAssociationInstanceType::EcsInstance)
        .as_str()
}

/// The private IP the spec names for a network interface.
fn spec_private_ip(mr: &EIPAssociation) -> Option<&str> {
    mr.spec.for_provider.private_ip_address.as_deref()
}

/// The pair the spec asks for; both IDs are set once the references are resolved.
fn wanted(mr: &EIPAssociation) -> Result<Pair, ReconcileError> {
    let p = &mr.spec.for_provider;
    match (&p.allocation_id, &p.instance_id) {
        (Some(allocation_id), Some(instance_id)) => Ok(Pair {
            allocation_id: allocation_id.clone(),
            instance_id: instance_id.clone(),
            instance_type: instance_type(mr),
            private_ip: spec_private_ip(mr).map(str::to_owned),
        }),
        _ => Err(ReconcileError::dependency(
            REFERENCE_NOT_RESOLVED,
            "the EIP or the instance is not known yet: set allocationId / allocationIdRef / allocationIdSelector and instanceId / instanceIdRef / instanceIdSelector (natGatewayIdRef / natGatewayIdSelector for a NAT gateway, networkInterfaceIdRef / networkInterfaceIdSelector for a network interface)",
        )),
    }
}

/// The pair to observe: the one the external name records, else the spec's.
fn observed_pair(mr: &EIPAssociation, ext: &ExternalRef) -> Result<Pair, ReconcileError> {
    let Some(name) = ext.name() else {
        return wanted(mr);
    };
    Pair::parse(name, instance_type(mr), spec_private_ip(mr)).ok_or_else(|| {
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

/// What `eip` is associated with, for messages: `NetworkInterface eni-1 (10.0.0.5)`.
fn bound_to(eip: &EipAddress) -> String {
    if eip.private_ip_address.is_empty() {
        format!("{} {}", eip.instance_type, eip.instance_id)
    } else {
        format!(
            "{} {} ({})",
            eip.instance_type, eip.instance_id, eip.private_ip_address
        )
    }
}

/// What `pair` names, for messages.
fn named_target(pair: &Pair) -> String {
    match &pair.private_ip {
        Some(ip) => format!("{} ({ip})", pair.instance_id),
        None => pair.instance_id.clone(),
    }
}

fn in_use_elsewhere(pair: &Pair, eip: &EipAddress) -> ReconcileError {
    ReconcileError::new(
        EIP_IN_USE,
        format!(
            "EIP {} is associated with {}, not with {}: unassociate it there first, or name another EIP",
            pair.allocation_id,
            bound_to(eip),
            named_target(pair)
        ),
        ferroplane_runtime::RetryClass::Backoff,
    )
}

/// The refusal of a create or update of `pair` whose EIP serves another resource (never taken
/// from it).
fn taken_elsewhere(pair: &Pair, eip: &EipAddress) -> Option<ReconcileError> {
    (!eip.instance_id.is_empty() && !pair.bound(eip)).then(|| in_use_elsewhere(pair, eip))
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
            private_ip_address: non_empty(&eip.private_ip_address).filter(|_| bound),
            status: non_empty(&eip.status),
        }
    });
    let mut observation = Observation::found(pair.name())
        .with_status(status)?
        .with_connection_details(details(pair, &eip.ip_address));
    if bound && pair.is_network_interface() && !eip.private_ip_address.is_empty() {
        observation = observation
            .with_late_init(serde_json::json!({"privateIpAddress": eip.private_ip_address}))?;
    }
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
                "EIP {} is associated with {} instead of {}",
                pair.allocation_id,
                bound_to(eip),
                named_target(pair)
            )))
            .with_diff(format!(
                "EIP {} is associated with {} instead",
                pair.allocation_id,
                bound_to(eip)
            )),
    };
    Ok(observation)
}

impl CloudClients {
    /// What the next create or update of `mr` refuses before any write (`EIPInUse`: its EIP
    /// serves another resource), read as they read it: `ferroplane plan`'s check.
    pub(crate) async fn association_refusal(
        &self,
        mr: &EIPAssociation,
        ext: &ExternalRef,
    ) -> Result<Option<ReconcileError>, ReconcileError> {
        let pair = observed_pair(mr, ext)?;
        let eip = self.find_pair_eip(&pair).await?;
        Ok(eip.and_then(|eip| taken_elsewhere(&pair, &eip)))
    }

    async fn find_pair_eip(&self, pair: &Pair) -> Result<Option<EipAddress>, ReconcileError> {
        // By ID only: the UID search of `find_eip` is never used, the ID is always known.
        self.find_eip(Some(&pair.allocation_id), "").await
    }

    async fn associate(&self, pair: &Pair, token: Option<&str>) -> Result<(), ReconcileError> {
        let private_ip = match (&pair.private_ip, pair.is_network_interface()) {
            (Some(ip), true) => Some(ip.clone()),
            (None, true) => Some(self.primary_private_ip(&pair.instance_id).await?),
            (_, false) => None,
        };
        self.call(
            "AssociateEipAddress",
            self.region
                .vpc
                .associate_eip_address(&pair.target(private_ip.as_deref()), token),
        )
        .await
        .map(drop)
    }

    /// The primary private IP of the network interface `eni` (AssociateEipAddress requires a
    /// private IP for a network interface; the spec's default is the primary one).
    async fn primary_private_ip(&self, eni: &str) -> Result<String, ReconcileError> {
        let found = self
            .call(
                "DescribeNetworkInterfaces",
                self.region
                    .ecs
                    .describe_network_interfaces(&[eni.to_owned()]),
            )
            .await?;
        found
            .into_iter()
            .find(|n| n.network_interface_id == eni)
            .map(|n| n.private_ip_address)
            .filter(|ip| !ip.is_empty())
            .ok_or_else(|| {
                ReconcileError::dependency(
                    NETWORK_INTERFACE_NOT_FOUND,
                    format!(
                        "network interface {eni} is not listed in this region: create it, or name another"
                    ),
                )
            })
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
            && let Some(refusal) = taken_elsewhere(&pair, &eip)
        {
            return Err(refusal);
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
        if let Some(refusal) = taken_elsewhere(&pair, &eip) {
            return Err(refusal);
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
        let Some(pair) = Pair::parse(name, instance_type(mr), spec_private_ip(mr)) else {
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
                self.region.vpc.unassociate_eip_address(
                    &pair.target(non_empty(&eip.private_ip_address).as_deref()),
                    None,
                ),
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
            private_ip: None,
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
        assert_eq!(
            Pair::parse(&pair().name(), "EcsInstance", None),
            Some(pair())
        );
        assert_eq!(Pair::parse("eip-1", "EcsInstance", None), None);
        assert_eq!(Pair::parse(":i-1", "EcsInstance", None), None);
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

    #[test]
    fn a_network_interfaces_association_is_its_private_ip() {
        let on = |ip: &str| EipAddress {
            instance_id: "eni-1".into(),
            instance_type: "NetworkInterface".into(),
            private_ip_address: ip.into(),
            ..eip("InUse", "eni-1")
        };
        let mut p = Pair {
            instance_id: "eni-1".into(),
            instance_type: "NetworkInterface",
            ..pair()
        };
        // No private IP in the spec yet: the interface's, whichever IP (the integration tests
        // see it written back into the spec).
        let found = observed(&p, &on("10.0.0.5"), false, false).unwrap();
        assert_eq!(found.readiness, Readiness::Available);
        // The spec's private IP: another IP of the interface is another resource.
        p.private_ip = Some("10.0.0.6".into());
        assert!(!p.bound(&on("10.0.0.5")));
        assert!(p.bound(&on("10.0.0.6")));
        let moved = observed(&p, &on("10.0.0.5"), true, false).unwrap();
        assert!(matches!(
            moved.up_to_date,
            ferroplane_runtime::UpToDate::No(_)
        ));
        assert!(
            in_use_elsewhere(&p, &on("10.0.0.5"))
                .to_string()
                .contains("NetworkInterface eni-1 (10.0.0.5), not with eni-1 (10.0.0.6)")
        );
    }
}
