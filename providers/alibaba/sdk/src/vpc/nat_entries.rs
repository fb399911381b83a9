//! The entries of a NAT gateway's tables on [`VpcClient`]: SNAT entries (`CreateSnatEntry`,
//! `DescribeSnatTableEntries`, `ModifySnatEntry`, `DeleteSnatEntry`) and DNAT entries, which the
//! API calls forward entries (`CreateForwardEntry`, `DescribeForwardTableEntries`,
//! `ModifyForwardEntry`, `DeleteForwardEntry`). Creates carry a `ClientToken` (a fresh one
//! unless the caller gives one). Entries take no tags.

use serde::Deserialize;

use super::actions::for_each_page;
use super::client::VpcClient;
use crate::ecs::{AckResponse, resolve_client_token};
use crate::error::Error;
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// Entry statuses (SNAT and DNAT alike).
pub mod nat_entry_status {
    /// Being created.
    pub const PENDING: &str = "Pending";
    /// In effect.
    pub const AVAILABLE: &str = "Available";
    /// Being changed.
    pub const MODIFYING: &str = "Modifying";
    /// Being deleted.
    pub const DELETING: &str = "Deleting";
}

/// `CreateSnatEntry` parameters: the source is a vSwitch or a CIDR block, not both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateSnatEntryRequest {
    /// `SnatTableId`.
    pub snat_table_id: String,
    /// `SourceVSwitchId`.
    pub source_vswitch_id: Option<String>,
    /// `SourceCIDR`.
    pub source_cidr: Option<String>,
    /// `SnatIp`: addresses of EIPs bound to the gateway, comma-separated.
    pub snat_ip: Option<String>,
    /// `SnatEntryName`.
    pub name: Option<String>,
    /// `ClientToken`.
    pub client_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct CreateSnatEntryResponse {
    snat_entry_id: String,
}

/// One SNAT entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SnatEntry {
    /// `snat-...`.
    pub snat_entry_id: String,
    /// Its table.
    pub snat_table_id: String,
    /// Its gateway.
    pub nat_gateway_id: String,
    /// The source vSwitch (empty for a CIDR source).
    pub source_v_switch_id: String,
    /// The source block (the vSwitch's, for a vSwitch source).
    #[serde(rename = "SourceCIDR")]
    pub source_cidr: String,
    /// The translated addresses, comma-separated.
    pub snat_ip: String,
    /// The name.
    pub snat_entry_name: String,
    /// See [`nat_entry_status`].
    pub status: String,
}

wrapped_list!(SnatEntryList, "SnatTableEntry", SnatEntry);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DescribeSnatTableEntriesResponse {
    total_count: u64,
    snat_table_entries: SnatEntryList,
}

/// The five fields of a DNAT entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ForwardMapping {
    /// `ExternalIp`: the address of an EIP bound to the gateway.
    pub external_ip: String,
    /// `ExternalPort`: 1–65535, or `Any` with protocol `Any`.
    pub external_port: String,
    /// `IpProtocol`: `TCP`, `UDP` or `Any`.
    pub ip_protocol: String,
    /// `InternalIp`: an address of the gateway's VPC.
    pub internal_ip: String,
    /// `InternalPort`.
    pub internal_port: String,
}

impl ForwardMapping {
    fn set(&self, p: &mut Params) {
        p.set("ExternalIp", &self.external_ip)
            .set("ExternalPort", &self.external_port)
            .set("IpProtocol", &self.ip_protocol)
            .set("InternalIp", &self.internal_ip)
            .set("InternalPort", &self.internal_port);
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct CreateForwardEntryResponse {
    forward_entry_id: String,
}

/// One DNAT (forward) entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ForwardEntry {
    /// `fwd-...`.
    pub forward_entry_id: String,
    /// Its table.
    pub forward_table_id: String,
    /// Its gateway.
    pub nat_gateway_id: String,
    /// The external address.
    pub external_ip: String,
    /// The external port (`Any` for an IP mapping).
    pub external_port: String,
    /// `TCP`, `UDP` or `Any`.
    pub ip_protocol: String,
    /// The internal address.
    pub internal_ip: String,
    /// The internal port.
    pub internal_port: String,
    /// The name.
    pub forward_entry_name: String,
    /// See [`nat_entry_status`].
    pub status: String,
}

wrapped_list!(ForwardEntryList, "ForwardTableEntry", ForwardEntry);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DescribeForwardTableEntriesResponse {
    total_count: u64,
    forward_table_entries: ForwardEntryList,
}

impl VpcClient {
    /// `CreateSnatEntry`; returns the entry's ID.
    pub async fn create_snat_entry(
        &self,
        request: &CreateSnatEntryRequest,
    ) -> Result<String, Error> {
        let token = resolve_client_token("CreateSnatEntry", request.client_token.as_deref())?;
        let mut p = Params::new();
        p.set("SnatTableId", &request.snat_table_id)
            .opt("SourceVSwitchId", request.source_vswitch_id.as_ref())
            .opt("SourceCIDR", request.source_cidr.as_ref())
            .opt("SnatIp", request.snat_ip.as_ref())
            .opt("SnatEntryName", request.name.as_ref())
            .set("ClientToken", token);
        let r: CreateSnatEntryResponse = self.call_typed("CreateSnatEntry", &p).await?;
        Ok(r.snat_entry_id)
    }

