//! The `DNATEntry` kind's external client. The entry is named by its ID (`fwd-...`, see
//! `nat_tables`) and observed by that ID only (`DescribeForwardTableEntries` in the forward
//! table of the object's gateway): an object without an external name has no entry yet, so an
//! entry someone else made is never adopted; a mapping that clashes with another entry is
//! refused (`DuplicateNATEntry`). `CreateForwardEntry` carries a ClientToken from the object;
//! the mapping (the bound EIP's address or `externalIp`, the ports, the protocol, the
//! instance's private address or `internalIp`) and the name change in place
//! (`ModifyForwardEntry`), a change made elsewhere reverted at the next poll;
//! `DeleteForwardEntry` when the object goes.

use alibaba_sdk::Error;
use alibaba_sdk::ecs::DescribeInstancesRequest;
use alibaba_sdk::vpc::{ForwardEntry, ForwardMapping, nat_entry_status};
use ferroplane_apis::alibabacloud::{
    DNATEntry, DNATEntryObservation, DNATEntryParameters, DNATProtocol,
};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, RetryClass, Update,
};

use super::nat_tables::{EntryRef, Table, waiting};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::non_empty;
use crate::reasons::{DUPLICATE_NAT_ENTRY, EIP_NOT_ON_GATEWAY, NAT_TABLE_BUSY};

const TABLE_NOT_FOUND: &str = "InvalidForwardTableId.NotFound";
const ENTRY_NOT_FOUND: &str = "InvalidForwardEntryId.NotFound";
/// The table has an entry `Pending` or `Modifying` (the API's spelling).
const TABLE_BUSY: &str = "IncorretForwardEntryStatus";

/// The mapping the spec asks for, its addresses resolved.
fn mapping(p: &DNATEntryParameters, external_ip: String, internal_ip: String) -> ForwardMapping {
    let port = |port: Option<i32>| match p.ip_protocol {
        DNATProtocol::Any => "Any".to_owned(),
        _ => port.map(|p| p.to_string()).unwrap_or_default(),
    };
    ForwardMapping {
        external_ip,
        external_port: port(p.external_port),
        ip_protocol: p.ip_protocol.as_str().to_owned(),
        internal_ip,
        internal_port: port(p.internal_port),
    }
}

fn mapping_of(found: &ForwardEntry) -> ForwardMapping {
    ForwardMapping {
        external_ip: found.external_ip.clone(),
        external_port: found.external_port.clone(),
        ip_protocol: found.ip_protocol.clone(),
        internal_ip: found.internal_ip.clone(),
        internal_port: found.internal_port.clone(),
    }
}

/// What differs: the whole mapping (ModifyForwardEntry takes it whole) and the name.
#[derive(Debug, Default, PartialEq, Eq)]
struct EntryDiff {
    mapping: Option<ForwardMapping>,
    name: Option<String>,
    lines: Vec<String>,
}

fn diff(p: &DNATEntryParameters, want: &ForwardMapping, found: &ForwardEntry) -> EntryDiff {
    let have = mapping_of(found);
    let mut d = EntryDiff::default();
    let fields = [
        ("externalIp", &want.external_ip, &have.external_ip),
        ("externalPort", &want.external_port, &have.external_port),
        ("ipProtocol", &want.ip_protocol, &have.ip_protocol),
        ("internalIp", &want.internal_ip, &have.internal_ip),
        ("internalPort", &want.internal_port, &have.internal_port),
    ];
    for (field, want, have) in fields {
        if !want.eq_ignore_ascii_case(have) {
            d.lines.push(format!("{field}: {have:?} → {want:?}"));
        }
    }
    if !d.lines.is_empty() {
        d.mapping = Some(want.clone());
    }
    if let Some(name) = p.name.as_deref().filter(|n| *n != found.forward_entry_name) {
        d.lines
            .push(format!("name: {:?} → {name:?}", found.forward_entry_name));
        d.name = Some(name.to_owned());
    }
    d
}

