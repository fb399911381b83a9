//! provider-alibaba: the signed Alibaba Cloud ECS client (signatures, credentials, endpoints,
//! typed calls with retries) and the ECS mock server.
//!
//! Flow of one call: [`EcsClient`] → [`client::RpcClient`] (credentials from a
//! [`credentials::CredentialsProvider`], request built and signed by [`client::prepare`] with
//! [`signature`], retried per [`client::RetryPolicy`]) → typed response from [`client::model`] or
//! an [`Error`].
//!
//! [`controller`] runs the ECSInstance, ProviderConfig and ClusterProviderConfig controllers on
//! this client (entry point [`controller::run`]).

pub mod client;
pub mod controller;
pub mod credentials;
pub mod endpoint;
pub mod error;
pub mod mock;
pub mod secret;
pub mod signature;
pub mod sts;

pub use client::{EcsClient, EcsClientBuilder, HttpMethod, Params, RetryPolicy, SignatureVersion};
pub use credentials::{Credentials, CredentialsProvider};
pub use error::{ApiError, CredentialsError, Error};
pub use secret::Secret;
