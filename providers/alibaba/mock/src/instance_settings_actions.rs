//! ECS actions that change one setting of running instances: the public network billing and
//! bandwidth (`ModifyInstanceNetworkSpec`), the metadata service
//! (`ModifyInstanceMetadataOptions`), the instance RAM role (`AttachInstanceRamRole`,
//! `DetachInstanceRamRole`, `DescribeInstanceRamRole`), the resource group
//! (`JoinResourceGroup`), the billing method (`ModifyInstanceChargeType`), the image
//! (`ReplaceSystemDisk`, Stopped instances only) and the auto-renewal of subscription instances (`ModifyInstanceAutoRenewAttribute`,
//! `DescribeInstanceAutoRenewAttribute`).

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::catalog;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::launch;
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;

pub(crate) fn modify_network_spec(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let bandwidth = p.number::<u32>("InternetMaxBandwidthOut")?;
    bandwidth.map(param_checks::check_bandwidth).transpose()?;
    let charge_type = match p.get("NetworkChargeType") {
        None => None,
        Some("PayByTraffic") => Some("PayByTraffic"),
        Some("PayByBandwidth") => Some("PayByBandwidth"),
        Some(_) => {
            return Err(ErrorResponse::bad_request(
                "InvalidInternetChargeType.ValueNotSupported",
                "The specified NetworkChargeType is not supported: PayByTraffic or PayByBandwidth.",
            ));
        }
    };
    let allocate = p.bool("AllocatePublicIp")?.unwrap_or(false);
    if let Some(token) = p.get("ClientToken") {
        param_checks::check_client_token(token)?;
    }
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    if instance.status(ctx.now) == Status::Pending {
        return Err(ErrorResponse::initializing());
    }
    if bandwidth.is_none() && charge_type.is_none() && !allocate {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.Conflict",
            "Specify at least one of InternetMaxBandwidthOut, NetworkChargeType and AllocatePublicIp.",
        ));
    }
    if charge_type.is_some_and(|c| c == instance.internet_charge_type) {
        return Err(ErrorResponse::bad_request(
            "InvalidInternetChargeType.ValueNotSupported",
            "The specified InternetChargeType is invalid: it is the instance's current network billing method.",
        ));
    }
    if let Some(c) = charge_type {
        instance.internet_charge_type = c;
    }
    if let Some(mbps) = bandwidth {
        instance.bandwidth_out = mbps;
    }
    // A pay-as-you-go instance gets a public IP only when asked (or it had one); a
    // subscription instance gets one automatically.
    let wants_ip = allocate || instance.charge_type == "PrePaid" || instance.public_ip.is_some();
    if instance.bandwidth_out > 0 && wants_ip && instance.public_ip.is_none() {
        instance.public_ip = Some(Store::public_ip(instance.seq));
    }
    // A subscription's bandwidth change is an order; a pay-as-you-go one is not (the docs are
    // silent on the pay-as-you-go answer: the empty string, like the mock's other OrderIds).
    let order = if instance.charge_type == "PrePaid" {
        crate::subscription::order_id(ctx.now)
    } else {
        String::new()
    };
    Ok(json!({"OrderId": order}))
}

pub(crate) fn modify_metadata_options(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    catalog::region_by_id(p.required("RegionId")?)?;
    let id = p.required("InstanceId")?;
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    let options = launch::metadata_options(
        p.get("HttpEndpoint"),
        p.get("HttpTokens"),
        p.number::<u32>("HttpPutResponseHopLimit")?,
        instance.metadata,
    )?;
    instance.metadata = options;
    Ok(json!({}))
}

fn instance_ids(p: &ReceivedParams) -> Result<Vec<String>, ErrorResponse> {
    let malformed = || {
        ErrorResponse::bad_request(
            "InvalidInstanceIds.Malformed",
            "The specified instanceIds are not valid.",
        )
    };
    let ids = p
        .json_string_array("InstanceIds")
        .map_err(|_| malformed())?
        .unwrap_or_default();
    if ids.is_empty() || ids.len() > 100 {
        return Err(malformed());
    }
    Ok(ids)
}

