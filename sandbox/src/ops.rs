//! The write semantics of the apiserver on top of the store: create, update (PUT and every patch
//! type end here), delete with finalizers and propagation, and the settling that follows a
//! removal — garbage collection of dependents, foreground and orphan finalizers, namespace and
//! CRD cleanup.
//!
//! All functions run under the server lock; bodies and results are in the stored form (see
//! `view` for the per-version presentation).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::admission::{self, FieldValidation};
use crate::apply;
use crate::error::{ApiError, ApiResult, Cause};
use crate::meta::{self, NameRule};
use crate::registry::{ResourceDef, StoreKey, keys};
use crate::state::{ObjectKey, State};
use crate::view;

pub const FOREGROUND: &str = "foregroundDeletion";
pub const ORPHAN: &str = "orphan";
pub const CRD_CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Options shared by every write.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    /// The field manager recorded in managedFields.
    pub manager: String,
    pub validation: FieldValidation,
    /// Record the write as a server-side apply (a create through an apply patch).
    pub apply: bool,
}

/// `DeleteOptions.propagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    #[default]
    Background,
    Foreground,
    Orphan,
}

/// The parts of `DeleteOptions` the server honours.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub propagation: Propagation,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub dry_run: bool,
}

/// The result of a write.
#[derive(Debug, Clone)]
pub struct Written {
    pub object: Arc<Value>,
    pub warnings: Vec<String>,
}

fn not_found(def: &ResourceDef, name: &str) -> ApiError {
    ApiError::not_found(&def.group_resource(), &def.group, &def.plural, name)
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

/// Checks the namespace of a write exists and is not being deleted.
fn check_namespace(state: &State, def: &ResourceDef, namespace: &str, name: &str) -> ApiResult<()> {
    if !def.namespaced {
        return Ok(());
    }
    match state.get(&keys::namespaces(), "", namespace) {
        None => Err(ApiError::not_found(
            "namespaces",
            "",
            "namespaces",
            namespace,
        )),
        Some(ns) if meta::is_terminating(ns) => Err(ApiError::forbidden(format!(
            "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
            def.group_resource()
        ))),
        Some(_) => Ok(()),
    }
}

/// Checks `apiVersion`/`kind` of a body against the endpoint.
pub fn check_type(def: &ResourceDef, body: &Value) -> ApiResult<()> {
    let api_version = meta::str_at(body, "/apiVersion");
    let kind = meta::str_at(body, "/kind");
    if !api_version.is_empty() && api_version != def.api_version() {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            def.api_version()
        )));
    }
    if !kind.is_empty() && kind != def.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            def.kind
        )));
    }
    Ok(())
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

/// POST.
/// `body` is in the stored form (`view::from_view`), its type already checked against the
/// endpoint by the caller.
pub fn create(
    state: &mut State,
    def: &ResourceDef,
    namespace: &str,
    body: Value,
    options: &WriteOptions,
) -> ApiResult<Written> {
    let mut object = body;
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON or YAML object",
        ));
    }
    view::set_stored_type(def, &mut object);
    let body_namespace = meta::str_at(&object, "/metadata/namespace").to_owned();
    let meta_map = meta::metadata_mut(&mut object);
    if def.namespaced {
        if !body_namespace.is_empty() && body_namespace != namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        meta_map.insert("namespace".into(), json!(namespace));
    } else {
        meta_map.remove("namespace");
    }
    let mut name = meta::name_of(&object).to_owned();
    let generate = meta::str_at(&object, "/metadata/generateName").to_owned();
    if name.is_empty() && !generate.is_empty() {
        name = format!("{generate}{}", random_suffix());
        meta::metadata_mut(&mut object).insert("name".into(), json!(name));
    }
    if name.is_empty() {
        return Err(ApiError::invalid(
            &def.kind,
            &def.group,
            "",
            vec![Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: name or generateName is required".into(),
                field: "metadata.name".into(),
            }],
        ));
    }
    let causes = meta::validate_name(
        &name,
        NameRule::for_kind(&def.group, &def.plural),
        "metadata.name",
    );
    if !causes.is_empty() {
        return Err(ApiError::invalid(&def.kind, &def.group, &name, causes));
    }
    check_namespace(state, def, namespace, &name)?;
    let key = def.store_key();
    if state
        .get(&key, if def.namespaced { namespace } else { "" }, &name)
        .is_some()
    {
        return Err(ApiError::already_exists(
            &def.group_resource(),
            &def.group,
            &def.plural,
            &name,
        ));
    }
    if def.status_subresource
        && let Value::Object(map) = &mut object
    {
        map.remove("status");
    }
    {
        let meta_map = meta::metadata_mut(&mut object);
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta_map.remove(field);
        }
        meta_map.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta_map.insert("creationTimestamp".into(), json!(meta::now_time()));
        meta_map.insert("generation".into(), json!(1));
    }
    if key == keys::crds() {
        let mut finalizers = meta::finalizers(&object);
        if !finalizers.iter().any(|f| f == CRD_CLEANUP) {
            finalizers.push(CRD_CLEANUP.to_owned());
        }
        meta::set_finalizers(&mut object, &finalizers);
    }
    let warnings = admission::admit(def, &mut object, None, options.validation)?;
    let fields = apply::field_set(&object, def.is_custom());
    let operation = if options.apply { "Apply" } else { "Update" };
    apply::record(
        &mut object,
        &options.manager,
        operation,
        &def.api_version(),
        "",
        fields,
    );
    meta::normalize(&mut object);
    if options.dry_run {
        return Ok(Written {
            object: Arc::new(object),
            warnings,
        });
    }
    if key == keys::crds() {
        state.registry.register_crd(&object);
    }
    let stored = state.insert(&key, object);
    Ok(Written {
        object: stored,
        warnings,
    })
}

