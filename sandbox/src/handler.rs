//! HTTP entry point: one handler that routes every request, decodes it, runs the operation
//! under the store lock and encodes the answer in the shape the client asked for.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::admission::FieldValidation;
use crate::app::App;
use crate::codec::{self, MAX_BODY, Query, Shape};
use crate::error::{ApiError, ApiResult, Cause};
use crate::ops::{self, DeleteOptions, Propagation, UpdateKind, WriteOptions};
use crate::patch;
use crate::registry::ResourceDef;
use crate::render;
use crate::route::{self, ResourcePath, Route};
use crate::selector::{FieldSelector, LabelSelector};
use crate::table::IncludeObject;
use crate::watch::{self, Start, WatchSpec};
use crate::{apply, discovery, meta, openapi, scale, view};

/// Default watch duration when the client gives no `timeoutSeconds` (the apiserver's minimum
/// request timeout).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

pub async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => return ApiError::too_large(MAX_BODY).into_response(),
    };
    let query = Query::parse(parts.uri.query());
    let Some(route) = route::parse(parts.uri.path()) else {
        return ApiError::no_route().into_response();
    };
    let result = match route {
        Route::Resource(path) => resource(app, &parts.method, path, &query, &parts.headers, &bytes),
        other if parts.method == Method::GET || parts.method == Method::HEAD => {
            Ok(meta_endpoint(&app, other))
        }
        _ => Err(ApiError::method_not_allowed()),
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

fn meta_endpoint(app: &App, route: Route) -> Response {
    let state = app.lock();
    let found = match route {
        Route::Version => Some(discovery::version()),
        Route::Health => {
            return (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], "ok").into_response();
        }
        Route::CoreVersions => Some(discovery::core_versions(&app.address)),
        Route::Groups => Some(discovery::groups(&state.registry)),
        Route::Group(group) => discovery::group(&state.registry, &group),
        Route::Resources { group, version } => {
            discovery::resources(&state.registry, &group, &version)
        }
        Route::OpenApiIndex => Some(openapi::index(&state.registry)),
        Route::OpenApiDocument(path) => openapi::document(&state.registry, &path),
        Route::OpenApiV2 | Route::Resource(_) => None,
    };
    match found {
        Some(value) => codec::ok(&value),
        None => ApiError::no_route().into_response(),
    }
}

/// A resolved resource request.
struct Target {
    def: Arc<ResourceDef>,
    /// The request namespace; `None` for cluster-scoped resources and all-namespace lists.
    namespace: Option<String>,
    name: Option<String>,
    subresource: String,
}

impl Target {
    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }

    fn counted_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.def.group_resource()
        } else {
            format!("{}/{}", self.def.group_resource(), self.subresource)
        }
    }
}

fn resolve(app: &App, path: ResourcePath) -> ApiResult<Target> {
    let def = app
        .lock()
        .registry
        .find(&path.group, &path.version, &path.plural)
        .ok_or_else(ApiError::no_route)?;
    if !def.namespaced && path.namespace.is_some() {
        return Err(ApiError::no_route());
    }
    if def.namespaced && path.namespace.is_none() && path.name.is_some() {
        return Err(ApiError::no_route());
    }
    let subresource = path.subresource.unwrap_or_default();
    let served = match subresource.as_str() {
        "" => true,
        "status" => def.status_subresource,
        "scale" => scale::has_scale(&def),
        _ => false,
    };
    if !served {
        return Err(ApiError::no_route());
    }
    Ok(Target {
        def,
        namespace: path.namespace,
        name: path.name,
        subresource,
    })
}

fn resource(
    app: Arc<App>,
    method: &Method,
    path: ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let target = resolve(&app, path)?;
    let verb = match (method.as_str(), target.name.is_some()) {
        ("GET" | "HEAD", _) => "",
        ("POST", false) => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return Err(ApiError::method_not_allowed()),
    };
    if !verb.is_empty() {
        app.writes.record(verb, &target.counted_resource());
    }
    if target.subresource == "scale" && !query.flag("watch") {
        let options = write_options(query, headers)?;
        let name = target
            .name
            .as_deref()
            .ok_or_else(ApiError::method_not_allowed)?;
        return scale::serve(
            &app,
            &target.def,
            target.namespace(),
            name,
            method,
            headers,
            body,
            &options,
        );
    }
    match verb {
        "" if query.flag("watch") => watch_request(app, &target, query, headers),
        "" if target.name.is_some() => get(&app, &target, query, headers),
        "" => list(&app, &target, query, headers),
        "create" => create(&app, &target, query, headers, body),
        "update" => update(&app, &target, query, headers, body),
        "patch" => patch_request(&app, &target, query, headers, body),
        "delete" => delete(&app, &target, query, body),
        _ => delete_collection(&app, &target, query, body),
    }
}

