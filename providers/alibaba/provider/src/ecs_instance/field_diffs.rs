//! One comparison per `spec.forProvider` property: the spec against the instance ECS reports
//! (plus what ECS reports elsewhere, and what ferroplane remembers of inputs ECS never reports).
//! Each returns the [`Change`] that makes the instance match (`Change::Fill` when the row's
//! request is written from the spec), with a line for events and conditions (never a secret
//! value). Unset spec properties are not managed: no change. Pure.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use alibaba_sdk::ecs::Tag;
use ferroplane_apis::alibabacloud::ECSInstanceParameters;
use ferroplane_runtime::UID_TAG;

use super::comparison::{Change, Diff, Observed};
use super::wire_names;

fn diff(field: &str, from: impl Debug, to: impl Debug, change: Change) -> Diff {
    Diff {
        change,
        line: format!("{field}: {from:?} → {to:?}"),
    }
}

/// A plain property: `desired` when it is set and differs from `actual`, filled into the row's
/// request from the spec. A row can compare a new property with this alone.
pub fn compare<T: PartialEq + Debug>(field: &str, desired: Option<T>, actual: T) -> Option<Diff> {
    desired
        .filter(|d| *d != actual)
        .map(|to| diff(field, actual, to, Change::Fill))
}

/// `desired` when it is set and differs from `actual`.
fn differs<'a, T: PartialEq + ?Sized>(desired: Option<&'a T>, actual: &T) -> Option<&'a T> {
    desired.filter(|d| *d != actual)
}

pub fn instance_name(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.instance_name;
    differs(s.instance_name.as_deref(), have.as_str())
        .map(|to| diff("instanceName", have, to, Change::Fill))
}

pub fn description(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.description;
    differs(s.description.as_deref(), have.as_str())
        .map(|to| diff("description", have, to, Change::Fill))
}

pub fn security_group_ids(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let groups = s.security_group_ids.as_ref()?;
    let want: BTreeSet<&String> = groups.iter().collect();
    let have_list = &o.instance.security_group_ids.items;
    let have: BTreeSet<&String> = have_list.iter().collect();
    (want != have).then(|| diff("securityGroupIds", have_list, groups, Change::Fill))
}

pub fn internet_charge_type(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.internet_charge_type;
    let want = s
        .internet_charge_type
        .map(wire_names::internet_charge_type)?;
    // An instance without public bandwidth reports no billing method worth changing.
    (!have.is_empty() && want != have).then(|| diff("internetChargeType", have, want, Change::Fill))
}

pub fn tags(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let tags = s.tags.as_ref()?;
    let have: BTreeMap<&str, &str> = o
        .instance
        .tags
        .pairs()
        .filter(|(key, _)| !is_reserved_tag(key))
        .collect();
    let set: Vec<Tag> = tags
        .iter()
        .filter(|(k, _)| !is_reserved_tag(k))
        .filter(|(k, v)| have.get(k.as_str()) != Some(&v.as_str()))
        .map(|(k, v)| Tag::new(k, v))
        .collect();
    let remove: Vec<String> = have
        .keys()
        .filter(|k| !tags.contains_key(**k))
        .map(|k| (*k).to_owned())
        .collect();
    if set.is_empty() && remove.is_empty() {
        return None;
    }
    let keys: Vec<&str> = set.iter().map(|t| t.key.as_str()).collect();
    Some(Diff {
        line: format!("tags: set {keys:?}, remove {remove:?}"),
        change: Change::Tags { set, remove },
    })
}

/// Tags ferroplane never changes: its UID tag and the cloud's own (`acs:`, `aliyun`).
pub fn is_reserved_tag(key: &str) -> bool {
    key == UID_TAG || key.starts_with("acs:") || key.starts_with("aliyun")
}

pub fn http_tokens(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.metadata_options.http_tokens;
    let want = s.http_tokens.map(wire_names::http_tokens)?;
    (want != have).then(|| diff("httpTokens", have, want, Change::Fill))
}

