//! EIPs: AllocateEipAddress, DescribeEipAddresses, ModifyEipAddressAttribute and
//! ReleaseEipAddress, with the VPC API's rules: pay-as-you-go only (the mock sells no
//! subscriptions), bandwidth 1–500 Mbit/s by bandwidth or 1–200 by traffic, `BGP_PRO` only
//! where the region offers it, a quota per region, ClientToken replays, and no change while an
//! association is in progress; an EIP is released only while `Available` (never while
//! associated). Associations are `eip_associations`'.

use serde_json::{Value, json};

use super::common::second_time;
use crate::action::{ActionContext, dry_run, dry_run_passed, merged, page_of};
use crate::catalog::CatalogRegion;
use crate::eips::{EIP_QUOTA, Eip, EipStore, incorrect_eip_status};
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::resource_groups;
use crate::store::Store;
use crate::tags;
use crate::visibility::after_lag;

/// The one region that sells `BGP_PRO` EIPs in the mock's catalogue.
const BGP_PRO_REGION: &str = "cn-hongkong";

fn invalid(what: &str) -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidParameter",
        format!("Specified value of \"{what}\" is not valid."),
    )
}

/// `InternetChargeType`: `PayByBandwidth` (the default) or `PayByTraffic`.
fn internet_charge_type(p: &ReceivedParams) -> Result<&'static str, ErrorResponse> {
    match p.get("InternetChargeType").unwrap_or("PayByBandwidth") {
        "PayByBandwidth" => Ok("PayByBandwidth"),
        "PayByTraffic" => Ok("PayByTraffic"),
        _ => Err(invalid("InternetChargeType")),
    }
}

/// `Bandwidth` in Mbit/s: 1–500 by bandwidth, 1–200 by traffic.
fn bandwidth(value: Option<&str>, charge: &str, default: u32) -> Result<u32, ErrorResponse> {
    let Some(text) = value else {
        return Ok(default);
    };
    let max = if charge == "PayByTraffic" { 200 } else { 500 };
    text.parse::<u32>()
        .ok()
        .filter(|b| (1..=max).contains(b))
        .ok_or_else(|| invalid("Bandwidth"))
}

/// A name (1–128) or description (1–256): starting with a letter, not with `http://` or
/// `https://`; a name holds letters, digits, `.`, `_` and `-` only.
fn check_text(value: Option<&str>, max: usize, name: bool) -> Result<(), ErrorResponse> {
    let Some(v) = value else {
        return Ok(());
    };
    let starts_with_letter = v.chars().next().is_some_and(char::is_alphabetic);
    let allowed = !name
        || v.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let fine = (1..=max).contains(&v.chars().count())
        && starts_with_letter
        && allowed
        && !v.starts_with("http://")
        && !v.starts_with("https://");
    if fine {
        Ok(())
    } else if name {
        Err(ErrorResponse::bad_request(
            "InvalidName.Malformed",
            "Specified name is not valid: 1 to 128 characters, starting with a letter; letters, digits, '.', '_' and '-'.",
        ))
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidDescription.Malformed",
            "Specified description is not valid: 1 to 256 characters, starting with a letter, not with http:// or https://.",
        ))
    }
}

