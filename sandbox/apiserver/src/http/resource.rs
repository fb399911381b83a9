//! Requests on resources: each verb decodes the request, calls one store operation and encodes
//! the answer.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde_json::json;

use crate::app::App;
use crate::catalog::registry::ResourceDef;
use crate::error::{ApiError, ApiResult};
use crate::http::answer;
use crate::http::codec::{self, Query};
use crate::http::options::{
    delete_options, patch_kind, require_field_manager, selectors, write_options,
};
use crate::http::render;
use crate::http::route::ResourcePath;
use crate::http::scale;
use crate::http::watch::{self, WatchSpec};
use crate::meta;
use crate::store::list::ListRequest;
use crate::store::ops::options::Target;
use crate::store::ops::patch::PatchKind;
use crate::store::selector::FieldSelector;
use crate::store::views;

/// Default watch duration when the client gives no `timeoutSeconds` (the apiserver's minimum
/// request timeout).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// A resource request resolved against the registry.
struct Resolved {
    def: Arc<ResourceDef>,
    /// The request namespace; `None` for cluster-scoped resources and all-namespace lists.
    namespace: Option<String>,
    name: Option<String>,
    subresource: String,
}

impl Resolved {
    fn resolve(app: &App, path: ResourcePath) -> ApiResult<Self> {
        let def = app
            .store
            .read_registry(|registry| registry.find(&path.group, &path.version, &path.plural))
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
            "scale" => def.has_scale(),
            _ => false,
        };
        if !served {
            return Err(ApiError::no_route());
        }
        Ok(Self {
            def,
            namespace: path.namespace,
            name: path.name,
            subresource,
        })
    }

    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }

    /// The object the request addresses (a collection request addresses none by name).
    fn target(&self) -> Target<'_> {
        Target {
            def: &self.def,
            namespace: self.namespace(),
            name: self.name.as_deref().unwrap_or_default(),
            subresource: &self.subresource,
        }
    }

    /// `plural.group[/subresource]`, as write requests are counted.
    fn counted_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.def.group_resource()
        } else {
            format!("{}/{}", self.def.group_resource(), self.subresource)
        }
    }
}

/// One request on a resource, as routed.
pub struct ResourceRequest<'a> {
    pub method: &'a Method,
    pub path: ResourcePath,
    pub query: &'a Query,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

pub fn serve(app: Arc<App>, request: ResourceRequest) -> ApiResult<Response> {
    let ResourceRequest {
        method,
        path,
        query,
        headers,
        body,
    } = request;
    let resolved = Resolved::resolve(&app, path)?;
    let verb = match (method.as_str(), resolved.name.is_some()) {
        ("GET" | "HEAD", _) => "",
        ("POST", false) => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return Err(ApiError::method_not_allowed()),
    };
    if !verb.is_empty() {
        app.writes.record(verb, &resolved.counted_resource());
    }
    if resolved.subresource == "scale" && !query.flag("watch") {
        let options = write_options(query, headers)?;
        return scale::serve(
            &app.store,
            &resolved.target(),
            method,
            headers,
            body,
            &options,
        );
    }
    match verb {
        "" if query.flag("watch") => watch_request(app, &resolved, query, headers),
        "" if resolved.name.is_some() => get(&app, &resolved, query, headers),
        "" => list(&app, &resolved, query, headers),
        "create" => create(&app, &resolved, query, headers, body),
        "update" => update(&app, &resolved, query, headers, body),
        "patch" => patch(&app, &resolved, query, headers, body),
        "delete" => delete(&app, &resolved, query, body),
        _ => delete_collection(&app, &resolved, query, body),
    }
}

fn get(app: &App, resolved: &Resolved, query: &Query, headers: &HeaderMap) -> ApiResult<Response> {
    let stored = app.store.get(&resolved.target())?;
    Ok(answer::got(&resolved.def, &stored, query, headers))
}

fn list(app: &App, resolved: &Resolved, query: &Query, headers: &HeaderMap) -> ApiResult<Response> {
    let request = ListRequest {
        def: &resolved.def,
        namespace: resolved.namespace.as_deref(),
        selectors: selectors(&resolved.def, query)?,
        limit: query.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0),
        after: query.get("continue"),
    };
    let page = app.store.list(&request)?;
    Ok(answer::list(&resolved.def, &page, query, headers))
}

