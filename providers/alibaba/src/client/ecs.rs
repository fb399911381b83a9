//! Typed ECS actions: request structs, their mapping to API parameters (pure, tested), and the
//! client methods that send them.
//!
//! Batching and pagination are handled here: `DescribeInstances` asks for at most 100 IDs per
//! call and follows `NextToken` to the last page; tag calls send at most 50 resources per call.

use std::collections::HashSet;

use super::model::{
    AckResponse, DescribeInstanceAttributeResponse, DescribeInstancesResponse,
    DescribeRegionsResponse, Instance, ListTagResourcesResponse, Region, RunInstancesResponse, Tag,
    TagResource,
};
use super::{EcsClient, Params};
use crate::error::Error;
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

fn set_tags(params: &mut Params, tags: &[Tag]) {
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
            .opt("SpotStrategy", self.spot_strategy.as_ref())
            .opt("InternetChargeType", self.internet_charge_type.as_ref())
            .opt("InternetMaxBandwidthOut", self.internet_max_bandwidth_out)
            .opt("UserData", self.user_data.as_ref())
            .opt("DeletionProtection", self.deletion_protection)
            .opt("Amount", self.amount);
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
                .opt("SystemDisk.Size", disk.size);
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

    fn validate(&self) -> Result<(), Error> {
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
    /// Page size, at most 100 (the default here).
    pub max_results: Option<u32>,
}

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
    fn as_str(self) -> &'static str {
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
            .opt("DeletionProtection", self.deletion_protection);
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

fn instance_params(instance_id: &str) -> Params {
    let mut p = Params::new();
    p.set("InstanceId", instance_id);
    p
}

fn tag_params(resource_ids: &[String]) -> Params {
    let mut p = Params::new();
    p.set("ResourceType", "instance")
        .list("ResourceId", resource_ids);
    p
}

impl EcsClient {
    /// `RunInstances`: creates instances; idempotent through the ClientToken.
    pub async fn run_instances(
        &self,
        request: &RunInstancesRequest,
    ) -> Result<RunInstancesResponse, Error> {
        request.validate()?;
        let token = resolve_client_token("RunInstances", request.client_token.as_deref())?;
        self.call_typed("RunInstances", &request.to_params(&token))
            .await
    }

    /// One page of `DescribeInstances` for at most 100 IDs.
    pub async fn describe_instances_page(
        &self,
        request: &DescribeInstancesRequest,
        ids: &[String],
        next_token: Option<&str>,
    ) -> Result<DescribeInstancesResponse, Error> {
        if ids.len() > MAX_INSTANCE_IDS_PER_CALL {
            return Err(Error::InvalidRequest {
                action: "DescribeInstances".into(),
                reason: format!(
                    "{} instance IDs in one call; at most {MAX_INSTANCE_IDS_PER_CALL} are allowed",
                    ids.len()
                ),
            });
        }
        self.call_typed("DescribeInstances", &request.to_params(ids, next_token))
            .await
    }

    /// `DescribeInstances`, every page; IDs are sent in batches of at most 100. Unknown IDs are
    /// simply absent from the result.
    pub async fn describe_instances(
        &self,
        request: &DescribeInstancesRequest,
    ) -> Result<Vec<Instance>, Error> {
        let mut out = Vec::new();
        if request.instance_ids.is_empty() {
            self.describe_all_pages(request, &[], &mut out).await?;
        } else {
            for batch in request.instance_ids.chunks(MAX_INSTANCE_IDS_PER_CALL) {
                self.describe_all_pages(request, batch, &mut out).await?;
            }
        }
        Ok(out)
    }

    /// The instances with these IDs (batched by 100, all pages); no IDs, no call, no instances.
    pub async fn describe_instances_by_ids(&self, ids: &[String]) -> Result<Vec<Instance>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.describe_instances(&DescribeInstancesRequest {
            instance_ids: ids.to_vec(),
            ..DescribeInstancesRequest::default()
        })
        .await
    }

    async fn describe_all_pages(
        &self,
        request: &DescribeInstancesRequest,
        ids: &[String],
        out: &mut Vec<Instance>,
    ) -> Result<(), Error> {
        let mut seen = HashSet::new();
        let mut token: Option<String> = None;
        loop {
            let page = self
                .describe_instances_page(request, ids, token.as_deref())
                .await?;
            out.extend(page.instances.items);
            match page.next_token.filter(|t| !t.is_empty()) {
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Error::InvalidResponse {
                        action: "DescribeInstances".into(),
                        http_status: 200,
                        request_id: Some(page.request_id),
                        detail: format!("NextToken `{next}` repeated; pagination would never end"),
                    });
                }
                Some(next) => token = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// `DescribeInstanceAttribute`; an unknown ID is `InvalidInstanceId.NotFound`.
    pub async fn describe_instance_attribute(&self, instance_id: &str) -> Result<Instance, Error> {
        let response: DescribeInstanceAttributeResponse = self
            .call_typed("DescribeInstanceAttribute", &instance_params(instance_id))
            .await?;
        Ok(response.instance)
    }

    /// `StartInstance` (the instance must be Stopped).
    pub async fn start_instance(&self, instance_id: &str) -> Result<AckResponse, Error> {
        self.call_typed("StartInstance", &instance_params(instance_id))
            .await
    }

    /// `StopInstance` (the instance must be Running).
    pub async fn stop_instance(
        &self,
        instance_id: &str,
        force_stop: bool,
        stopped_mode: Option<StoppedMode>,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("ForceStop", force_stop)
            .opt("StoppedMode", stopped_mode.map(StoppedMode::as_str));
        self.call_typed("StopInstance", &p).await
    }

    /// `RebootInstance` (the instance must be Running).
    pub async fn reboot_instance(
        &self,
        instance_id: &str,
        force_stop: bool,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("ForceStop", force_stop);
        self.call_typed("RebootInstance", &p).await
    }

    /// `DeleteInstance`; `force` also releases a Running instance.
    pub async fn delete_instance(
        &self,
        instance_id: &str,
        force: bool,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("Force", force);
        self.call_typed("DeleteInstance", &p).await
    }

    /// `DeleteInstances` for at most 100 IDs, idempotent through the ClientToken.
    pub async fn delete_instances(
        &self,
        instance_ids: &[String],
        force: bool,
        client_token: Option<&str>,
    ) -> Result<AckResponse, Error> {
        if instance_ids.is_empty() || instance_ids.len() > MAX_INSTANCE_IDS_PER_CALL {
            return Err(Error::InvalidRequest {
                action: "DeleteInstances".into(),
                reason: format!(
                    "{} instance IDs given; between 1 and {MAX_INSTANCE_IDS_PER_CALL} are allowed",
                    instance_ids.len()
                ),
            });
        }
        let token = resolve_client_token("DeleteInstances", client_token)?;
        let mut p = Params::new();
        p.list("InstanceId", instance_ids)
            .set("Force", force)
            .set("ClientToken", token);
        self.call_typed("DeleteInstances", &p).await
    }

    /// `ModifyInstanceAttribute`.
    pub async fn modify_instance_attribute(
        &self,
        request: &ModifyInstanceAttributeRequest,
    ) -> Result<AckResponse, Error> {
        self.call_typed("ModifyInstanceAttribute", &request.to_params())
            .await
    }

    /// `ModifyInstanceSpec`.
    pub async fn modify_instance_spec(
        &self,
        request: &ModifyInstanceSpecRequest,
    ) -> Result<AckResponse, Error> {
        let token = resolve_client_token("ModifyInstanceSpec", request.client_token.as_deref())?;
        self.call_typed("ModifyInstanceSpec", &request.to_params(&token))
            .await
    }

    /// `TagResources`: adds or overwrites tags on instances (50 per call).
    pub async fn tag_resources(&self, instance_ids: &[String], tags: &[Tag]) -> Result<(), Error> {
        for batch in instance_ids.chunks(MAX_TAG_RESOURCES_PER_CALL) {
            let mut p = tag_params(batch);
            set_tags(&mut p, tags);
            let _: AckResponse = self.call_typed("TagResources", &p).await?;
        }
        Ok(())
    }

    /// `UntagResources`: removes tag keys from instances (50 per call).
    pub async fn untag_resources(
        &self,
        instance_ids: &[String],
        tag_keys: &[String],
    ) -> Result<(), Error> {
        for batch in instance_ids.chunks(MAX_TAG_RESOURCES_PER_CALL) {
            let mut p = tag_params(batch);
            p.list("TagKey", tag_keys);
            let _: AckResponse = self.call_typed("UntagResources", &p).await?;
        }
        Ok(())
    }

    /// `ListTagResources`: every (instance, tag) pair of these instances, all pages.
    pub async fn list_tag_resources(
        &self,
        instance_ids: &[String],
    ) -> Result<Vec<TagResource>, Error> {
        let mut out = Vec::new();
        for batch in instance_ids.chunks(MAX_TAG_RESOURCES_PER_CALL) {
            let mut token: Option<String> = None;
            let mut seen = HashSet::new();
            loop {
                let mut p = tag_params(batch);
                p.opt("NextToken", token.as_ref());
                let page: ListTagResourcesResponse =
                    self.call_typed("ListTagResources", &p).await?;
                out.extend(page.tag_resources.items);
                match page.next_token.filter(|t| !t.is_empty()) {
                    Some(next) if seen.insert(next.clone()) => token = Some(next),
                    Some(next) => {
                        return Err(Error::InvalidResponse {
                            action: "ListTagResources".into(),
                            http_status: 200,
                            request_id: Some(page.request_id),
                            detail: format!(
                                "NextToken `{next}` repeated; pagination would never end"
                            ),
                        });
                    }
                    None => break,
                }
            }
        }
        Ok(out)
    }

    /// `DescribeRegions`.
    pub async fn describe_regions(&self) -> Result<Vec<Region>, Error> {
        let response: DescribeRegionsResponse =
            self.call_typed("DescribeRegions", &Params::new()).await?;
        Ok(response.regions.items)
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
            ..DescribeInstancesRequest::default()
        };
        let p = request.to_params(&["i-1".into(), "i-2".into()], Some("tok"));
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