pub fn http_endpoint(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.metadata_options.http_endpoint;
    let want = s.http_endpoint.map(wire_names::http_endpoint)?;
    (want != have).then(|| diff("httpEndpoint", have, want, Change::Fill))
}

pub fn ram_role_name(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s.ram_role_name.as_deref()?;
    // Not looked up: nothing to compare (observe looks it up whenever the spec names a role).
    let have = o.ram_role?;
    (want != have).then(|| {
        diff(
            "ramRoleName",
            have,
            want,
            Change::RamRoleName {
                from: (!have.is_empty()).then(|| have.to_owned()),
                to: want.to_owned(),
            },
        )
    })
}

pub fn resource_group_id(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.resource_group_id;
    differs(s.resource_group_id.as_deref(), have.as_str()).map(|to| {
        diff(
            "resourceGroupId",
            have,
            to,
            Change::ResourceGroupId(to.to_owned()),
        )
    })
}

pub fn instance_type(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.instance_type;
    (!have.is_empty() && &s.instance_type != have)
        .then(|| diff("instanceType", have, &s.instance_type, Change::Fill))
}

pub fn host_name(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.host_name;
    differs(s.host_name.as_deref(), have.as_str())
        .map(|to| diff("hostName", have, to, Change::Fill))
}

pub fn password(_: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    o.inputs.password.then(|| Diff {
        change: Change::Fill,
        line: "password (the passwordSecretRef Secret changed)".to_owned(),
    })
}

pub fn user_data(_: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    o.inputs.user_data.then(|| Diff {
        change: Change::Fill,
        line: "userData".to_owned(),
    })
}

/// An immutable property the cloud reports differently from the spec.
fn immutable(field: &str, desired: Option<&str>, actual: &str) -> Option<Diff> {
    let desired = desired?;
    (!actual.is_empty() && desired != actual).then(|| Diff {
        change: Change::Immutable,
        line: format!("{field} is {actual:?} in ECS but {desired:?} in the spec"),
    })
}

pub fn region_id(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    immutable("regionId", Some(&s.region_id), &o.instance.region_id)
}

pub fn zone_id(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    immutable("zoneId", s.zone_id.as_deref(), &o.instance.zone_id)
}

pub fn image_id(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.image_id;
    (!have.is_empty() && &s.image_id != have).then(|| {
        diff(
            "imageId",
            have,
            &s.image_id,
            Change::ImageId(s.image_id.clone()),
        )
    })
}

pub fn v_switch_id(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.vpc_attributes.vswitch_id;
    let want = s.v_switch_id.as_deref()?;
    (!have.is_empty() && want != have).then(|| {
        diff(
            "vSwitchId",
            have,
            want,
            Change::VpcAttribute {
                vswitch_id: want.to_owned(),
                private_ip: s.private_ip_address.clone(),
            },
        )
    })
}

/// The primary private IPv4 address ECS reports.
fn primary_private_ip<'a>(o: &Observed<'a>) -> Option<&'a str> {
    o.instance
        .vpc_attributes
        .private_ip_address
        .items
        .first()
        .map(String::as_str)
}

pub fn private_ip_address(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s.private_ip_address.as_deref()?;
    let have = primary_private_ip(o)?;
    let vswitch = s
        .v_switch_id
        .clone()
        .unwrap_or_else(|| o.instance.vpc_attributes.vswitch_id.clone());
    (want != have).then(|| {
        diff(
            "privateIpAddress",
            have,
            want,
            Change::VpcAttribute {
                vswitch_id: vswitch,
                private_ip: Some(want.to_owned()),
            },
        )
    })
}

pub fn instance_charge_type(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s
        .instance_charge_type
        .map(wire_names::instance_charge_type)?;
    let have = &o.instance.instance_charge_type;
    (!have.is_empty() && want != have).then(|| {
        diff(
            "instanceChargeType",
            have,
            want,
            Change::InstanceChargeType {
                to: want.to_owned(),
                period: s.period.and_then(|n| u32::try_from(n).ok()),
                unit: s.period_unit.map(|u| wire_names::period_unit(u).to_owned()),
            },
        )
    })
}

