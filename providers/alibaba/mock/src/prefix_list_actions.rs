//! ECS's prefix-list actions (version `2014-05-26`): CreatePrefixList, DescribePrefixLists,
//! DescribePrefixListAttributes, ModifyPrefixList, DeletePrefixList and
//! DescribePrefixListAssociations, with the rules of [`crate::prefix_lists`]. A list is
//! associated with every security group holding a rule that names it; DeletePrefixList refuses
//! a list so associated (`NotAllowed.AssociationExist`, API reference).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, requested_region};
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::param_checks;
use crate::prefix_lists::{self, AddressFamily, MAX_ENTRIES_LIMIT, PrefixList, too_many_entries};
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

/// The prefix-list actions the mock serves, with their handlers.
pub const ACTIONS: &[Action] = &[
    Action::fields("CreatePrefixList", |s, c, p| {
        create(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribePrefixLists", |s, c, p| {
        describe(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribePrefixListAttributes", |s, c, p| {
        attributes(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifyPrefixList", |s, c, p| {
        modify(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeletePrefixList", |s, c, p| {
        delete(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribePrefixListAssociations", |s, c, p| {
        associations(s, c, requested_region(p)?, p)
    }),
];

/// Most entries one call adds or removes (`Entry.N`, `AddEntry.N`, `RemoveEntry.N`: N up to 200).
const MAX_ENTRIES_PER_CALL: usize = 200;
/// `MaxResults` of the listings: 1 to 100, 10 when unset (API reference).
const MAX_RESULTS: u32 = 100;
const DEFAULT_RESULTS: u32 = 10;

/// The groups of `region_id` holding a rule that names `list_id`, in ID order.
fn associated_groups(store: &Store, account: &str, region_id: &str, list_id: &str) -> Vec<String> {
    let Some(network) = store.network.get(account) else {
        return Vec::new();
    };
    network
        .groups
        .values()
        .filter(|g| g.region_id == region_id)
        .filter(|g| g.rules.iter().any(|r| r.peer_prefix_list == list_id))
        .map(|g| g.id.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// One page of `items` by `MaxResults` and `NextToken` (the offset the previous page ended at),
/// with the token of the next page (empty on the last).
fn page<T>(items: Vec<T>, p: &ReceivedParams) -> Result<(Vec<T>, String), ErrorResponse> {
    let size = p
        .number_in("MaxResults", 1, MAX_RESULTS)?
        .unwrap_or(DEFAULT_RESULTS) as usize;
    let start = match p.get("NextToken") {
        None => 0,
        Some(t) => t
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= items.len())
            .ok_or_else(|| ErrorResponse::invalid("NextToken"))?,
    };
    let end = (start + size).min(items.len());
    let next = if end < items.len() {
        end.to_string()
    } else {
        String::new()
    };
    Ok((
        items.into_iter().skip(start).take(end - start).collect(),
        next,
    ))
}

/// Entries given as `<prefix>.N.Cidr` / `<prefix>.N.Description`.
fn entries(
    p: &ReceivedParams,
    prefix: &str,
    family: AddressFamily,
) -> Result<Vec<prefix_lists::Entry>, ErrorResponse> {
    let indices = p.indices(prefix)?;
    if indices.len() > MAX_ENTRIES_PER_CALL {
        return Err(ErrorResponse::bad_request(
            "LimitExceed.Entry",
            "The number of entries added or removed exceeds the limit.",
        ));
    }
    indices
        .into_iter()
        .map(|n| {
            let cidr_name = format!("{prefix}.{n}.Cidr");
            let description_name = format!("{prefix}.{n}.Description");
            let cidr = p.required(&cidr_name)?;
            prefix_lists::entry(
                family,
                &cidr_name,
                cidr,
                &description_name,
                p.get(&description_name),
            )
        })
        .collect()
}

fn create(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let family = AddressFamily::parse(p.required("AddressFamily")?)?;
    let max_entries: u32 = p
        .number_in("MaxEntries", 1, MAX_ENTRIES_LIMIT)?
        .ok_or_else(|| ErrorResponse::missing("MaxEntries"))?;
    let name = p.required("PrefixListName")?;
    prefix_lists::check_name(name)?;
    let description = p.get("Description");
    if let Some(d) = description {
        prefix_lists::check_description(d)?;
    }
    let token = p.get("ClientToken");
    if let Some(t) = token {
        param_checks::check_client_token(t)?;
    }
    let given = entries(p, "Entry", family)?;
    let print = fingerprint(&(family, max_entries, name, description, &given));
    let entries = prefix_lists::keyed(given)?;
    if entries.len() > max_entries as usize {
        return Err(too_many_entries());
    }
    let tags = tags::parse(p)?;
    let account = &ctx.caller.account_id;
    if let Some(id) = store.prefix_lists.replay(account, token, print)? {
        return Ok(json!({"PrefixListId": id}));
    }
    let id = random_id("pl");
    store.prefix_lists.insert(
        account,
        token,
        print,
        PrefixList {
            id: id.clone(),
            region_id: region.id,
            name: name.to_owned(),
            description: description.unwrap_or_default().to_owned(),
            family,
            max_entries,
            entries,
            resource_group_id: p.get("ResourceGroupId").unwrap_or_default().to_owned(),
            tags,
            created_at: ctx.now,
        },
    );
    Ok(json!({"PrefixListId": id}))
}

fn time(list: &PrefixList) -> String {
    list.created_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn describe(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = p.list("PrefixListId", 100)?;
    let name = p.get("PrefixListName");
    let family = p
        .get("AddressFamily")
        .map(AddressFamily::parse)
        .transpose()?;
    let account = &ctx.caller.account_id;
    let lists: Vec<&PrefixList> = store
        .prefix_lists
        .in_region(account, region.id)
        .filter(|l| ids.is_empty() || ids.contains(&l.id))
        .filter(|l| name.is_none_or(|n| n == l.name))
        .filter(|l| family.is_none_or(|f| f == l.family))
        .collect();
    let (page, next) = page(lists, p)?;
    let views: Vec<Value> = page
        .into_iter()
        .map(|l| {
            json!({
                "PrefixListId": l.id,
                "PrefixListName": l.name,
                "Description": l.description,
                "AddressFamily": l.family.as_str(),
                "MaxEntries": l.max_entries,
                "AssociationCount": associated_groups(store, account, region.id, &l.id).len(),
                "CreationTime": time(l),
                "ResourceGroupId": l.resource_group_id,
                "Tags": tags::ecs_view(&l.tags),
            })
        })
        .collect();
    Ok(json!({"NextToken": next, "PrefixLists": {"PrefixList": views}}))
}

fn attributes(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("PrefixListId")?;
    let l = store
        .prefix_lists
        .get(&ctx.caller.account_id, region.id, id)?;
    let entries: Vec<Value> = l
        .entries
        .values()
        .map(|e| json!({"Cidr": e.cidr, "Description": e.description}))
        .collect();
    Ok(json!({
        "PrefixListId": l.id,
        "PrefixListName": l.name,
        "Description": l.description,
        "AddressFamily": l.family.as_str(),
        "MaxEntries": l.max_entries,
        "CreationTime": time(l),
        "Entries": {"Entry": entries},
    }))
}

fn modify(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("PrefixListId")?;
    let name = p.get("PrefixListName");
    if let Some(n) = name {
        prefix_lists::check_name(n)?;
    }
    let description = p.get("Description");
    if let Some(d) = description {
        prefix_lists::check_description(d)?;
    }
    let list = store
        .prefix_lists
        .get_mut(&ctx.caller.account_id, region.id, id)?;
    let added = prefix_lists::keyed(entries(p, "AddEntry", list.family)?)?;
    let removed = prefix_lists::keyed(entries(p, "RemoveEntry", list.family)?)?;
    if let Some(both) = added.keys().find(|c| removed.contains_key(*c)) {
        return Err(prefix_lists::cidr_duplicated(both));
    }
    let mut next = list.entries.clone();
    for cidr in removed.keys() {
        // Removing a block the list does not hold: the reference names no code for it.
        if next.remove(cidr).is_none() {
            return Err(ErrorResponse::invalid("RemoveEntry.N.Cidr"));
        }
    }
    // An added block the list holds changes that entry's description (API reference).
    next.extend(added);
    if next.len() > list.max_entries as usize {
        return Err(too_many_entries());
    }
    list.entries = next;
    if let Some(n) = name {
        n.clone_into(&mut list.name);
    }
    if let Some(d) = description {
        d.clone_into(&mut list.description);
    }
    Ok(json!({}))
}

fn delete(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("PrefixListId")?;
    let account = &ctx.caller.account_id;
    store.prefix_lists.get(account, region.id, id)?;
    let groups = associated_groups(store, account, region.id, id);
    if !groups.is_empty() {
        return Err(ErrorResponse::bad_request(
            "NotAllowed.AssociationExist",
            format!(
                "The specified prefix list has associated resources: revoke its rules in {} first.",
                groups.join(", ")
            ),
        ));
    }
    store.prefix_lists.remove(account, id);
    Ok(json!({}))
}

fn associations(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("PrefixListId")?;
    let account = &ctx.caller.account_id;
    store.prefix_lists.get(account, region.id, id)?;
    let groups = associated_groups(store, account, region.id, id);
    let (page, next) = page(groups, p)?;
    let views: Vec<Value> = page
        .into_iter()
        .map(|g| json!({"ResourceId": g, "ResourceType": "securitygroup"}))
        .collect();
    Ok(json!({
        "NextToken": next,
        "PrefixListAssociations": {"PrefixListAssociation": views},
    }))
}
