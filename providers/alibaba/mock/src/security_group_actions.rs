//! ECS's security-group actions (version `2014-05-26`): CreateSecurityGroup,
//! DescribeSecurityGroups, DescribeSecurityGroupAttribute, AuthorizeSecurityGroup(Egress),
//! RevokeSecurityGroup(Egress) and DeleteSecurityGroup. Rules are given flat (`IpProtocol`,
//! `PortRange`, …) or as `Permissions.N.*`, as the current API documents (read by
//! `security_group_rules`).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, dry_run, dry_run_passed, page_of, requested_region};
use crate::catalog::{self, CatalogRegion};
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::network::{Direction, Rule, SecurityGroup};
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::security_group_rule_view::rule_view;
use crate::security_group_rules::{MAX_PERMISSIONS, parse_rules};
use crate::store::Store;
use crate::tags::{self, UntagRequest};

/// The security-group actions the mock serves, with their handlers.
pub const ACTIONS: &[Action] = &[
    Action::fields("CreateSecurityGroup", |s, c, p| {
        create(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeSecurityGroups", |s, c, p| {
        describe(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeSecurityGroupAttribute", |s, c, p| {
        attribute(s, c, requested_region(p)?, p)
    }),
    Action::fields("AuthorizeSecurityGroup", |s, c, p| {
        authorize(s, c, requested_region(p)?, p, Direction::Ingress)
    }),
    Action::fields("RevokeSecurityGroup", |s, c, p| {
        revoke(s, c, requested_region(p)?, p, Direction::Ingress)
    }),
    Action::fields("AuthorizeSecurityGroupEgress", |s, c, p| {
        authorize(s, c, requested_region(p)?, p, Direction::Egress)
    }),
    Action::fields("RevokeSecurityGroupEgress", |s, c, p| {
        revoke(s, c, requested_region(p)?, p, Direction::Egress)
    }),
    Action::fields("DeleteSecurityGroup", |s, c, p| {
        delete(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifySecurityGroupAttribute", |s, c, p| {
        modify_attribute(s, c, requested_region(p)?, p)
    }),
];

/// Most rules a group holds.
const MAX_RULES: usize = 200;

fn bad(code: &'static str, message: impl Into<String>) -> ErrorResponse {
    ErrorResponse::bad_request(code, message)
}

/// `SecurityGroupName` and `Description` with ECS's rules (CreateSecurityGroup and
/// ModifySecurityGroupAttribute share them; ECS spells the description's code `Discription`).
fn name_and_description(p: &ReceivedParams) -> Result<(Option<&str>, Option<&str>), ErrorResponse> {
    let name = p.get("SecurityGroupName");
    if let Some(n) = name {
        let len = n.chars().count();
        if !(2..=128).contains(&len)
            || !n.chars().next().is_some_and(char::is_alphabetic)
            || n.starts_with("http://")
            || n.starts_with("https://")
        {
            return Err(bad(
                "InvalidSecurityGroupName.Malformed",
                "The specified SecurityGroupName is not valid: 2 to 128 characters, starting with a letter, not with http:// or https://.",
            ));
        }
    }
    let description = p.get("Description");
    if let Some(d) = description
        && (!(2..=256).contains(&d.chars().count())
            || d.starts_with("http://")
            || d.starts_with("https://"))
    {
        return Err(bad(
            "InvalidSecurityGroupDiscription.Malformed",
            "The specified Description is not valid: 2 to 256 characters, not starting with http:// or https://.",
        ));
    }
    Ok((name, description))
}

/// ModifySecurityGroupAttribute: a new name and/or description.
fn modify_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("SecurityGroupId")?;
    let (name, description) = name_and_description(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    network.group(region.id, id)?;
    if let Some(group) = network.groups.get_mut(id) {
        if let Some(name) = name {
            name.clone_into(&mut group.name);
        }
        if let Some(description) = description {
            description.clone_into(&mut group.description);
        }
    }
    Ok(json!({}))
}

fn create(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let (name, description) = name_and_description(p)?;
    let group_type = match p.get("SecurityGroupType") {
        None | Some("normal") => "normal",
        Some("enterprise") => "enterprise",
        Some(_) => {
            return Err(bad(
                "InvalidSecurityGroupType.NotSupported",
                "The specified SecurityGroupType is not supported: use normal or enterprise.",
            ));
        }
    };
    if let Some(token) = p.get("ClientToken") {
        param_checks::check_client_token(token)?;
    }
    let network = store.network.account(&ctx.caller.account_id);
    // Without VpcId the group goes to the region's default VPC (classic network is gone).
    let vpc_id = p
        .get("VpcId")
        .map_or_else(|| crate::defaults::vpc_id(region.id), str::to_owned);
    network.vpc(region.id, &vpc_id)?;
    let token = p.get("ClientToken");
    let tags = tags::parse(p)?;
    let print = fingerprint(&(&vpc_id, name, description, group_type, &tags));
    if let Some(reply) = network.replay("CreateSecurityGroup", token, print)? {
        return Ok(reply);
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = random_id("sg");
    let group = SecurityGroup {
        id: id.clone(),
        seq: network.seq(),
        region_id: region.id,
        vpc_id,
        name: name.unwrap_or_default().to_owned(),
        description: description.unwrap_or_default().to_owned(),
        group_type,
        created_at: ctx.now,
        rules: Vec::new(),
        tags,
    };
    network.groups.insert(id.clone(), group);
    let reply = json!({"SecurityGroupId": id});
    network.remember("CreateSecurityGroup", token, print, &reply);
    Ok(reply)
}

fn describe(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.get("VpcId");
    let mut ids = p.json_string_array("SecurityGroupIds")?;
    if let Some(one) = p.get("SecurityGroupId") {
        ids.get_or_insert_with(Vec::new).push(one.to_owned());
    }
    let name = p.get("SecurityGroupName");
    let tag_filter = tags::filter(p)?;
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 64)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 50)?.unwrap_or(10);
    let mut members: HashMap<String, usize> = HashMap::new();
    for instance in store.in_region(&ctx.caller.account_id, region.id) {
        for group in &instance.security_group_ids {
            *members.entry(group.clone()).or_default() += 1;
        }
    }
    let network = store.network.account(&ctx.caller.account_id);
    let mut groups: Vec<&SecurityGroup> = network
        .groups
        .values()
        .filter(|g| g.region_id == region.id)
        .filter(|g| vpc_id.is_none_or(|v| v == g.vpc_id))
        .filter(|g| ids.as_ref().is_none_or(|ids| ids.contains(&g.id)))
        .filter(|g| name.is_none_or(|n| n == g.name))
        .filter(|g| tags::matches(&g.tags, &tag_filter))
        .collect();
    groups.sort_unstable_by_key(|g| g.seq);
    let (total, page) = page_of(&groups, number, size);
    let views: Vec<Value> = page
        .iter()
        .map(|g| {
            json!({
                "SecurityGroupId": g.id,
                "SecurityGroupName": g.name,
                "Description": g.description,
                "VpcId": g.vpc_id,
                "SecurityGroupType": g.group_type,
                "CreationTime": g.created_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                "ServiceManaged": false,
                "ResourceGroupId": "",
                "RuleCount": g.rules.len(),
                "GroupToGroupRuleCount": g.rules.iter().filter(|r| !r.peer_group.is_empty()).count(),
                // The instances in the group; the capacity left is valid only with the
                // deprecated `IsQueryEcsCount=true` (API reference), and the docs give no
                // capacity to derive it from: neutral 0.
                "EcsCount": members.get(&g.id).copied().unwrap_or_default(),
                "AvailableInstanceAmount": 0,
                // Not a managed group (`ServiceManaged` false): no service provider.
                "ServiceID": 0,
                "Tags": tags::ecs_view(&g.tags),
            })
        })
        .collect();
    Ok(json!({
        "RegionId": region.id,
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        // Pages by number only: the token of the next page is always empty ("no next page").
        "NextToken": "",
        "SecurityGroups": {"SecurityGroup": views},
    }))
}

fn attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("SecurityGroupId")?;
    let direction = match p.get("Direction") {
        None | Some("all") => None,
        Some("ingress") => Some(Direction::Ingress),
        Some("egress") => Some(Direction::Egress),
        Some(_) => return Err(ErrorResponse::invalid("Direction")),
    };
    let lists = &store.prefix_lists;
    let list_name = |peer: &str| {
        lists
            .get(&ctx.caller.account_id, region.id, peer)
            .map(|l| l.name.clone())
            .unwrap_or_default()
    };
    let network = store.network.account(&ctx.caller.account_id);
    let g = network.group(region.id, id)?;
    let group_name = |peer: &str| {
        network
            .groups
            .get(peer)
            .map(|p| p.name.clone())
            .unwrap_or_default()
    };
    let permissions: Vec<Value> = g
        .rules
        .iter()
        .filter(|r| direction.is_none_or(|d| d == r.direction))
        .map(|r| rule_view(r, &group_name, &list_name))
        .collect();
    Ok(json!({
        "RegionId": region.id,
        "SecurityGroupId": g.id,
        "SecurityGroupName": g.name,
        "Description": g.description,
        "VpcId": g.vpc_id,
        "InnerAccessPolicy": "Accept",
        "Permissions": {"Permission": permissions},
        // All rules in one answer: no next page. The reference documents no content for
        // `SnapshotPolicyIds` (the SDKs declare it): an empty wrapper list, as for any list.
        "NextToken": "",
        "SnapshotPolicyIds": {"SnapshotPolicyId": []},
    }))
}

fn authorize(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
    direction: Direction,
) -> Result<Value, ErrorResponse> {
    let id = p.required("SecurityGroupId")?;
    store
        .network
        .account(&ctx.caller.account_id)
        .group(region.id, id)?;
    let rules = parse_rules(store, ctx, region, p, direction)?;
    let group = store
        .network
        .account(&ctx.caller.account_id)
        .group_mut(region.id, id)?;
    let added: Vec<Rule> = rules
        .into_iter()
        .filter(|r| !group.rules.iter().any(|e| e.same_as(r)))
        .collect();
    if group.rules.len() + added.len() > MAX_RULES {
        return Err(ErrorResponse::forbidden(
            "RulesPerGroupLimitExceeded",
            format!("A security group holds at most {MAX_RULES} rules."),
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    // An existing identical rule is left as it is: authorizing it again succeeds.
    group.rules.extend(added);
    Ok(json!({}))
}

fn revoke(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
    direction: Direction,
) -> Result<Value, ErrorResponse> {
    let id = p.required("SecurityGroupId")?;
    store
        .network
        .account(&ctx.caller.account_id)
        .group(region.id, id)?;
    let rule_ids = p.list("SecurityGroupRuleId", MAX_PERMISSIONS)?;
    let rules = if rule_ids.is_empty() {
        parse_rules(store, ctx, region, p, direction)?
    } else {
        Vec::new()
    };
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let group = store
        .network
        .account(&ctx.caller.account_id)
        .group_mut(region.id, id)?;
    // Since July 2024 ECS refuses a rule ID the group does not hold in this direction (and
    // revokes none of the call's); rules named by Permissions.N that match none still succeed
    // without change.
    if let Some(missing) = rule_ids.iter().find(|r| {
        !group
            .rules
            .iter()
            .any(|e| e.direction == direction && &e.id == *r)
    }) {
        return Err(rule_not_found(direction, missing));
    }
    group.rules.retain(|e| {
        let by_id = e.direction == direction && rule_ids.contains(&e.id);
        !(by_id || rules.iter().any(|r| r.same_as(e)))
    });
    Ok(json!({}))
}

/// A revoke naming a rule ID that is not in the group: each direction's action has its own code.
/// The docs give the codes, not the HTTP status: the egress code is the one ModifySecurityGroupRule
/// answers (404), the ingress one an invalid parameter's (400).
fn rule_not_found(direction: Direction, rule_id: &str) -> ErrorResponse {
    let message =
        format!("The security group rule {rule_id} does not exist in the security group.");
    match direction {
        Direction::Ingress => {
            ErrorResponse::bad_request("InvalidParam.SecurityGroupRuleId", message)
        }
        Direction::Egress => {
            ErrorResponse::not_found("InvalidSecurityGroupRule.RuleNotExist", message)
        }
    }
}

fn delete(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("SecurityGroupId")?;
    let account = ctx.caller.account_id.clone();
    let in_use = store
        .in_region(&account, region.id)
        .any(|i| i.security_group_ids.iter().any(|g| g == id));
    let network = store.network.account(&account);
    network.group(region.id, id)?;
    if in_use {
        return Err(ErrorResponse::forbidden(
            "DependencyViolation",
            "There is still instance(s) in the specified security group.",
        ));
    }
    if network
        .groups
        .values()
        .any(|g| g.id != id && g.rules.iter().any(|r| r.peer_group == id))
    {
        return Err(ErrorResponse::forbidden(
            "DependencyViolation",
            "The specified security group has been authorized in another one.",
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    network.groups.remove(id);
    Ok(json!({}))
}

/// ECS `UntagResources` with `ResourceType=securitygroup`: `TagKey.N`, or `All=true`.
pub fn untag_groups(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let request = UntagRequest::parse(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    for id in &request.ids {
        network.group(region.id, id)?;
    }
    for id in &request.ids {
        if let Some(group) = network.groups.get_mut(id) {
            request.remove_from(&mut group.tags);
        }
    }
    Ok(json!({}))
}

/// ECS `TagResources` with `ResourceType=securitygroup`.
pub fn tag_groups(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let (ids, tags) = tags::tag_request(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    for id in &ids {
        network.group(region.id, id)?;
    }
    for id in &ids {
        if let Some(group) = network.groups.get_mut(id) {
            tags::merge(&mut group.tags, &tags)?;
        }
    }
    Ok(json!({}))
}