fn write_options(query: &Query, headers: &HeaderMap) -> ApiResult<WriteOptions> {
    let manager = match query.get("fieldManager") {
        Some(m) if !m.is_empty() => m.to_owned(),
        _ => headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .and_then(|ua| ua.split('/').next())
            .filter(|m| !m.is_empty())
            .unwrap_or("unknown")
            .to_owned(),
    };
    Ok(WriteOptions {
        dry_run: query.get("dryRun") == Some("All"),
        manager,
        validation: FieldValidation::parse(query.get("fieldValidation"))?,
        apply: false,
    })
}

fn object_response(
    code: StatusCode,
    def: &ResourceDef,
    stored: &Value,
    headers: &HeaderMap,
    warnings: &[String],
) -> Response {
    let presented = view::view_of(def, stored);
    let view: &Value = &presented;
    match codec::shape(headers) {
        Shape::Table => {
            let rv = meta::str_at(view, "/metadata/resourceVersion").to_owned();
            let table = render::table(
                def,
                std::slice::from_ref(view),
                &rv,
                None,
                IncludeObject::Metadata,
            );
            codec::json_response(code, &table, codec::TABLE_CONTENT_TYPE, warnings)
        }
        Shape::Metadata => codec::json_response(
            code,
            &codec::partial_metadata(view),
            codec::METADATA_CONTENT_TYPE,
            warnings,
        ),
        Shape::Object => codec::json_response(code, view, "application/json", warnings),
    }
}

fn not_found(target: &Target, name: &str) -> ApiError {
    ApiError::not_found(
        &target.def.group_resource(),
        &target.def.group,
        &target.def.plural,
        name,
    )
}

fn get(app: &App, target: &Target, query: &Query, headers: &HeaderMap) -> ApiResult<Response> {
    let name = target.name.as_deref().unwrap_or_default();
    let stored = app
        .lock()
        .get(&target.def.store_key(), target.namespace(), name)
        .cloned()
        .ok_or_else(|| not_found(target, name))?;
    let mut response = object_response(StatusCode::OK, &target.def, &stored, headers, &[]);
    if codec::shape(headers) == Shape::Table
        && render::include_object(query.get("includeObject")) != IncludeObject::Metadata
    {
        let view = view::to_view(&target.def, &stored);
        let rv = meta::str_at(&view, "/metadata/resourceVersion").to_owned();
        let table = render::table(
            &target.def,
            std::slice::from_ref(&view),
            &rv,
            None,
            render::include_object(query.get("includeObject")),
        );
        response = codec::json_response(StatusCode::OK, &table, codec::TABLE_CONTENT_TYPE, &[]);
    }
    Ok(response)
}

fn selectors(target: &Target, query: &Query) -> ApiResult<(LabelSelector, FieldSelector)> {
    let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?;
    let fields = FieldSelector::parse(
        query.get("fieldSelector").unwrap_or_default(),
        &target.def.group,
        &target.def.plural,
    )?;
    Ok((labels, fields))
}

/// A continue token: where the previous page ended, and the resourceVersion of the first page.
/// Every page reports that first resourceVersion, so a client that watches from the list's
/// version replays every change made while it paged (Kubernetes serves all pages from one
/// snapshot; pages here are at least as new as it, and the replay brings them up to date).
struct ContinueToken {
    rv: u64,
    namespace: String,
    name: String,
}

impl ContinueToken {
    fn encode(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!("{}/{}/{}", self.rv, self.namespace, self.name))
    }

    fn decode(token: &str) -> ApiResult<Self> {
        let invalid = || ApiError::bad_request(format!("continue key is not valid: {token:?}"));
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| invalid())?;
        let text = String::from_utf8(raw).map_err(|_| invalid())?;
        let mut parts = text.splitn(3, '/');
        let (Some(rv), Some(namespace), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid());
        };
        Ok(Self {
            rv: rv.parse().map_err(|_| invalid())?,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }
}

