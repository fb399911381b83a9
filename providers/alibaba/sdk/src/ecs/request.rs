//! ECS request parameters: the typed requests and their mapping to API parameters (pure, so
//! every flattening rule is unit-tested), and the ClientToken rules.

use super::response::Tag;
use crate::error::Error;
use crate::rpc::Params;
use crate::secret::Secret;

/// Most instance IDs `DescribeInstances` and `DeleteInstances` accept per call.
pub const MAX_INSTANCE_IDS_PER_CALL: usize = 100;
/// Most resources the tag actions accept per call.
pub const MAX_TAG_RESOURCES_PER_CALL: usize = 50;
/// Longest ClientToken ECS accepts.
pub const MAX_CLIENT_TOKEN_LEN: usize = 64;

/// Returns `token` if ECS accepts it (ASCII, 1–64 characters), or a fresh UUID when absent.
pub fn resolve_client_token(action: &str, token: Option<&str>) -> Result<String, Error> {
    match token {
        None => Ok(uuid::Uuid::new_v4().to_string()),
        Some(token)
            if !token.is_empty()
                && token.len() <= MAX_CLIENT_TOKEN_LEN
                && token.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(token.to_owned())
        }
        Some(token) => Err(Error::InvalidRequest {
            action: action.to_owned(),
            reason: format!(
                "ClientToken `{token}` must be 1 to {MAX_CLIENT_TOKEN_LEN} printable ASCII characters"
            ),
        }),
    }
}

pub(crate) fn set_tags(params: &mut Params, tags: &[Tag]) {
    for (i, tag) in tags.iter().enumerate() {
        params.set(format!("Tag.{}.Key", i + 1), &tag.key);
        params.set(format!("Tag.{}.Value", i + 1), &tag.value);
    }
}

/// The system disk of a new instance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SystemDisk {
    /// E.g. `cloud_essd`.
    pub category: Option<String>,
    /// GiB.
    pub size: Option<u32>,
    /// `PL0`–`PL3` (cloud_essd).
    pub performance_level: Option<String>,
}

/// A data disk of a new instance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataDisk {
    /// E.g. `cloud_essd`.
    pub category: Option<String>,
    /// GiB.
    pub size: Option<u32>,
    /// Create from this snapshot.
    pub snapshot_id: Option<String>,
    /// Release the disk with the instance.
    pub delete_with_instance: Option<bool>,
}

/// `RunInstances` parameters. `client_token` makes the call idempotent; when absent the client
/// generates one, so retries of this call never create a second instance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunInstancesRequest {
    /// Required.
    pub image_id: String,
    /// Required.
    pub instance_type: String,
    pub zone_id: Option<String>,
    pub vswitch_id: Option<String>,
    pub security_group_ids: Vec<String>,
    pub instance_name: Option<String>,
    pub host_name: Option<String>,
    pub description: Option<String>,
    pub password: Option<Secret>,
    pub key_pair_name: Option<String>,
    pub instance_charge_type: Option<String>,
    /// `Period`: subscription length for `PrePaid`, in `period_unit`s.
    pub period: Option<u32>,
    /// `PeriodUnit`: `Month` (the API's default) or `Week`.
    pub period_unit: Option<String>,
    /// `AutoRenew` (PrePaid only).
    pub auto_renew: Option<bool>,
    /// `AutoRenewPeriod` (with `AutoRenew`).
    pub auto_renew_period: Option<u32>,
    pub spot_strategy: Option<String>,
    pub internet_charge_type: Option<String>,
    pub internet_max_bandwidth_out: Option<u32>,
    pub system_disk: Option<SystemDisk>,
    pub data_disks: Vec<DataDisk>,
    pub tags: Vec<Tag>,
    /// Base64.
    pub user_data: Option<String>,
    pub deletion_protection: Option<bool>,
    /// 1–100.
    pub amount: Option<u32>,
    pub client_token: Option<String>,
    pub dry_run: bool,
    /// Instance RAM role to attach at creation.
    pub ram_role_name: Option<String>,
    /// `enabled` or `disabled`.
    pub http_endpoint: Option<String>,
    /// `optional` or `required`.
    pub http_tokens: Option<String>,
    /// 1–64.
    pub http_put_response_hop_limit: Option<u32>,
    /// `rg-...`.
    pub resource_group_id: Option<String>,
    /// Hourly price limit for `SpotWithPriceLimit`.
    pub spot_price_limit: Option<f64>,
    /// Spot protection period in hours (0–6).
    pub spot_duration: Option<u32>,
    /// `Terminate` or `Stop`.
    pub spot_interruption_behavior: Option<String>,
    /// `Active` or `Deactive`.
    pub security_enhancement_strategy: Option<String>,
    /// `Standard` or `Unlimited` (burstable types only).
    pub credit_specification: Option<String>,
    /// The primary private IP, in the vSwitch's CIDR block and free.
    pub private_ip_address: Option<String>,
    /// `ds-...`: the deployment set to place the instance in.
    pub deployment_set_id: Option<String>,
    /// IPv6 addresses for the primary network interface (the vSwitch has IPv6 turned on).
    pub ipv6_address_count: Option<u32>,
}