/// How an update was requested; decides which parts of the body count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    /// PUT or a non-apply patch of the main resource.
    Update,
    /// Server-side apply of the main resource.
    Apply,
}

/// PUT (and every patch, after the patch was applied to the current object).
/// `subresource` is `""` or `"status"`.
#[allow(clippy::too_many_arguments)]
pub fn update(
    state: &mut State,
    def: &ResourceDef,
    namespace: &str,
    name: &str,
    body: Value,
    subresource: &str,
    kind: UpdateKind,
    options: &WriteOptions,
) -> ApiResult<Written> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON or YAML object",
        ));
    }
    let key = def.store_key();
    let ns = if def.namespaced { namespace } else { "" };
    let current = state
        .get(&key, ns, name)
        .cloned()
        .ok_or_else(|| not_found(def, name))?;
    let body_name = meta::name_of(&body);
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let body_ns = meta::str_at(&body, "/metadata/namespace");
    if def.namespaced && !body_ns.is_empty() && body_ns != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let wanted_rv = meta::str_at(&body, "/metadata/resourceVersion");
    if !wanted_rv.is_empty() && wanted_rv != meta::str_at(&current, "/metadata/resourceVersion") {
        return Err(ApiError::modified(
            &def.group_resource(),
            &def.group,
            &def.plural,
            name,
        ));
    }

    let mut object = if subresource == "status" {
        let mut next = body;
        let status = next.as_object_mut().and_then(|b| b.remove("status"));
        let managed_fields = (kind == UpdateKind::Apply).then(|| {
            next.pointer_mut("/metadata/managedFields")
                .map(Value::take)
                .unwrap_or(Value::Null)
        });
        // Everything but the status is the stored object's. The body (after a patch, mostly
        // the stored object already) is turned into it, copying only what differs.
        stored_except_status(&mut next, &current);
        if let Some(status) = status {
            next["status"] = status;
        }
        if let Some(managed_fields) = managed_fields {
            next["metadata"]["managedFields"] = managed_fields;
        }
        next
    } else {
        let mut next = body;
        if def.status_subresource {
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
    };
    view::set_stored_type(def, &mut object);
    {
        let no_metadata = Value::Null;
        let current_meta = current.get("metadata").unwrap_or(&no_metadata);
        let meta_map = meta::metadata_mut(&mut object);
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
    if meta::is_terminating(&current) {
        let before = meta::finalizers(&current);
        let added: Vec<String> = meta::finalizers(&object)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
            return Err(ApiError::invalid(
                &def.kind,
                &def.group,
                name,
                vec![Cause {
                    reason: "FieldValueForbidden".into(),
                    message: format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                        quoted.join(", ")
                    ),
                    field: "metadata.finalizers".into(),
                }],
            ));
        }
    }
    let warnings = admission::admit(def, &mut object, Some(&current), options.validation)?;
    if generation_changed(&object, &current, def.status_subresource) {
        let generation = current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        meta::metadata_mut(&mut object).insert("generation".into(), json!(generation));
    }
    if kind == UpdateKind::Update {
        let fields = apply::changed_fields(&current, &object, def.is_custom());
        apply::record(
            &mut object,
            &options.manager,
            "Update",
            &def.api_version(),
            subresource,
            fields,
        );
    }
    meta::normalize(&mut object);
    if equal_but_bookkeeping(&object, &current) {
        // A no-op write changes nothing, not even managedFields timestamps or the
        // resourceVersion, and emits no event.
        return Ok(Written {
            object: current,
            warnings,
        });
    }
    if options.dry_run {
        return Ok(Written {
            object: Arc::new(object),
            warnings,
        });
    }
    if meta::is_terminating(&object)
        && meta::finalizers(&object).is_empty()
        && key != keys::namespaces()
    {
        let last = state
            .remove_as(&key, ns, name, Some(object))
            .unwrap_or(current);
        settle_removed(state, &key, &last);
        return Ok(Written {
            object: last,
            warnings,
        });
    }
    if key == keys::crds() {
        state.registry.register_crd(&object);
    }
    let stored = state.replace(&key, object);
    Ok(Written {
        object: stored,
        warnings,
    })
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

