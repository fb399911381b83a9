//! The ECS actions (version `2014-05-26`): parameters in, JSON out, with ECS's rules.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::catalog;
use crate::error::ErrorResponse;
use crate::instance::{InstanceView, Status};
use crate::instance_settings_actions as settings;
use crate::launch::{self, LaunchSpec, MAX_TAGS};
use crate::received_params::ReceivedParams;
use crate::security_group_actions;
use crate::store::{Filters, Paging, Release, Store};

/// The ECS API version.
pub const VERSION: &str = "2014-05-26";

/// Every ECS action the mock serves.
pub const ACTIONS: &[&str] = &[
    "RunInstances",
    "DescribeInstances",
    "DescribeInstanceAttribute",
    "StartInstance",
    "StopInstance",
    "RebootInstance",
    "DeleteInstance",
    "DeleteInstances",
    "ModifyInstanceAttribute",
    "ModifyInstanceSpec",
    "TagResources",
    "UntagResources",
    "ListTagResources",
    "DescribeRegions",
    "ModifyInstanceNetworkSpec",
    "ModifyInstanceMetadataOptions",
    "AttachInstanceRamRole",
    "DetachInstanceRamRole",
    "DescribeInstanceRamRole",
    "JoinResourceGroup",
    "ModifyInstanceAutoRenewAttribute",
    "DescribeInstanceAutoRenewAttribute",
    "ModifyInstanceChargeType",
    "ReplaceSystemDisk",
    "ModifyInstanceVpcAttribute",
    "AssignIpv6Addresses",
    "UnassignIpv6Addresses",
    "ModifyInstanceDeployment",
];

/// What an action needs besides its parameters.
pub struct ActionContext<'a> {
    pub caller: &'a Caller,
    pub request_id: &'a str,
    pub now: Timestamp,
    pub delay: Duration,
    pub quota: Option<usize>,
}

