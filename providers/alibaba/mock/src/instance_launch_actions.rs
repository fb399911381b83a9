//! RunInstances: its parameters read into a [`LaunchSpec`] (the checks are `launch`'s), then the
//! instances launched, or the dry run answered.

use serde_json::{Value, json};

use crate::action::{ActionContext, dry_run, dry_run_passed};
use crate::error::ErrorResponse;
use crate::launch::MAX_DATA_DISKS;
use crate::launch_spec::{DataDiskSpec, LaunchSpec};
use crate::param_checks;
use crate::password::password_digest;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

fn owned(p: &ReceivedParams, name: &str) -> Option<String> {
    p.get(name).map(str::to_owned)
}

/// The `RunInstances` parameters as a [`LaunchSpec`].
fn launch_spec(p: &ReceivedParams) -> Result<LaunchSpec, ErrorResponse> {
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
    let tags = tags::given(p)?;
    let password_digest = p
        .get("Password")
        .map(|password| param_checks::check_password(password).map(|()| password_digest(password)))
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
fn data_disks(p: &ReceivedParams) -> Result<Vec<DataDiskSpec>, ErrorResponse> {
    let indices = p.indices("DataDisk")?;
    if indices.len() > MAX_DATA_DISKS {
        return Err(ErrorResponse::bad_request(
            "InvalidDataDiskCount.LimitExceed",
            format!(
                "An instance is created with at most {} data disks; attach more later with AttachDisk.",
                MAX_DATA_DISKS
            ),
        ));
    }
    indices
        .into_iter()
        .map(|n| {
            let field = |name: &str| format!("DataDisk.{n}.{name}");
            Ok(DataDiskSpec {
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

pub fn run_instances(
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
    let mut answer = json!({"InstanceIdSets": {"InstanceIdSet": ids}, "TradePrice": 0.0});
    // `OrderId` is returned only for `InstanceChargeType=PrePaid` (API reference).
    if spec.instance_charge_type.as_deref() == Some("PrePaid") {
        answer["OrderId"] = json!(crate::subscription::order_id(ctx.now));
    }
    Ok(answer)
}
