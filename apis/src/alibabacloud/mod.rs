//! Group `alibabacloud.ferroplane.io`: ECS instances, the network they launch into (VPCs,
//! vSwitches, security groups and their rules, elastic IP addresses and their associations, NAT gateways with their SNAT and DNAT entries), their disks and SSH key pairs, and the configurations holding
//! credentials.

pub mod disk;
pub mod dnat_entry;
pub mod ecs_fleet;
pub mod ecs_instance;
pub mod eip;
pub mod eip_association;
pub mod key_pair;
pub mod nat_gateway;
pub mod network;
pub mod provider_config;
pub mod security_group;
pub mod security_group_rule;
pub mod snat_entry;
pub mod vpc;
pub mod vswitch;

pub use disk::*;
pub use dnat_entry::*;
pub use ecs_fleet::*;
pub use ecs_instance::*;
pub use eip::*;
pub use eip_association::*;
pub use key_pair::*;
pub use nat_gateway::*;
pub use network::*;
pub use provider_config::*;
pub use security_group::*;
pub use security_group_rule::*;
pub use snat_entry::*;
pub use vpc::*;
pub use vswitch::*;