/// Runs `action` against the store.
pub fn dispatch(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    action: &str,
    p: &ReceivedParams,
) -> Result<String, ErrorResponse> {
    let account = &ctx.caller.account_id;
    let result = match action {
        "RunInstances" => run_instances(store, ctx, p)?,
        "DescribeInstances" => return describe_instances(store, ctx, p),
        "DescribeInstanceAttribute" => {
            let id = p.required("InstanceId")?;
            let instance = store.find(account, None, id)?.view(ctx.now);
            return to_text(&AttributeReply {
                request_id: ctx.request_id,
                instance,
            });
        }
        "StartInstance" => {
            let id = p.required("InstanceId")?;
            if dry_run(p)? {
                store.find(account, None, id)?;
                return Err(dry_run_passed());
            }
            store.start(account, id, ctx.now, ctx.delay)?;
            json!({})
        }
        "StopInstance" => {
            let id = p.required("InstanceId")?;
            p.bool("ForceStop")?;
            let stop_charging = match p.get("StoppedMode") {
                None | Some("KeepCharging") => false,
                Some("StopCharging") => true,
                Some(_) => return Err(ErrorResponse::invalid("StoppedMode")),
            };
            if dry_run(p)? {
                store.find(account, None, id)?;
                return Err(dry_run_passed());
            }
            store.stop(account, id, stop_charging, ctx.now, ctx.delay)?;
            json!({})
        }
        "RebootInstance" => {
            let id = p.required("InstanceId")?;
            p.bool("ForceStop")?;
            if dry_run(p)? {
                store.find(account, None, id)?;
                return Err(dry_run_passed());
            }
            store.reboot(account, id, ctx.now, ctx.delay)?;
            json!({})
        }
        "DeleteInstance" => {
            let id = p.required("InstanceId")?.to_owned();
            let release = release(p)?;
            if dry_run(p)? {
                store.find(account, None, &id)?;
                return Err(dry_run_passed());
            }
            store.delete(account, None, &[id], release, None, ctx.now)?;
            json!({})
        }
        "DeleteInstances" => {
            let region = catalog::region_by_id(p.required("RegionId")?)?;
            let ids = p.list("InstanceId", 100)?;
            if ids.is_empty() {
                return Err(ErrorResponse::missing("InstanceId.1"));
            }
            let release = release(p)?;
            let token = p.get("ClientToken");
            if let Some(t) = token {
                launch::check_client_token(t)?;
            }
            if dry_run(p)? {
                for id in &ids {
                    store.find(account, Some(region.id), id)?;
                }
                return Err(dry_run_passed());
            }
            store.delete(account, Some(region.id), &ids, release, token, ctx.now)?;
            json!({})
        }
        "ModifyInstanceAttribute" => modify_attribute(store, ctx, p)?,
        "ModifyInstanceSpec" => modify_spec(store, ctx, p)?,
        "TagResources"
            if p.get("ResourceType")
                .is_some_and(|t| t.eq_ignore_ascii_case("securitygroup")) =>
        {
            crate::security_group_actions::tag_groups(store, ctx, p)?
        }
        "UntagResources"
            if p.get("ResourceType")
                .is_some_and(|t| t.eq_ignore_ascii_case("securitygroup")) =>
        {
            crate::security_group_actions::untag_groups(store, ctx, p)?
        }
        "TagResources" if crate::disk_actions::is_disk_tag_call(p) => {
            crate::disk_actions::tag_disks(store, ctx, p)?
        }
        "UntagResources" if crate::disk_actions::is_disk_tag_call(p) => {
            crate::disk_actions::untag_disks(store, ctx, p)?
        }
        "TagResources" if crate::key_pair_actions::is_key_pair_tag_call(p) => {
            crate::key_pair_actions::tag_key_pairs(store, ctx, p, false)?
        }
        "UntagResources" if crate::key_pair_actions::is_key_pair_tag_call(p) => {
            crate::key_pair_actions::tag_key_pairs(store, ctx, p, true)?
        }
        "TagResources" => tag_resources(store, ctx, p)?,
        "UntagResources" => untag_resources(store, ctx, p)?,
        "ListTagResources" => list_tag_resources(store, ctx, p)?,
        "DescribeRegions" => describe_regions(),
        "ModifyInstanceNetworkSpec" => settings::modify_network_spec(store, ctx, p)?,
        "ModifyInstanceMetadataOptions" => settings::modify_metadata_options(store, ctx, p)?,
        "AttachInstanceRamRole" => settings::attach_ram_role(store, ctx, p)?,
        "DetachInstanceRamRole" => settings::detach_ram_role(store, ctx, p)?,
        "DescribeInstanceRamRole" => settings::describe_ram_role(store, ctx, p)?,
        "JoinResourceGroup" => settings::join_resource_group(store, ctx, p)?,
        "ModifyInstanceAutoRenewAttribute" => settings::modify_auto_renew(store, ctx, p)?,
        "DescribeInstanceAutoRenewAttribute" => settings::describe_auto_renew(store, ctx, p)?,
        "ModifyInstanceChargeType" => settings::modify_charge_type(store, ctx, p)?,
        "ReplaceSystemDisk" => settings::replace_system_disk(store, ctx, p)?,
        "ModifyInstanceDeployment" => {
            crate::deployment_sets::modify_instance_deployment(store, ctx, p)?
        }
        "AssignIpv6Addresses" => crate::instance_ipv6_actions::assign(store, ctx, p)?,
        "UnassignIpv6Addresses" => crate::instance_ipv6_actions::unassign(store, ctx, p)?,
        "ModifyInstanceVpcAttribute" => {
            crate::instance_vpc_actions::modify_instance_vpc_attribute(store, ctx, p)?
        }
        other if security_group_actions::ACTIONS.contains(&other) => {
            security_group_actions::dispatch(store, ctx, other, p)?
        }
        other if crate::disk_actions::ACTIONS.contains(&other) => {
            crate::disk_actions::dispatch(store, ctx, other, p)?
        }
        other if crate::key_pair_actions::ACTIONS.contains(&other) => {
            crate::key_pair_actions::dispatch(store, ctx, other, p)?
        }
        _ => return Err(action_not_found()),
    };
    Ok(with_request_id(result, ctx.request_id).to_string())
}

/// `DescribeInstanceAttribute`: the instance, flat, with `RequestId`.
#[derive(Serialize)]
struct AttributeReply<'a> {
    #[serde(rename = "RequestId")]
    request_id: &'a str,
    #[serde(flatten)]
    instance: InstanceView<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DescribeInstancesReply<'a> {
    request_id: &'a str,
    total_count: usize,
    page_number: usize,
    page_size: usize,
    next_token: String,
    instances: InstanceListView<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InstanceListView<'a> {
    instance: Vec<InstanceView<'a>>,
}