/// DELETE. Returns the object: still present (with `deletionTimestamp`) when finalizers hold it,
/// or its last state.
pub fn delete(
    state: &mut State,
    def: &ResourceDef,
    namespace: &str,
    name: &str,
    options: &DeleteOptions,
) -> ApiResult<Arc<Value>> {
    let key = def.store_key();
    let ns = if def.namespaced { namespace } else { "" };
    let current = state
        .get(&key, ns, name)
        .cloned()
        .ok_or_else(|| not_found(def, name))?;
    if let Some(uid) = &options.precondition_uid
        && uid != meta::uid_of(&current)
    {
        return Err(ApiError::conflict(
            &def.group_resource(),
            &def.group,
            &def.plural,
            name,
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta::uid_of(&current)
            ),
        ));
    }
    if let Some(rv) = &options.precondition_rv
        && rv != meta::str_at(&current, "/metadata/resourceVersion")
    {
        return Err(ApiError::conflict(
            &def.group_resource(),
            &def.group,
            &def.plural,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                meta::str_at(&current, "/metadata/resourceVersion")
            ),
        ));
    }
    if options.dry_run {
        return Ok(current);
    }
    Ok(delete_object(
        state,
        &key,
        &(ns.to_owned(), name.to_owned()),
        options.propagation,
    )
    .unwrap_or(current))
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
        settle_removed(state, key, &current);
        return last;
    }
    let mut next = (*current).clone();
    meta::set_finalizers(&mut next, &finalizers);
    if !meta::is_terminating(&next) {
        let meta_map = meta::metadata_mut(&mut next);
        meta_map.insert("deletionTimestamp".into(), json!(meta::now_time()));
        meta_map.insert("deletionGracePeriodSeconds".into(), json!(0));
        let generation = current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        meta_map.insert("generation".into(), json!(generation));
        if *key == keys::namespaces() {
            meta::set_at(&mut next, &["status", "phase"], json!("Terminating"));
        }
    }
    let stored = state.replace(key, next);
    let mut queue = vec![Task::Terminating(key.clone(), ok.clone())];
    run(state, &mut queue);
    Some(state.get(key, &ok.0, &ok.1).cloned().unwrap_or(stored))
}

/// Background work a write leaves behind.
#[derive(Debug)]
enum Task {
    /// An object was removed: collect its orphans, unblock owners, namespaces and CRDs.
    Removed {
        key: StoreKey,
        namespace: String,
        uid: String,
        owners: Vec<String>,
    },
    /// An object is being deleted: drive its finalizers that the server itself implements.
    Terminating(StoreKey, ObjectKey),
}

fn settle_removed(state: &mut State, key: &StoreKey, last: &Value) {
    if *key == keys::crds() {
        state.registry.unregister_crd(meta::name_of(last));
    }
    let mut queue = vec![Task::Removed {
        key: key.clone(),
        namespace: meta::str_at(last, "/metadata/namespace").to_owned(),
        uid: meta::uid_of(last).to_owned(),
        owners: meta::owner_uids(last),
    }];
    run(state, &mut queue);
}

