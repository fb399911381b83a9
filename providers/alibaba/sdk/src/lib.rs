//! alibaba-sdk: a signed client of Alibaba Cloud's RPC APIs.
//!
//! It holds the signatures ([`signature`], V1 and V3), the endpoints ([`endpoint`]), the
//! credentials and their sources ([`credentials`]), STS ([`sts`]), the signed transport with its
//! retries ([`rpc`]), the errors ([`Error`], [`ApiError`], [`CredentialsError`]) and per product
//! its actions, request and response types ([`ecs`], [`vpc`]; later `oss`).
//!
//! Flow of one call: [`ecs::EcsClient`] → [`rpc::RpcClient`] (credentials from a
//! [`credentials::CredentialsProvider`], request built and signed by [`rpc::prepare`] with
//! [`signature`], retried per [`rpc::RetryPolicy`]) → typed response from [`ecs`] or an [`Error`].
//!
//! Layers, each using only those before it: `signature`, `secret`, `error` and `endpoint`; the
//! credentials value and trait; `rpc`; `sts`; `credentials` (the sources, some of which call
//! STS); the products.
//!
//! It must not depend on Kubernetes, on an HTTP server framework (axum) or on the mock
//! (`alibaba-mock` depends on this crate, for [`signature`]).

pub mod credentials;
pub mod ecs;
pub mod endpoint;
mod error;
pub mod oss;
pub mod rpc;
mod secret;
pub mod signature;
mod signing_credentials;
pub mod sts;
pub mod vpc;
mod wire;

pub use error::{ApiError, CredentialsError, Error};
pub use secret::Secret;
