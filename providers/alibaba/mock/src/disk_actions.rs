//! ECS's disk actions (version `2014-05-26`): CreateDisk, DescribeDisks, AttachDisk, DetachDisk,
//! ResizeDisk, ModifyDiskSpec, ModifyDiskAttribute and DeleteDisk, with the rules of
//! [`crate::disks`].

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, FieldsHandler, dry_run, dry_run_passed};
use crate::catalog::{self, CatalogRegion};
use crate::disk_view::disk_view;
use crate::disks::{self, AttributeChange, Disk, DiskSpec, InstanceFacts};
use crate::error::ErrorResponse;
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

/// The disk actions the mock serves, with their handlers. Each first settles the disks'
/// transitions.
pub const ACTIONS: &[Action] = &[
    Action::fields("CreateDisk", |s, c, p| settled(s, c, p, create)),
    Action::fields("DescribeDisks", |s, c, p| {
        settled(s, c, p, |s, c, p| describe(s, c, p))
    }),
    Action::fields("AttachDisk", |s, c, p| settled(s, c, p, attach)),
    Action::fields("DetachDisk", |s, c, p| settled(s, c, p, detach)),
    Action::fields("ResizeDisk", |s, c, p| settled(s, c, p, resize)),
    Action::fields("ModifyDiskSpec", |s, c, p| settled(s, c, p, modify_spec)),
    Action::fields("ModifyDiskAttribute", |s, c, p| {
        settled(s, c, p, modify_attribute)
    }),
    Action::fields("DeleteDisk", |s, c, p| settled(s, c, p, delete)),
];

/// Settles the disks' transitions, then runs `handler`.
fn settled(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
    handler: FieldsHandler,
) -> Result<Value, ErrorResponse> {
    store.disks.settle(ctx.now);
    handler(store, ctx, p)
}

fn delete(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("DiskId")?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    store.disks.delete(&ctx.caller.account_id, id)?;
    Ok(json!({}))
}

/// `DiskName`: 2–128 characters, starting with a letter, not a URL.
fn check_disk_name(name: &str) -> Result<(), ErrorResponse> {
    let len = name.chars().count();
    if !(2..=128).contains(&len)
        || !name.chars().next().is_some_and(char::is_alphabetic)
        || name.starts_with("http://")
        || name.starts_with("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidDiskName.Malformed",
            "The specified disk name is wrongly formed: 2 to 128 characters, starting with a letter, not with http:// or https://.",
        ));
    }
    Ok(())
}

/// A disk `Description`: 2–256 characters, not a URL.
fn check_disk_description(description: &str) -> Result<(), ErrorResponse> {
    let len = description.chars().count();
    if !(2..=256).contains(&len)
        || description.starts_with("http://")
        || description.starts_with("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidDescription.Malformed",
            "The specified description is wrongly formed: 2 to 256 characters, not starting with http:// or https://.",
        ));
    }
    Ok(())
}

/// The facts of an instance of the caller the disk rules need.
fn instance_facts(
    store: &Store,
    ctx: &ActionContext<'_>,
    id: &str,
) -> Result<InstanceFacts, ErrorResponse> {
    let instance = store.find(&ctx.caller.account_id, None, id)?;
    Ok(InstanceFacts {
        id: instance.id.clone(),
        zone_id: instance.zone_id.clone(),
        status: instance.status(ctx.now),
    })
}

/// The facts of the instance a disk is attached to, if any.
fn attached_instance(
    store: &Store,
    ctx: &ActionContext<'_>,
    disk_id: &str,
) -> Result<Option<InstanceFacts>, ErrorResponse> {
    let disk = store.disks.find(&ctx.caller.account_id, disk_id)?;
    disk.instance_id
        .clone()
        .map(|id| instance_facts(store, ctx, &id))
        .transpose()
}