fn list(app: &App, target: &Target, query: &Query, headers: &HeaderMap) -> ApiResult<Response> {
    let (labels, fields) = selectors(target, query)?;
    let limit: usize = query.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
    let after = query
        .get("continue")
        .filter(|c| !c.is_empty())
        .map(ContinueToken::decode)
        .transpose()?;
    let (items, rv, continue_token, remaining) = {
        let state = app.lock();
        let rv = match &after {
            Some(token) => {
                // The changes since the first page must still be replayable.
                state.check_replayable(token.rv).map_err(|expired| {
                    let mut error = ApiError::expired(token.rv, expired.oldest);
                    error.message = format!(
                        "the continue token is too old (resource version {} is no longer in the history); start the list again without it",
                        token.rv
                    );
                    error
                })?;
                token.rv
            }
            None => state.resource_version(),
        };
        let after = after.map(|t| (t.namespace, t.name));
        let mut items = Vec::new();
        let mut continue_token = None;
        let mut remaining = 0usize;
        for stored in state.list(&target.def.store_key(), target.namespace.as_deref()) {
            let key = (
                meta::str_at(stored, "/metadata/namespace").to_owned(),
                meta::name_of(stored).to_owned(),
            );
            if after.as_ref().is_some_and(|a| key <= *a) {
                continue;
            }
            let view = view::view_of(&target.def, stored);
            if !(labels.matches(&view) && fields.matches(&view)) {
                continue;
            }
            if limit > 0 && items.len() == limit {
                remaining += 1;
                continue;
            }
            if limit > 0 && items.len() + 1 == limit {
                continue_token = Some(
                    ContinueToken {
                        rv,
                        namespace: key.0.clone(),
                        name: key.1.clone(),
                    }
                    .encode(),
                );
            }
            items.push(view.into_owned());
        }
        if remaining == 0 {
            continue_token = None;
        }
        (items, rv.to_string(), continue_token, remaining)
    };
    let response = match codec::shape(headers) {
        Shape::Table => {
            let table = render::table(
                &target.def,
                &items,
                &rv,
                continue_token.as_deref(),
                render::include_object(query.get("includeObject")),
            );
            codec::json_response(StatusCode::OK, &table, codec::TABLE_CONTENT_TYPE, &[])
        }
        shape => {
            let mut metadata = json!({"resourceVersion": rv});
            if let Some(token) = &continue_token {
                metadata["continue"] = json!(token);
                metadata["remainingItemCount"] = json!(remaining);
            }
            let (kind, api_version, items, content_type) = if shape == Shape::Metadata {
                let partial: Vec<Value> = items.iter().map(codec::partial_metadata).collect();
                (
                    "PartialObjectMetadataList".to_owned(),
                    "meta.k8s.io/v1".to_owned(),
                    partial,
                    codec::METADATA_LIST_CONTENT_TYPE,
                )
            } else {
                (
                    target.def.list_kind(),
                    target.def.api_version(),
                    items,
                    "application/json",
                )
            };
            let list = json!({"kind": kind, "apiVersion": api_version, "metadata": metadata, "items": items});
            codec::json_response(StatusCode::OK, &list, content_type, &[])
        }
    };
    Ok(response)
}

fn watch_request(
    app: Arc<App>,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let (labels, mut fields) = selectors(target, query)?;
    if let Some(name) = &target.name {
        // A watch on one object's URL is a watch with a name field selector.
        fields = FieldSelector::parse(
            &format!("metadata.name={name}"),
            &target.def.group,
            &target.def.plural,
        )?;
    }
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(DEFAULT_WATCH_TIMEOUT, Duration::from_secs);
    let spec = WatchSpec {
        def: target.def.clone(),
        namespace: target.namespace.clone(),
        labels,
        fields,
        bookmarks: query.flag("allowWatchBookmarks"),
        timeout,
        shape: codec::shape(headers),
        include: render::include_object(query.get("includeObject")),
    };
    let start = Start::parse(
        query.get("resourceVersion"),
        query.flag("sendInitialEvents"),
    )?;
    Ok(watch::serve(app, spec, start))
}