fn observed(
    name: &EntryRef,
    d: &EntryDiff,
    found: &ForwardEntry,
) -> Result<Observation, ReconcileError> {
    let status = serde_json::json!({
        "atProvider": DNATEntryObservation {
            forward_entry_id: non_empty(&found.forward_entry_id),
            forward_table_id: Some(name.table.clone()),
            external_ip: non_empty(&found.external_ip),
            external_port: non_empty(&found.external_port),
            internal_ip: non_empty(&found.internal_ip),
            internal_port: non_empty(&found.internal_port),
            status: non_empty(&found.status),
        }
    });
    let details = ConnectionDetails::new()
        .with("forwardEntryId", found.forward_entry_id.as_bytes())
        .with("forwardTableId", name.table.as_bytes())
        .with("externalIp", found.external_ip.as_bytes())
        .with("externalPort", found.external_port.as_bytes());
    let observation = Observation::found(&name.entry)
        .with_status(status)?
        .with_connection_details(details);
    Ok(match found.status.as_str() {
        nat_entry_status::AVAILABLE => {
            let observation = observation.with_readiness(Readiness::Available);
            if d.lines.is_empty() {
                observation
            } else {
                observation.with_diff(d.lines.join("; "))
            }
        }
        nat_entry_status::PENDING => observation
            .with_readiness(Readiness::Creating)
            .in_transition(),
        nat_entry_status::DELETING => observation.with_readiness(Readiness::Unavailable(
            "the DNAT entry is being deleted".into(),
        )),
        other => observation
            .with_readiness(Readiness::Unavailable(format!("the DNAT entry is {other}")))
            .in_transition(),
    })
}

/// The refusals of a create or modify that are answers, not failures.
fn entry_refusal(e: &Error) -> Option<ReconcileError> {
    Some(match e.code()? {
        "OperationUnsupported.ForwardEntry" => ReconcileError::new(
            DUPLICATE_NAT_ENTRY,
            format!(
                "another entry of the forward table already forwards this external address, port and protocol, or to this internal address, port and protocol; ferroplane never adopts it: delete that entry, or change the mapping [{e}]"
            ),
            RetryClass::UntilSpecChanges,
        ),
        "InvalidIp.NotInNatgw" => ReconcileError::new(
            EIP_NOT_ON_GATEWAY,
            format!(
                "the external address is not an EIP bound to the NAT gateway: bind it with an EIPAssociation (instanceType: Nat) [{e}]"
            ),
            RetryClass::WaitForDependency,
        ),
        TABLE_BUSY => ReconcileError::new(
            NAT_TABLE_BUSY,
            "another entry of the forward table is Pending or Modifying; ferroplane retries once it is Available",
            RetryClass::Backoff,
        ),
        _ => return None,
    })
}

impl CloudClients {
    async fn find_forward_entry(
        &self,
        name: &EntryRef,
    ) -> Result<Option<ForwardEntry>, ReconcileError> {
        match self
            .raw(
                "DescribeForwardTableEntries",
                self.region
                    .vpc
                    .describe_forward_entries(&name.table, Some(&name.entry)),
            )
            .await
        {
            Ok(found) => Ok(found.into_iter().find(|e| e.forward_entry_id == name.entry)),
            // The gateway (and its table) is gone, and its entries with it.
            Err(e) if e.code() == Some(TABLE_NOT_FOUND) => Ok(None),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// The private address of ECS instance `id`.
    async fn instance_private_ip(&self, id: &str) -> Result<String, ReconcileError> {
        let request = DescribeInstancesRequest {
            instance_ids: vec![id.to_owned()],
            ..DescribeInstancesRequest::default()
        };
        let found = self
            .call(
                "DescribeInstances",
                self.region.ecs.describe_instances(&request),
            )
            .await?;
        found
            .iter()
            .find(|i| i.instance_id == id)
            .and_then(|i| i.private_ip())
            .map(str::to_owned)
            .ok_or_else(|| {
                waiting(format!(
                    "ECS instance {id} does not exist or has no private address yet: create it (an ECSInstance object) or fix ecsInstanceId"
                ))
            })
    }

    /// The mapping the spec wants on `gateway`, its addresses resolved.
    async fn wanted_mapping(
        &self,
        p: &DNATEntryParameters,
        gateway: &str,
    ) -> Result<ForwardMapping, ReconcileError> {
        let external = match (&p.eip_id, &p.external_ip) {
            (Some(eip), _) => self.gateway_eip_address(eip, gateway).await?,
            (None, Some(ip)) => ip.clone(),
            (None, None) => {
                return Err(waiting(
                    "the EIP is not known yet: set eipId, eipIdRef or eipIdSelector, or externalIp"
                        .into(),
                ));
            }
        };
        let internal = match (&p.ecs_instance_id, &p.internal_ip) {
            (Some(instance), _) => self.instance_private_ip(instance).await?,
            (None, Some(ip)) => ip.clone(),
            (None, None) => {
                return Err(waiting("the instance is not known yet: set ecsInstanceId, ecsInstanceIdRef or ecsInstanceIdSelector, or internalIp".into()));
            }
        };
        Ok(mapping(p, external, internal))
    }

    fn refused(&self, e: &Error) -> ReconcileError {
        entry_refusal(e).unwrap_or_else(|| self.error(e))
    }
}

impl ExternalClient<DNATEntry> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns entry IDs: a named entry that is not found is never made again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &DNATEntry,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let gateway = mr.spec.for_provider.nat_gateway_id.as_deref();
        let Some(name) = self.entry_ref(ext, gateway, Table::Forward).await? else {
            return Ok(Observation::missing());
        };
        let Some(found) = self.find_forward_entry(&name).await? else {
            return Ok(Observation::missing());
        };
        let p = &mr.spec.for_provider;
        let settled = found.status == nat_entry_status::AVAILABLE;
        let d = match (&p.nat_gateway_id, mr.metadata.deletion_timestamp.is_some()) {
            (Some(gateway), false) if settled => {
                let want = self.wanted_mapping(p, gateway).await?;
                diff(p, &want, &found)
            }
            _ => EntryDiff::default(),
        };
        observed(&name, &d, &found)
    }

