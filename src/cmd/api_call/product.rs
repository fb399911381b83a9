//! The Alibaba Cloud APIs `ferroplane cloud call` reaches, and what the client sets for each:
//! the API version, the endpoint of a region, and which calls may be retried. Ground floor of
//! `api_call`: imports nothing of it.

use alibaba_sdk::ecs::{self, ECS_API_VERSION, RetrySafety};
use alibaba_sdk::endpoint::{EndpointError, Network, ecs_endpoint};
use alibaba_sdk::rpc::Params;
use alibaba_sdk::vpc::{VPC_API_VERSION, vpc_endpoint};
use url::Url;

/// An API, as `--product` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Product {
    /// Elastic Compute Service (instances, disks, security groups, key pairs).
    Ecs,
    /// Virtual Private Cloud (VPCs, vSwitches).
    Vpc,
}

/// The VPC actions whose API reference documents a `ClientToken` and that ferroplane itself
/// sends with one; other VPC writes are sent once, never retried.
const VPC_CLIENT_TOKEN_ACTIONS: &[&str] = &["CreateVpc", "CreateVSwitch"];

impl Product {
    /// Every API, in the order help texts list them.
    pub const ALL: [Product; 2] = [Product::Ecs, Product::Vpc];

    /// The name `--product` takes.
    pub fn name(self) -> &'static str {
        match self {
            Product::Ecs => "ecs",
            Product::Vpc => "vpc",
        }
    }

    /// The API version every call of this API carries.
    pub fn api_version(self) -> &'static str {
        match self {
            Product::Ecs => ECS_API_VERSION,
            Product::Vpc => VPC_API_VERSION,
        }
    }

    /// The endpoint of `region` (its VPC-internal one on `Network::Vpc`).
    pub fn endpoint(self, region: &str, network: Network) -> Result<Url, EndpointError> {
        match self {
            Product::Ecs => ecs_endpoint(region, network),
            Product::Vpc => vpc_endpoint(region, network),
        }
    }

    /// Adds a fresh `ClientToken` to a call of an action that takes one when none is given, and
    /// says whether the call may be retried after a lost response, as Alibaba's SDKs do.
    pub fn retry_safety(self, action: &str, params: &mut Params) -> RetrySafety {
        match self {
            Product::Ecs => ecs::retry_safety(action, params),
            Product::Vpc => {
                if ecs::is_read_only(action) {
                    return RetrySafety::ReadOnly;
                }
                if VPC_CLIENT_TOKEN_ACTIONS.contains(&action) && !params.contains("ClientToken") {
                    params.set("ClientToken", uuid::Uuid::new_v4());
                }
                if params.contains("ClientToken") {
                    RetrySafety::Idempotent
                } else {
                    RetrySafety::NotIdempotent
                }
            }
        }
    }
}
