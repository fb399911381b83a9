//! Answers in the shape the client asked for (`Accept`): the object (list) itself, a `Table`
//! for `kubectl get`, or `PartialObjectMetadata`.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::catalog::registry::ResourceDef;
use crate::catalog::table::IncludeObject;
use crate::http::codec::{self, Query, Shape};
use crate::http::render;
use crate::meta;
use crate::store::list::ListPage;
use crate::store::ops::options::Written;
use crate::store::views;

/// The answer to a write: 201 when it created the object, else 200, with its warnings.
pub fn written(def: &ResourceDef, written: &Written, headers: &HeaderMap) -> Response {
    let code = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    object(code, def, &written.object, headers, &written.warnings)
}

/// One stored object in `def`'s view. A Table row carries the object's metadata.
pub fn object(
    code: StatusCode,
    def: &ResourceDef,
    stored: &Value,
    headers: &HeaderMap,
    warnings: &[String],
) -> Response {
    let presented = views::view_of(def, stored);
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

/// A GET of one object; a Table row carries what `includeObject` asks for.
pub fn got(def: &ResourceDef, stored: &Value, query: &Query, headers: &HeaderMap) -> Response {
    let include = render::include_object(query.get("includeObject"));
    if codec::shape(headers) != Shape::Table || include == IncludeObject::Metadata {
        return object(StatusCode::OK, def, stored, headers, &[]);
    }
    let view = views::to_view(def, stored);
    let rv = meta::str_at(&view, "/metadata/resourceVersion").to_owned();
    let table = render::table(def, std::slice::from_ref(&view), &rv, None, include);
    codec::json_response(StatusCode::OK, &table, codec::TABLE_CONTENT_TYPE, &[])
}

/// A page of a list: a `<Kind>List`, a Table, or a `PartialObjectMetadataList`.
pub fn list(def: &ResourceDef, page: &ListPage, query: &Query, headers: &HeaderMap) -> Response {
    let rv = page.resource_version.to_string();
    let shape = codec::shape(headers);
    if shape == Shape::Table {
        let table = render::table(
            def,
            &page.items,
            &rv,
            page.continue_token.as_deref(),
            render::include_object(query.get("includeObject")),
        );
        return codec::json_response(StatusCode::OK, &table, codec::TABLE_CONTENT_TYPE, &[]);
    }
    let mut metadata = json!({"resourceVersion": rv});
    if let Some(token) = &page.continue_token {
        metadata["continue"] = json!(token);
        metadata["remainingItemCount"] = json!(page.remaining);
    }
    let list = if shape == Shape::Metadata {
        let partial: Vec<Value> = page.items.iter().map(codec::partial_metadata).collect();
        json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata, "items": partial})
    } else {
        json!({"kind": def.list_kind(), "apiVersion": def.api_version(),
            "metadata": metadata, "items": page.items})
    };
    let content_type = if shape == Shape::Metadata {
        codec::METADATA_LIST_CONTENT_TYPE
    } else {
        "application/json"
    };
    codec::json_response(StatusCode::OK, &list, content_type, &[])
}
