//! Integration tests of alibaba-sdk, one binary: the signing client and the credential sources
//! against scripted local servers. The client against the ECS mock is tested in alibaba-mock,
//! which depends on this crate.

mod client_support;

mod client_credentials;
mod client_profile;
mod client_transport;