    /// `DescribeSnatTableEntries` of a table, or its one entry `entry_id`; all pages.
    pub async fn describe_snat_entries(
        &self,
        snat_table_id: &str,
        entry_id: Option<&str>,
    ) -> Result<Vec<SnatEntry>, Error> {
        let mut base = Params::new();
        base.set("SnatTableId", snat_table_id)
            .opt("SnatEntryId", entry_id);
        for_each_page(|page| {
            let mut p = base.clone();
            p.set("PageNumber", page).set("PageSize", 100);
            async move {
                let r: DescribeSnatTableEntriesResponse =
                    self.call_typed("DescribeSnatTableEntries", &p).await?;
                Ok((r.snat_table_entries.items, r.total_count))
            }
        })
        .await
    }

    /// `ModifySnatEntry`: the addresses and/or the name.
    pub async fn modify_snat_entry(
        &self,
        snat_table_id: &str,
        entry_id: &str,
        snat_ip: Option<&str>,
        name: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("SnatTableId", snat_table_id)
            .set("SnatEntryId", entry_id)
            .opt("SnatIp", snat_ip)
            .opt("SnatEntryName", name);
        self.call_typed("ModifySnatEntry", &p).await
    }

    /// `DeleteSnatEntry`.
    pub async fn delete_snat_entry(
        &self,
        snat_table_id: &str,
        entry_id: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("SnatTableId", snat_table_id)
            .set("SnatEntryId", entry_id);
        self.call_typed("DeleteSnatEntry", &p).await
    }

    /// `CreateForwardEntry`; returns the entry's ID.
    pub async fn create_forward_entry(
        &self,
        forward_table_id: &str,
        mapping: &ForwardMapping,
        name: Option<&str>,
        client_token: Option<&str>,
    ) -> Result<String, Error> {
        let token = resolve_client_token("CreateForwardEntry", client_token)?;
        let mut p = Params::new();
        p.set("ForwardTableId", forward_table_id);
        mapping.set(&mut p);
        p.opt("ForwardEntryName", name).set("ClientToken", token);
        let r: CreateForwardEntryResponse = self.call_typed("CreateForwardEntry", &p).await?;
        Ok(r.forward_entry_id)
    }

    /// `DescribeForwardTableEntries` of a table, or its one entry `entry_id`; all pages.
    pub async fn describe_forward_entries(
        &self,
        forward_table_id: &str,
        entry_id: Option<&str>,
    ) -> Result<Vec<ForwardEntry>, Error> {
        let mut base = Params::new();
        base.set("ForwardTableId", forward_table_id)
            .opt("ForwardEntryId", entry_id);
        for_each_page(|page| {
            let mut p = base.clone();
            p.set("PageNumber", page).set("PageSize", 50);
            async move {
                let r: DescribeForwardTableEntriesResponse =
                    self.call_typed("DescribeForwardTableEntries", &p).await?;
                Ok((r.forward_table_entries.items, r.total_count))
            }
        })
        .await
    }

    /// `ModifyForwardEntry`: the whole mapping and/or the name.
    pub async fn modify_forward_entry(
        &self,
        forward_table_id: &str,
        entry_id: &str,
        mapping: Option<&ForwardMapping>,
        name: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("ForwardTableId", forward_table_id)
            .set("ForwardEntryId", entry_id);
        if let Some(m) = mapping {
            m.set(&mut p);
        }
        p.opt("ForwardEntryName", name);
        self.call_typed("ModifyForwardEntry", &p).await
    }

    /// `DeleteForwardEntry`.
    pub async fn delete_forward_entry(
        &self,
        forward_table_id: &str,
        entry_id: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("ForwardTableId", forward_table_id)
            .set("ForwardEntryId", entry_id);
        self.call_typed("DeleteForwardEntry", &p).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_as_the_api_spells_them() {
        let s: SnatEntry = serde_json::from_value(serde_json::json!({
            "SnatEntryId": "snat-1", "SourceVSwitchId": "vsw-1", "SourceCIDR": "10.0.1.0/24",
            "SnatIp": "39.96.0.1", "SnatEntryName": "out", "Status": "Available",
        }))
        .unwrap();
        assert_eq!(
            (s.source_v_switch_id.as_str(), s.source_cidr.as_str()),
            ("vsw-1", "10.0.1.0/24")
        );
        let f: ForwardEntry = serde_json::from_value(serde_json::json!({
            "ForwardEntryId": "fwd-1", "ExternalPort": "8080", "IpProtocol": "TCP",
            "ForwardEntryName": "web",
        }))
        .unwrap();
        assert_eq!(
            (f.external_port.as_str(), f.forward_entry_name.as_str()),
            ("8080", "web")
        );
    }
}