/// One instance's outcome in an Attach/DetachInstanceRamRole answer.
fn result(id: &str, code: &str, message: &str, role: Option<&str>) -> Value {
    json!({
        "Code": code,
        "Message": message,
        "InstanceId": id,
        "Success": code == "200",
        "InstanceRamRoleSets": {"InstanceRamRoleSet": role
            .map(|r| vec![json!({"InstanceId": id, "RamRoleName": r})])
            .unwrap_or_default()},
    })
}

/// The per-instance results of an Attach/DetachInstanceRamRole call and how many failed:
/// `outcome` gives each instance's RAM role after the change, or ECS's code and message.
fn ram_role_results(
    ids: &[String],
    mut outcome: impl FnMut(&str) -> Result<String, (String, String)>,
) -> (Vec<Value>, usize) {
    let mut failed = 0;
    let results = ids
        .iter()
        .map(|id| match outcome(id) {
            Ok(role) => result(id, "200", "success", Some(&role)),
            Err((code, message)) => {
                failed += 1;
                result(id, &code, &message, None)
            }
        })
        .collect();
    (results, failed)
}

pub(crate) fn attach_ram_role(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let role = p.required("RamRoleName")?;
    param_checks::check_ram_role_name(role)?;
    let ids = instance_ids(p)?;
    let account = &ctx.caller.account_id;
    let (results, failed) = ram_role_results(&ids, |id| {
        match store.find_mut(account, Some(region.id), id) {
            Err(e) => Err((e.code.to_string(), e.message.clone())),
            // ECS's reference says only that an error is returned, with no code of its own in
            // the action's list: this one is the mock's. ferroplane detaches before attaching.
            Ok(i) if i.ram_role_name.is_some() => Err((
                "InvalidRamRole.Attached".to_owned(),
                "The instance already has an instance RAM role; detach it first.".to_owned(),
            )),
            Ok(i) => {
                i.ram_role_name = Some(role.to_owned());
                Ok(role.to_owned())
            }
        }
    });
    Ok(json!({
        "RamRoleName": role,
        "TotalCount": ids.len(),
        "FailCount": failed,
        "AttachInstanceRamRoleResults": {"AttachInstanceRamRoleResult": results},
    }))
}

pub(crate) fn detach_ram_role(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let role = p.get("RamRoleName");
    let ids = instance_ids(p)?;
    let account = &ctx.caller.account_id;
    let (results, failed) = ram_role_results(&ids, |id| {
        match store.find_mut(account, Some(region.id), id) {
            Err(e) => Err((e.code.to_string(), e.message.clone())),
            // Neither refusal has a documented code (the action lists only malformed IDs,
            // unknown instances and pass-role permissions): the codes are the mock's.
            Ok(i) => match (&i.ram_role_name, role) {
                (None, _) => Err((
                    "InvalidRamRole.NotAttached".to_owned(),
                    "The instance has no instance RAM role.".to_owned(),
                )),
                (Some(have), Some(want)) if have != want => Err((
                    "InvalidRamRole.NotEqual".to_owned(),
                    "The specified RamRoleName is not the instance's RAM role.".to_owned(),
                )),
                (Some(have), _) => {
                    let detached = have.clone();
                    i.ram_role_name = None;
                    Ok(detached)
                }
            },
        }
    });
    Ok(json!({
        "RamRoleName": role.unwrap_or_default(),
        "TotalCount": ids.len(),
        "FailCount": failed,
        "DetachInstanceRamRoleResults": {"DetachInstanceRamRoleResult": results},
    }))
}

pub(crate) fn describe_ram_role(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let ids = p
        .json_string_array("InstanceIds")
        .map_err(|_| ErrorResponse::invalid("InstanceIds"))?
        .unwrap_or_default();
    let role = p.get("RamRoleName");
    if ids.is_empty() && role.is_none() {
        return Err(ErrorResponse::missing("InstanceIds"));
    }
    let account = &ctx.caller.account_id;
    let sets: Vec<Value> = store
        .in_region(account, region.id)
        .filter(|i| ids.is_empty() || ids.contains(&i.id))
        .filter_map(|i| {
            let have = i.ram_role_name.as_deref()?;
            role.is_none_or(|r| r == have)
                .then(|| json!({"InstanceId": i.id, "RamRoleName": have}))
        })
        .collect();
    Ok(json!({
        "RegionId": region.id,
        "TotalCount": sets.len(),
        "InstanceRamRoleSets": {"InstanceRamRoleSet": sets},
    }))
}

