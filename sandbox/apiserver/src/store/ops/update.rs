//! Updating an object: PUT, and every patch once it has been applied to the current object.
//! One step per rule of the apiserver, in its order: check the request against the stored
//! object, take over what the client may not change, admit, count the generation, record the
//! managed fields, then store (or remove, when the last finalizer went) — or nothing, when the
//! write changes nothing.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::catalog::registry::keys;
use crate::error::{ApiError, ApiResult, Cause};
use crate::fields::managed;
use crate::meta;
use crate::store::admission;
use crate::store::ops::options::{Target, WriteOptions, Written};
use crate::store::ops::settle;
use crate::store::state::State;
use crate::store::views;

/// How an update was requested; decides which parts of the body count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    /// PUT or a non-apply patch.
    Update,
    /// Server-side apply.
    Apply,
}

/// PUT (and every patch, after the patch was applied to the current object). `body` is in the
/// stored form.
pub fn update(
    state: &mut State,
    target: &Target,
    body: Value,
    kind: UpdateKind,
    options: &WriteOptions,
) -> ApiResult<Written> {
    let def = target.def;
    let current = current_for(state, target, &body)?;
    let mut object = take_current_parts(target, body, &current, kind);
    views::set_stored_type(def, &mut object);
    keep_server_metadata(&mut object, &current);
    forbid_new_finalizers_while_deleting(target, &object, &current)?;
    let warnings = admission::admit(def, &mut object, Some(&current), options.validation)?;
    admission::services::allocate_in(state, def, &mut object)?;
    if def.tracks_generation() && generation_changed(&object, &current, def.status_subresource) {
        bump_generation(&mut object, &current);
    }
    if kind == UpdateKind::Update && !options.untracked {
        let fields = managed::changed_fields(&current, &object, def.shape());
        managed::record(
            &mut object,
            &options.manager,
            "Update",
            &def.api_version(),
            target.subresource,
            fields,
        );
    }
    meta::normalize(&mut object);
    if equal_but_bookkeeping(&object, &current) {
        // A no-op write changes nothing, not even managedFields timestamps or the
        // resourceVersion, and emits no event.
        return Ok(written(current, warnings));
    }
    if options.dry_run {
        return Ok(written(Arc::new(object), warnings));
    }
    let stored = commit(state, target, object, current);
    Ok(written(stored, warnings))
}

fn written(object: Arc<Value>, warnings: Vec<String>) -> Written {
    Written {
        object,
        warnings,
        created: false,
    }
}

/// The stored object the body replaces, once the body is known to address it.
fn current_for(state: &State, target: &Target, body: &Value) -> ApiResult<Arc<Value>> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON or YAML object",
        ));
    }
    let current = state
        .get(
            &target.def.store_key(),
            target.stored_namespace(),
            target.name,
        )
        .cloned()
        .ok_or_else(|| target.not_found())?;
    let body_name = meta::name_of(body);
    if !body_name.is_empty() && body_name != target.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            target.name
        )));
    }
    let body_ns = meta::str_at(body, "/metadata/namespace");
    if target.def.namespaced && !body_ns.is_empty() && body_ns != target.namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    check_resource_version(target, body, &current)?;
    check_uid_precondition(target, body, &current)?;
    Ok(current)
}

/// A PUT body's `metadata.uid` is a precondition of the storage layer: a different uid is the
/// apiserver's 409 `StorageError: invalid object`.
fn check_uid_precondition(target: &Target, body: &Value, current: &Value) -> ApiResult<()> {
    let wanted = meta::str_at(body, "/metadata/uid");
    let stored = meta::uid_of(current);
    if wanted.is_empty() || wanted == stored {
        return Ok(());
    }
    let def = target.def;
    let namespace = target.stored_namespace();
    let key = match (def.is_custom(), namespace.is_empty()) {
        (true, true) => format!("/registry/{}/{}/{}", def.group, def.plural, target.name),
        (true, false) => format!(
            "/registry/{}/{}/{namespace}/{}",
            def.group, def.plural, target.name
        ),
        (false, true) => format!("/registry/{}/{}", def.plural, target.name),
        (false, false) => format!("/registry/{}/{namespace}/{}", def.plural, target.name),
    };
    Err(ApiError::conflict(
        &def.group_resource(),
        &def.group,
        &def.plural,
        target.name,
        &format!(
            "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {wanted}, UID in object meta: {stored}"
        ),
    ))
}

