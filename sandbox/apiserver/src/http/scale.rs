//! HTTP side of `/scale` (`kubectl scale`): decodes a PUT or PATCH into a change of the Scale,
//! which the store applies.

use axum::http::{HeaderMap, Method};
use axum::response::Response;

use crate::error::{ApiError, ApiResult};
use crate::http::codec;
use crate::store::Store;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::scale::ScaleChange;

/// GET, PUT or PATCH of `<workload>/scale`.
pub fn serve(
    store: &Store,
    target: &Target,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
    options: &WriteOptions,
) -> ApiResult<Response> {
    let decode = || decode_change(method, headers, body);
    let scale = store.scale(target, decode, options)?;
    Ok(codec::ok(&scale))
}

fn decode_change(method: &Method, headers: &HeaderMap, body: &[u8]) -> ApiResult<ScaleChange> {
    match *method {
        Method::GET | Method::HEAD => Ok(ScaleChange::Read),
        Method::PUT => codec::decode_object(body, headers).map(ScaleChange::Replace),
        Method::PATCH => {
            let media_type = codec::content_type(headers);
            let patch_body = codec::decode(body, "application/json")?;
            match media_type.as_str() {
                "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                    Ok(ScaleChange::MergePatch(patch_body))
                }
                "application/json-patch+json" => Ok(ScaleChange::JsonPatch(patch_body)),
                other => Err(ApiError::unsupported_media_type(
                    other,
                    &[
                        "application/json-patch+json",
                        "application/merge-patch+json",
                        "application/strategic-merge-patch+json",
                    ],
                )),
            }
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