fn to_text(reply: &impl Serialize) -> Result<String, ErrorResponse> {
    serde_json::to_string(reply).map_err(|e| {
        ErrorResponse::new(
            500,
            "InternalError",
            format!("The response could not be encoded: {e}"),
        )
    })
}

/// `InvalidAction.NotFound` (404).
pub fn action_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidAction.NotFound",
        "Specified api is not found, please check your url and method.",
    )
}

fn with_request_id(mut value: Value, request_id: &str) -> Value {
    if let Some(map) = value.as_object_mut() {
        map.insert("RequestId".to_owned(), Value::from(request_id));
    }
    value
}

/// One page (`number` from 1, `size` items) of `items`, and the total.
pub fn page_of<T: Copy>(items: &[T], number: usize, size: usize) -> (usize, Vec<T>) {
    let start = number
        .saturating_sub(1)
        .saturating_mul(size)
        .min(items.len());
    let end = start.saturating_add(size).min(items.len());
    (items.len(), items[start..end].to_vec())
}

/// `DryRun`.
pub fn dry_run(p: &ReceivedParams) -> Result<bool, ErrorResponse> {
    Ok(p.bool("DryRun")?.unwrap_or(false))
}

/// ECS answers a successful dry run with this error.
pub fn dry_run_passed() -> ErrorResponse {
    ErrorResponse::bad_request(
        "DryRunOperation",
        "Request validation has been passed with DryRun flag set.",
    )
}

/// `Force` and `TerminateSubscription` of DeleteInstance(s).
fn release(p: &ReceivedParams) -> Result<Release, ErrorResponse> {
    Ok(Release {
        force: p.bool("Force")?.unwrap_or(false),
        terminate_subscription: p.bool("TerminateSubscription")?.unwrap_or(false),
    })
}

fn owned(p: &ReceivedParams, name: &str) -> Option<String> {
    p.get(name).map(str::to_owned)
}

/// The `RunInstances` parameters as a [`LaunchSpec`].
pub fn launch_spec(p: &ReceivedParams) -> Result<LaunchSpec, ErrorResponse> {
    let mut security_group_ids = p.list("SecurityGroupIds", 16)?;
    if let Some(sg) = p.get("SecurityGroupId") {
        if !security_group_ids.is_empty() {
            return Err(ErrorResponse::bad_request(
                "InvalidSecurityGroupId.SingleIdAndMultiIdConflict",
                "You cannot specify both SecurityGroupId and SecurityGroupIds.N; use one of them.",
            ));
        }
        security_group_ids.push(sg.to_owned());
    }
    for (i, id) in security_group_ids.iter().enumerate() {
        if security_group_ids[..i].contains(id) {
            return Err(ErrorResponse::bad_request(
                "InvalidParameter.SecurityGroupIdRepeated",
                format!(
                    "The security group \"{}\" is given more than once in SecurityGroupIds.N.",
                    crate::error::truncate(id, 64)
                ),
            ));
        }
    }
    let tags = p
        .key_values("Tag", MAX_TAGS)
        .map_err(|e| {
            if e.code == "InvalidParameter" {
                launch::too_many_tags()
            } else {
                e
            }
        })?
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect();
    let password_digest = p
        .get("Password")
        .map(|password| launch::check_password(password).map(|()| crate::password_digest(password)))
        .transpose()?;
    Ok(LaunchSpec {
        region_id: p.required("RegionId")?.to_owned(),
        zone_id: owned(p, "ZoneId"),
        image_id: p.required("ImageId")?.to_owned(),
        instance_type: p.required("InstanceType")?.to_owned(),
        instance_name: owned(p, "InstanceName"),
        description: owned(p, "Description"),
        host_name: owned(p, "HostName"),
        vswitch_id: owned(p, "VSwitchId"),
        security_group_ids,
        internet_max_bandwidth_out: p.number::<u32>("InternetMaxBandwidthOut")?.unwrap_or(0),
        internet_charge_type: owned(p, "InternetChargeType"),
        instance_charge_type: owned(p, "InstanceChargeType"),
        period: p.number::<u32>("Period")?,
        period_unit: owned(p, "PeriodUnit"),
        auto_renew: p.bool("AutoRenew")?.unwrap_or(false),
        auto_renew_period: p.number::<u32>("AutoRenewPeriod")?,
        spot_strategy: owned(p, "SpotStrategy"),
        system_disk_category: owned(p, "SystemDisk.Category"),
        system_disk_size: p.number::<u32>("SystemDisk.Size")?,
        system_disk_performance_level: owned(p, "SystemDisk.PerformanceLevel"),
        data_disks: data_disks(p)?,
        tags,
        user_data: owned(p, "UserData"),
        password_digest,
        deletion_protection: p.bool("DeletionProtection")?.unwrap_or(false),
        key_pair_name: owned(p, "KeyPairName"),
        client_token: owned(p, "ClientToken"),
        ram_role_name: owned(p, "RamRoleName"),
        http_endpoint: owned(p, "HttpEndpoint"),
        http_tokens: owned(p, "HttpTokens"),
        http_put_response_hop_limit: p.number::<u32>("HttpPutResponseHopLimit")?,
        resource_group_id: owned(p, "ResourceGroupId"),
        spot_price_limit: owned(p, "SpotPriceLimit"),
        spot_duration: p.number::<u32>("SpotDuration")?,
        spot_interruption_behavior: owned(p, "SpotInterruptionBehavior"),
        security_enhancement_strategy: owned(p, "SecurityEnhancementStrategy"),
        credit_specification: owned(p, "CreditSpecification"),
        private_ip_address: owned(p, "PrivateIpAddress"),
        deployment_set_id: owned(p, "DeploymentSetId"),
        ipv6_address_count: p.number::<usize>("Ipv6AddressCount")?,
    })
}