fn create(
    app: &App,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    if target.def.namespaced && target.namespace.is_none() {
        return Err(ApiError::no_route());
    }
    let options = write_options(query, headers)?;
    let decoded = codec::decode_object(body, headers)?;
    ops::check_type(&target.def, &decoded)?;
    let stored_form = view::from_view(&target.def, decoded);
    let written = ops::create(
        &mut app.lock(),
        &target.def,
        target.namespace(),
        stored_form,
        &options,
    )?;
    Ok(object_response(
        StatusCode::CREATED,
        &target.def,
        &written.object,
        headers,
        &written.warnings,
    ))
}

fn update(
    app: &App,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let options = write_options(query, headers)?;
    let decoded = codec::decode_object(body, headers)?;
    ops::check_type(&target.def, &decoded)?;
    let stored_form = view::from_view(&target.def, decoded);
    let name = target.name.as_deref().unwrap_or_default();
    let written = ops::update(
        &mut app.lock(),
        &target.def,
        target.namespace(),
        name,
        stored_form,
        &target.subresource,
        UpdateKind::Update,
        &options,
    )?;
    Ok(object_response(
        StatusCode::OK,
        &target.def,
        &written.object,
        headers,
        &written.warnings,
    ))
}

/// The patch formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatchType {
    Merge,
    Json,
    Strategic,
    Apply,
}

const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

fn patch_type(def: &ResourceDef, headers: &HeaderMap) -> ApiResult<PatchType> {
    let media_type = codec::content_type(headers);
    let accepted: &[&str] = if def.is_custom() {
        &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ]
    } else {
        PATCH_TYPES
    };
    match media_type.as_str() {
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/strategic-merge-patch+json" if !def.is_custom() => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" => Ok(PatchType::Apply),
        other => Err(ApiError::unsupported_media_type(other, accepted)),
    }
}

fn patch_request(
    app: &App,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let kind = patch_type(&target.def, headers)?;
    let mut options = write_options(query, headers)?;
    let patch_body = codec::decode(
        body,
        if kind == PatchType::Apply {
            "application/yaml"
        } else {
            "application/json"
        },
    )?;
    let name = target.name.as_deref().unwrap_or_default().to_owned();
    let def = &target.def;
    let mut state = app.lock();
    let current = state
        .get(&def.store_key(), target.namespace(), &name)
        .cloned();

    if kind == PatchType::Apply {
        if query.get("fieldManager").is_none_or(str::is_empty) {
            return Err(ApiError::invalid(
                "PatchOptions",
                "meta.k8s.io",
                "",
                vec![Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value: is required for apply patch".into(),
                    field: "fieldManager".into(),
                }],
            ));
        }
        if !patch_body.is_object() {
            return Err(ApiError::bad_request(
                "the apply patch must be a YAML or JSON object",
            ));
        }
        ops::check_type(def, &patch_body)?;
        if meta::str_at(&patch_body, "/apiVersion").is_empty()
            || meta::str_at(&patch_body, "/kind").is_empty()
        {
            return Err(ApiError::bad_request(
                "apiVersion and kind must be set in an apply patch",
            ));
        }
        let body_name = meta::name_of(&patch_body);
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let Some(current) = current else {
            if !target.subresource.is_empty() {
                return Err(not_found(target, &name));
            }
            let mut applied = patch_body;
            meta::metadata_mut(&mut applied).insert("name".into(), json!(name));
            options.apply = true;
            let written = ops::create(
                &mut state,
                def,
                target.namespace(),
                view::from_view(def, applied),
                &options,
            )?;
            return Ok(object_response(
                StatusCode::CREATED,
                def,
                &written.object,
                headers,
                &written.warnings,
            ));
        };
        let wanted_rv = meta::str_at(&patch_body, "/metadata/resourceVersion");
        if !wanted_rv.is_empty() && wanted_rv != meta::str_at(&current, "/metadata/resourceVersion")
        {
            return Err(ApiError::modified(
                &def.group_resource(),
                &def.group,
                &def.plural,
                &name,
            ));
        }
        let live = view::to_view(def, &current);
        let merged = apply::apply(
            &live,
            &patch_body,
            &options.manager,
            &target.subresource,
            def.is_custom(),
            query.flag("force"),
        )?;
        let written = ops::update(
            &mut state,
            def,
            target.namespace(),
            &name,
            view::from_view(def, merged),
            &target.subresource,
            UpdateKind::Apply,
            &options,
        )?;
        return Ok(object_response(
            StatusCode::OK,
            def,
            &written.object,
            headers,
            &written.warnings,
        ));
    }

    let current = current.ok_or_else(|| not_found(target, &name))?;
    let mut patched = view::to_view(def, &current);
    match kind {
        PatchType::Merge => {
            if !patch_body.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            patch::merge_patch(&mut patched, &patch_body);
        }
        PatchType::Strategic => patch::strategic_merge_patch(&mut patched, &patch_body)
            .map_err(|e| ApiError::bad_request(e.to_string()))?,
        PatchType::Json => patch::json_patch(&mut patched, &patch_body).map_err(|e| match e {
            patch::PatchError::TestFailed => ApiError::invalid(
                &def.kind,
                &def.group,
                &name,
                vec![Cause {
                    reason: "FieldValueInvalid".into(),
                    message: "the server rejected our request due to an error in our request"
                        .into(),
                    field: String::new(),
                }],
            ),
            patch::PatchError::Invalid(message) => ApiError::bad_request(message),
        })?,
        PatchType::Apply => unreachable!("apply patches returned above"),
    }
    if !patched.is_object() {
        return Err(ApiError::bad_request("the patched object is not an object"));
    }
    let written = ops::update(
        &mut state,
        def,
        target.namespace(),
        &name,
        view::from_view(def, patched),
        &target.subresource,
        UpdateKind::Update,
        &options,
    )?;
    Ok(object_response(
        StatusCode::OK,
        def,
        &written.object,
        headers,
        &written.warnings,
    ))
}