fn run(state: &mut State, queue: &mut Vec<Task>) {
    while let Some(task) = queue.pop() {
        match task {
            Task::Removed {
                key,
                namespace,
                uid,
                owners,
            } => {
                for (dep_key, dep_ok) in state.dependents_of(&uid) {
                    let Some(dependent) = state.get(&dep_key, &dep_ok.0, &dep_ok.1) else {
                        continue;
                    };
                    let alive = meta::owner_uids(dependent)
                        .iter()
                        .any(|o| state.locate_uid(o).is_some());
                    if !alive && !meta::is_terminating(dependent) {
                        start_deleting(state, &dep_key, &dep_ok, queue);
                    }
                }
                for owner in owners {
                    if let Some((k, ok)) = state.locate_uid(&owner).cloned() {
                        queue.push(Task::Terminating(k, ok));
                    }
                }
                if !namespace.is_empty() {
                    queue.push(Task::Terminating(
                        keys::namespaces(),
                        (String::new(), namespace),
                    ));
                }
                if let Some(crd) = state.registry.crd_name_of(&key) {
                    queue.push(Task::Terminating(keys::crds(), (String::new(), crd)));
                }
            }
            Task::Terminating(key, ok) => finalize(state, &key, &ok, queue),
        }
    }
}

/// Deletes a dependent in the background (its own finalizers still apply).
fn start_deleting(state: &mut State, key: &StoreKey, ok: &ObjectKey, queue: &mut Vec<Task>) {
    let Some(current) = state.get(key, &ok.0, &ok.1).cloned() else {
        return;
    };
    if meta::finalizers(&current).is_empty() && *key != keys::namespaces() {
        state.remove(key, &ok.0, &ok.1);
        if *key == keys::crds() {
            state.registry.unregister_crd(&ok.1);
        }
        queue.push(Task::Removed {
            key: key.clone(),
            namespace: ok.0.clone(),
            uid: meta::uid_of(&current).to_owned(),
            owners: meta::owner_uids(&current),
        });
        return;
    }
    if meta::is_terminating(&current) {
        return;
    }
    let mut next = (*current).clone();
    let meta_map = meta::metadata_mut(&mut next);
    meta_map.insert("deletionTimestamp".into(), json!(meta::now_time()));
    meta_map.insert("deletionGracePeriodSeconds".into(), json!(0));
    if *key == keys::namespaces() {
        meta::set_at(&mut next, &["status", "phase"], json!("Terminating"));
    }
    state.replace(key, next);
    queue.push(Task::Terminating(key.clone(), ok.clone()));
}

/// Drives the server-implemented finalizers of an object being deleted.
fn finalize(state: &mut State, key: &StoreKey, ok: &ObjectKey, queue: &mut Vec<Task>) {
    let Some(current) = state.get(key, &ok.0, &ok.1).cloned() else {
        return;
    };
    if !meta::is_terminating(&current) {
        return;
    }
    let uid = meta::uid_of(&current).to_owned();
    let mut finalizers = meta::finalizers(&current);
    let mut blocked = false;
    if finalizers.iter().any(|f| f == ORPHAN) {
        for (dep_key, dep_ok) in state.dependents_of(&uid) {
            let Some(dependent) = state.get(&dep_key, &dep_ok.0, &dep_ok.1).cloned() else {
                continue;
            };
            let mut next = (*dependent).clone();
            if let Some(Value::Array(refs)) = next.pointer_mut("/metadata/ownerReferences") {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid.as_str()));
            }
            meta::normalize(&mut next);
            state.replace(&dep_key, next);
        }
        finalizers.retain(|f| f != ORPHAN);
    }
    if finalizers.iter().any(|f| f == FOREGROUND) {
        let dependents = state.dependents_of(&uid);
        if dependents.is_empty() {
            finalizers.retain(|f| f != FOREGROUND);
        } else {
            for (dep_key, dep_ok) in dependents {
                start_deleting(state, &dep_key, &dep_ok, queue);
            }
        }
    }
    let contents: Vec<(StoreKey, ObjectKey)> = if *key == keys::namespaces() {
        state.keys_in_namespace(&ok.1)
    } else if *key == keys::crds() && finalizers.iter().any(|f| f == CRD_CLEANUP) {
        let group = meta::str_at(&current, "/spec/group");
        let plural = meta::str_at(&current, "/spec/names/plural");
        let custom = StoreKey::new(group, plural);
        state
            .keys_of(&custom)
            .into_iter()
            .map(|ok| (custom.clone(), ok))
            .collect()
    } else {
        Vec::new()
    };
    if contents.is_empty() {
        finalizers.retain(|f| f != CRD_CLEANUP);
    } else {
        blocked = true;
        for (content_key, content_ok) in contents {
            start_deleting(state, &content_key, &content_ok, queue);
        }
    }
    let still_there = state.get(key, &ok.0, &ok.1).cloned();
    let Some(current) = still_there else { return };
    if finalizers.is_empty() && !(blocked && *key == keys::namespaces()) {
        let namespace_empty = *key != keys::namespaces() || state.count_in_namespace(&ok.1) == 0;
        if namespace_empty {
            state.remove(key, &ok.0, &ok.1);
            if *key == keys::crds() {
                state.registry.unregister_crd(&ok.1);
            }
            queue.push(Task::Removed {
                key: key.clone(),
                namespace: ok.0.clone(),
                uid,
                owners: meta::owner_uids(&current),
            });
            return;
        }
    }
    if finalizers != meta::finalizers(&current) {
        let mut next = (*current).clone();
        meta::set_finalizers(&mut next, &finalizers);
        state.replace(key, next);
    }
}

