//! EtcdCluster provider (in progress).

pub mod error;
pub mod membership;
pub mod names;
pub mod planner;
pub mod render;
pub mod scaling;
pub mod status;
pub mod version;
