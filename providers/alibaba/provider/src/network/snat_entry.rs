//! The `SNATEntry` kind's external client. The entry is named by its ID (`snat-...`, see
//! `nat_tables`) and observed by that ID only (`DescribeSnatTableEntries` in the SNAT table of
//! the object's gateway): an object
//! without an external name has no entry yet, so an entry someone else made is never adopted;
//! creating one for a source the table already serves is refused (`DuplicateNATEntry`).
//! `CreateSnatEntry` carries a ClientToken from the object; the address (the bound EIP's, or
//! `snatIp`) and the name change in place (`ModifySnatEntry`), a change made elsewhere reverted
//! at the next poll; `DeleteSnatEntry` when the object goes.

use alibaba_sdk::Error;
use alibaba_sdk::vpc::{CreateSnatEntryRequest, SnatEntry, nat_entry_status};
use ferroplane_apis::alibabacloud::{SNATEntry, SNATEntryObservation, SNATEntryParameters};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, RetryClass, Update,
};

use super::nat_tables::{EntryRef, Table, waiting};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::non_empty;
use crate::reasons::{DUPLICATE_NAT_ENTRY, EIP_NOT_ON_GATEWAY, NAT_TABLE_BUSY};

const TABLE_NOT_FOUND: &str = "InvalidSnatTableId.NotFound";
const ENTRY_NOT_FOUND: &str = "InvalidSnatEntryId.NotFound";
/// The table has an entry `Pending` or `Modifying` (the API's spelling).
const TABLE_BUSY: &str = "IncorretSnatEntryStatus";

/// What differs: the address and the name the spec wants, each only when it differs.
#[derive(Debug, Default, PartialEq, Eq)]
struct EntryDiff {
    snat_ip: Option<String>,
    name: Option<String>,
}

impl EntryDiff {
    fn lines(&self, found: &SnatEntry) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(ip) = &self.snat_ip {
            lines.push(format!("snatIp: {:?} → {ip:?}", found.snat_ip));
        }
        if let Some(name) = &self.name {
            lines.push(format!("name: {:?} → {name:?}", found.snat_entry_name));
        }
        lines
    }
}

/// `want_ip`: the EIP's address or `snatIp`, when the spec manages the address.
fn diff(p: &SNATEntryParameters, want_ip: Option<&str>, found: &SnatEntry) -> EntryDiff {
    EntryDiff {
        snat_ip: want_ip.filter(|ip| *ip != found.snat_ip).map(str::to_owned),
        name: p
            .name
            .as_deref()
            .filter(|n| *n != found.snat_entry_name)
            .map(str::to_owned),
    }
}

fn observed(
    name: &EntryRef,
    diff: &EntryDiff,
    found: &SnatEntry,
) -> Result<Observation, ReconcileError> {
    let status = serde_json::json!({
        "atProvider": SNATEntryObservation {
            snat_entry_id: non_empty(&found.snat_entry_id),
            snat_table_id: Some(name.table.clone()),
            source_cidr: non_empty(&found.source_cidr),
            snat_ip: non_empty(&found.snat_ip),
            status: non_empty(&found.status),
        }
    });
    let details = ConnectionDetails::new()
        .with("snatEntryId", found.snat_entry_id.as_bytes())
        .with("snatTableId", name.table.as_bytes())
        .with("snatIp", found.snat_ip.as_bytes());
    let observation = Observation::found(&name.entry)
        .with_status(status)?
        .with_connection_details(details);
    Ok(match found.status.as_str() {
        nat_entry_status::AVAILABLE => {
            let lines = diff.lines(found);
            let observation = observation.with_readiness(Readiness::Available);
            if lines.is_empty() {
                observation
            } else {
                observation.with_diff(lines.join("; "))
            }
        }
        nat_entry_status::PENDING => observation
            .with_readiness(Readiness::Creating)
            .in_transition(),
        nat_entry_status::DELETING => observation.with_readiness(Readiness::Unavailable(
            "the SNAT entry is being deleted".into(),
        )),
        other => observation
            .with_readiness(Readiness::Unavailable(format!("the SNAT entry is {other}")))
            .in_transition(),
    })
}

