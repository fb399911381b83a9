//! etcd's cluster membership as the controller sees it: the [`Membership`] trait the planner's
//! steps are executed through (`api`), and its implementation over etcd's JSON gRPC gateway
//! ([`GatewayClient`]). The controllers get a client per cluster from a [`MembershipFactory`]
//! ([`GatewayFactory`] in production), which lets tests and the sandbox (which runs no real pods)
//! supply another implementation.

mod api;
pub mod auth;
mod error;
mod factory;
mod gateway;
mod gateway_factory;
pub mod grpc;
mod http;
pub mod session;
pub mod snapshot;
mod wire;

pub use api::settle_add;
pub use api::{Member, MemberStatus, Membership, PromoteOutcome};
pub use auth::{AuthStatus, Password, RootCredentials};
pub use error::MembershipError;
pub use factory::MembershipFactory;
pub use gateway::GatewayClient;
pub use gateway_factory::{GatewayFactory, HttpBuilder};
pub use http::{GatewayConfig, http_with_tls};
