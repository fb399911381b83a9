//! What `SNATEntry` and `DNATEntry` share: finding the entry an object names (entries carry
//! no tags, so the object knows its entry only by the ID the create returned, recorded at once
//! as its external name; a retried create carries the same ClientToken and is answered with the
//! same entry), in the table of its NAT gateway; the gateway, which must be `Available` for a
//! new entry; and the address of an EIP bound to that gateway.

use alibaba_sdk::vpc::{NatGateway, nat_gateway_status};
use ferroplane_runtime::references::REFERENCE_NOT_RESOLVED;
use ferroplane_runtime::{ExternalRef, ReconcileError, RetryClass};

use crate::cloud_connector::CloudClients;
use crate::reasons::EIP_NOT_ON_GATEWAY;

/// Which table of a gateway an entry is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Table {
    Snat,
    Forward,
}

impl Table {
    /// The table's ID on `gateway`.
    pub fn of(self, gateway: &NatGateway) -> &str {
        match self {
            Self::Snat => gateway.snat_table_id(),
            Self::Forward => gateway.forward_table_id(),
        }
    }
}

/// An entry the object names, and its table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntryRef {
    pub table: String,
    pub entry: String,
}

/// Waiting for something another object provides, retried when it changes.
pub(crate) fn waiting(message: String) -> ReconcileError {
    ReconcileError::dependency(REFERENCE_NOT_RESOLVED, message)
}

impl CloudClients {
    /// The entry the object names (its external name) in `table` of its gateway; `None` when
    /// it names none yet, or when the gateway is gone (its entries go with it).
    pub(crate) async fn entry_ref(
        &self,
        ext: &ExternalRef,
        gateway: Option<&str>,
        table: Table,
    ) -> Result<Option<EntryRef>, ReconcileError> {
        let Some(entry) = ext.name() else {
            return Ok(None);
        };
        let Some(gateway) = gateway else {
            return Err(waiting(format!(
                "entry {entry} is named, but its NAT gateway is not known yet: set natGatewayId, natGatewayIdRef or natGatewayIdSelector"
            )));
        };
        Ok(self
            .find_nat_gateway(Some(gateway), "")
            .await?
            .map(|g| EntryRef {
                table: table.of(&g).to_owned(),
                entry: entry.to_owned(),
            }))
    }

    /// The gateway `id` (`natGatewayId`, resolved), once it is `Available`.
    pub(crate) async fn entry_gateway(
        &self,
        id: Option<&str>,
    ) -> Result<NatGateway, ReconcileError> {
        let Some(id) = id else {
            return Err(waiting(
                "the NAT gateway is not known yet: set natGatewayId, natGatewayIdRef or natGatewayIdSelector".into(),
            ));
        };
        let found = self.find_nat_gateway(Some(id), "").await?;
        match found {
            Some(g) if g.status == nat_gateway_status::AVAILABLE => Ok(g),
            Some(g) => Err(waiting(format!(
                "NAT gateway {id} is {}: the entry is made once it is Available",
                g.status
            ))),
            None => Err(waiting(format!(
                "NAT gateway {id} does not exist: create it (a NATGateway object) or fix natGatewayId"
            ))),
        }
    }

    /// The address of EIP `eip_id`, which must be bound to `gateway`.
    pub(crate) async fn gateway_eip_address(
        &self,
        eip_id: &str,
        gateway: &str,
    ) -> Result<String, ReconcileError> {
        match self.find_eip(Some(eip_id), "").await? {
            Some(e) if e.instance_id == gateway => Ok(e.ip_address),
            Some(e) => Err(ReconcileError::new(
                EIP_NOT_ON_GATEWAY,
                format!(
                    "EIP {eip_id} ({}) is not bound to NAT gateway {gateway}: bind it with an EIPAssociation (instanceType: Nat, natGatewayIdRef naming the gateway)",
                    e.ip_address
                ),
                RetryClass::WaitForDependency,
            )),
            None => Err(waiting(format!(
                "EIP {eip_id} does not exist: create it (an EIP object) or fix eipId"
            ))),
        }
    }
}