/// A patch (of any kind) may not change `metadata.uid`: the apiserver's 422 `field is
/// immutable`. `patched` is the object after the patch, `current` the stored one.
pub fn forbid_uid_change(target: &Target, patched: &Value, current: &Value) -> ApiResult<()> {
    let wanted = meta::str_at(patched, "/metadata/uid");
    if wanted.is_empty() || wanted == meta::uid_of(current) {
        return Ok(());
    }
    let message = format!("Invalid value: \"{wanted}\": field is immutable");
    Err(ApiError::invalid(
        &target.def.kind,
        &target.def.group,
        target.name,
        vec![Cause {
            reason: "FieldValueInvalid".to_owned(),
            message,
            field: "metadata.uid".to_owned(),
        }],
    ))
}

/// A `metadata.resourceVersion` in a body is a precondition: 409 when the object changed since.
pub fn check_resource_version(target: &Target, body: &Value, current: &Value) -> ApiResult<()> {
    let wanted_rv = meta::str_at(body, "/metadata/resourceVersion");
    if !wanted_rv.is_empty() && wanted_rv != meta::str_at(current, "/metadata/resourceVersion") {
        let def = target.def;
        return Err(ApiError::modified(
            &def.group_resource(),
            &def.group,
            &def.plural,
            target.name,
        ));
    }
    Ok(())
}

/// What the endpoint may not change comes from the stored object: on `/status` everything
/// but the status, on the main resource of a kind with a status subresource the status.
fn take_current_parts(target: &Target, body: Value, current: &Value, kind: UpdateKind) -> Value {
    let mut next = body;
    if target.subresource == "status" {
        let status = next.as_object_mut().and_then(|b| b.remove("status"));
        // A Deployment's status strategy keeps annotation changes (the deployment controller
        // writes its revision annotation with the status); other kinds' status writes change
        // the status only.
        let annotations = (target.def.store_key() == keys::deployments())
            .then(|| next.pointer("/metadata/annotations").cloned());
        let managed_fields = (kind == UpdateKind::Apply).then(|| {
            next.pointer_mut("/metadata/managedFields")
                .map(Value::take)
                .unwrap_or(Value::Null)
        });
        // Everything but the status is the stored object's. The body (after a patch, mostly
        // the stored object already) is turned into it, copying only what differs.
        stored_except_status(&mut next, current);
        if let Some(status) = status {
            next["status"] = status;
        }
        match annotations {
            Some(Some(annotations)) => {
                meta::metadata_mut(&mut next).insert("annotations".into(), annotations);
            }
            Some(None) => {
                meta::metadata_mut(&mut next).remove("annotations");
            }
            None => {}
        }
        if let Some(managed_fields) = managed_fields {
            next["metadata"]["managedFields"] = managed_fields;
        }
    } else if target.def.status_subresource {
        match current.get("status") {
            Some(status) => next["status"] = status.clone(),
            None => {
                if let Value::Object(map) = &mut next {
                    map.remove("status");
                }
            }
        }
    }
    next
}

/// Makes `target` equal to `stored` without its `status`, copying only the top-level fields
/// that differ.
fn stored_except_status(target: &mut Value, stored: &Value) {
    let (Value::Object(target_map), Value::Object(stored_map)) = (&mut *target, stored) else {
        *target = stored.clone();
        if let Value::Object(map) = target {
            map.remove("status");
        }
        return;
    };
    target_map.retain(|k, _| k != "status" && stored_map.contains_key(k));
    for (k, v) in stored_map {
        if k != "status" && target_map.get(k) != Some(v) {
            target_map.insert(k.clone(), v.clone());
        }
    }
}

/// The metadata only the server sets is the stored object's, whatever the body says;
/// managedFields too, unless the body sets them.
fn keep_server_metadata(object: &mut Value, current: &Value) {
    let no_metadata = Value::Null;
    let current_meta = current.get("metadata").unwrap_or(&no_metadata);
    let meta_map = meta::metadata_mut(object);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match current_meta.get(field) {
            Some(v) => meta_map.insert(field.into(), v.clone()),
            None => meta_map.remove(field),
        };
    }
    if meta_map.get("managedFields").is_none_or(Value::is_null) {
        match current_meta.get("managedFields") {
            Some(v) => meta_map.insert("managedFields".into(), v.clone()),
            None => meta_map.remove("managedFields"),
        };
    }
}

