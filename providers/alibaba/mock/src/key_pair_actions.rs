//! ECS's SSH key-pair actions (version `2014-05-26`): ImportKeyPair, CreateKeyPair,
//! DescribeKeyPairs, DeleteKeyPairs, AttachKeyPair and DetachKeyPair, with the rules of
//! [`crate::key_pairs`]. A key pair is attached to Linux instances only and takes effect at their
//! next start or reboot; ECS reports the result per instance.

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, requested_region};
use crate::catalog::{self, CatalogRegion};
use crate::error::ErrorResponse;
use crate::glob::glob_match;
use crate::instance::Status;
use crate::key_pairs::{self, KeyPair, PublicKey};
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

/// The key-pair actions the mock serves, with their handlers.
pub const ACTIONS: &[Action] = &[
    Action::fields("ImportKeyPair", |s, c, p| {
        import(s, c, requested_region(p)?, p)
    }),
    Action::fields("CreateKeyPair", |s, c, p| {
        create(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeKeyPairs", |s, c, p| {
        describe(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeleteKeyPairs", |s, c, p| {
        delete(s, c, requested_region(p)?, p)
    }),
    Action::fields("AttachKeyPair", |s, c, p| {
        bind(s, c, requested_region(p)?, p, true)
    }),
    Action::fields("DetachKeyPair", |s, c, p| {
        bind(s, c, requested_region(p)?, p, false)
    }),
];

/// Most instances one AttachKeyPair / DetachKeyPair takes.
const MAX_INSTANCES_PER_CALL: usize = 50;
/// Most names one DeleteKeyPairs takes.
const MAX_NAMES_PER_DELETE: usize = 100;

fn import(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let name = p.required("KeyPairName")?;
    key_pairs::check_name(name)?;
    let body = p.required("PublicKeyBody")?;
    let public_key = PublicKey::parse(body)?;
    let tags = tags::parse(p)?;
    let pair = store.key_pairs.add(
        (&ctx.caller.account_id, region.id),
        name,
        &public_key,
        p.get("ResourceGroupId").unwrap_or_default(),
        tags,
        ctx.now,
    )?;
    Ok(json!({
        "KeyPairName": pair.name,
        "KeyPairFingerPrint": pair.fingerprint,
        "KeyPairId": pair.id,
    }))
}

fn create(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let name = p.required("KeyPairName")?;
    key_pairs::check_name(name)?;
    let tags = tags::parse(p)?;
    if store
        .key_pairs
        .get(&ctx.caller.account_id, region.id, name)
        .is_some()
    {
        return Err(ErrorResponse::bad_request(
            "KeyPair.AlreadyExist",
            "The key pair already exist: choose another KeyPairName or delete the existing one.",
        ));
    }
    let (public_key, private_key) = key_pairs::generate()?;
    let pair = store.key_pairs.add(
        (&ctx.caller.account_id, region.id),
        name,
        &public_key,
        p.get("ResourceGroupId").unwrap_or_default(),
        tags,
        ctx.now,
    )?;
    // The private key is answered once and kept nowhere.
    Ok(json!({
        "KeyPairName": pair.name,
        "KeyPairFingerPrint": pair.fingerprint,
        "KeyPairId": pair.id,
        "PrivateKeyBody": private_key,
    }))
}

fn pair_view(pair: &KeyPair, include_public_key: bool) -> Value {
    let mut view = json!({
        "KeyPairName": pair.name,
        "KeyPairFingerPrint": pair.fingerprint,
        "CreationTime": pair.created_at.strftime("%Y-%m-%dT%H:%MZ").to_string(),
        "ResourceGroupId": pair.resource_group_id,
        "Tags": tags::ecs_view(&pair.tags),
    });
    if include_public_key && let Some(map) = view.as_object_mut() {
        map.insert("PublicKey".to_owned(), Value::from(pair.public_key.clone()));
    }
    view
}

fn describe(
    store: &Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let name = p.get("KeyPairName");
    let fingerprint = p.get("KeyPairFingerPrint");
    let tags = tags::filter(p)?;
    let include_public_key = p.bool("IncludePublicKey")?.unwrap_or(false);
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 50)?.unwrap_or(10);
    let matching: Vec<&KeyPair> = store
        .key_pairs
        .in_region(&ctx.caller.account_id, region.id)
        .into_iter()
        .filter(|k| name.is_none_or(|n| glob_match(n, &k.name)))
        .filter(|k| fingerprint.is_none_or(|f| k.fingerprint == f))
        .filter(|k| tags::matches(&k.tags, &tags))
        .collect();
    let total = matching.len();
    let page: Vec<Value> = matching
        .into_iter()
        .skip((number - 1) * size)
        .take(size)
        .map(|k| pair_view(k, include_public_key))
        .collect();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "KeyPairs": {"KeyPair": page},
    }))
}

fn invalid_names() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidKeyPairNames.ValueNotSupported",
        "The specified parameter \"KeyPairNames\" is not valid: give a JSON array of at most 100 key pair names.",
    )
}