fn create(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    if p.get("InstanceId").is_some() {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.Conflict",
            "InstanceId creates a subscription disk for a subscription instance, which this endpoint does not sell; create a pay-as-you-go disk with ZoneId and attach it with AttachDisk.",
        ));
    }
    let zone_id = p.required("ZoneId")?;
    if !region.has_zone(zone_id) {
        return Err(ErrorResponse::not_found(
            "InvalidZoneId.NotFound",
            format!("The specified zone does not exist in region {}.", region.id),
        ));
    }
    let category = disks::rules::category(p.get("DiskCategory").unwrap_or("cloud"))?;
    let performance_level = disks::rules::performance_level(category, p.get("PerformanceLevel"))?;
    if let Some(snapshot) = p.get("SnapshotId") {
        return Err(ErrorResponse::not_found(
            "InvalidSnapshotId.NotFound",
            format!(
                "The specified SnapshotId \"{}\" does not exist.",
                crate::error::truncate(snapshot, 64)
            ),
        ));
    }
    let size = p.number::<u32>("Size")?.ok_or_else(|| {
        ErrorResponse::bad_request(
            "MissingParameter",
            "The input parameter either \"SnapshotId\" or \"Size\" should be specified.",
        )
    })?;
    disks::rules::check_data_disk_size(
        category,
        performance_level,
        size,
        "InvalidSize.ValueNotSupported",
    )?;
    let name = p.get("DiskName").unwrap_or_default();
    if !name.is_empty() {
        check_disk_name(name)?;
    }
    let description = p.get("Description").unwrap_or_default();
    if !description.is_empty() {
        check_disk_description(description)?;
    }
    let encrypted = p.bool("Encrypted")?.unwrap_or(false);
    let kms_key_id = p.get("KMSKeyId").unwrap_or_default();
    if !kms_key_id.is_empty() && !encrypted {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.EncryptedIllegal",
            "The specified parameter Encrypted must be true when kmsKeyId is not empty.",
        ));
    }
    if encrypted && category == "cloud" {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.EncryptedNotSupported",
            "Basic disks (cloud) cannot be encrypted; choose another DiskCategory.",
        ));
    }
    let tags = tags::parse(p)?;
    let token = p.get("ClientToken");
    if let Some(t) = token {
        param_checks::check_client_token(t)?;
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let spec = DiskSpec {
        zone_id: zone_id.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        category,
        size,
        performance_level,
        encrypted,
        kms_key_id: kms_key_id.to_owned(),
        tags,
        delete_with_instance: false,
    };
    let id = store
        .disks
        .create(&ctx.caller.account_id, region.id, &spec, token, ctx.now)?;
    Ok(json!({"DiskId": id, "OrderId": ""}))
}

fn invalid_disk_ids() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidDiskIds.Malformed",
        "DiskIds must be a JSON array of at most 100 disk IDs, e.g. [\"d-1\",\"d-2\"].",
    )
}

fn describe(
    store: &Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region: &CatalogRegion = catalog::region_by_id(p.required("RegionId")?)?;
    let ids = p
        .json_string_array("DiskIds")
        .map_err(|_| invalid_disk_ids())?;
    if ids.as_ref().is_some_and(|ids| ids.len() > 100) {
        return Err(invalid_disk_ids());
    }
    let disk_type = match p.get("DiskType") {
        None | Some("all") => None,
        Some("system") => Some(disks::DiskType::System),
        Some("data") => Some(disks::DiskType::Data),
        Some(_) => return Err(ErrorResponse::invalid("DiskType")),
    };
    let tags = tags::filter(p)?;
    let instance_id = p.get("InstanceId");
    let zone_id = p.get("ZoneId");
    let category = p.get("Category");
    let status = p.get("Status");
    let name = p.get("DiskName");
    let matching: Vec<&Disk> = store
        .disks
        .in_region(&ctx.caller.account_id, region.id)
        .into_iter()
        .filter(|d| ids.as_ref().is_none_or(|ids| ids.contains(&d.id)))
        .filter(|d| instance_id.is_none_or(|i| d.instance_id.as_deref() == Some(i)))
        .filter(|d| zone_id.is_none_or(|z| d.zone_id == z))
        .filter(|d| disk_type.is_none_or(|t| d.disk_type == t))
        .filter(|d| category.is_none_or(|c| d.category == c))
        .filter(|d| status.is_none_or(|s| s == "All" || d.status() == s))
        .filter(|d| name.is_none_or(|n| d.name == n))
        .filter(|d| tags::matches(&d.tags, &tags))
        .collect();
    let token_mode = p.get("NextToken").is_some() || p.get("MaxResults").is_some();
    let total = matching.len();
    if token_mode {
        let max = p.number_in::<usize>("MaxResults", 1, 500)?.unwrap_or(10);
        let after = p
            .get("NextToken")
            .filter(|t| !t.is_empty())
            .map(|t| u64::from_str_radix(t, 16).map_err(|_| ErrorResponse::invalid("NextToken")))
            .transpose()?;
        let rest: Vec<&Disk> = matching
            .into_iter()
            .filter(|d| after.is_none_or(|a| d.seq > a))
            .collect();
        let page: Vec<&Disk> = rest.iter().take(max).copied().collect();
        let next = if rest.len() > max {
            page.last()
                .map(|d| format!("{:016x}", d.seq))
                .unwrap_or_default()
        } else {
            String::new()
        };
        return Ok(json!({
            "TotalCount": total,
            "NextToken": next,
            "Disks": {"Disk": page.into_iter().map(disk_view).collect::<Vec<_>>()},
        }));
    }
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
    let page: Vec<Value> = matching
        .into_iter()
        .skip((number - 1) * size)
        .take(size)
        .map(disk_view)
        .collect();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "NextToken": "",
        "Disks": {"Disk": page},
    }))
}

