//! ModifyInstanceAttribute and ModifyInstanceSpec: an instance's own attributes, its type and its
//! bandwidth, with ECS's status rules.

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::catalog;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::param_checks;
use crate::password::password_digest;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// `ModifyInstanceAttribute`: name, description, host name, user data, password, deletion
/// protection, security groups and credit mode.
pub fn modify_attribute(
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
    name.map(param_checks::check_instance_name).transpose()?;
    description
        .map(param_checks::check_description)
        .transpose()?;
    host.map(param_checks::check_host_name).transpose()?;
    user_data.map(param_checks::check_user_data).transpose()?;
    let password = p.get("Password");
    password.map(param_checks::check_password).transpose()?;
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
        instance.password.set(password_digest(v));
    }
    if let Some(v) = protection {
        instance.deletion_protection = v;
    }
    if !groups.is_empty() {
        instance.security_group_ids = groups;
    }
    Ok(json!({}))
}

/// `ModifyInstanceSpec`: the type (of a Stopped instance) and the outbound bandwidth.
pub fn modify_spec(
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
    bandwidth.map(param_checks::check_bandwidth).transpose()?;
    let (zone_id, status) = {
        let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
        (instance.zone_id.clone(), instance.status(ctx.now))
    };
    if let Some(t) = new_type {
        if status != Status::Stopped {
            return Err(ErrorResponse::incorrect_status());
        }
        catalog::instance_type_in_stock(t.id)?;
        // The new type must be in stock where the instance stands, as for a launch.
        store.stock.check(&zone_id, t.id, 1)?;
        store.stock.take(&zone_id, t.id, 1);
    }
    let instance = store.find_mut(&ctx.caller.account_id, None, id)?;
    if let Some(t) = new_type {
        instance.instance_type = t;
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