impl RunInstancesRequest {
    /// The API parameters, with the given (already resolved) ClientToken.
    pub fn to_params(&self, client_token: &str) -> Params {
        let mut p = Params::new();
        p.set("ImageId", &self.image_id)
            .set("InstanceType", &self.instance_type)
            .set("ClientToken", client_token)
            .opt("ZoneId", self.zone_id.as_ref())
            .opt("VSwitchId", self.vswitch_id.as_ref())
            .opt("InstanceName", self.instance_name.as_ref())
            .opt("HostName", self.host_name.as_ref())
            .opt("Description", self.description.as_ref())
            .opt("Password", self.password.as_ref().map(Secret::expose))
            .opt("KeyPairName", self.key_pair_name.as_ref())
            .opt("InstanceChargeType", self.instance_charge_type.as_ref())
            .opt("Period", self.period)
            .opt("PeriodUnit", self.period_unit.as_ref())
            .opt("AutoRenew", self.auto_renew)
            .opt("AutoRenewPeriod", self.auto_renew_period)
            .opt("SpotStrategy", self.spot_strategy.as_ref())
            .opt("InternetChargeType", self.internet_charge_type.as_ref())
            .opt("InternetMaxBandwidthOut", self.internet_max_bandwidth_out)
            .opt("UserData", self.user_data.as_ref())
            .opt("DeletionProtection", self.deletion_protection)
            .opt("Amount", self.amount)
            .opt("RamRoleName", self.ram_role_name.as_ref())
            .opt("HttpEndpoint", self.http_endpoint.as_ref())
            .opt("HttpTokens", self.http_tokens.as_ref())
            .opt("HttpPutResponseHopLimit", self.http_put_response_hop_limit)
            .opt("ResourceGroupId", self.resource_group_id.as_ref())
            .opt("CreditSpecification", self.credit_specification.as_ref())
            .opt("PrivateIpAddress", self.private_ip_address.as_ref())
            .opt("DeploymentSetId", self.deployment_set_id.as_ref())
            .opt("Ipv6AddressCount", self.ipv6_address_count)
            .opt("SpotPriceLimit", self.spot_price_limit)
            .opt("SpotDuration", self.spot_duration)
            .opt(
                "SpotInterruptionBehavior",
                self.spot_interruption_behavior.as_ref(),
            )
            .opt(
                "SecurityEnhancementStrategy",
                self.security_enhancement_strategy.as_ref(),
            );
        match self.security_group_ids.as_slice() {
            [] => {}
            [one] => {
                p.set("SecurityGroupId", one);
            }
            many => {
                p.list("SecurityGroupIds", many);
            }
        }
        if let Some(disk) = &self.system_disk {
            p.opt("SystemDisk.Category", disk.category.as_ref())
                .opt("SystemDisk.Size", disk.size)
                .opt(
                    "SystemDisk.PerformanceLevel",
                    disk.performance_level.as_ref(),
                );
        }
        for (i, disk) in self.data_disks.iter().enumerate() {
            let n = i + 1;
            p.opt(&format!("DataDisk.{n}.Category"), disk.category.as_ref())
                .opt(&format!("DataDisk.{n}.Size"), disk.size)
                .opt(
                    &format!("DataDisk.{n}.SnapshotId"),
                    disk.snapshot_id.as_ref(),
                )
                .opt(
                    &format!("DataDisk.{n}.DeleteWithInstance"),
                    disk.delete_with_instance,
                );
        }
        set_tags(&mut p, &self.tags);
        if self.dry_run {
            p.set("DryRun", true);
        }
        p
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let invalid = |reason: &str| {
            Err(Error::InvalidRequest {
                action: "RunInstances".into(),
                reason: reason.to_owned(),
            })
        };
        if self.image_id.trim().is_empty() {
            return invalid("ImageId is required");
        }
        if self.instance_type.trim().is_empty() {
            return invalid("InstanceType is required");
        }
        if self.amount.is_some_and(|a| !(1..=100).contains(&a)) {
            return invalid("Amount must be between 1 and 100");
        }
        Ok(())
    }
}