/// Creates the namespaces every cluster has.
pub fn bootstrap(state: &mut State) {
    let Some(def) = state.registry.find("", "v1", "namespaces") else {
        return;
    };
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}});
        let options = WriteOptions {
            manager: "kube-apiserver".into(),
            ..WriteOptions::default()
        };
        if let Err(error) = create(state, &def, "", body, &options) {
            tracing::error!(%error, namespace = name, "cannot create a default namespace");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> State {
        let mut state = State::new(1000);
        bootstrap(&mut state);
        state
    }

    fn options() -> WriteOptions {
        WriteOptions {
            manager: "test".into(),
            ..WriteOptions::default()
        }
    }

    fn def(state: &State, group: &str, plural: &str) -> Arc<ResourceDef> {
        state.registry.find(group, "v1", plural).expect("served")
    }

    fn cm(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}})
    }

    #[test]
    fn create_fills_metadata_and_rejects_duplicates_and_missing_namespaces() {
        let mut state = setup();
        let d = def(&state, "", "configmaps");
        let created = create(&mut state, &d, "default", cm("a"), &options()).expect("created");
        assert_eq!(created.object["metadata"]["generation"], 1);
        assert_eq!(created.object["metadata"]["namespace"], "default");
        assert!(created.object["metadata"]["uid"].is_string());
        assert_eq!(
            create(&mut state, &d, "default", cm("a"), &options())
                .expect_err("dup")
                .code,
            409
        );
        let missing = create(&mut state, &d, "nope", cm("a"), &options()).expect_err("no ns");
        assert_eq!(missing.message, "namespaces \"nope\" not found");
        let invalid =
            create(&mut state, &d, "default", cm("Bad_Name"), &options()).expect_err("invalid");
        assert_eq!(invalid.code, 422);
        let mismatched = create(
            &mut state,
            &d,
            "kube-system",
            json!({"metadata": {"name": "x", "namespace": "default"}}),
            &options(),
        );
        assert_eq!(mismatched.expect_err("ns mismatch").code, 400);
    }

    #[test]
    fn stale_update_conflicts_and_generation_tracks_spec() {
        let mut state = setup();
        let d = def(&state, "", "configmaps");
        let created = create(&mut state, &d, "default", cm("a"), &options()).expect("created");
        let mut body = (*created.object).clone();
        body["data"]["a"] = json!("2");
        let updated = update(
            &mut state,
            &d,
            "default",
            "a",
            body.clone(),
            "",
            UpdateKind::Update,
            &options(),
        )
        .expect("updated");
        assert_eq!(updated.object["metadata"]["generation"], 2);
        let stale = update(
            &mut state,
            &d,
            "default",
            "a",
            body,
            "",
            UpdateKind::Update,
            &options(),
        )
        .expect_err("stale");
        assert_eq!(
            stale.message,
            "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
        );
    }

    #[test]
    fn noop_updates_keep_the_resource_version() {
        let mut state = setup();
        let d = def(&state, "", "configmaps");
        let created = create(&mut state, &d, "default", cm("a"), &options()).expect("created");
        let again = update(
            &mut state,
            &d,
            "default",
            "a",
            (*created.object).clone(),
            "",
            UpdateKind::Update,
            &options(),
        )
        .expect("updated");
        assert_eq!(
            again.object["metadata"]["resourceVersion"],
            created.object["metadata"]["resourceVersion"]
        );
    }

    #[test]
    fn finalizers_hold_deletion_until_removed() {
        let mut state = setup();
        let d = def(&state, "", "configmaps");
        let mut body = cm("f");
        body["metadata"]["finalizers"] = json!(["x/y"]);
        create(&mut state, &d, "default", body, &options()).expect("created");
        let deleting =
            delete(&mut state, &d, "default", "f", &DeleteOptions::default()).expect("deleting");
        assert!(meta::is_terminating(&deleting));
        let mut next = (*deleting).clone();
        next["metadata"]["finalizers"] = json!(["x/y", "new"]);
        assert_eq!(
            update(
                &mut state,
                &d,
                "default",
                "f",
                next.clone(),
                "",
                UpdateKind::Update,
                &options()
            )
            .expect_err("no new")
            .code,
            422
        );
        next["metadata"]["finalizers"] = json!([]);
        update(
            &mut state,
            &d,
            "default",
            "f",
            next,
            "",
            UpdateKind::Update,
            &options(),
        )
        .expect("released");
        assert!(state.get(&d.store_key(), "default", "f").is_none());
    }

    #[test]
    fn garbage_collection_follows_owner_references() {
        let mut state = setup();
        let d = def(&state, "", "configmaps");
        let owner = create(&mut state, &d, "default", cm("owner"), &options()).expect("created");
        let mut child = cm("child");
        child["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.object["metadata"]["uid"]}]);
        create(&mut state, &d, "default", child.clone(), &options()).expect("created");
        delete(
            &mut state,
            &d,
            "default",
            "owner",
            &DeleteOptions::default(),
        )
        .expect("deleted");
        assert!(state.get(&d.store_key(), "default", "child").is_none());

        let owner = create(&mut state, &d, "default", cm("owner"), &options()).expect("created");
        child["metadata"]["ownerReferences"][0]["uid"] = owner.object["metadata"]["uid"].clone();
        create(&mut state, &d, "default", child.clone(), &options()).expect("created");
        let orphan = DeleteOptions {
            propagation: Propagation::Orphan,
            ..DeleteOptions::default()
        };
        delete(&mut state, &d, "default", "owner", &orphan).expect("deleted");
        assert!(state.get(&d.store_key(), "default", "owner").is_none());
        let kept = state
            .get(&d.store_key(), "default", "child")
            .expect("orphaned");
        assert!(kept["metadata"].get("ownerReferences").is_none());
    }

    #[test]
    fn foreground_deletion_waits_for_dependents() {
        let mut state = setup();
        let d = def(&state, "", "configmaps");
        let owner = create(&mut state, &d, "default", cm("owner"), &options()).expect("created");
        let mut child = cm("child");
        child["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.object["metadata"]["uid"]}]);
        child["metadata"]["finalizers"] = json!(["hold"]);
        create(&mut state, &d, "default", child, &options()).expect("created");
        let foreground = DeleteOptions {
            propagation: Propagation::Foreground,
            ..DeleteOptions::default()
        };
        let deleting = delete(&mut state, &d, "default", "owner", &foreground).expect("deleting");
        assert_eq!(meta::finalizers(&deleting), vec![FOREGROUND.to_owned()]);
        let held = (*state
            .get(&d.store_key(), "default", "child")
            .expect("held")
            .clone())
        .clone();
        assert!(meta::is_terminating(&held));
        let mut released = held;
        released["metadata"]["finalizers"] = json!([]);
        update(
            &mut state,
            &d,
            "default",
            "child",
            released,
            "",
            UpdateKind::Update,
            &options(),
        )
        .expect("released");
        assert!(state.get(&d.store_key(), "default", "owner").is_none());
    }

    #[test]
    fn namespace_deletion_removes_its_content() {
        let mut state = setup();
        let ns = def(&state, "", "namespaces");
        let d = def(&state, "", "configmaps");
        create(
            &mut state,
            &ns,
            "",
            json!({"metadata": {"name": "team"}}),
            &options(),
        )
        .expect("created");
        create(&mut state, &d, "team", cm("a"), &options()).expect("created");
        delete(&mut state, &ns, "", "team", &DeleteOptions::default()).expect("deleted");
        assert!(state.get(&d.store_key(), "team", "a").is_none());
        assert!(state.get(&ns.store_key(), "", "team").is_none());
    }

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
