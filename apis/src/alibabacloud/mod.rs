//! Group `alibabacloud.ferroplane.io`: ECS instances and the configurations holding credentials.

pub mod ecs_instance;
pub mod provider_config;

pub use ecs_instance::*;
pub use provider_config::*;