/// The `DataDisk.N.*` parameters, in index order.
fn data_disks(p: &ReceivedParams) -> Result<Vec<launch::DataDiskSpec>, ErrorResponse> {
    let indices = p.indices("DataDisk")?;
    if indices.len() > launch::MAX_DATA_DISKS {
        return Err(ErrorResponse::bad_request(
            "InvalidDataDiskCount.LimitExceed",
            format!(
                "An instance is created with at most {} data disks; attach more later with AttachDisk.",
                launch::MAX_DATA_DISKS
            ),
        ));
    }
    indices
        .into_iter()
        .map(|n| {
            let field = |name: &str| format!("DataDisk.{n}.{name}");
            Ok(launch::DataDiskSpec {
                category: owned(p, &field("Category")),
                size: p.number::<u32>(&field("Size"))?,
                performance_level: owned(p, &field("PerformanceLevel")),
                snapshot_id: owned(p, &field("SnapshotId")),
                disk_name: owned(p, &field("DiskName")),
                description: owned(p, &field("Description")),
                encrypted: p.bool(&field("Encrypted"))?.unwrap_or(false),
                delete_with_instance: p.bool(&field("DeleteWithInstance"))?,
            })
        })
        .collect()
}

fn run_instances(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let spec = launch_spec(p)?;
    let amount = p.number_in::<usize>("Amount", 1, 100)?.unwrap_or(1);
    if dry_run(p)? {
        let resolved = spec.resolve(store.network.account(&ctx.caller.account_id), ctx.now)?;
        store.check_key_pair(
            &ctx.caller.account_id,
            resolved.region.id,
            resolved.image,
            &spec,
        )?;
        return Err(dry_run_passed());
    }
    let ids = store.launch(
        &ctx.caller.account_id,
        &spec,
        amount,
        ctx.now,
        ctx.delay,
        ctx.quota,
    )?;
    Ok(json!({"InstanceIdSets": {"InstanceIdSet": ids}, "TradePrice": 0.0}))
}

fn malformed_ids() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidInstanceIds.Malformed",
        "InstanceIds must be a JSON array of at most 100 instance IDs, e.g. [\"i-1\",\"i-2\"].",
    )
}

fn next_token(seq: Option<u64>) -> String {
    seq.map(|s| format!("{s:016x}")).unwrap_or_default()
}

