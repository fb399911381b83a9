//! The HTTP layer: the ECS/STS endpoint at `/` and the inspection endpoints under `/_mock/`.
//!
//! - `GET /_mock/stats` → [`crate::MockStats`] as JSON.
//! - `GET /_mock/instances` → array of [`crate::InstanceSummary`].
//! - `GET /_mock/faults` → the current [`crate::Faults`]; `POST /_mock/faults` with a partial JSON
//!   body (`{"throttleRate":0.1,"errorRate":0,"latencyMs":50,"retryAfterMs":1000,"dropRate":0,
//!   "apiRateLimitPerMinute":600}`; a limit of 0 removes it) changes them.
//! - `POST /_mock/errors` with a [`crate::ErrorInjection`]
//!   (`{"code":"OperationConflict","action":"StopInstance","times":2}`, or
//!   `{"fault":"truncatedBody","action":"CreateVpc","accountId":"…"}`) scripts an ECS error or a
//!   transport fault for the next calls; `GET /_mock/errors` lists those still pending.
//! - `GET /_mock/resources` → every live resource ([`crate::ResourceRecord`]) of every account;
//!   `GET /_mock/ledger` → what each successful call created, changed or deleted
//!   ([`crate::LedgerEntry`]).
//! - `GET /_mock/stock` lists the stock limits per (zone, instance type); `POST /_mock/stock`
//!   with a [`crate::StockLimit`] (`{"zoneId":"cn-hangzhou-b","instanceType":"ecs.g6.large",
//!   "available":0}`; `"available":null` removes the limit) sets one.
//! - `POST /_mock/reclaim` with `{"instanceId":"i-…","noticeMs":2000}` reclaims a spot instance:
//!   locked as `Recycling` (in `OperationLocks`) at once, released after the notice.
//! - `/<bucket>/...`: a minimal OSS (`crate::oss_http`).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};

use crate::config::FaultsPatch;
use crate::injection::{ErrorInjection, ScriptedFault};
use crate::locks::{lock, write};
use crate::state::{ApiRequest, InFlight, Shared};

/// The mock's routes.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/_mock/stats", get(stats))
        .route("/_mock/instances", get(instances))
        .route("/_mock/faults", get(faults).post(set_faults))
        .route("/_mock/errors", get(errors).post(inject_error))
        .route("/_mock/resources", get(resources))
        .route("/_mock/ledger", get(ledger))
        .route("/_mock/stock", get(stock).post(set_stock))
        .route("/_mock/reclaim", axum::routing::post(reclaim_spot))
        .route("/", any(api))
        .fallback(not_found)
        .with_state(shared.clone())
        // OSS, path-style: `/<bucket>/...` (the `/_mock/` routes above win, being literal).
        .merge(crate::oss_http::router(shared))
}

fn json_response(status: StatusCode, body: &Value, request_id: Option<&str>) -> Response {
    text_response(status, body.to_string(), request_id)
}

fn text_response(status: StatusCode, body: String, request_id: Option<&str>) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;charset=utf-8"),
    );
    if let Some(id) = request_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        headers.insert("x-acs-request-id", id);
    }
    response
}

fn new_request_id() -> String {
    uuid::Uuid::new_v4().to_string().to_ascii_uppercase()
}

async fn api(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let settings = shared.settings();
    let delayed = !settings.faults.latency.is_zero();
    let request_id = new_request_id();
    let request = ApiRequest {
        method: method.as_str(),
        path: uri.path(),
        query: uri.query().unwrap_or_default(),
        headers: &headers,
        body: &body,
        request_id: &request_id,
    };
    let outcome = shared.handle(&request, delayed);
    // The answer is delayed after processing, so a ClientToken call is "in flight" meanwhile.
    let guard = outcome
        .in_flight
        .map(|key| InFlight::new(Arc::clone(&shared), key));
    if delayed {
        tokio::time::sleep(settings.faults.latency).await;
    }
    drop(guard);
    let dropped_by_rate = settings.faults.drop_rate > 0.0
        && rand::Rng::random_bool(&mut rand::rng(), settings.faults.drop_rate.clamp(0.0, 1.0));
    if dropped_by_rate || outcome.fault == Some(ScriptedFault::DroppedResponse) {
        lock(&shared.counters).dropped();
        return dropped_response();
    }
    let (status, body) = match outcome.result {
        Ok(text) => (StatusCode::OK, text),
        Err(error) => {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("ecs.aliyuncs.com");
            let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
            let mut response = json_response(
                status,
                &error.body(&request_id, host, outcome.product.troubleshoot_name()),
                Some(&request_id),
            );
            if error.code.starts_with("Throttling")
                && let Some(ms) = settings.faults.retry_after_ms
            {
                response
                    .headers_mut()
                    .insert("x-acs-retry-after", HeaderValue::from(ms));
            }
            if outcome.fault.is_none() {
                return response;
            }
            (
                status,
                error
                    .body(&request_id, host, outcome.product.troubleshoot_name())
                    .to_string(),
            )
        }
    };
    match outcome.fault.and_then(|f| f.malformed_body(&body)) {
        // A gateway's page is a 200 whatever the call would have answered.
        Some(page) if outcome.fault == Some(ScriptedFault::NonJsonBody) => {
            text_response(StatusCode::OK, page, Some(&request_id))
        }
        Some(cut) => text_response(status, cut, Some(&request_id)),
        None => text_response(status, body, Some(&request_id)),
    }
}

