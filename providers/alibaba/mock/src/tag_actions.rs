//! ECS's TagResources and UntagResources, routed by `ResourceType` to the instance, security-group,
//! disk and key-pair handlers, and ListTagResources of instances.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::catalog;
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::store::listing::{Filters, Paging};
use crate::tags::{self, MAX_TAGS, UntagRequest};
use crate::{disk_actions, key_pair_actions, security_group_actions};

/// The kinds of resource ECS's TagResources and UntagResources take, by `ResourceType`.
enum TaggedKind {
    SecurityGroup,
    Disk,
    KeyPair,
    Instance,
}

impl TaggedKind {
    fn of(p: &ReceivedParams) -> Self {
        if p.get("ResourceType")
            .is_some_and(|t| t.eq_ignore_ascii_case("securitygroup"))
        {
            Self::SecurityGroup
        } else if disk_actions::is_disk_tag_call(p) {
            Self::Disk
        } else if key_pair_actions::is_key_pair_tag_call(p) {
            Self::KeyPair
        } else {
            Self::Instance
        }
    }
}

/// `TagResources` of instances, security groups, disks or key pairs.
pub fn tag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    match TaggedKind::of(p) {
        TaggedKind::SecurityGroup => security_group_actions::tag_groups(store, ctx, p),
        TaggedKind::Disk => disk_actions::tag_disks(store, ctx, p),
        TaggedKind::KeyPair => key_pair_actions::tag_key_pairs(store, ctx, p, false),
        TaggedKind::Instance => tag_instances(store, ctx, p),
    }
}

/// `UntagResources` of instances, security groups, disks or key pairs.
pub fn untag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    match TaggedKind::of(p) {
        TaggedKind::SecurityGroup => security_group_actions::untag_groups(store, ctx, p),
        TaggedKind::Disk => disk_actions::untag_disks(store, ctx, p),
        TaggedKind::KeyPair => key_pair_actions::tag_key_pairs(store, ctx, p, true),
        TaggedKind::Instance => untag_instances(store, ctx, p),
    }
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

fn tag_instances(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    check_resource_type(p)?;
    let (ids, tags) = tags::tag_request(p)?;
    let account = &ctx.caller.account_id;
    for id in &ids {
        let instance = store.find(account, Some(region.id), id)?;
        let added = tags
            .iter()
            .filter(|(k, _)| !instance.has_tag(k, None))
            .count();
        if instance.tags.len() + added > MAX_TAGS {
            return Err(tags::too_many_tags());
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

fn untag_instances(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    check_resource_type(p)?;
    let request = UntagRequest::parse(p)?;
    let account = &ctx.caller.account_id;
    for id in &request.ids {
        store.find(account, Some(region.id), id)?;
    }
    for id in &request.ids {
        request.remove_from(&mut store.find_mut(account, Some(region.id), id)?.tags);
    }
    Ok(json!({}))
}

/// `ListTagResources` of instances.
pub fn list_tag_resources(
    store: &Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    check_resource_type(p)?;
    let ids = p.list("ResourceId", 50)?;
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
