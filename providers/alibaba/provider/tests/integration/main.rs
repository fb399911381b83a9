//! Integration tests of provider-alibaba, one binary: the signing client against scripted servers,
//! the ECS mock (also against the official SDKs), and the controller against sandbox + mock.

mod client_support;
mod controller_support;
mod mock_support;

mod client_against_mock;
mod client_credentials;
mod client_transport;
mod controller_batching;
mod controller_config;
mod controller_failures;
mod controller_lifecycle;
mod mock_auth;
mod mock_describe;
mod mock_inspection;
mod mock_instances;
mod mock_official_sdk;
mod mock_scale;
