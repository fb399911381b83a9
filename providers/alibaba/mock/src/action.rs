//! What every ECS and VPC action shares: the context it runs in ([`ActionContext`]), the shape of
//! an entry of the action tables ([`Action`]) and the answers several actions give alike (dry
//! runs, unknown actions, pages). The action modules build on this; it imports none of them.

use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::catalog::{self, CatalogRegion};
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// What an action needs besides its parameters.
pub struct ActionContext<'a> {
    pub caller: &'a Caller,
    pub request_id: &'a str,
    pub now: Timestamp,
    pub delay: Duration,
    pub quota: Option<usize>,
}

/// A handler whose answer is the fields of a JSON object; [`Action::run`] adds `RequestId`.
pub type FieldsHandler =
    fn(&mut Store, &ActionContext<'_>, &ReceivedParams) -> Result<Value, ErrorResponse>;

/// A handler that encodes its whole answer, `RequestId` included (large listings, written
/// straight from typed views).
pub type EncodedHandler =
    fn(&mut Store, &ActionContext<'_>, &ReceivedParams) -> Result<String, ErrorResponse>;

/// How an action is answered.
#[derive(Clone, Copy)]
pub enum Handler {
    Fields(FieldsHandler),
    Encoded(EncodedHandler),
}

/// One row of an action table: the action's name and its handler. The tables are the one list
/// of the actions the mock serves.
#[derive(Clone, Copy)]
pub struct Action {
    pub name: &'static str,
    pub handler: Handler,
}

impl Action {
    /// An action answered with the fields of a JSON object.
    pub const fn fields(name: &'static str, handler: FieldsHandler) -> Self {
        Self {
            name,
            handler: Handler::Fields(handler),
        }
    }

    /// An action that encodes its whole answer.
    pub const fn encoded(name: &'static str, handler: EncodedHandler) -> Self {
        Self {
            name,
            handler: Handler::Encoded(handler),
        }
    }

    /// Runs the action and encodes its answer, with `RequestId`.
    pub fn run(
        &self,
        store: &mut Store,
        ctx: &ActionContext<'_>,
        p: &ReceivedParams,
    ) -> Result<String, ErrorResponse> {
        match self.handler {
            Handler::Fields(handler) => {
                handler(store, ctx, p).map(|fields| with_request_id(fields, ctx.request_id))
            }
            Handler::Encoded(handler) => handler(store, ctx, p),
        }
    }
}

/// `value` with `RequestId` added (when it is an object), encoded.
pub fn with_request_id(mut value: Value, request_id: &str) -> String {
    if let Some(map) = value.as_object_mut() {
        map.insert("RequestId".to_owned(), Value::from(request_id));
    }
    value.to_string()
}

/// `base` with the fields of `more` added (both objects): lets a long answer be written in parts,
/// as one `json!` of many fields exceeds the macro's recursion limit.
pub fn merged(mut base: Value, more: Value) -> Value {
    if let (Some(map), Value::Object(extra)) = (base.as_object_mut(), more) {
        map.extend(extra);
    }
    base
}

/// A typed reply, encoded.
pub fn encode(reply: &impl Serialize) -> Result<String, ErrorResponse> {
    serde_json::to_string(reply).map_err(|e| {
        ErrorResponse::new(
            500,
            "InternalError",
            format!("The response could not be encoded: {e}"),
        )
    })
}

/// The region `RegionId` names (required).
pub fn requested_region(p: &ReceivedParams) -> Result<&'static CatalogRegion, ErrorResponse> {
    catalog::region_by_id(p.required("RegionId")?)
}

/// `InvalidAction.NotFound` (404).
pub fn action_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidAction.NotFound",
        "Specified api is not found, please check your url and method.",
    )
}

/// One page (`number` from 1, `size` items) of `items`, and the total.
pub fn page_of<T: Copy>(items: &[T], number: usize, size: usize) -> (usize, Vec<T>) {
    let start = number
        .saturating_sub(1)
        .saturating_mul(size)
        .min(items.len());
    let end = start.saturating_add(size).min(items.len());
    (items.len(), items[start..end].to_vec())
}

/// `DryRun`.
pub fn dry_run(p: &ReceivedParams) -> Result<bool, ErrorResponse> {
    Ok(p.bool("DryRun")?.unwrap_or(false))
}

/// ECS answers a successful dry run with this error.
pub fn dry_run_passed() -> ErrorResponse {
    ErrorResponse::bad_request(
        "DryRunOperation",
        "Request validation has been passed with DryRun flag set.",
    )
}