fn delete(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let names = p
        .json_string_array("KeyPairNames")
        .map_err(|_| invalid_names())?
        .ok_or_else(|| ErrorResponse::missing("KeyPairNames"))?;
    if names.is_empty() || names.len() > MAX_NAMES_PER_DELETE {
        return Err(invalid_names());
    }
    let account = &ctx.caller.account_id;
    for name in &names {
        if let Some(instance) = store
            .in_region(account, region.id)
            .find(|i| i.key_pair_name == *name)
        {
            return Err(ErrorResponse::bad_request(
                "InvalidParameter.KeypairAlreadyAttachedInstance",
                format!(
                    "The key pair \"{}\" is attached to instance {}; detach it with DetachKeyPair before deleting it.",
                    crate::error::truncate(name, 128),
                    instance.id
                ),
            ));
        }
    }
    store.key_pairs.remove(account, region.id, &names);
    Ok(json!({}))
}

fn invalid_instance_ids() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidInstanceIds.ValueNotSupported",
        "The specified parameter InstanceIds is not valid: give a JSON array of 1 to 50 instance IDs.",
    )
}

/// One instance's outcome, as the `Results.Result` of AttachKeyPair / DetachKeyPair. ECS types
/// this answer's counts and `Success` as strings (`"1"`, `"true"`; the official SDKs' models,
/// generated from the API's metadata, declare them so), unlike the RAM-role batch actions.
fn result(instance_id: &str, code: &str, message: &str) -> Value {
    json!({
        "InstanceId": instance_id,
        "Code": code,
        "Message": message,
        "Success": (code == "200").to_string(),
    })
}

/// AttachKeyPair (`attach`) or DetachKeyPair: per instance, a Linux instance of the region that
/// is Running or Stopped gets (or loses) the key pair; it takes effect at its next start or
/// reboot.
fn bind(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
    attach: bool,
) -> Result<Value, ErrorResponse> {
    let name = p.required("KeyPairName")?;
    let ids = p
        .json_string_array("InstanceIds")
        .map_err(|_| invalid_instance_ids())?
        .ok_or_else(|| ErrorResponse::missing("InstanceIds"))?;
    if ids.is_empty() || ids.len() > MAX_INSTANCES_PER_CALL {
        return Err(invalid_instance_ids());
    }
    let account = ctx.caller.account_id.clone();
    if store.key_pairs.get(&account, region.id, name).is_none() {
        return Err(key_pairs::not_found(400, name));
    }
    let mut results = Vec::with_capacity(ids.len());
    let mut failed = 0usize;
    for id in &ids {
        let outcome = match store.find_mut(&account, Some(region.id), id) {
            Err(e) => Err((e.code.to_string(), e.message)),
            Ok(instance) if instance.image.os_type == "windows" => Err((
                "DependencyViolation.WindowsInstance".to_owned(),
                "The instance creating is windows, cannot use ssh key pair to login".to_owned(),
            )),
            Ok(instance)
                if !matches!(instance.status(ctx.now), Status::Running | Status::Stopped) =>
            {
                Err((
                    "IncorrectInstanceStatus".to_owned(),
                    "The current status of the resource does not support this operation: the instance must be Running or Stopped.".to_owned(),
                ))
            }
            Ok(instance) => {
                if attach {
                    instance.key_pair_name = name.to_owned();
                } else if instance.key_pair_name == name {
                    instance.key_pair_name.clear();
                }
                Ok(())
            }
        };
        match outcome {
            Ok(()) => results.push(result(id, "200", "successful")),
            Err((code, message)) => {
                failed += 1;
                results.push(result(id, &code, &message));
            }
        }
    }
    Ok(json!({
        "KeyPairName": name,
        "TotalCount": ids.len().to_string(),
        "FailCount": failed.to_string(),
        "Results": {"Result": results},
    }))
}

/// Whether a tag call (`TagResources` / `UntagResources`) is about key pairs (`ResourceId.N`
/// are key pair names).
pub fn is_key_pair_tag_call(p: &ReceivedParams) -> bool {
    p.get("ResourceType")
        .is_some_and(|t| t.eq_ignore_ascii_case("keypair"))
}

fn key_pair_missing(name: &str) -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidResourceId.NotFound",
        format!(
            "The specified ResourceId \"{}\" does not exist: no key pair of that name in the region.",
            crate::error::truncate(name, 128)
        ),
    )
}

/// `TagResources` / `UntagResources` with `ResourceType=keypair`: all key pairs or none.
pub fn tag_key_pairs(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
    untag: bool,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let account = ctx.caller.account_id.clone();
    let (names, tags) = if untag {
        let names = p.list("ResourceId", 50)?;
        if names.is_empty() {
            return Err(ErrorResponse::missing("ResourceId.1"));
        }
        (names, Vec::new())
    } else {
        tags::tag_request(p)?
    };
    let keys = p.list("TagKey", crate::tags::MAX_TAGS)?;
    let all = p.bool("All")?.unwrap_or(false);
    for name in &names {
        let pair = store
            .key_pairs
            .get(&account, region.id, name)
            .ok_or_else(|| key_pair_missing(name))?;
        let mut merged = pair.tags.clone();
        tags::merge(&mut merged, &tags)?;
    }
    for name in &names {
        if let Some(pair) = store.key_pairs.get_mut(&account, region.id, name) {
            if untag {
                pair.tags.retain(|(k, _)| !all && !keys.contains(k));
            } else {
                tags::merge(&mut pair.tags, &tags)?;
            }
        }
    }
    Ok(json!({}))
}
