//! Creating an object (POST, and an apply patch of a missing object), and the namespaces every
//! cluster starts with.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::catalog::registry::{ResourceDef, keys};
use crate::error::{ApiError, ApiResult, Cause};
use crate::fields::managed;
use crate::meta::{self, NameRule};
use crate::store::admission;
use crate::store::ops::options::{WriteOptions, Written};
use crate::store::ops::settle::CRD_CLEANUP;
use crate::store::state::State;
use crate::store::views;

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

/// POST. `body` is in the stored form (`views::from_view`), its type already checked against
/// the endpoint by the caller.
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
    views::set_stored_type(def, &mut object);
    place_in_namespace(def, namespace, &mut object)?;
    let name = name_or_generated(def, &mut object)?;
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
    set_server_metadata(def, &mut object);
    if key == keys::crds() {
        let mut finalizers = meta::finalizers(&object);
        if !finalizers.iter().any(|f| f == CRD_CLEANUP) {
            finalizers.push(CRD_CLEANUP.to_owned());
        }
        meta::set_finalizers(&mut object, &finalizers);
    }
    // An apply owns what it applied; an Update what it created, defaults included.
    let applied = options
        .apply
        .then(|| managed::applied_set(&object, def.shape()));
    let warnings = admission::admit(def, &mut object, None, options.validation)?;
    admission::services::allocate_in(state, def, &mut object)?;
    let fields = applied.unwrap_or_else(|| managed::field_set(&object, def.shape()));
    let operation = if options.apply { "Apply" } else { "Update" };
    managed::record(
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
            created: true,
        });
    }
    if key == keys::crds() {
        state.registry.register_crd(&object);
    }
    let stored = state.insert(&key, object);
    Ok(Written {
        object: stored,
        warnings,
        created: true,
    })
}

/// The namespace comes from the URL (the body may only repeat it); cluster-scoped objects
/// have none.
fn place_in_namespace(def: &ResourceDef, namespace: &str, object: &mut Value) -> ApiResult<()> {
    let body_namespace = meta::str_at(object, "/metadata/namespace").to_owned();
    let meta_map = meta::metadata_mut(object);
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
    Ok(())
}

/// The object's name, generated from `generateName` when it has none, and valid for its kind.
fn name_or_generated(def: &ResourceDef, object: &mut Value) -> ApiResult<String> {
    let mut name = meta::name_of(object).to_owned();
    let generate = meta::str_at(object, "/metadata/generateName").to_owned();
    if name.is_empty() && !generate.is_empty() {
        name = format!("{generate}{}", random_suffix());
        meta::metadata_mut(object).insert("name".into(), json!(name));
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
    Ok(name)
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

/// What the server sets on every new object, whatever the client sent.
fn set_server_metadata(def: &ResourceDef, object: &mut Value) {
    let meta_map = meta::metadata_mut(object);
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
    if def.tracks_generation() {
        meta_map.insert("generation".into(), json!(1));
    } else {
        meta_map.remove("generation");
    }
}

/// Creates the namespaces every cluster has.
pub fn create_default_namespaces(state: &mut State) {
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