    async fn create(
        &self,
        mr: &DNATEntry,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let gateway = self.entry_gateway(p.nat_gateway_id.as_deref()).await?;
        let want = self.wanted_mapping(p, &gateway.nat_gateway_id).await?;
        let table = gateway.forward_table_id().to_owned();
        let entry = self
            .raw(
                "CreateForwardEntry",
                self.region.vpc.create_forward_entry(
                    &table,
                    &want,
                    p.name.as_deref(),
                    Some(key.token()),
                ),
            )
            .await
            .map_err(|e| self.refused(&e))?;
        Ok(Creation::new(entry))
    }

    async fn update(&self, mr: &DNATEntry, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let Some(gateway) = &mr.spec.for_provider.nat_gateway_id else {
            return Ok(Update::done());
        };
        let Some(name) = self.entry_ref(ext, Some(gateway), Table::Forward).await? else {
            return Ok(Update::done());
        };
        let Some(found) = self.find_forward_entry(&name).await? else {
            return Ok(Update::done());
        };
        let p = &mr.spec.for_provider;
        let want = self.wanted_mapping(p, gateway).await?;
        let d = diff(p, &want, &found);
        if d.lines.is_empty() {
            return Ok(Update::done());
        }
        self.raw(
            "ModifyForwardEntry",
            self.region.vpc.modify_forward_entry(
                &name.table,
                &name.entry,
                d.mapping.as_ref(),
                d.name.as_deref(),
            ),
        )
        .await
        .map_err(|e| self.refused(&e))?;
        Ok(Update::done())
    }