/// `AllocateEipAddress`.
pub fn allocate_eip_address(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    if p.get("InstanceChargeType").unwrap_or("PostPaid") != "PostPaid" {
        return Err(ErrorResponse::bad_request(
            "InvalidInstanceChargeType.ValueNotSupported",
            "The mock allocates pay-as-you-go (PostPaid) EIPs only.",
        ));
    }
    let charge = internet_charge_type(p)?;
    let bandwidth = bandwidth(p.get("Bandwidth"), charge, 5)?;
    let isp = match p.get("ISP").unwrap_or("BGP") {
        "BGP" => "BGP",
        "BGP_PRO" if region.id == BGP_PRO_REGION => "BGP_PRO",
        _ => return Err(invalid("ISP")),
    };
    let (name, description) = (p.get("Name"), p.get("Description"));
    check_text(name, 128, true)?;
    check_text(description, 256, false)?;
    let group = resource_groups::resolve(p.get("ResourceGroupId")).map_err(|_| {
        ErrorResponse::bad_request(
            "InvalidResourceGroupId",
            "The specified ResourceGroupId does not exist.",
        )
    })?;
    let token = p.get("ClientToken");
    if let Some(token) = token {
        param_checks::check_client_token(token)?;
    }
    let account = ctx.caller.account_id.clone();
    let print = fingerprint(&(charge, bandwidth, isp, name, description, group));
    if let Some(reply) = store.eips.replay(&account, token, print)? {
        return Ok(reply);
    }
    if store.eips.in_region(&account, region.id).len() >= EIP_QUOTA {
        return Err(ErrorResponse::bad_request(
            "QuotaExceeded.Eip",
            "Elastic IP address quota exceeded",
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let seq = store.eips.seq();
    let eip = Eip {
        id: random_id("eip"),
        seq,
        account_id: account,
        region_id: region.id,
        ip: EipStore::address(seq),
        bandwidth,
        internet_charge_type: charge,
        isp,
        name: name.unwrap_or_default().to_owned(),
        description: description.unwrap_or_default().to_owned(),
        resource_group_id: group,
        tags: Vec::new(),
        deletion_protection: false,
        allocated_at: ctx.now,
        visible_from: after_lag(ctx.now, store.visibility_lag),
        binding: None,
    };
    let reply = json!({
        "AllocationId": eip.id,
        "EipAddress": eip.ip.to_string(),
        "ResourceGroupId": group,
    });
    store.eips.insert(eip, token, print, &reply);
    Ok(reply)
}

fn eip_view(e: &Eip, status: &str, now: jiff::Timestamp) -> Value {
    let bound = e.bound(now);
    let base = json!({
        "AllocationId": e.id,
        "IpAddress": e.ip.to_string(),
        "RegionId": e.region_id,
        "Status": status,
        "Bandwidth": e.bandwidth.to_string(),
        "EipBandwidth": e.bandwidth.to_string(),
        "InternetChargeType": e.internet_charge_type,
        "ChargeType": "PostPaid",
        "ISP": e.isp,
        "Netmode": "public",
        "Name": e.name,
        "Description": e.description,
        "ResourceGroupId": e.resource_group_id,
        "AllocationTime": second_time(e.allocated_at),
        "InstanceId": bound.map(|b| b.instance_id.as_str()).unwrap_or_default(),
        "InstanceType": bound.map(|b| b.kind.as_str()).unwrap_or_default(),
        "InstanceRegionId": if bound.is_some() { e.region_id } else { "" },
        // The private IP a network interface's EIP maps to; empty for the other kinds.
        "PrivateIpAddress": bound
            .and_then(|b| b.private_ip)
            .map(|ip| ip.to_string())
            .unwrap_or_default(),
        "BusinessStatus": "Normal",
        "DeletionProtection": e.deletion_protection,
        "OperationLocks": {"LockReason": []},
        "AvailableRegions": {"AvailableRegion": [e.region_id]},
        "Tags": tags::vpc_view(&e.tags),
    });
    merged(base, not_set_fields())
}

/// The fields of an EIP that no call of the mock sets: the API's defaults for a pay-as-you-go
/// EIP, or the neutral values of their types.
fn not_set_fields() -> Value {
    json!({
        // Every association the mock makes is in the API's default `NAT` mode (it refuses
        // `BINDED` / `MULTI_BINDED` on AssociateEipAddress).
        "Mode": ASSOCIATION_MODE,
        // Pay-as-you-go only: `ExpiredTime` and the renewal fields are for subscriptions, and
        // `HasReservationData` is `true` only for `IncludeReservationData=true` with pending
        // orders (API reference), which a pay-as-you-go EIP never has.
        "ExpiredTime": "",
        "HasReservationData": "false",
        "ReservationActiveTime": "",
        "ReservationBandwidth": "",
        "ReservationInternetChargeType": "",
        "ReservationOrderType": "",
        // The mock serves no fine-grained monitoring switch, so it stays off.
        "HDMonitorStatus": "false",
        "BizType": BIZ_TYPE,
        // Returned only for CloudBox EIPs, IpAddress associations, contiguous EIPs, pools,
        // shared bandwidth and managed instances, none of which the mock serves: the neutral
        // values of their types.
        "Zone": "",
        "VpcId": "",
        "SegmentInstanceId": "",
        "PublicIpAddressPoolId": "",
        "BandwidthPackageId": "",
        "BandwidthPackageBandwidth": "",
        "BandwidthPackageType": "",
        "ServiceManaged": 0,
        "ServiceID": 0,
        "SecondLimited": false,
        // Empty means Anti-DDoS Origin Basic (API reference).
        "SecurityProtectionTypes": {"SecurityProtectionType": []},
    })
}

/// `Mode` of an EIP: AssociateEipAddress's default, the only mode the mock associates in.
const ASSOCIATION_MODE: &str = "NAT";
/// `BizType` of every EIP that is not a CloudBox one (API reference: `Default`).
const BIZ_TYPE: &str = "Default";

/// A comma-separated list of at most 50 values.
fn list_of(p: &ReceivedParams, name: &str) -> Result<Option<Vec<String>>, ErrorResponse> {
    let Some(raw) = p.get(name) else {
        return Ok(None);
    };
    let items: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if items.len() > 50 {
        return Err(ErrorResponse::invalid(name));
    }
    Ok(Some(items))
}

/// `DescribeEipAddresses`: by `AllocationId` / `EipAddress` lists, `Status`,
/// `AssociatedInstanceType` / `AssociatedInstanceId`, `Tag.N`; pages of up to 100. A new EIP
/// is listed once the visibility lag has passed; a released one stays listed as `Releasing`
/// for the lag.
pub fn describe_eip_addresses(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = list_of(p, "AllocationId")?;
    let addresses = list_of(p, "EipAddress")?;
    let status = p.get("Status");
    let bound_kind = p
        .get("AssociatedInstanceType")
        .map(|kind| {
            crate::eips::BoundKind::parse(Some(kind)).map_err(|_| {
                ErrorResponse::bad_request(
                    "InvalidIAssociatedInstanceType.ValueNotSupported",
                    "The specified value of AssociatedInstanceType is not supported.",
                )
            })
        })
        .transpose()?;
    let bound_to = p.get("AssociatedInstanceId");
    let tag_filter = tags::filter(p)?;
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let now = ctx.now;
    let account = ctx.caller.account_id.to_string();
    let live = store
        .eips
        .in_region(&account, region.id)
        .into_iter()
        .filter(|e| e.visible_from <= now)
        .map(|e| (e, e.status(now)));
    let releasing = store
        .eips
        .releasing(&account, region.id, now)
        .into_iter()
        .map(|e| (e, "Releasing"));
    let listed: Vec<(&Eip, &str)> = live
        .chain(releasing)
        .filter(|(e, _)| ids.as_ref().is_none_or(|ids| ids.contains(&e.id)))
        .filter(|(e, _)| {
            addresses
                .as_ref()
                .is_none_or(|a| a.contains(&e.ip.to_string()))
        })
        .filter(|(_, s)| status.is_none_or(|want| want == *s))
        .filter(|(e, _)| {
            bound_to.is_none_or(|id| e.bound(now).is_some_and(|b| b.instance_id == id))
        })
        .filter(|(e, _)| bound_kind.is_none_or(|k| e.bound(now).is_some_and(|b| b.kind == k)))
        .filter(|(e, _)| tags::matches(&e.tags, &tag_filter))
        .collect();
    let (total, page) = page_of(&listed, number, size);
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "EipAddresses": {"EipAddress": page.iter().map(|(e, s)| eip_view(e, s, now)).collect::<Vec<_>>()},
    }))
}