impl CloudClients {
    /// The entry `name` names, if it exists.
    async fn find_snat_entry(&self, name: &EntryRef) -> Result<Option<SnatEntry>, ReconcileError> {
        match self
            .raw(
                "DescribeSnatTableEntries",
                self.region
                    .vpc
                    .describe_snat_entries(&name.table, Some(&name.entry)),
            )
            .await
        {
            Ok(found) => Ok(found.into_iter().find(|e| e.snat_entry_id == name.entry)),
            // The gateway (and its table) is gone, and its entries with it.
            Err(e) if e.code() == Some(TABLE_NOT_FOUND) => Ok(None),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// The address the spec wants: the bound EIP's, or `snatIp`.
    async fn wanted_snat_ip(
        &self,
        p: &SNATEntryParameters,
        gateway: &str,
    ) -> Result<Option<String>, ReconcileError> {
        match &p.eip_id {
            Some(eip) => self.gateway_eip_address(eip, gateway).await.map(Some),
            None => Ok(p.snat_ip.clone()),
        }
    }
}

/// The refusals of a create or modify that are answers, not failures.
fn entry_refusal(e: &Error) -> Option<ReconcileError> {
    Some(match e.code()? {
        "Forbidden.SourceVSwitchId.Duplicated" => ReconcileError::new(
            DUPLICATE_NAT_ENTRY,
            format!(
                "the SNAT table already has an entry for this source, which this object did not make; ferroplane never adopts it: delete that entry, or change the source [{e}]"
            ),
            RetryClass::UntilSpecChanges,
        ),
        "InvalidSnatIp.NotFound" => ReconcileError::new(
            EIP_NOT_ON_GATEWAY,
            format!(
                "the address is not an EIP bound to the NAT gateway: bind it with an EIPAssociation (instanceType: Nat) [{e}]"
            ),
            RetryClass::WaitForDependency,
        ),
        TABLE_BUSY => ReconcileError::new(
            NAT_TABLE_BUSY,
            "another entry of the SNAT table is Pending or Modifying; ferroplane retries once it is Available",
            RetryClass::Backoff,
        ),
        _ => return None,
    })
}

fn refused(clients: &CloudClients, e: &Error) -> ReconcileError {
    entry_refusal(e).unwrap_or_else(|| clients.error(e))
}

impl ExternalClient<SNATEntry> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns entry IDs: a named entry that is not found is never made again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &SNATEntry,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let gateway = mr.spec.for_provider.nat_gateway_id.as_deref();
        let Some(name) = self.entry_ref(ext, gateway, Table::Snat).await? else {
            return Ok(Observation::missing());
        };
        let Some(found) = self.find_snat_entry(&name).await? else {
            return Ok(Observation::missing());
        };
        let p = &mr.spec.for_provider;
        let deleting = mr.metadata.deletion_timestamp.is_some();
        let want_ip = match (&p.nat_gateway_id, deleting) {
            (Some(gateway), false) if found.status == nat_entry_status::AVAILABLE => {
                self.wanted_snat_ip(p, gateway).await?
            }
            _ => None,
        };
        observed(&name, &diff(p, want_ip.as_deref(), &found), &found)
    }

    async fn create(
        &self,
        mr: &SNATEntry,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let gateway = self.entry_gateway(p.nat_gateway_id.as_deref()).await?;
        if p.source_cidr.is_none() && p.source_v_switch_id.is_none() {
            return Err(waiting(
                "the source vSwitch is not known yet: set sourceVSwitchId, sourceVSwitchIdRef or sourceVSwitchIdSelector, or sourceCIDR".into(),
            ));
        }
        let has_eip = p.eip_id_ref.is_some() || p.eip_id_selector.is_some();
        if has_eip && p.eip_id.is_none() {
            return Err(waiting(
                "the EIP is not known yet: set eipId, eipIdRef or eipIdSelector".into(),
            ));
        }
        let snat_ip = self.wanted_snat_ip(p, &gateway.nat_gateway_id).await?;
        let table = gateway.snat_table_id().to_owned();
        let request = CreateSnatEntryRequest {
            snat_table_id: table.clone(),
            source_vswitch_id: p.source_v_switch_id.clone(),
            source_cidr: p.source_cidr.clone(),
            snat_ip,
            name: p.name.clone(),
            client_token: Some(key.token().to_owned()),
        };
        let entry = self
            .raw(
                "CreateSnatEntry",
                self.region.vpc.create_snat_entry(&request),
            )
            .await
            .map_err(|e| refused(self, &e))?;
        Ok(Creation::new(entry))
    }