pub(crate) fn join_resource_group(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let group = p.required("ResourceGroupId")?;
    let id = p.required("ResourceId")?;
    match p.required("ResourceType")? {
        "instance" => {}
        _ => {
            return Err(ErrorResponse::bad_request(
                "InvalidResourceType.NotSupported",
                "Only ResourceType \"instance\" is supported by this endpoint.",
            ));
        }
    }
    let group = crate::resource_groups::resolve(Some(group))?;
    let instance = store.find_mut(&ctx.caller.account_id, Some(region.id), id)?;
    instance.resource_group_id = group.to_owned();
    Ok(json!({}))
}

/// The renewal lengths ECS accepts per unit.
fn check_renewal_duration(unit: &str, duration: u32) -> Result<(), ErrorResponse> {
    let allowed: &[u32] = match unit {
        "Month" => &[1, 2, 3, 6, 12, 24, 36, 48, 60],
        "Week" => &[1, 2, 3, 4],
        "Year" => &[1, 2, 3, 4, 5],
        _ => {
            return Err(ErrorResponse::bad_request(
                "InvalidPeriodUnit.ValueNotSupported",
                "The specified PeriodUnit is not supported: Month, Week or Year.",
            ));
        }
    };
    if allowed.contains(&duration) {
        Ok(())
    } else {
        Err(ErrorResponse::forbidden(
            "InvalidParameter.Duration",
            format!(
                "The specified Duration is not supported for PeriodUnit {unit}: one of {allowed:?}."
            ),
        ))
    }
}

/// Comma-separated `InstanceId` of the auto-renewal actions: 1 to 100 IDs.
fn comma_ids(p: &ReceivedParams) -> Result<Vec<String>, ErrorResponse> {
    let ids: Vec<String> = p
        .required("InstanceId")?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if ids.is_empty() || ids.len() > 100 {
        return Err(ErrorResponse::invalid("InstanceId"));
    }
    Ok(ids)
}

pub(crate) fn modify_auto_renew(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let ids = comma_ids(p)?;
    let status = match p.get("RenewalStatus") {
        None => None,
        Some(s @ ("AutoRenewal" | "Normal" | "NotRenewal")) => Some(s),
        Some(_) => return Err(ErrorResponse::invalid("RenewalStatus")),
    };
    let auto_renew = match status {
        Some(s) => s == "AutoRenewal",
        None => p.bool("AutoRenew")?.unwrap_or(false),
    };
    let duration = p.number::<u32>("Duration")?;
    let unit = p.get("PeriodUnit");
    if let Some(d) = duration {
        check_renewal_duration(unit.unwrap_or("Month"), d)?;
    }
    let account = &ctx.caller.account_id;
    for id in &ids {
        if store.find(account, Some(region.id), id)?.renewal.is_none() {
            // Only subscription instances renew.
            return Err(ErrorResponse::charge_type_violation());
        }
    }
    for id in &ids {
        let instance = store.find_mut(account, Some(region.id), id)?;
        if let Some(r) = instance.renewal.as_mut() {
            r.auto_renew = auto_renew;
            if let Some(d) = duration {
                r.duration = d;
                r.unit = match unit.unwrap_or("Month") {
                    "Week" => "Week",
                    "Year" => "Year",
                    _ => "Month",
                };
            }
        }
    }
    Ok(json!({}))
}

pub(crate) fn describe_auto_renew(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let ids = comma_ids(p)?;
    let account = &ctx.caller.account_id;
    let found: Vec<Value> = ids
        .iter()
        .filter_map(|id| store.find(account, Some(region.id), id).ok())
        .filter_map(|i| {
            let r = i.renewal?;
            Some(json!({
                "InstanceId": i.id,
                "AutoRenewEnabled": r.auto_renew,
                "Duration": r.duration,
                "PeriodUnit": r.unit,
                "RenewalStatus": if r.auto_renew { "AutoRenewal" } else { "Normal" },
                // The mock serves no `ExpectedRenewDay` (a unified renewal date).
                "EnableExpectedRenewDay": false,
            }))
        })
        .collect();
    Ok(json!({
        "TotalCount": found.len(),
        "PageNumber": 1,
        "PageSize": 100,
        "InstanceRenewAttributes": {"InstanceRenewAttribute": found},
    }))
}