/// `DescribeInstances` filters. Leave `instance_ids` empty to list every instance of the region.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescribeInstancesRequest {
    pub instance_ids: Vec<String>,
    pub status: Option<String>,
    pub instance_name: Option<String>,
    pub vpc_id: Option<String>,
    pub vswitch_id: Option<String>,
    pub zone_id: Option<String>,
    pub tags: Vec<Tag>,
    /// Tag keys whatever their value (`Tag.N.Key` without `Tag.N.Value`), after `tags`. ECS
    /// considers at most 1,000 instances carrying the tags of a filter (more need
    /// `ListTagResources` or an unfiltered listing): see [`MAX_TAG_FILTERED_INSTANCES`].
    pub tag_keys: Vec<String>,
    /// Page size, at most 100 (the default here).
    pub max_results: Option<u32>,
}

/// How many instances a tag-filtered `DescribeInstances` considers at most, over all its pages
/// (the API reference of `Tag.N.Key`: "up to 1,000 resources to which the tag is added are
/// returned").
pub const MAX_TAG_FILTERED_INSTANCES: usize = 1000;

impl DescribeInstancesRequest {
    /// The API parameters of one page. `instance_ids` must hold at most 100 IDs; callers batch.
    pub fn to_params(&self, ids: &[String], next_token: Option<&str>) -> Params {
        let mut p = Params::new();
        if !ids.is_empty() {
            p.json_list("InstanceIds", ids);
        }
        p.opt("Status", self.status.as_ref())
            .opt("InstanceName", self.instance_name.as_ref())
            .opt("VpcId", self.vpc_id.as_ref())
            .opt("VSwitchId", self.vswitch_id.as_ref())
            .opt("ZoneId", self.zone_id.as_ref())
            .set("MaxResults", self.max_results.unwrap_or(100).clamp(1, 100))
            .opt("NextToken", next_token.filter(|t| !t.is_empty()));
        set_tags(&mut p, &self.tags);
        for (i, key) in self.tag_keys.iter().enumerate() {
            p.set(format!("Tag.{}.Key", self.tags.len() + i + 1), key);
        }
        p
    }
}

/// `StopInstance` mode for pay-as-you-go instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoppedMode {
    /// Release vCPUs and memory; stop billing them.
    StopCharging,
    /// Keep resources reserved and billed.
    KeepCharging,
}

impl StoppedMode {
    /// The API value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StopCharging => "StopCharging",
            Self::KeepCharging => "KeepCharging",
        }
    }
}

/// `ModifyInstanceAttribute` parameters; only the fields set are changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModifyInstanceAttributeRequest {
    pub instance_id: String,
    pub instance_name: Option<String>,
    pub description: Option<String>,
    /// Takes effect after a reboot.
    pub host_name: Option<String>,
    /// Takes effect after a reboot.
    pub password: Option<Secret>,
    /// Base64; the instance must be stopped.
    pub user_data: Option<String>,
    /// Replaces the instance's security groups.
    pub security_group_ids: Option<Vec<String>>,
    pub deletion_protection: Option<bool>,
    /// `Standard` or `Unlimited` (burstable types only).
    pub credit_specification: Option<String>,
}

impl ModifyInstanceAttributeRequest {
    /// The API parameters.
    pub fn to_params(&self) -> Params {
        let mut p = Params::new();
        p.set("InstanceId", &self.instance_id)
            .opt("InstanceName", self.instance_name.as_ref())
            .opt("Description", self.description.as_ref())
            .opt("HostName", self.host_name.as_ref())
            .opt("Password", self.password.as_ref().map(Secret::expose))
            .opt("UserData", self.user_data.as_ref())
            .opt("DeletionProtection", self.deletion_protection)
            .opt("CreditSpecification", self.credit_specification.as_ref());
        if let Some(groups) = &self.security_group_ids {
            p.list("SecurityGroupIds", groups);
        }
        p
    }
}

/// `ModifyInstanceSpec` parameters (pay-as-you-go instances).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModifyInstanceSpecRequest {
    pub instance_id: String,
    /// The instance must be stopped to change it.
    pub instance_type: Option<String>,
    pub internet_max_bandwidth_out: Option<u32>,
    pub internet_max_bandwidth_in: Option<u32>,
    pub client_token: Option<String>,
}