/// An object being deleted may lose finalizers but gain none.
fn forbid_new_finalizers_while_deleting(
    target: &Target,
    object: &Value,
    current: &Value,
) -> ApiResult<()> {
    if !meta::is_terminating(current) {
        return Ok(());
    }
    let before = meta::finalizers(current);
    let added: Vec<String> = meta::finalizers(object)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
    Err(ApiError::invalid(
        &target.def.kind,
        &target.def.group,
        target.name,
        vec![Cause {
            reason: "FieldValueForbidden".into(),
            message: format!(
                "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                quoted.join(", ")
            ),
            field: "metadata.finalizers".into(),
        }],
    ))
}

/// Whether `a` and `b` differ in what `generation` tracks: everything but `metadata`,
/// `apiVersion`, and `status` when it is a subresource. Compares in place, without copies.
fn generation_changed(a: &Value, b: &Value, status_subresource: bool) -> bool {
    let ignored = |key: &str| {
        matches!(key, "metadata" | "apiVersion") || (status_subresource && key == "status")
    };
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => !equal_except(a, b, ignored),
        _ => a != b,
    }
}

fn bump_generation(object: &mut Value, current: &Value) {
    let generation = current
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        + 1;
    meta::metadata_mut(object).insert("generation".into(), json!(generation));
}

/// Stores the updated object, or removes it when it is being deleted and its last finalizer
/// just went (namespaces wait for their content). Returns what was written.
fn commit(state: &mut State, target: &Target, object: Value, current: Arc<Value>) -> Arc<Value> {
    let key = target.def.store_key();
    if meta::is_terminating(&object)
        && meta::finalizers(&object).is_empty()
        && key != keys::namespaces()
    {
        let last = state
            .remove_as(&key, target.stored_namespace(), target.name, Some(object))
            .unwrap_or(current);
        settle::settle_removed(state, &key, &last);
        return last;
    }
    if key == keys::crds() {
        state.registry.register_crd(&object);
    }
    state.replace(&key, object)
}

/// Map equality that skips the keys `ignored` selects in both maps.
fn equal_except(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    ignored: impl Fn(&str) -> bool,
) -> bool {
    let mut left = a.iter().filter(|(k, _)| !ignored(k));
    let mut right = b.iter().filter(|(k, _)| !ignored(k));
    loop {
        match (left.next(), right.next()) {
            (None, None) => return true,
            (Some((ka, va)), Some((kb, vb))) if ka == kb && va == vb => {}
            _ => return false,
        }
    }
}

/// Whether two objects are equal but for what every write touches (resourceVersion,
/// managedFields times). Compares in place, without copies.
fn equal_but_bookkeeping(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return a == b;
    };
    if !equal_except(a, b, |k| k == "metadata") {
        return false;
    }
    match (a.get("metadata"), b.get("metadata")) {
        (Some(Value::Object(ma)), Some(Value::Object(mb))) => {
            equal_except(ma, mb, |k| matches!(k, "resourceVersion" | "managedFields"))
                && managed_fields_equal_but_times(ma.get("managedFields"), mb.get("managedFields"))
        }
        (ma, mb) => ma == mb,
    }
}

/// managedFields equality that ignores each entry's `time`.
fn managed_fields_equal_but_times(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|(ea, eb)| match (ea, eb) {
                    (Value::Object(ea), Value::Object(eb)) => equal_except(ea, eb, |k| k == "time"),
                    _ => ea == eb,
                })
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_comparisons_ignore_only_bookkeeping() {
        let a = json!({"apiVersion": "v1", "kind": "K", "spec": {"a": 1}, "status": {"s": 1},
            "metadata": {"name": "n", "resourceVersion": "1", "managedFields": [
                {"manager": "m", "time": "2024-01-01T00:00:00Z", "fieldsV1": {}}]}});
        let mut b = a.clone();
        b["metadata"]["resourceVersion"] = json!("2");
        b["metadata"]["managedFields"][0]["time"] = json!("2025-01-01T00:00:00Z");
        assert!(equal_but_bookkeeping(&a, &b));
        b["metadata"]["managedFields"][0]["manager"] = json!("other");
        assert!(!equal_but_bookkeeping(&a, &b));
        let mut c = a.clone();
        c["metadata"]["labels"] = json!({"x": "y"});
        assert!(!equal_but_bookkeeping(&a, &c));
        assert!(!generation_changed(&a, &c, true));
        c["status"] = json!({"s": 2});
        assert!(!generation_changed(&a, &c, true));
        assert!(generation_changed(&a, &c, false));
        c["apiVersion"] = json!("v2");
        c["spec"]["a"] = json!(2);
        assert!(generation_changed(&a, &c, true));
        let mut d = a.clone();
        d["extra"] = json!(null);
        assert!(generation_changed(&a, &d, true));
        assert!(!equal_but_bookkeeping(&a, &d));
    }
}
