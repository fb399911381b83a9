//! The gate in front of every request: who sends it, and whether RBAC lets them do what the
//! URL, method and query ask (kube-apiserver's request attributes).

use axum::http::{HeaderMap, Method};

use crate::app::App;
use crate::auth::{self, Identity, ResourceAttributes, User};
use crate::catalog::registry::StoreKey;
use crate::error::ApiResult;
use crate::http::codec::{self, Query};
use crate::http::route::{ResourcePath, Route};

/// Authenticates the request and, for a user other than the administrator, authorizes it.
/// Non-resource endpoints (version, health, discovery, OpenAPI) are open to every
/// authenticated user, as Kubernetes' default `system:discovery` and
/// `system:public-info-viewer` bindings make them.
pub fn check(
    app: &App,
    method: &Method,
    route: &Route,
    query: &Query,
    headers: &HeaderMap,
) -> ApiResult<Identity> {
    let identity = auth::identity::authenticate(headers, &app.tokens, |namespace, name| {
        app.store
            .lock()
            .get(&StoreKey::new("", "serviceaccounts"), namespace, name)
            .is_some()
    })
    .map_err(|e| auth::unauthorized(&e))?;
    let Identity::User(user) = &identity else {
        return Ok(identity);
    };
    let Route::Resource(path) = route else {
        return Ok(identity);
    };
    if is_self_review(path) {
        // `system:basic-user` lets every authenticated user ask about themselves.
        return Ok(identity);
    }
    let Some(attributes) = attributes(method, path, query) else {
        return Ok(identity);
    };
    authorize(app, user, &attributes)?;
    if creates_by_apply(app, method, path, headers) {
        // Server-side apply of a missing object creates it, and needs `create` as well.
        authorize(
            app,
            user,
            &ResourceAttributes {
                verb: "create".to_owned(),
                ..attributes
            },
        )?;
    }
    Ok(identity)
}

fn authorize(app: &App, user: &User, attributes: &ResourceAttributes) -> ApiResult<()> {
    let policy = auth::policy(&app.store.lock());
    if policy.authorize(user, attributes).allowed() {
        return Ok(());
    }
    let error = auth::forbidden(user, attributes);
    tracing::debug!(message = %error.message, "forbidden");
    app.refusals
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(error.message.clone());
    Err(error)
}

/// `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`.
pub fn is_self_review(path: &ResourcePath) -> bool {
    path.group == "authorization.k8s.io"
        && path.plural == "selfsubjectaccessreviews"
        && path.name.is_none()
}

/// The attributes kube-apiserver derives from a resource request; `None` for a method no verb
/// maps to (the handler answers 405).
pub fn attributes(
    method: &Method,
    path: &ResourcePath,
    query: &Query,
) -> Option<ResourceAttributes> {
    let named = path.name.is_some();
    let verb = match method.as_str() {
        "GET" | "HEAD" if query.flag("watch") => "watch",
        "GET" | "HEAD" if named => "get",
        "GET" | "HEAD" => "list",
        "POST" => "create",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" if named => "delete",
        "DELETE" => "deletecollection",
        _ => return None,
    };
    // kube-apiserver authorizes a list or watch of one name (a `metadata.name` field selector)
    // as a request for that name, so that `resourceNames` rules can allow it.
    let name = match &path.name {
        Some(name) => name.clone(),
        None if matches!(verb, "list" | "watch") => query
            .get("fieldSelector")
            .and_then(selected_name)
            .unwrap_or_default(),
        None => String::new(),
    };
    // A namespace is its own namespace in the attributes.
    let namespace = if path.group.is_empty() && path.plural == "namespaces" {
        name.clone()
    } else {
        path.namespace.clone().unwrap_or_default()
    };
    Some(ResourceAttributes {
        verb: verb.to_owned(),
        group: path.group.clone(),
        resource: path.plural.clone(),
        subresource: path.subresource.clone().unwrap_or_default(),
        namespace,
        name,
    })
}

/// The name an exact `metadata.name` requirement of a field selector selects.
fn selected_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|requirement| {
        let (field, value) = requirement
            .split_once("==")
            .or_else(|| requirement.split_once('='))?;
        // `metadata.name!=x` leaves `metadata.name!` here, which is not the field.
        (field.trim() == "metadata.name")
            .then(|| value.trim().to_owned())
            .filter(|v| !v.is_empty())
    })
}

fn creates_by_apply(app: &App, method: &Method, path: &ResourcePath, headers: &HeaderMap) -> bool {
    if method != Method::PATCH || codec::content_type(headers) != "application/apply-patch+yaml" {
        return false;
    }
    let (Some(name), None) = (&path.name, &path.subresource) else {
        return false;
    };
    let state = app.store.lock();
    let Some(def) = state
        .registry
        .find(&path.group, &path.version, &path.plural)
    else {
        return false;
    };
    let namespace = if def.namespaced {
        path.namespace.as_deref().unwrap_or_default()
    } else {
        ""
    };
    state.get(&def.store_key(), namespace, name).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(method: Method, url: &str) -> ResourceAttributes {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let Some(Route::Resource(path)) = crate::http::route::parse(path) else {
            panic!("{url} is a resource URL");
        };
        attributes(&method, &path, &Query::parse(Some(query))).expect("a verb")
    }

    #[test]
    fn verbs_follow_method_name_and_watch() {
        let cases = [
            (Method::GET, "/api/v1/namespaces/a/secrets/s", "get"),
            (Method::GET, "/api/v1/namespaces/a/secrets", "list"),
            (Method::GET, "/api/v1/secrets?watch=true", "watch"),
            (
                Method::GET,
                "/api/v1/namespaces/a/secrets/s?watch=1",
                "watch",
            ),
            (Method::POST, "/api/v1/namespaces/a/secrets", "create"),
            (Method::PUT, "/api/v1/namespaces/a/secrets/s", "update"),
            (Method::PATCH, "/api/v1/namespaces/a/secrets/s", "patch"),
            (Method::DELETE, "/api/v1/namespaces/a/secrets/s", "delete"),
            (
                Method::DELETE,
                "/api/v1/namespaces/a/secrets",
                "deletecollection",
            ),
        ];
        for (method, url, verb) in cases {
            assert_eq!(attrs(method, url).verb, verb, "{url}");
        }
    }

    #[test]
    fn subresources_namespaces_and_cluster_scope() {
        let status = attrs(
            Method::PATCH,
            "/apis/alibabacloud.ferroplane.io/v1alpha1/namespaces/t/ecsinstances/web/status",
        );
        assert_eq!(status.combined_resource(), "ecsinstances/status");
        assert_eq!(
            (status.namespace.as_str(), status.name.as_str()),
            ("t", "web")
        );
        assert_eq!(status.group, "alibabacloud.ferroplane.io");
        let namespace = attrs(Method::GET, "/api/v1/namespaces/team");
        assert_eq!(namespace.namespace, "team");
        let all = attrs(Method::GET, "/apis/apps/v1/deployments");
        assert_eq!((all.namespace.as_str(), all.verb.as_str()), ("", "list"));
        let one = attrs(
            Method::GET,
            "/api/v1/namespaces/a/secrets?watch=1&fieldSelector=metadata.name%3Dcreds",
        );
        assert_eq!((one.verb.as_str(), one.name.as_str()), ("watch", "creds"));
        let not = attrs(
            Method::GET,
            "/api/v1/namespaces/a/secrets?fieldSelector=metadata.name!%3Dcreds",
        );
        assert_eq!(not.name, "");
    }
}