fn watch_request(
    app: Arc<App>,
    resolved: &Resolved,
    query: &Query,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let mut selectors = selectors(&resolved.def, query)?;
    if let Some(name) = &resolved.name {
        // A watch on one object's URL is a watch with a name field selector.
        selectors.fields = FieldSelector::parse(
            &format!("metadata.name={name}"),
            &resolved.def.group,
            &resolved.def.plural,
            resolved.def.is_custom(),
        )?;
    }
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(DEFAULT_WATCH_TIMEOUT, Duration::from_secs);
    let spec = WatchSpec {
        def: resolved.def.clone(),
        namespace: resolved.namespace.clone(),
        selectors,
        bookmarks: query.flag("allowWatchBookmarks"),
        timeout,
        shape: codec::shape(headers),
        include: render::include_object(query.get("includeObject")),
    };
    let start = watch::start(
        query.get("resourceVersion"),
        query.flag("sendInitialEvents"),
    )?;
    Ok(watch::serve(app, spec, start))
}

fn create(
    app: &App,
    resolved: &Resolved,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    if resolved.def.namespaced && resolved.namespace.is_none() {
        return Err(ApiError::no_route());
    }
    let options = write_options(query, headers)?;
    let object = codec::decode_object(body, headers)?;
    let written = app
        .store
        .create(&resolved.def, resolved.namespace(), object, &options)?;
    Ok(answer::written(&resolved.def, &written, headers))
}

fn update(
    app: &App,
    resolved: &Resolved,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let options = write_options(query, headers)?;
    let object = codec::decode_object(body, headers)?;
    let written = app.store.update(&resolved.target(), object, &options)?;
    Ok(answer::written(&resolved.def, &written, headers))
}

fn patch(
    app: &App,
    resolved: &Resolved,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let kind = patch_kind(&resolved.def, query, headers)?;
    let options = write_options(query, headers)?;
    let is_apply = matches!(kind, PatchKind::Apply { .. });
    let media_type = if is_apply {
        "application/yaml"
    } else {
        "application/json"
    };
    let patch_body = codec::decode(body, media_type)?;
    if is_apply {
        require_field_manager(query)?;
    }
    let written = app
        .store
        .patch(&resolved.target(), kind, patch_body, &options)?;
    Ok(answer::written(&resolved.def, &written, headers))
}

fn delete(app: &App, resolved: &Resolved, query: &Query, body: &[u8]) -> ApiResult<Response> {
    let options = delete_options(query, body)?;
    let object = app.store.delete(&resolved.target(), &options)?;
    let def = &resolved.def;
    // An object finalizers still hold is answered as it now is; one removed at once by a
    // Status, except for the few kinds whose storage returns the deleted object.
    if meta::is_terminating(&object) || returns_deleted_object(def) {
        return Ok(codec::ok(&views::to_view(def, &object)));
    }
    let mut details = json!({
        "name": meta::name_of(&object),
        "kind": def.plural,
        "uid": meta::uid_of(&object),
    });
    if !def.group.is_empty() {
        details["group"] = json!(def.group);
    }
    Ok(codec::ok(&json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })))
}

/// Kinds whose storage answers a DELETE with the deleted object (`ReturnDeletedObject` in
/// kube-apiserver's registry; seen on 1.37: pods, services, service accounts).
fn returns_deleted_object(def: &ResourceDef) -> bool {
    def.group.is_empty() && matches!(def.plural.as_str(), "pods" | "services" | "serviceaccounts")
}

fn delete_collection(
    app: &App,
    resolved: &Resolved,
    query: &Query,
    body: &[u8],
) -> ApiResult<Response> {
    let options = delete_options(query, body)?;
    let selectors = selectors(&resolved.def, query)?;
    let (items, rv) = app.store.delete_collection(
        &resolved.def,
        resolved.namespace.as_deref(),
        &selectors,
        &options,
    )?;
    let list = json!({
        "kind": resolved.def.list_kind(),
        "apiVersion": resolved.def.api_version(),
        "metadata": {"resourceVersion": rv.to_string()},
        "items": items,
    });
    Ok(codec::ok(&list))
}