fn describe_instances(
    store: &Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<String, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let instance_ids = p
        .json_string_array("InstanceIds")
        .map_err(|_| malformed_ids())?;
    if instance_ids.as_ref().is_some_and(|ids| ids.len() > 100) {
        return Err(malformed_ids());
    }
    let status = p
        .get("Status")
        .map(|s| Status::parse(s).ok_or_else(|| ErrorResponse::invalid("Status")))
        .transpose()?;
    let filters = Filters {
        instance_ids,
        status,
        instance_name: owned(p, "InstanceName"),
        tags: p.key_values("Tag", MAX_TAGS)?,
        zone_id: owned(p, "ZoneId"),
        vpc_id: owned(p, "VpcId"),
        vswitch_id: owned(p, "VSwitchId"),
        instance_type: owned(p, "InstanceType"),
        image_id: owned(p, "ImageId"),
    };
    let token_mode = p.get("NextToken").is_some() || p.get("MaxResults").is_some();
    let (paging, page_number, page_size) = if token_mode {
        let max = p.number_in::<usize>("MaxResults", 1, 100)?.unwrap_or(10);
        let after = p
            .get("NextToken")
            .map(|t| u64::from_str_radix(t, 16).map_err(|_| ErrorResponse::invalid("NextToken")))
            .transpose()?;
        (Paging::Token { after, max }, 1, max)
    } else {
        let number = p
            .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
            .unwrap_or(1);
        let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
        (Paging::Pages { number, size }, number, size)
    };
    let page = store.describe(&ctx.caller.account_id, region.id, &filters, paging, ctx.now);
    to_text(&DescribeInstancesReply {
        request_id: ctx.request_id,
        total_count: page.total,
        page_number,
        page_size,
        next_token: next_token(page.next),
        instances: InstanceListView {
            instance: page.instances.iter().map(|i| i.view(ctx.now)).collect(),
        },
    })
}

fn modify_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let name = p.get("InstanceName");
    let description = p.get("Description");
    let host = p.get("HostName");
    let user_data = p.get("UserData");
    let protection = p.bool("DeletionProtection")?;
    let groups = p.list("SecurityGroupIds", 16)?;
    let credit = p.get("CreditSpecification");
    name.map(launch::check_instance_name).transpose()?;
    description.map(launch::check_description).transpose()?;
    host.map(launch::check_host_name).transpose()?;
    user_data.map(launch::check_user_data).transpose()?;
    let password = p.get("Password");
    password.map(launch::check_password).transpose()?;
    let (region_id, vpc_id) = {
        let i = store.find(&ctx.caller.account_id, None, id)?;
        (i.region_id, i.vpc_id.clone())
    };
    let network = store.network.account(&ctx.caller.account_id);
    for group in &groups {
        if network.group(region_id, group)?.vpc_id != vpc_id {
            return Err(ErrorResponse::bad_request(
                "InvalidSecurityGroup.VpcMismatch",
                "The specified security group and the instance are not in the same VPC.",
            ));
        }
    }
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    if user_data.is_some() && instance.status(ctx.now) != Status::Stopped {
        return Err(ErrorResponse::incorrect_status());
    }
    // A password is reset on a Running or Stopped instance and takes effect at its next start.
    if password.is_some() && !matches!(instance.status(ctx.now), Status::Running | Status::Stopped)
    {
        return Err(ErrorResponse::incorrect_status());
    }
    let credit = credit
        .map(|mode| crate::credit::check(instance.instance_type, mode))
        .transpose()?;
    if let Some(mode) = credit {
        instance.credit_specification = Some(mode);
    }
    if let Some(v) = name {
        instance.name = v.to_owned();
    }
    if let Some(v) = description {
        instance.description = v.to_owned();
    }
    if let Some(v) = host {
        instance.host_name = v.to_owned();
    }
    if let Some(v) = user_data {
        instance.user_data = Some(v.to_owned());
    }
    if let Some(v) = password {
        instance.password.set(crate::password_digest(v));
    }
    if let Some(v) = protection {
        instance.deletion_protection = v;
    }
    if !groups.is_empty() {
        instance.security_group_ids = groups;
    }
    Ok(json!({}))
}

fn modify_spec(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let new_type = p
        .get("InstanceType")
        .map(catalog::instance_type)
        .transpose()?;
    let bandwidth = p.number::<u32>("InternetMaxBandwidthOut")?;
    if new_type.is_none() && bandwidth.is_none() {
        return Err(ErrorResponse::missing("InstanceType"));
    }
    bandwidth.map(launch::check_bandwidth).transpose()?;
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    if let Some(t) = new_type {
        if instance.status(ctx.now) != Status::Stopped {
            return Err(ErrorResponse::incorrect_status());
        }
        instance.instance_type = catalog::instance_type_in_stock(t.id)?;
        instance.credit_specification =
            crate::credit::after_type_change(instance.instance_type, instance.credit_specification);
    }
    if let Some(mbps) = bandwidth {
        instance.bandwidth_out = mbps;
        if mbps > 0 && instance.public_ip.is_none() {
            instance.public_ip = Some(Store::public_ip(instance.seq));
        }
    }
    Ok(json!({}))
}