/// Refuses a change while an association is in progress (`Associating`, `Unassociating`).
fn settled(e: &Eip, now: jiff::Timestamp) -> Result<(), ErrorResponse> {
    match e.status(now) {
        "Available" | "InUse" => Ok(()),
        _ => Err(incorrect_eip_status()),
    }
}

/// `ModifyEipAddressAttribute`: the bandwidth, name and description.
pub fn modify_eip_address_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("AllocationId")?;
    let (name, description) = (p.get("Name"), p.get("Description"));
    check_text(name, 128, true)?;
    check_text(description, 256, false)?;
    let account = ctx.caller.account_id.clone();
    let eip = store.eips.find(&account, region.id, id)?;
    let bandwidth = p
        .get("Bandwidth")
        .map(|b| bandwidth(Some(b), eip.internet_charge_type, eip.bandwidth))
        .transpose()?;
    settled(eip, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let eip = store.eips.find_mut(&account, region.id, id)?;
    if let Some(b) = bandwidth {
        eip.bandwidth = b;
    }
    if let Some(n) = name {
        n.clone_into(&mut eip.name);
    }
    if let Some(d) = description {
        d.clone_into(&mut eip.description);
    }
    Ok(json!({}))
}

/// `ReleaseEipAddress`: only an `Available` EIP (never one that is associated).
pub fn release_eip_address(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("AllocationId")?;
    let account = ctx.caller.account_id.clone();
    let eip = store.eips.find(&account, region.id, id)?;
    if eip.status(ctx.now) != "Available" {
        return Err(incorrect_eip_status());
    }
    if eip.deletion_protection {
        return Err(super::deletion_protection::protected());
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let until = after_lag(ctx.now, store.visibility_lag);
    store.eips.release(id, ctx.now, until);
    Ok(json!({}))
}
