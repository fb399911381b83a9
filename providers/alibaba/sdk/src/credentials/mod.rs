//! Credentials and where they come from.
//!
//! A [`CredentialsProvider`] hands out [`Credentials`]; the sources are static keys
//! ([`Credentials`] itself is a provider), the environment ([`EnvProvider`]; with the CLI
//! profile as fallback, [`EnvironmentProvider`] and [`ProfileProvider`]), a RAM role assumed
//! through STS ([`RamRoleArnProvider`]), an OIDC role on ACK/RRSA ([`OidcRoleProvider`]) and the
//! ECS instance RAM role from the metadata service ([`ImdsProvider`]). [`CachingProvider`] keeps
//! temporary credentials until 180 s before they expire and refreshes them once, for all
//! concurrent callers. Credentials kept in a Kubernetes Secret are read by provider-alibaba, not
//! here. Secrets are [`crate::Secret`]s: no `Debug` output shows them.

mod cache;
mod env;
mod imds;
mod oidc;
mod profile;
mod ram_role;
mod sts_endpoint;

pub use cache::{CachingProvider, REFRESH_BEFORE_EXPIRY};
pub use env::{
    ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET, ENV_CONFIG_FILE, ENV_ECS_METADATA,
    ENV_ECS_METADATA_DISABLED, ENV_OIDC_PROVIDER_ARN, ENV_OIDC_TOKEN_FILE, ENV_PROFILE,
    ENV_ROLE_ARN, ENV_ROLE_SESSION_NAME, ENV_SECURITY_TOKEN, ENV_STS_ENDPOINT, ENV_STS_REGION,
    ENV_VPC_ENDPOINT_ENABLED, EnvLookup, EnvProvider,
};
pub use imds::{DEFAULT_METADATA_ENDPOINT, ImdsProvider};
pub use oidc::OidcRoleProvider;
pub use profile::{DEFAULT_CONFIG_FILE, EnvironmentProvider, ProfileProvider};
pub use ram_role::RamRoleArnProvider;
pub use sts_endpoint::StsEndpointChoice;

pub use crate::signing_credentials::{
    Credentials, CredentialsFuture, CredentialsProvider, SharedCredentialsProvider,
};
