//! etcd's cluster membership as the controller sees it: the [`Membership`] trait the planner's
//! steps are executed through (`api`), and its implementation over etcd's JSON gRPC gateway
//! ([`GatewayClient`]). The trait lets tests and the sandbox (which runs no real pods) supply
//! another implementation.

mod api;
pub mod auth;
mod gateway;
pub mod grpc;
pub(crate) mod session;
pub mod snapshot;

pub(crate) use api::settle_add;
pub use api::{Member, MemberStatus, Membership, MembershipError, PromoteOutcome};
pub use auth::{AuthStatus, Password, RootCredentials};
pub use gateway::{GatewayClient, GatewayConfig, http_with_tls};
