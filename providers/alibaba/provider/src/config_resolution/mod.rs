//! What the ECSInstance and the configuration controllers share: a `providerConfigRef` resolved
//! into what a client needs.
//!
//! - `resolver`: the ProviderConfig or ClusterProviderConfig, its credentials Secret (only from
//!   the config's own namespace for a namespaced ProviderConfig), the credential source, the
//!   endpoint settings and the version key clients are cached under;
//! - `client_settings`: the resolved configuration and what a client takes from it (transport
//!   settings, STS endpoint, credentials provider);
//! - `config_error`: why a configuration cannot be used, and its condition reason;
//! - `secret_keys`: the AccessKey in a credentials Secret's data, in either accepted layout;
//! - `tenancy` and `endpoint_policy`: what a namespaced configuration may use (its own Secrets,
//!   allowed endpoints) and which namespaces a ClusterProviderConfig serves;
//! - `resolved_configs`: resolved configurations kept until a watch event says their config or
//!   Secret changed.

mod client_settings;
mod config_error;
mod endpoint_policy;
mod resolved_configs;
mod resolver;
mod secret_keys;
mod tenancy;

pub(crate) use client_settings::ResolvedConfig;
pub(crate) use config_error::ConfigError;
pub use endpoint_policy::{EndpointAllowList, EndpointRefusal};
pub use resolved_configs::ResolvedConfigs;
pub use resolver::ConfigResolver;
pub(crate) use resolver::{display, uses_secret};
