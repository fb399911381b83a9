//! PATCH: a merge, JSON or strategic merge patch is applied to the current object and stored
//! as an update; a server-side apply merges the applied configuration under its field manager,
//! or creates the object when it does not exist.

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::fields::{apply, patch};
use crate::meta;
use crate::store::ops::create::{check_type, create};
use crate::store::ops::options::{Target, WriteOptions, Written};
use crate::store::ops::update::{UpdateKind, check_resource_version, forbid_uid_change, update};
use crate::store::state::State;
use crate::store::views;

/// A patch format, with what it needs beyond the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json` (built-in kinds).
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply; `force` takes over conflicting fields.
    Apply { force: bool },
}

/// PATCH of `target` with the decoded `body`.
pub fn patch(
    state: &mut State,
    target: &Target,
    kind: PatchKind,
    body: Value,
    options: &WriteOptions,
) -> ApiResult<Written> {
    if let PatchKind::Apply { force } = kind {
        return server_side_apply(state, target, body, force, options);
    }
    let def = target.def;
    let current = state
        .get(&def.store_key(), target.stored_namespace(), target.name)
        .cloned()
        .ok_or_else(|| target.not_found())?;
    let mut patched = views::to_view(def, &current);
    apply_patch(target, kind, &mut patched, &body)?;
    if !patched.is_object() {
        return Err(ApiError::bad_request("the patched object is not an object"));
    }
    forbid_uid_change(target, &patched, &current)?;
    update(
        state,
        target,
        views::from_view(def, patched),
        UpdateKind::Update,
        options,
    )
}

/// Applies a merge, JSON or strategic merge patch to `object` (the current object's view).
fn apply_patch(
    target: &Target,
    kind: PatchKind,
    object: &mut Value,
    body: &Value,
) -> ApiResult<()> {
    match kind {
        PatchKind::Merge => {
            if !body.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            patch::merge_patch(object, body);
            Ok(())
        }
        PatchKind::Strategic => patch::strategic_merge_patch(object, body, target.def.shape())
            .map_err(|e| ApiError::bad_request(e.to_string())),
        PatchKind::Json => patch::json_patch(object, body).map_err(|e| match e {
            // kube-apiserver's Status names no object: `details: {}`.
            patch::PatchError::TestFailed | patch::PatchError::DoesNotFit(_) => {
                ApiError::invalid_request(
                    "the server rejected our request due to an error in our request",
                )
            }
            patch::PatchError::Invalid(message) => ApiError::bad_request(message),
        }),
        PatchKind::Apply { .. } => unreachable!("server-side apply merges, it does not patch"),
    }
}

/// Server-side apply of the configuration `body` by `options.manager`.
fn server_side_apply(
    state: &mut State,
    target: &Target,
    body: Value,
    force: bool,
    options: &WriteOptions,
) -> ApiResult<Written> {
    let def = target.def;
    check_applied_configuration(target, &body)?;
    let current = state
        .get(&def.store_key(), target.stored_namespace(), target.name)
        .cloned();
    let Some(current) = current else {
        return create_by_apply(state, target, body, options);
    };
    check_resource_version(target, &body, &current)?;
    let live = views::to_view(def, &current);
    let merged = apply::apply(
        &live,
        &body,
        &options.manager,
        target.subresource,
        def.shape(),
        force,
    )?;
    forbid_uid_change(target, &merged, &current)?;
    update(
        state,
        target,
        views::from_view(def, merged),
        UpdateKind::Apply,
        options,
    )
}

/// An applied configuration is a whole object of the endpoint's type, named as the URL.
fn check_applied_configuration(target: &Target, body: &Value) -> ApiResult<()> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the apply patch must be a YAML or JSON object",
        ));
    }
    check_type(target.def, body)?;
    if meta::str_at(body, "/apiVersion").is_empty() || meta::str_at(body, "/kind").is_empty() {
        return Err(ApiError::bad_request(
            "apiVersion and kind must be set in an apply patch",
        ));
    }
    let body_name = meta::name_of(body);
    if !body_name.is_empty() && body_name != target.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            target.name
        )));
    }
    Ok(())
}

/// An apply of a missing object creates it (not through a subresource).
fn create_by_apply(
    state: &mut State,
    target: &Target,
    body: Value,
    options: &WriteOptions,
) -> ApiResult<Written> {
    if !target.subresource.is_empty() {
        return Err(target.not_found());
    }
    let mut applied = body;
    meta::metadata_mut(&mut applied).insert("name".into(), json!(target.name));
    let options = WriteOptions {
        apply: true,
        ..options.clone()
    };
    create(
        state,
        target.def,
        target.namespace,
        views::from_view(target.def, applied),
        &options,
    )
}
