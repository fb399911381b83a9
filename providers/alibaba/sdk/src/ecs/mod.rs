//! ECS (API version `2014-05-26`): the client, its typed actions, and their request and response
//! types.
//!
//! - `client`: [`EcsClient`] and its builder; [`EcsClient::call`] sends any action;
//! - `actions`: the typed actions, with batching (`DescribeInstances` asks for at most 100 IDs per
//!   call, tag calls 50 resources) and pagination;
//! - `idempotency`: which calls may be retried after a lost response, and the table of actions
//!   that take a `ClientToken`;
//! - `request`: the request types and their mapping to API parameters, and the ClientToken rules;
//! - `response`: the response types;
//! - `instance_settings`: network billing and bandwidth, metadata options, RAM role and resource
//!   group of an instance, changed in place;
//! - `security_groups`: security groups and their rules (an ECS product, unlike VPCs);
//! - `disks`: cloud disks; `key_pairs`: SSH key pairs.
//!
//! ```no_run
//! # async fn demo() -> Result<(), alibaba_sdk::Error> {
//! use alibaba_sdk::credentials::Credentials;
//! use alibaba_sdk::ecs::EcsClient;
//! let client = EcsClient::builder("cn-beijing")
//!     .credentials(Credentials::new("AKID", "secret"))
//!     .build()?;
//! let instances = client.describe_instances_by_ids(&["i-123".to_owned()]).await?;
//! # Ok(()) }
//! ```

mod actions;
mod client;
mod disks;
mod idempotency;
mod instance_settings;
mod key_pairs;
mod network_interfaces;
mod request;
mod response;
mod security_group_rules;
mod security_groups;

pub use client::{ECS_API_VERSION, EcsClient, EcsClientBuilder};
pub use disks::{
    CreateDiskRequest, CreateDiskResponse, DescribeDisksRequest, DescribeDisksResponse, Disk,
    DiskList, MAX_DISK_IDS_PER_CALL, ModifyDiskAttributeRequest, ResizeType,
};
pub use idempotency::{
    CLIENT_TOKEN_ACTIONS, RetrySafety, is_read_only, retry_safety, takes_client_token,
};
pub use instance_settings::{
    AutoRenewChange, DescribeInstanceRamRoleResponse, InstanceRamRole, InstanceRenewAttribute,
    MetadataOptionsChange, NetworkSpecChange, RamRoleResult, ReplaceSystemDiskResponse,
};
pub use key_pairs::{
    DescribeKeyPairsResponse, KeyPair, KeyPairBindResponse, KeyPairCreated, KeyPairList,
    KeyPairResult, KeyPairResultList, MAX_INSTANCES_PER_KEY_PAIR_CALL,
};
pub use network_interfaces::{
    AssociatedPublicIp, MAX_NETWORK_INTERFACE_IDS_PER_CALL, NetworkInterfaceSet,
    NetworkInterfaceSetList, PrivateIpSet, PrivateIpSetList,
};
pub use request::{
    DataDisk, DescribeInstancesRequest, MAX_CLIENT_TOKEN_LEN, MAX_INSTANCE_IDS_PER_CALL,
    MAX_TAG_FILTERED_INSTANCES, MAX_TAG_RESOURCES_PER_CALL, ModifyInstanceAttributeRequest,
    ModifyInstanceSpecRequest, RunInstancesRequest, StoppedMode, SystemDisk, resolve_client_token,
};
pub use response::{
    AckResponse, DescribeInstanceAttributeResponse, DescribeInstancesResponse,
    DescribeRegionsResponse, EipAddress, Instance, InstanceIdList, InstanceList, IpAddressList,
    Ipv6Set, Ipv6SetList, ListTagResourcesResponse, LockReason, LockReasonList, MetadataOptions,
    NetworkInterface, NetworkInterfaceList, Region, RegionList, RunInstancesResponse,
    SecurityGroupIdList, Tag, TagList, TagResource, TagResourceList, VpcAttributes,
    format_minute_time, parse_minute_time,
};
pub use security_group_rules::{PeerRule, RuleChange, RulePeer};
pub use security_groups::{
    CreateSecurityGroupRequest, CreateSecurityGroupResponse,
    DescribeSecurityGroupAttributeResponse, DescribeSecurityGroupsResponse, Direction,
    MAX_RULES_PER_CALL, MAX_SECURITY_GROUP_IDS_PER_CALL, Permission, PermissionList, Rule,
    SecurityGroup, SecurityGroupList,
};
