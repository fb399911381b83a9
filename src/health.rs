//! The HTTP endpoints `ferroplane run` serves on `--metrics-addr`: `/metrics` (Prometheus text),
//! `/healthz` (the process is alive) and `/readyz` (controllers are running). Part of the binary,
//! not the runtime, so that only the binary (and the sandbox and the mock) link an HTTP server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use anyhow::Context as _;
use ferroplane_runtime::Metrics;

/// Flag for `/readyz`; set it once the controllers run (or the lease is held).
#[derive(Clone, Debug, Default)]
pub struct ReadyFlag(Arc<AtomicBool>);

impl ReadyFlag {
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Release);
    }

    pub fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

#[derive(Clone)]
struct AppState {
    metrics: Metrics,
    ready: ReadyFlag,
}

/// The router with `/metrics`, `/healthz` and `/readyz`.
fn router(metrics: Metrics, ready: ReadyFlag) -> Router {
    Router::new()
        .route("/metrics", get(metrics_handler))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(AppState { metrics, ready })
}

async fn metrics_handler(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    if state.ready.get() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "controllers not running")
    }
}

/// Binds `addr` and serves [`router`] until `shutdown` completes.
pub async fn serve(
    addr: SocketAddr,
    metrics: Metrics,
    ready: ReadyFlag,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen for metrics on {addr}"))?;
    axum::serve(listener, router(metrics, ready))
        .with_graceful_shutdown(shutdown)
        .await
        .with_context(|| format!("the metrics server on {addr} failed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get_path(addr: SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).await.expect("read");
        out
    }

    #[tokio::test]
    async fn serves_metrics_health_and_readiness() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let metrics = Metrics::new();
        metrics
            .external_calls("ECSInstance")
            .record("RunInstances", "success");
        let ready = ReadyFlag::default();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(
            axum::serve(listener, router(metrics, ready.clone()))
                .with_graceful_shutdown(async move {
                    let _ = stop_rx.await;
                })
                .into_future(),
        );
        assert!(get_path(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get_path(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        ready.set(true);
        assert!(get_path(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        let m = get_path(addr, "/metrics").await;
        assert!(m.contains("ferroplane_external_calls_total"), "{m}");
        let _ = stop_tx.send(());
        server.await.expect("join").expect("serve");
    }
}
