//! The signed RPC transport every product client sits on: [`Params`] (the business parameters of
//! a call), [`prepare`] (one signed HTTP request, pure), [`RpcClient`] (sends calls to one
//! endpoint with credentials from a [`crate::credentials::CredentialsProvider`], retries them per
//! [`RetryPolicy`], paces them per region and action with a [`QuotaPacer`] and turns answers into
//! bytes or typed errors).
//!
//! It knows the credentials trait, not its sources, so STS and the credential sources that call
//! STS sit on top of it without a cycle.

mod api_message;
mod pacing;
mod params;
mod retry;
mod signed_request;
mod transport;

pub use pacing::{Admission, Lane, Permit, QUOTA_EVIDENCE, QuotaPacer, RECOVERY, SAFETY};
pub use params::Params;
pub use retry::RetryPolicy;
pub use signed_request::{
    HttpMethod, PreparedRequest, RequestSpec, SignatureVersion, Signing, prepare, timestamp_now,
};
pub(crate) use transport::decode_sensitive_json;
pub use transport::{ClientConfig, RawResponse, RpcClient, USER_AGENT};