impl ModifyInstanceSpecRequest {
    /// The API parameters, with the given (already resolved) ClientToken.
    pub fn to_params(&self, client_token: &str) -> Params {
        let mut p = Params::new();
        p.set("InstanceId", &self.instance_id)
            .set("ClientToken", client_token)
            .opt("InstanceType", self.instance_type.as_ref())
            .opt("InternetMaxBandwidthOut", self.internet_max_bandwidth_out)
            .opt("InternetMaxBandwidthIn", self.internet_max_bandwidth_in);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_instances_parameters() {
        let request = RunInstancesRequest {
            image_id: "img".into(),
            instance_type: "ecs.g7.large".into(),
            security_group_ids: vec!["sg-1".into(), "sg-2".into()],
            password: Some(Secret::new("P@ssw0rd!")),
            system_disk: Some(SystemDisk {
                category: Some("cloud_essd".into()),
                size: Some(40),
                performance_level: None,
            }),
            data_disks: vec![DataDisk {
                size: Some(100),
                ..DataDisk::default()
            }],
            tags: vec![Tag::new("ferroplane.io/uid", "u-1")],
            internet_max_bandwidth_out: Some(5),
            deletion_protection: Some(true),
            ..RunInstancesRequest::default()
        };
        let p = request.to_params("tok-1");
        let get = |k: &str| p.get(k).unwrap_or_else(|| panic!("missing {k}"));
        assert_eq!(get("ClientToken"), "tok-1");
        assert_eq!(get("SecurityGroupIds.1"), "sg-1");
        assert_eq!(get("SecurityGroupIds.2"), "sg-2");
        assert!(!p.contains("SecurityGroupId"));
        assert_eq!(get("SystemDisk.Size"), "40");
        assert_eq!(get("DataDisk.1.Size"), "100");
        assert_eq!(get("Tag.1.Key"), "ferroplane.io/uid");
        assert_eq!(get("Tag.1.Value"), "u-1");
        assert_eq!(get("DeletionProtection"), "true");
        assert_eq!(get("Password"), "P@ssw0rd!");
        assert!(!format!("{request:?}").contains("P@ssw0rd"));
        assert!(!p.contains("DryRun") && !p.contains("ZoneId"));
    }

    #[test]
    fn client_tokens_are_validated_or_generated() {
        let generated = resolve_client_token("RunInstances", None).unwrap();
        assert_eq!(generated.len(), 36);
        assert_ne!(
            generated,
            resolve_client_token("RunInstances", None).unwrap()
        );
        assert_eq!(resolve_client_token("R", Some("abc")).unwrap(), "abc");
        assert!(resolve_client_token("R", Some(&"x".repeat(65))).is_err());
        assert!(resolve_client_token("R", Some("naïve")).is_err());
        assert!(resolve_client_token("R", Some("")).is_err());
    }

    #[test]
    fn describe_instances_parameters() {
        let request = DescribeInstancesRequest {
            status: Some("Running".into()),
            tags: vec![Tag::new("env", "dev")],
            tag_keys: vec!["team".into()],
            ..DescribeInstancesRequest::default()
        };
        let p = request.to_params(&["i-1".into(), "i-2".into()], Some("tok"));
        // A key alone matches any value: no `Tag.2.Value` at all (an empty one would be a value).
        assert_eq!(p.get("Tag.2.Key"), Some("team"));
        assert!(!p.contains("Tag.2.Value"));
        assert_eq!(p.get("InstanceIds"), Some(r#"["i-1","i-2"]"#));
        assert_eq!(p.get("MaxResults"), Some("100"));
        assert_eq!(p.get("NextToken"), Some("tok"));
        assert_eq!(p.get("Tag.1.Key"), Some("env"));
        let first = request.to_params(&[], None);
        assert!(!first.contains("InstanceIds") && !first.contains("NextToken"));
    }

    #[test]
    fn modify_parameters() {
        let p = ModifyInstanceAttributeRequest {
            instance_id: "i-1".into(),
            instance_name: Some("web".into()),
            security_group_ids: Some(vec!["sg-9".into()]),
            deletion_protection: Some(false),
            ..ModifyInstanceAttributeRequest::default()
        }
        .to_params();
        assert_eq!(p.get("SecurityGroupIds.1"), Some("sg-9"));
        assert_eq!(p.get("DeletionProtection"), Some("false"));
        assert!(!p.contains("Description"));
        let p = ModifyInstanceSpecRequest {
            instance_id: "i-1".into(),
            instance_type: Some("ecs.g7.xlarge".into()),
            ..ModifyInstanceSpecRequest::default()
        }
        .to_params("t");
        assert_eq!(p.get("InstanceType"), Some("ecs.g7.xlarge"));
        assert_eq!(p.get("ClientToken"), Some("t"));
    }
}
