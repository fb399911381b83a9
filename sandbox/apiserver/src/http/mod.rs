//! The HTTP layer: one axum handler for every request. It routes (`route`), decodes bodies
//! and options (`codec`, `protobuf`, `options`), calls one store operation per request
//! (`resource`, `scale`, `watch`) and encodes the answer in the shape the client asked for
//! (`answer`, `render`). API-server semantics live in the store, never here.

mod answer;
mod authorize;
mod codec;
mod host;
mod options;
mod protobuf;
mod render;
mod resource;
mod review;
mod route;
mod scale;
mod watch;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::App;
use crate::catalog::{discovery, openapi, openapi_v2};
use crate::error::ApiError;
use crate::http::codec::{MAX_BODY, Query};
use crate::http::resource::ResourceRequest;
use crate::http::route::Route;

pub async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(error) = host::check(&parts.headers, &parts.uri, app.port()) {
        return error.into_response();
    }
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => return ApiError::too_large(MAX_BODY).into_response(),
    };
    let query = Query::parse(parts.uri.query());
    let Some(route) = route::parse(parts.uri.path()) else {
        return ApiError::no_route().into_response();
    };
    let identity = match authorize::check(&app, &parts.method, &route, &query, &parts.headers) {
        Ok(identity) => identity,
        Err(error) => return error.into_response(),
    };
    let result = match route {
        Route::Resource(path) if authorize::is_self_review(&path) => {
            if parts.method == Method::POST {
                review::serve(&app, &identity, &parts.headers, &bytes)
            } else {
                Err(ApiError::method_not_allowed())
            }
        }
        Route::Resource(path) => resource::serve(
            app,
            ResourceRequest {
                method: &parts.method,
                path,
                query: &query,
                headers: &parts.headers,
                body: &bytes,
            },
        ),
        other if parts.method == Method::GET || parts.method == Method::HEAD => {
            Ok(meta_endpoint(&app, other, &parts.headers))
        }
        _ => Err(ApiError::method_not_allowed()),
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

/// `/version`, health, discovery and OpenAPI.
fn meta_endpoint(app: &App, route: Route, headers: &axum::http::HeaderMap) -> Response {
    let found = match route {
        Route::Version => Some(discovery::version()),
        Route::Health => {
            return (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], "ok").into_response();
        }
        Route::CoreVersions => Some(discovery::core_versions(&app.address)),
        Route::Groups => Some(app.store.read_registry(discovery::groups)),
        Route::Group(group) => app
            .store
            .read_registry(|registry| discovery::group(registry, &group)),
        Route::Resources { group, version } => app
            .store
            .read_registry(|registry| discovery::resources(registry, &group, &version)),
        Route::OpenApiIndex => Some(app.store.read_registry(openapi::index)),
        Route::OpenApiDocument(path) => app
            .store
            .read_registry(|registry| openapi::document(registry, &path)),
        Route::OpenApiV2 => {
            let accept = headers
                .get(header::ACCEPT)
                .and_then(|a| a.to_str().ok())
                .unwrap_or_default();
            if accept.contains(openapi_v2::PROTOBUF) {
                return (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, openapi_v2::PROTOBUF_ANSWER)],
                    openapi_v2::protobuf(),
                )
                    .into_response();
            }
            Some(openapi_v2::document())
        }
        Route::Resource(_) => None,
    };
    match found {
        Some(value) => codec::ok(&value),
        None => ApiError::no_route().into_response(),
    }
}