fn delete_options(query: &Query, body: &[u8]) -> ApiResult<DeleteOptions> {
    let parsed = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        codec::decode(body, "application/json")?
    };
    let policy = parsed
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or_else(|| query.get("propagationPolicy"))
        .unwrap_or_default();
    let orphan = parsed
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| query.get("orphanDependents").map(|v| v == "true"));
    let propagation = match (policy, orphan) {
        ("Foreground", _) => Propagation::Foreground,
        ("Orphan", _) | ("", Some(true)) => Propagation::Orphan,
        ("Background" | "", _) => Propagation::Background,
        (other, _) => {
            return Err(ApiError::invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                vec![Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!(
                        "Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
                    ),
                    field: "propagationPolicy".into(),
                }],
            ));
        }
    };
    let dry_run = parsed
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|d| d.iter().any(|v| v == "All"))
        || query.get("dryRun") == Some("All");
    Ok(DeleteOptions {
        propagation,
        precondition_uid: parsed
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_owned),
        precondition_rv: parsed
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        dry_run,
    })
}

fn delete(app: &App, target: &Target, query: &Query, body: &[u8]) -> ApiResult<Response> {
    let options = delete_options(query, body)?;
    let name = target.name.as_deref().unwrap_or_default();
    let object = ops::delete(
        &mut app.lock(),
        &target.def,
        target.namespace(),
        name,
        &options,
    )?;
    Ok(codec::ok(&view::to_view(&target.def, &object)))
}

fn delete_collection(
    app: &App,
    target: &Target,
    query: &Query,
    body: &[u8],
) -> ApiResult<Response> {
    let options = delete_options(query, body)?;
    let (labels, fields) = selectors(target, query)?;
    let mut state = app.lock();
    let names: Vec<(String, String)> = state
        .list(&target.def.store_key(), target.namespace.as_deref())
        .map(|o| view::to_view(&target.def, o))
        .filter(|v| labels.matches(v) && fields.matches(v))
        .map(|v| {
            (
                meta::str_at(&v, "/metadata/namespace").to_owned(),
                meta::name_of(&v).to_owned(),
            )
        })
        .collect();
    let mut items = Vec::new();
    for (namespace, name) in names {
        match ops::delete(&mut state, &target.def, &namespace, &name, &options) {
            Ok(object) => items.push(view::to_view(&target.def, &object)),
            Err(error) if error.code == 404 => {}
            Err(error) => return Err(error),
        }
    }
    let list = json!({
        "kind": target.def.list_kind(),
        "apiVersion": target.def.api_version(),
        "metadata": {"resourceVersion": state.resource_version().to_string()},
        "items": items,
    });
    Ok(codec::ok(&list))
}
