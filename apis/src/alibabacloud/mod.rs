//! Group `alibabacloud.ferroplane.io`: ECS instances, the network they launch into (VPCs,
//! vSwitches, security groups and their rules, elastic IP addresses and their associations), their disks and SSH key pairs, and the configurations holding
//! credentials.

pub mod disk;
pub mod ecs_instance;
pub mod eip;
pub mod eip_association;
pub mod key_pair;
pub mod network;
pub mod provider_config;
pub mod security_group;
pub mod security_group_rule;
pub mod vpc;
pub mod vswitch;

pub use disk::*;
pub use ecs_instance::*;
pub use eip::*;
pub use eip_association::*;
pub use key_pair::*;
pub use network::*;
pub use provider_config::*;
pub use security_group::*;
pub use security_group_rule::*;
pub use vpc::*;
pub use vswitch::*;