/// A response whose body fails before its first byte: hyper then closes the connection without
/// sending anything, so the client sees the connection cut.
fn dropped_response() -> Response {
    let failing = futures::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "response dropped by fault injection",
        ))
    });
    Response::new(axum::body::Body::from_stream(failing))
}

async fn not_found(uri: Uri) -> Response {
    let request_id = new_request_id();
    let body = json!({
        "RequestId": request_id,
        "HostId": "ecs.aliyuncs.com",
        "Code": "InvalidAction.NotFound",
        "Message": format!("No API is served at path {}; ECS, VPC and STS are served at /.", crate::error::truncate(uri.path(), 128)),
        "Recommend": "",
    });
    json_response(StatusCode::NOT_FOUND, &body, Some(&request_id))
}

async fn stats(State(shared): State<Arc<Shared>>) -> Response {
    match serde_json::to_value(shared.stats()) {
        Ok(v) => json_response(StatusCode::OK, &v, None),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": e.to_string()}),
            None,
        ),
    }
}

async fn instances(State(shared): State<Arc<Shared>>) -> Response {
    match serde_json::to_value(shared.instances()) {
        Ok(v) => json_response(StatusCode::OK, &v, None),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": e.to_string()}),
            None,
        ),
    }
}

async fn resources(State(shared): State<Arc<Shared>>) -> Response {
    listing(serde_json::to_value(shared.resources()))
}

async fn ledger(State(shared): State<Arc<Shared>>) -> Response {
    listing(serde_json::to_value(lock(&shared.ledger).entries()))
}

fn listing(value: Result<Value, serde_json::Error>) -> Response {
    match value {
        Ok(v) => json_response(StatusCode::OK, &v, None),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": e.to_string()}),
            None,
        ),
    }
}

async fn reclaim_spot(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let request: crate::reclaim::ReclaimRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!("invalid reclaim JSON: {e}; fields: instanceId, noticeMs")}),
                None,
            );
        }
    };
    let notice = std::time::Duration::from_millis(request.notice_ms);
    match crate::reclaim::reclaim(&shared, &request.instance_id, notice) {
        Ok(()) => json_response(StatusCode::OK, &json!({}), None),
        Err(e) => json_response(StatusCode::CONFLICT, &json!({"error": e}), None),
    }
}

async fn stock(State(shared): State<Arc<Shared>>) -> Response {
    listing(serde_json::to_value(lock(&shared.store).stock.limits()))
}

async fn set_stock(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match serde_json::from_slice::<crate::StockLimit>(&body) {
        Ok(limit) => {
            lock(&shared.store).stock.set(&limit);
            json_response(StatusCode::OK, &json!({}), None)
        }
        Err(e) => json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": format!("invalid stock JSON: {e}; fields: zoneId, instanceType, available (a number, or null for unlimited)")}),
            None,
        ),
    }
}

async fn faults(State(shared): State<Arc<Shared>>) -> Response {
    match serde_json::to_value(shared.settings().faults) {
        Ok(v) => json_response(StatusCode::OK, &v, None),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": e.to_string()}),
            None,
        ),
    }
}

async fn set_faults(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let patch: FaultsPatch = match serde_json::from_slice(&body) {
        Ok(p) => p,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!("invalid faults JSON: {e}; fields: throttleRate, errorRate, latencyMs, retryAfterMs, dropRate, apiRateLimitPerMinute")}),
                None,
            );
        }
    };
    let outcome = {
        let mut settings = write(&shared.settings);
        settings
            .faults
            .patched(&patch)
            .map(|next| settings.faults = next)
    };
    match outcome {
        Ok(()) => faults(State(shared)).await,
        Err(e) => json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": e.to_string()}),
            None,
        ),
    }
}

async fn errors(State(shared): State<Arc<Shared>>) -> Response {
    let pending = lock(&shared.injections).clone();
    match serde_json::to_value(pending) {
        Ok(v) => json_response(StatusCode::OK, &v, None),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": e.to_string()}),
            None,
        ),
    }
}

async fn inject_error(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let injection = serde_json::from_slice::<ErrorInjection>(&body)
        .map_err(|e| {
            format!(
                "invalid error injection JSON: {e}; fields: code or fault (droppedResponse, truncatedBody, nonJsonBody), action, accountId, times"
            )
        })
        .and_then(|i| i.validate().map(|()| i).map_err(|e| e.to_string()));
    match injection {
        Ok(injection) => {
            lock(&shared.injections).push(injection);
            errors(State(shared)).await
        }
        Err(e) => json_response(StatusCode::BAD_REQUEST, &json!({"error": e}), None),
    }
}