fn attach(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let instance_id = p.required("InstanceId")?;
    let disk_id = p.required("DiskId")?;
    let delete_with_instance = p.bool("DeleteWithInstance")?;
    let bootable = p.bool("Bootable")?.unwrap_or(false);
    store.disks.find(&ctx.caller.account_id, disk_id)?;
    let instance = instance_facts(store, ctx, instance_id)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    store.disks.attach(
        &ctx.caller.account_id,
        disk_id,
        &instance,
        delete_with_instance,
        bootable,
        (ctx.now, ctx.delay),
    )?;
    Ok(json!({}))
}

fn detach(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let instance_id = p.required("InstanceId")?;
    let disk_id = p.required("DiskId")?;
    let delete_with_instance = p.bool("DeleteWithInstance")?;
    store.disks.find(&ctx.caller.account_id, disk_id)?;
    let instance = instance_facts(store, ctx, instance_id)?;
    store.disks.detach(
        &ctx.caller.account_id,
        disk_id,
        &instance,
        delete_with_instance,
        (ctx.now, ctx.delay),
    )?;
    Ok(json!({}))
}

fn resize(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let disk_id = p.required("DiskId")?;
    let new_size = p
        .number::<u32>("NewSize")?
        .ok_or_else(|| ErrorResponse::missing("NewSize"))?;
    let online = match p.get("Type") {
        None | Some("offline") => false,
        Some("online") => true,
        Some(_) => {
            return Err(ErrorResponse::bad_request(
                "InvalidParam.Type",
                "The specified type is not supported: use online or offline.",
            ));
        }
    };
    if let Some(t) = p.get("ClientToken") {
        param_checks::check_client_token(t)?;
    }
    let instance = attached_instance(store, ctx, disk_id)?;
    store.disks.resize(
        &ctx.caller.account_id,
        disk_id,
        new_size,
        online,
        instance.as_ref(),
    )?;
    Ok(json!({"OrderId": ""}))
}

fn modify_spec(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let disk_id = p.required("DiskId")?;
    let category = p
        .get("DiskCategory")
        .map(disks::rules::category)
        .transpose()?;
    let level = p.get("PerformanceLevel");
    let instance = attached_instance(store, ctx, disk_id)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    store.disks.modify_spec(
        &ctx.caller.account_id,
        disk_id,
        category,
        level,
        instance.as_ref(),
    )?;
    Ok(json!({"TaskId": "", "OrderId": ""}))
}

fn modify_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let disk_id = p.required("DiskId")?;
    let name = p.get("DiskName").map(str::to_owned);
    if let Some(n) = &name {
        check_disk_name(n)?;
    }
    let description = p.get("Description").map(str::to_owned);
    if let Some(d) = &description {
        check_disk_description(d)?;
    }
    let change = AttributeChange {
        name,
        description,
        delete_with_instance: p.bool("DeleteWithInstance")?,
        delete_auto_snapshot: p.bool("DeleteAutoSnapshot")?,
        enable_auto_snapshot: p.bool("EnableAutoSnapshot")?,
    };
    store
        .disks
        .modify_attribute(&ctx.caller.account_id, disk_id, &change)?;
    Ok(json!({}))
}

/// Whether a tag call (`TagResources` / `UntagResources`) is about disks.
pub fn is_disk_tag_call(p: &ReceivedParams) -> bool {
    p.get("ResourceType")
        .is_some_and(|t| t.eq_ignore_ascii_case("disk"))
}

/// `TagResources` with `ResourceType=disk`: all disks or none.
pub fn tag_disks(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    catalog::region_by_id(p.required("RegionId")?)?;
    store.disks.settle(ctx.now);
    let (ids, tags) = tags::tag_request(p)?;
    let account = &ctx.caller.account_id;
    for id in &ids {
        let mut merged = store.disks.find(account, id)?.tags.clone();
        tags::merge(&mut merged, &tags)?;
    }
    for id in &ids {
        store.disks.tag(account, id, &tags)?;
    }
    Ok(json!({}))
}

/// `UntagResources` with `ResourceType=disk`: `TagKey.N`, or `All`.
pub fn untag_disks(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    catalog::region_by_id(p.required("RegionId")?)?;
    let ids = p.list("ResourceId", 50)?;
    if ids.is_empty() {
        return Err(ErrorResponse::missing("ResourceId.1"));
    }
    let all = p.bool("All")?.unwrap_or(false);
    let keys = p.list("TagKey", tags::MAX_TAGS)?;
    let account = &ctx.caller.account_id;
    for id in &ids {
        store.disks.find(account, id)?;
    }
    for id in &ids {
        let keys = if all {
            store
                .disks
                .find(account, id)?
                .tags
                .iter()
                .map(|(k, _)| k.clone())
                .collect()
        } else {
            keys.clone()
        };
        store.disks.untag(account, id, &keys)?;
    }
    Ok(json!({}))
}