    async fn update(&self, mr: &SNATEntry, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let gateway = mr.spec.for_provider.nat_gateway_id.as_deref();
        let Some(name) = self.entry_ref(ext, gateway, Table::Snat).await? else {
            return Ok(Update::done());
        };
        let Some(found) = self.find_snat_entry(&name).await? else {
            return Ok(Update::done());
        };
        let p = &mr.spec.for_provider;
        let want_ip = match &p.nat_gateway_id {
            Some(gateway) => self.wanted_snat_ip(p, gateway).await?,
            None => None,
        };
        let d = diff(p, want_ip.as_deref(), &found);
        if d == EntryDiff::default() {
            return Ok(Update::done());
        }
        self.raw(
            "ModifySnatEntry",
            self.region.vpc.modify_snat_entry(
                &name.table,
                &name.entry,
                d.snat_ip.as_deref(),
                d.name.as_deref(),
            ),
        )
        .await
        .map_err(|e| refused(self, &e))?;
        Ok(Update::done())
    }

    async fn delete(&self, mr: &SNATEntry, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let gateway = mr.spec.for_provider.nat_gateway_id.as_deref();
        let Some(name) = self.entry_ref(ext, gateway, Table::Snat).await? else {
            return Ok(Deletion::Gone);
        };
        let Some(found) = self.find_snat_entry(&name).await? else {
            return Ok(Deletion::Gone);
        };
        if found.status == nat_entry_status::DELETING {
            return Ok(Deletion::InProgress);
        }
        match self
            .raw(
                "DeleteSnatEntry",
                self.region.vpc.delete_snat_entry(&name.table, &name.entry),
            )
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if matches!(e.code(), Some(ENTRY_NOT_FOUND | TABLE_NOT_FOUND)) => {
                Ok(Deletion::Gone)
            }
            Err(e) if e.code() == Some(TABLE_BUSY) => Ok(Deletion::Waiting(format!(
                "SNAT entry {} waits: an entry of table {} is Pending or Modifying; it is deleted once they settle",
                name.entry, name.table
            ))),
            Err(e) => Err(self.error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloud() -> SnatEntry {
        SnatEntry {
            snat_entry_id: "snat-1".into(),
            snat_table_id: "stb-1".into(),
            source_cidr: "10.0.1.0/24".into(),
            snat_ip: "39.96.0.1".into(),
            snat_entry_name: "out".into(),
            status: "Available".into(),
            ..SnatEntry::default()
        }
    }

    fn spec() -> SNATEntryParameters {
        SNATEntryParameters {
            region_id: "cn-beijing".into(),
            name: Some("out".into()),
            ..SNATEntryParameters::default()
        }
    }

    fn name() -> EntryRef {
        EntryRef {
            table: "stb-1".into(),
            entry: "snat-1".into(),
        }
    }

    #[test]
    fn the_address_and_the_name_differ_on_their_own() {
        assert_eq!(
            diff(&spec(), Some("39.96.0.1"), &cloud()),
            EntryDiff::default()
        );
        let moved = diff(&spec(), Some("39.96.0.2"), &cloud());
        assert_eq!(moved.snat_ip.as_deref(), Some("39.96.0.2"));
        assert_eq!(moved.name, None);
        let renamed = SnatEntry {
            snat_entry_name: "console".into(),
            ..cloud()
        };
        let d = diff(&spec(), None, &renamed);
        assert_eq!((d.snat_ip, d.name.as_deref()), (None, Some("out")));
    }

    #[test]
    fn an_entry_is_ready_when_available_and_planned_back_only_then() {
        let moved = diff(&spec(), Some("39.96.0.2"), &cloud());
        let o = observed(&name(), &moved, &cloud()).unwrap();
        assert_eq!(o.readiness, Readiness::Available);
        assert!(matches!(o.up_to_date, ferroplane_runtime::UpToDate::No(_)));
        assert_eq!(o.external_name.as_deref(), Some("snat-1"));
        let pending = SnatEntry {
            status: "Pending".into(),
            ..cloud()
        };
        let o = observed(&name(), &EntryDiff::default(), &pending).unwrap();
        assert!(o.in_transition);
        assert_eq!(o.readiness, Readiness::Creating);
    }

    #[test]
    fn a_duplicate_source_is_refused_with_its_reason() {
        let e = |code: &str| {
            Error::from(alibaba_sdk::ApiError {
                action: "CreateSnatEntry".into(),
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
            reason("Forbidden.SourceVSwitchId.Duplicated").as_deref(),
            Some(DUPLICATE_NAT_ENTRY)
        );
        assert_eq!(
            reason("InvalidSnatIp.NotFound").as_deref(),
            Some(EIP_NOT_ON_GATEWAY)
        );
        assert_eq!(reason("Throttling.User"), None);
    }
}
