//! `DeletionProtection` on [`VpcClient`]: turns the deletion protection of an EIP or a NAT
//! gateway on or off; DescribeEipAddresses and DescribeNatGateways report it
//! (`DeletionProtection`), and ReleaseEipAddress / DeleteNatGateway refuse a protected one.

use super::client::VpcClient;
use crate::ecs::{AckResponse, resolve_client_token};
use crate::error::Error;
use crate::rpc::Params;

/// What ReleaseEipAddress (and DeleteNatGateway) answer for a protected resource.
pub const PROTECTED: &str = "InvalidOperation.DeletionProtection";
/// What `DeletionProtection` answers when asked to protect a protected resource.
pub const ALREADY_ENABLED: &str = "DeletionProtection.AlreadyEnabled";

/// The kinds of resource `DeletionProtection` takes (its `Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    /// `EIP`, by allocation ID.
    Eip,
    /// `NATGW`, by NAT gateway ID.
    NatGateway,
}

impl Protected {
    /// The API's `Type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eip => "EIP",
            Self::NatGateway => "NATGW",
        }
    }
}

impl VpcClient {
    /// `DeletionProtection` of `instance_id`, with a fresh `ClientToken`.
    pub async fn deletion_protection(
        &self,
        kind: Protected,
        instance_id: &str,
        enable: bool,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("Type", kind.as_str())
            .set("InstanceId", instance_id)
            .set("ProtectionEnable", enable)
            .set(
                "ClientToken",
                resolve_client_token("DeletionProtection", None)?,
            );
        self.call_typed("DeletionProtection", &p).await
    }
}