pub fn spot_strategy(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    immutable(
        "spotStrategy",
        s.spot_strategy.map(wire_names::spot_strategy),
        &o.instance.spot_strategy,
    )
}

pub fn key_pair_name(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.key_pair_name;
    differs(s.key_pair_name.as_deref(), have.as_str()).map(|to| {
        diff(
            "keyPairName",
            have,
            to,
            Change::KeyPairName {
                from: (!have.is_empty()).then(|| have.clone()),
                to: to.to_owned(),
            },
        )
    })
}

pub fn system_disk_size(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s
        .system_disk
        .as_ref()?
        .size
        .and_then(|n| u32::try_from(n).ok())?;
    let disk = o.system_disk()?;
    // Disks never shrink (the CRD refuses a smaller size): only growth is a change.
    (want > disk.size).then(|| {
        diff(
            "systemDisk.size",
            disk.size,
            want,
            Change::SystemDiskSize {
                disk_id: disk.disk_id.clone(),
                size: want,
            },
        )
    })
}

pub fn system_disk_performance_level(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s.system_disk.as_ref()?.performance_level.as_deref()?;
    let disk = o.system_disk()?;
    (want != disk.performance_level).then(|| {
        diff(
            "systemDisk.performanceLevel",
            &disk.performance_level,
            want,
            Change::SystemDiskPerformanceLevel {
                disk_id: disk.disk_id.clone(),
                level: want.to_owned(),
            },
        )
    })
}

pub fn auto_renew(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s.auto_renew?;
    let have = o.renewal?;
    (want != have.auto_renew_enabled)
        .then(|| diff("autoRenew", have.auto_renew_enabled, want, Change::Fill))
}

pub fn auto_renew_period(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s.auto_renew_period.and_then(|n| u32::try_from(n).ok())?;
    let have = o.renewal?;
    (want != have.duration).then(|| diff("autoRenewPeriod", have.duration, want, Change::Fill))
}

pub fn credit_specification(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s
        .credit_specification
        .map(wire_names::credit_specification)?;
    let have = &o.instance.credit_specification;
    // ECS reports no mode for a type that is not burstable (yet: a type change to a burstable
    // one restarts the instance first); there is nothing ModifyInstanceAttribute could change.
    (!have.is_empty() && want != have)
        .then(|| diff("creditSpecification", have, want, Change::Fill))
}

pub fn ipv6_address_count(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let want = s.ipv6_address_count.and_then(|n| usize::try_from(n).ok())?;
    let primary = o
        .instance
        .network_interfaces
        .items
        .iter()
        .find(|n| n.interface_type == "Primary")?;
    let have: Vec<&String> = primary
        .ipv6_sets
        .items
        .iter()
        .map(|a| &a.ipv6_address)
        .collect();
    if want == have.len() {
        return None;
    }
    // Release the newest addresses first; keep the ones clients are likely to know.
    let release: Vec<String> = have.iter().skip(want).map(|a| (*a).clone()).collect();
    let assign = u32::try_from(want.saturating_sub(have.len())).unwrap_or(0);
    Some(diff(
        "ipv6AddressCount",
        have.len(),
        want,
        Change::Ipv6Addresses {
            eni: primary.network_interface_id.clone(),
            assign,
            release,
        },
    ))
}

pub fn deployment_set_id(s: &ECSInstanceParameters, o: &Observed<'_>) -> Option<Diff> {
    let have = &o.instance.deployment_set_id;
    differs(s.deployment_set_id.as_deref(), have.as_str()).map(|to| {
        diff(
            "deploymentSetId",
            have,
            to,
            Change::DeploymentSetId(to.to_owned()),
        )
    })
}
