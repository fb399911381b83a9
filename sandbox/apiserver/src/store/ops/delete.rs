//! Deleting objects: one (DELETE, with its preconditions) or every selected one
//! (deletecollection). An object with finalizers only starts deleting; what follows a removal
//! is in `settle`.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::catalog::registry::{ResourceDef, StoreKey, keys};
use crate::error::{ApiError, ApiResult};
use crate::meta;
use crate::store::ops::options::{DeleteOptions, Propagation, Target};
use crate::store::ops::settle::{self, FOREGROUND, ORPHAN, Task};
use crate::store::selector::Selectors;
use crate::store::state::{ObjectKey, State};
use crate::store::views;

/// DELETE. Returns the object: still present (with `deletionTimestamp`) when finalizers hold it,
/// or its last state.
pub fn delete(
    state: &mut State,
    target: &Target,
    options: &DeleteOptions,
) -> ApiResult<Arc<Value>> {
    let key = target.def.store_key();
    let ns = target.stored_namespace();
    let current = state
        .get(&key, ns, target.name)
        .cloned()
        .ok_or_else(|| target.not_found())?;
    check_preconditions(target, options, &current)?;
    if options.dry_run {
        return Ok(current);
    }
    Ok(delete_object(
        state,
        &key,
        &(ns.to_owned(), target.name.to_owned()),
        options.propagation,
    )
    .unwrap_or(current))
}

/// `DeleteOptions.preconditions`: the object must still have this uid and resourceVersion.
/// kube-apiserver names the object by its kind here (`ConfigMap`, `Deployment.apps`), not by
/// its resource as other conflicts do.
fn check_preconditions(target: &Target, options: &DeleteOptions, current: &Value) -> ApiResult<()> {
    let (def, name) = (target.def, target.name);
    let qualified_kind = if def.group.is_empty() {
        def.kind.clone()
    } else {
        format!("{}.{}", def.kind, def.group)
    };
    let refused =
        |why: String| ApiError::conflict(&qualified_kind, &def.group, &def.plural, name, &why);
    if let Some(uid) = &options.precondition_uid
        && uid != meta::uid_of(current)
    {
        return Err(refused(format!(
            "the UID in the precondition ({uid}) does not match the UID in record ({}). The \
             object might have been deleted and then recreated",
            meta::uid_of(current)
        )));
    }
    let stored_rv = meta::str_at(current, "/metadata/resourceVersion");
    if let Some(rv) = &options.precondition_rv
        && rv != stored_rv
    {
        return Err(refused(format!(
            "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion \
             in record ({stored_rv}). The object might have been modified"
        )));
    }
    Ok(())
}

/// Starts deleting one object; `None` when it is already gone.
fn delete_object(
    state: &mut State,
    key: &StoreKey,
    ok: &ObjectKey,
    propagation: Propagation,
) -> Option<Arc<Value>> {
    let current = state.get(key, &ok.0, &ok.1).cloned()?;
    let mut finalizers = meta::finalizers(&current);
    let has_dependents = !state.dependents_of(meta::uid_of(&current)).is_empty();
    match propagation {
        Propagation::Foreground
            if has_dependents && !finalizers.iter().any(|f| f == FOREGROUND) =>
        {
            finalizers.push(FOREGROUND.into())
        }
        Propagation::Orphan if has_dependents && !finalizers.iter().any(|f| f == ORPHAN) => {
            finalizers.push(ORPHAN.into())
        }
        _ => {}
    }
    if finalizers.is_empty() && *key != keys::namespaces() {
        let last = state.remove(key, &ok.0, &ok.1);
        settle::settle_removed(state, key, &current);
        return last;
    }
    let mut next = (*current).clone();
    meta::set_finalizers(&mut next, &finalizers);
    if !meta::is_terminating(&next) {
        let meta_map = meta::metadata_mut(&mut next);
        meta_map.insert("deletionTimestamp".into(), json!(meta::now_time()));
        meta_map.insert("deletionGracePeriodSeconds".into(), json!(0));
        // Only a counted generation moves (kube-apiserver: when it is above zero).
        if let Some(generation) = current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            && generation > 0
        {
            meta_map.insert("generation".into(), json!(generation + 1));
        }
        if *key == keys::namespaces() {
            meta::set_at(&mut next, &["status", "phase"], json!("Terminating"));
        }
    }
    let stored = state.replace(key, next);
    let mut queue = vec![Task::Terminating(key.clone(), ok.clone())];
    settle::run(state, &mut queue);
    Some(state.get(key, &ok.0, &ok.1).cloned().unwrap_or(stored))
}

/// DELETE of a collection: every object of `def` in `namespace` (all namespaces when `None`)
/// that the selectors match, each as a DELETE. Returns the objects (their view) and the
/// resourceVersion after.
pub fn delete_collection(
    state: &mut State,
    def: &ResourceDef,
    namespace: Option<&str>,
    selectors: &Selectors,
    options: &DeleteOptions,
) -> ApiResult<(Vec<Value>, u64)> {
    let names: Vec<(String, String)> = state
        .list(&def.store_key(), namespace)
        .map(|o| views::to_view(def, o))
        .filter(|v| selectors.matches(v))
        .map(|v| {
            (
                meta::str_at(&v, "/metadata/namespace").to_owned(),
                meta::name_of(&v).to_owned(),
            )
        })
        .collect();
    let mut items = Vec::new();
    for (namespace, name) in names {
        match delete(state, &Target::main(def, &namespace, &name), options) {
            Ok(object) => items.push(views::to_view(def, &object)),
            Err(error) if error.code == 404 => {}
            Err(error) => return Err(error),
        }
    }
    Ok((items, state.resource_version()))
}
