//! What the VPC API's actions share: its time format, readiness after the transition delay, the
//! name and description rules of VPCs and vSwitches, paging and ID lists, and common errors.

use jiff::{SignedDuration, Timestamp};

use crate::action::ActionContext;
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;

/// `yyyy-MM-ddTHH:mm:ssZ`, as the VPC API reports times.
pub fn second_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn ready_at(ctx: &ActionContext<'_>) -> Timestamp {
    SignedDuration::try_from(ctx.delay)
        .ok()
        .and_then(|d| ctx.now.checked_add(d).ok())
        .unwrap_or(ctx.now)
}

/// A name or description: `min`–`max` characters, not starting with `http://` or `https://`.
fn check_text(
    value: Option<&str>,
    min: usize,
    max: usize,
    code: &'static str,
    message: &'static str,
) -> Result<(), ErrorResponse> {
    match value {
        Some(v)
            if !(min..=max).contains(&v.chars().count())
                || v.starts_with("http://")
                || v.starts_with("https://") =>
        {
            Err(ErrorResponse::bad_request(code, message))
        }
        _ => Ok(()),
    }
}

pub fn malformed_cidr() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidCidrBlock.Malformed",
        "Specified CIDR block is not valid.",
    )
}

pub fn incorrect_vpc_status() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorrectVpcStatus",
        "Current VPC status does not support this operation.",
    )
}

pub fn dependency(code: &'static str, message: &'static str) -> ErrorResponse {
    ErrorResponse::bad_request(code, message)
}

/// `PageNumber` (from 1) and `PageSize` (1–50, default 10) of the VPC API.
pub fn paging(p: &ReceivedParams) -> Result<(usize, usize), ErrorResponse> {
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 64)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 50)?.unwrap_or(10);
    Ok((number, size))
}

/// A comma-separated ID list (at most 20), as `VpcId` / `VSwitchId` filters take.
pub fn id_list(p: &ReceivedParams, name: &str) -> Result<Option<Vec<String>>, ErrorResponse> {
    let Some(raw) = p.get(name) else {
        return Ok(None);
    };
    let ids: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if ids.len() > 20 {
        return Err(ErrorResponse::invalid(name));
    }
    Ok(Some(ids))
}

/// The parameter that names a kind of resource, and the codes and messages of its name and
/// description rules.
pub struct TextRules {
    pub name_param: &'static str,
    pub name_code: &'static str,
    pub name_message: &'static str,
    pub description_code: &'static str,
    pub description_message: &'static str,
}

/// A VPC's `VpcName` and `Description`.
pub const VPC_TEXT: TextRules = TextRules {
    name_param: "VpcName",
    name_code: "InvalidVpcName.Malformed",
    name_message: "Specified VPC name is not valid: 1 to 128 characters, not starting with http:// or https://.",
    description_code: "InvalidVpcDiscription.Malformed",
    description_message: "Specified VPC description is not valid: 1 to 256 characters, not starting with http:// or https://.",
};

/// A vSwitch's `VSwitchName` and `Description`.
pub const VSWITCH_TEXT: TextRules = TextRules {
    name_param: "VSwitchName",
    name_code: "InvalidVSwitchName.Malformed",
    name_message: "Specified virtual switch name is not valid: 1 to 128 characters, not starting with http:// or https://.",
    description_code: "InvalidVSwitchDiscription.Malformed",
    description_message: "Specified virtual switch description is not valid: 1 to 256 characters, not starting with http:// or https://.",
};

/// The name (1–128 characters) and `Description` (1–256) a call gives, checked with `rules`.
pub fn name_and_description<'p>(
    p: &'p ReceivedParams,
    rules: &TextRules,
) -> Result<(Option<&'p str>, Option<&'p str>), ErrorResponse> {
    let name = p.get(rules.name_param);
    let description = p.get("Description");
    check_text(name, 1, 128, rules.name_code, rules.name_message)?;
    check_text(
        description,
        1,
        256,
        rules.description_code,
        rules.description_message,
    )?;
    Ok((name, description))
}

/// Sets the name and the description a modify call gave.
pub fn rename(
    (name, description): (Option<&str>, Option<&str>),
    current_name: &mut String,
    current_description: &mut String,
) {
    if let Some(v) = name {
        v.clone_into(current_name);
    }
    if let Some(v) = description {
        v.clone_into(current_description);
    }
}

/// `OwnerId` as the VPC API types it (a number: the account ID), or the ID as text for an
/// account whose ID is not numeric.
pub fn owner_id(account_id: &str) -> serde_json::Value {
    account_id.parse::<u64>().map_or_else(
        |_| serde_json::Value::from(account_id),
        serde_json::Value::from,
    )
}