pub(crate) fn modify_charge_type(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    catalog::region_by_id(p.required("RegionId")?)?;
    let ids = instance_ids(p)?;
    if ids.len() > 20 {
        return Err(ErrorResponse::bad_request(
            "InvalidInstanceIds.Malformed",
            "The specified instanceIds are not valid: at most 20.",
        ));
    }
    let target = match p.get("InstanceChargeType").unwrap_or("PrePaid") {
        "PrePaid" => "PrePaid",
        "PostPaid" => "PostPaid",
        _ => {
            return Err(ErrorResponse::bad_request(
                "InvalidInstanceChargeType.ValueNotSupported",
                "The specified InstanceChargeType is not supported: PrePaid or PostPaid.",
            ));
        }
    };
    if let Some(token) = p.get("ClientToken") {
        param_checks::check_client_token(token)?;
    }
    let terms = crate::launch_spec::LaunchSpec {
        period: p.number::<u32>("Period")?,
        period_unit: p.get("PeriodUnit").map(str::to_owned),
        ..crate::launch_spec::LaunchSpec::default()
    };
    let account = &ctx.caller.account_id;
    let mut subscriptions = Vec::with_capacity(ids.len());
    for id in &ids {
        let instance = store.find(account, None, id)?;
        if !matches!(instance.status(ctx.now), Status::Running | Status::Stopped) {
            return Err(ErrorResponse::incorrect_status());
        }
        subscriptions.push(crate::subscription::Subscription::resolve(
            &terms,
            target,
            instance.spot_strategy,
        )?);
    }
    if crate::action::dry_run(p)? {
        return Err(crate::action::dry_run_passed());
    }
    for (id, subscription) in ids.iter().zip(subscriptions) {
        let instance = store.find_mut(account, None, id)?;
        instance.charge_type = target;
        instance.expires_at = subscription.map(|s| s.expiry(ctx.now));
        instance.renewal = subscription.map(|s| crate::instance::Renewal {
            auto_renew: false,
            duration: s.auto_renew_period,
            unit: match s.unit {
                crate::subscription::PeriodUnit::Month => "Month",
                crate::subscription::PeriodUnit::Week => "Week",
            },
        });
    }
    // `FeeOfInstances` details an order's fees only on request (`IsDetailFee`); the mock
    // prices nothing (RunInstances' `TradePrice` is 0), so it lists no fee.
    Ok(json!({
        "OrderId": crate::subscription::order_id(ctx.now),
        "FeeOfInstances": {"FeeOfInstance": []},
    }))
}

pub(crate) fn replace_system_disk(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let image = catalog::image_by_id(p.required("ImageId")?)?;
    let size = p.number::<u32>("SystemDisk.Size")?;
    if let Some(token) = p.get("ClientToken") {
        param_checks::check_client_token(token)?;
    }
    if let Some(password) = p.get("Password") {
        param_checks::check_password(password)?;
    }
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    // ECS replaces the system disk of a Stopped instance only.
    if instance.status(ctx.now) != Status::Stopped {
        return Err(ErrorResponse::incorrect_status());
    }
    if let Some(size) = size
        && (size < image.size_gib.max(20) || size > 500)
    {
        return Err(ErrorResponse::bad_request(
            "InvalidSystemDiskSize.ValueNotSupported",
            format!(
                "SystemDisk.Size must be between {} and 500 GiB for this image.",
                image.size_gib.max(20)
            ),
        ));
    }
    let instance_id = instance.id.clone();
    // ECS releases the old system disk and gives the instance a new one (a new ID).
    let disk_id =
        store
            .disks
            .replace_system_disk(&instance_id, (image.id, image.size_gib), size, ctx.now)?;
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    instance.image = image;
    if let Some(name) = p.get("KeyPairName") {
        instance.key_pair_name = name.to_owned();
    }
    Ok(json!({"DiskId": disk_id}))
}
