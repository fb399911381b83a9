//! What `ferroplane import` reads from the cloud, batched and paced: the region's VPCs,
//! vSwitches, security groups (with the rules of each one taken), instances (listed by pages
//! of 100, or described by 100 IDs per call for `--instance-ids`), data disks and key pairs.
//! Every call goes through alibaba-sdk's clients, whose quota pacer spaces the calls of one
//! action once the account's quota shows.

use alibaba_sdk::Error;
use alibaba_sdk::ecs::{
    DescribeDisksRequest, DescribeInstancesRequest, Direction, Disk, EcsClient, Instance, KeyPair,
    Permission, SecurityGroup,
};
use alibaba_sdk::vpc::{VSwitch, Vpc, VpcClient};

use std::collections::BTreeSet;

use super::selector::Selector;

/// A security group and its rules, by direction.
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub group: SecurityGroup,
    pub ingress: Vec<Permission>,
    pub egress: Vec<Permission>,
}

/// The resources of one region that an import looks at.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub vpcs: Vec<Vpc>,
    pub vswitches: Vec<VSwitch>,
    /// Rules are read only for the groups selected (see [`read_rules`]).
    pub groups: Vec<Group>,
    pub instances: Vec<Instance>,
    /// Data disks only: a system disk is part of its instance.
    pub disks: Vec<Disk>,
    pub key_pairs: Vec<KeyPair>,
}

/// Reads what `selector` may take from the region of `ecs` and `vpc`.
pub async fn read(
    ecs: &EcsClient,
    vpc: &VpcClient,
    selector: &Selector,
) -> Result<Inventory, Error> {
    let vpc_filter: Vec<String> = match selector {
        Selector::Vpc(id) => vec![id.clone()],
        _ => Vec::new(),
    };
    let instances = match selector {
        Selector::Instances(ids) => ecs.describe_instances_by_ids(ids).await?,
        Selector::Vpc(id) => {
            ecs.describe_instances(&DescribeInstancesRequest {
                vpc_id: Some(id.clone()),
                max_results: Some(100),
                ..DescribeInstancesRequest::default()
            })
            .await?
        }
        Selector::Tags(_) | Selector::All => {
            ecs.describe_instances(&DescribeInstancesRequest {
                max_results: Some(100),
                ..DescribeInstancesRequest::default()
            })
            .await?
        }
    };
    let groups = ecs
        .describe_security_groups(&[], &[])
        .await?
        .into_iter()
        .map(|group| Group {
            group,
            ..Group::default()
        })
        .collect();
    Ok(Inventory {
        vpcs: vpc.describe_vpcs(&vpc_filter, &[]).await?,
        vswitches: vpc
            .describe_vswitches(None, vpc_filter.first().map(String::as_str), &[])
            .await?,
        groups,
        instances,
        disks: ecs
            .describe_disks(&DescribeDisksRequest {
                disk_type: Some("data".into()),
                ..DescribeDisksRequest::default()
            })
            .await?,
        key_pairs: ecs.describe_key_pairs(&[]).await?,
    })
}

/// Reads the rules of the groups `selected` (`DescribeSecurityGroupAttribute`, one call per
/// group and direction).
pub async fn read_rules(
    ecs: &EcsClient,
    inventory: &mut Inventory,
    selected: &BTreeSet<String>,
) -> Result<(), Error> {
    for g in inventory
        .groups
        .iter_mut()
        .filter(|g| selected.contains(&g.group.security_group_id))
    {
        let id = g.group.security_group_id.clone();
        for direction in [Direction::Ingress, Direction::Egress] {
            let rules: Vec<Permission> = ecs
                .describe_security_group_rules(&id, direction)
                .await?
                .permissions
                .items
                .into_iter()
                .filter(|p| p.direction.is_empty() || p.direction == direction.as_str())
                .collect();
            match direction {
                Direction::Ingress => g.ingress = rules,
                Direction::Egress => g.egress = rules,
            }
        }
    }
    Ok(())
}