fn check_resource_type(p: &ReceivedParams) -> Result<(), ErrorResponse> {
    match p.required("ResourceType")? {
        t if t.eq_ignore_ascii_case("instance") => Ok(()),
        _ => Err(ErrorResponse::bad_request(
            "InvalidResourceType.NotSupported",
            "Only ResourceType \"instance\", \"disk\", \"keypair\" and \"securitygroup\" are supported by this endpoint.",
        )),
    }
}

fn resource_ids(p: &ReceivedParams, required: bool) -> Result<Vec<String>, ErrorResponse> {
    let ids = p.list("ResourceId", 50)?;
    if required && ids.is_empty() {
        return Err(ErrorResponse::missing("ResourceId.1"));
    }
    Ok(ids)
}

fn tag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    check_resource_type(p)?;
    let (ids, tags) = crate::network_tags::tag_request(p)?;
    let account = &ctx.caller.account_id;
    for id in &ids {
        let instance = store.find(account, Some(region.id), id)?;
        let added = tags
            .iter()
            .filter(|(k, _)| !instance.has_tag(k, None))
            .count();
        if instance.tags.len() + added > MAX_TAGS {
            return Err(launch::too_many_tags());
        }
    }
    for id in &ids {
        let instance = store.find_mut(account, Some(region.id), id)?;
        for (key, value) in &tags {
            match instance.tags.iter_mut().find(|(k, _)| k == key) {
                Some(existing) => existing.1.clone_from(value),
                None => instance.tags.push((key.clone(), value.clone())),
            }
        }
        for (key, value) in &tags {
            store.index_tag(id, key, value);
        }
    }
    Ok(json!({}))
}

fn untag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    check_resource_type(p)?;
    let ids = resource_ids(p, true)?;
    let keys = p.list("TagKey", MAX_TAGS)?;
    let all = p.bool("All")?.unwrap_or(false);
    let account = &ctx.caller.account_id;
    for id in &ids {
        store.find(account, Some(region.id), id)?;
    }
    for id in &ids {
        let instance = store.find_mut(account, Some(region.id), id)?;
        if all {
            instance.tags.clear();
        } else {
            instance.tags.retain(|(k, _)| !keys.contains(k));
        }
    }
    Ok(json!({}))
}

fn list_tag_resources(
    store: &Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    check_resource_type(p)?;
    let ids = resource_ids(p, false)?;
    let filter_tags = p.key_values("Tag", MAX_TAGS)?;
    if ids.is_empty() && filter_tags.is_empty() {
        return Err(ErrorResponse::missing("ResourceId.1"));
    }
    let offset = p
        .get("NextToken")
        .map(|t| {
            t.parse::<usize>()
                .map_err(|_| ErrorResponse::invalid("NextToken"))
        })
        .transpose()?
        .unwrap_or(0);
    let page_size = 50;
    let account: &Arc<str> = &ctx.caller.account_id;
    let instances: Vec<_> = if ids.is_empty() {
        let filters = Filters {
            tags: filter_tags.clone(),
            ..Filters::default()
        };
        store
            .describe(
                account,
                region.id,
                &filters,
                Paging::Pages {
                    number: 1,
                    size: usize::MAX,
                },
                ctx.now,
            )
            .instances
    } else {
        ids.iter()
            .filter_map(|id| store.find(account, Some(region.id), id).ok())
            .filter(|i| filter_tags.iter().all(|(k, v)| i.has_tag(k, v.as_deref())))
            .collect()
    };
    let pairs: Vec<Value> = instances
        .iter()
        .flat_map(|i| {
            i.tags.iter().map(|(k, v)| {
                json!({"ResourceType": "instance", "ResourceId": i.id, "TagKey": k, "TagValue": v})
            })
        })
        .collect();
    let end = offset.saturating_add(page_size).min(pairs.len());
    let page = pairs.get(offset.min(end)..end).unwrap_or_default().to_vec();
    let next = if end < pairs.len() {
        end.to_string()
    } else {
        String::new()
    };
    Ok(json!({"NextToken": next, "TagResources": {"TagResource": page}}))
}

fn describe_regions() -> Value {
    let regions: Vec<Value> = catalog::regions()
        .iter()
        .map(|r| {
            json!({
                "RegionId": r.id,
                "LocalName": r.local_name,
                "RegionEndpoint": r.endpoint(),
                "Status": "available",
            })
        })
        .collect();
    json!({"Regions": {"Region": regions}})
}
