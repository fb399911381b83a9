//! provider-alibaba: the signed Alibaba Cloud ECS client (signatures, credentials, endpoints,
//! typed calls with retries) and the ECS mock server.

pub mod mock;
pub mod signature;