    async fn delete(&self, mr: &DNATEntry, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let gateway = mr.spec.for_provider.nat_gateway_id.as_deref();
        let Some(name) = self.entry_ref(ext, gateway, Table::Forward).await? else {
            return Ok(Deletion::Gone);
        };
        let Some(found) = self.find_forward_entry(&name).await? else {
            return Ok(Deletion::Gone);
        };
        if found.status == nat_entry_status::DELETING {
            return Ok(Deletion::InProgress);
        }
        match self
            .raw(
                "DeleteForwardEntry",
                self.region
                    .vpc
                    .delete_forward_entry(&name.table, &name.entry),
            )
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if matches!(e.code(), Some(ENTRY_NOT_FOUND | TABLE_NOT_FOUND)) => {
                Ok(Deletion::Gone)
            }
            Err(e) if e.code() == Some(TABLE_BUSY) => Ok(Deletion::Waiting(format!(
                "DNAT entry {} waits: an entry of table {} is Pending or Modifying; it is deleted once they settle",
                name.entry, name.table
            ))),
            Err(e) => Err(self.error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(protocol: DNATProtocol) -> DNATEntryParameters {
        DNATEntryParameters {
            region_id: "cn-beijing".into(),
            nat_gateway_id: None,
            nat_gateway_id_ref: None,
            nat_gateway_id_selector: None,
            eip_id: None,
            eip_id_ref: None,
            eip_id_selector: None,
            external_ip: Some("39.96.0.1".into()),
            external_port: Some(8022),
            ip_protocol: protocol,
            internal_ip: Some("10.0.1.5".into()),
            ecs_instance_id: None,
            ecs_instance_id_ref: None,
            ecs_instance_id_selector: None,
            internal_port: Some(22),
            name: Some("ssh".into()),
        }
    }

    fn cloud() -> ForwardEntry {
        ForwardEntry {
            forward_entry_id: "fwd-1".into(),
            external_ip: "39.96.0.1".into(),
            external_port: "8022".into(),
            ip_protocol: "TCP".into(),
            internal_ip: "10.0.1.5".into(),
            internal_port: "22".into(),
            forward_entry_name: "ssh".into(),
            status: "Available".into(),
            ..ForwardEntry::default()
        }
    }

    #[test]
    fn the_spec_maps_to_the_api_and_an_ip_mapping_has_no_ports() {
        let p = spec(DNATProtocol::Tcp);
        let m = mapping(&p, "39.96.0.1".into(), "10.0.1.5".into());
        assert_eq!(
            (
                m.ip_protocol.as_str(),
                m.external_port.as_str(),
                m.internal_port.as_str()
            ),
            ("TCP", "8022", "22")
        );
        let any = mapping(
            &spec(DNATProtocol::Any),
            "39.96.0.1".into(),
            "10.0.1.5".into(),
        );
        assert_eq!(
            (any.external_port.as_str(), any.ip_protocol.as_str()),
            ("Any", "Any")
        );
    }

    #[test]
    fn each_in_place_field_differs_on_its_own_and_the_mapping_is_sent_whole() {
        let p = spec(DNATProtocol::Tcp);
        let want = mapping(&p, "39.96.0.1".into(), "10.0.1.5".into());
        assert!(diff(&p, &want, &cloud()).lines.is_empty());
        let drifted = [
            ForwardEntry {
                external_ip: "39.96.0.2".into(),
                ..cloud()
            },
            ForwardEntry {
                external_port: "80".into(),
                ..cloud()
            },
            ForwardEntry {
                ip_protocol: "UDP".into(),
                ..cloud()
            },
            ForwardEntry {
                internal_ip: "10.0.1.6".into(),
                ..cloud()
            },
            ForwardEntry {
                internal_port: "23".into(),
                ..cloud()
            },
        ];
        for found in drifted {
            let d = diff(&p, &want, &found);
            assert_eq!(d.lines.len(), 1, "{found:?}: {:?}", d.lines);
            assert_eq!(d.mapping.as_ref(), Some(&want));
            assert_eq!(d.name, None);
        }
        let renamed = ForwardEntry {
            forward_entry_name: "console".into(),
            ..cloud()
        };
        let d = diff(&p, &want, &renamed);
        assert_eq!((d.mapping, d.name.as_deref()), (None, Some("ssh")));
        let o = observed(
            &EntryRef {
                table: "ftb-1".into(),
                entry: "fwd-1".into(),
            },
            &diff(&p, &want, &renamed),
            &renamed,
        )
        .unwrap();
        assert!(matches!(o.up_to_date, ferroplane_runtime::UpToDate::No(_)));
    }

    #[test]
    fn a_clashing_mapping_is_refused_with_its_reason() {
        let e = |code: &str| {
            Error::from(alibaba_sdk::ApiError {
                action: "CreateForwardEntry".into(),
                code: code.into(),
                message: String::new(),
                request_id: None,
                http_status: 400,
                recommend: None,
                retry_after: None,
            })
        };
        let reason = |code: &str| entry_refusal(&e(code)).map(|r| r.reason().to_owned());
        assert_eq!(
            reason("OperationUnsupported.ForwardEntry").as_deref(),
            Some(DUPLICATE_NAT_ENTRY)
        );
        assert_eq!(
            reason("InvalidIp.NotInNatgw").as_deref(),
            Some(EIP_NOT_ON_GATEWAY)
        );
        assert_eq!(reason(TABLE_BUSY).as_deref(), Some(NAT_TABLE_BUSY));
        assert_eq!(reason("InternalError"), None);
    }
}
