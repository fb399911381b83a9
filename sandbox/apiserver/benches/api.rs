//! Sandbox API server figures: creates per second (sequential and concurrent) and watch fan-out
//! (1 writer, 50 watchers). Prints figures; asserts nothing about time.
//!
//! Run with `cargo bench -p ferroplane-sandbox --bench api`.

use std::time::{Duration, Instant};

use ferroplane_sandbox::{Sandbox, SandboxConfig};
use futures::StreamExt;

const CREATES: usize = 2_000;
const WATCHERS: usize = 50;
const WATCHED_WRITES: usize = 500;

fn config_map(name: &str) -> String {
    format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"{name}\",\"labels\":{{\"bench\":\"yes\"}}}},\"data\":{{\"key\":\"value\"}}}}"
    )
}

async fn create(http: &reqwest::Client, url: &str, name: &str) {
    let response = http
        .post(url)
        .header("Content-Type", "application/json")
        .body(config_map(name))
        .send()
        .await
        .expect("create answered");
    assert!(
        response.status().is_success(),
        "create failed: {}",
        response.status()
    );
}

async fn creates_per_second(sandbox: &Sandbox, concurrency: usize, prefix: &str) -> f64 {
    let http = reqwest::Client::new();
    let url = format!("{}/api/v1/namespaces/default/configmaps", sandbox.url());
    let started = Instant::now();
    futures::stream::iter(0..CREATES)
        .for_each_concurrent(concurrency, |i| {
            let (http, url) = (http.clone(), url.clone());
            async move { create(&http, &url, &format!("{prefix}-{i}")).await }
        })
        .await;
    CREATES as f64 / started.elapsed().as_secs_f64()
}

/// Returns (seconds until every watcher saw every write, events delivered per second).
async fn watch_fan_out(sandbox: &Sandbox) -> (f64, f64) {
    let http = reqwest::Client::new();
    let base = format!("{}/api/v1/namespaces/bench/configmaps", sandbox.url());
    let namespace = format!("{}/api/v1/namespaces", sandbox.url());
    let answer = http
        .post(&namespace)
        .header("Content-Type", "application/json")
        .body("{\"metadata\":{\"name\":\"bench\"}}")
        .send()
        .await
        .expect("namespace created");
    assert!(answer.status().is_success());
    let rv = sandbox.resource_version();
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let response = http
            .get(format!(
                "{base}?watch=true&resourceVersion={rv}&timeoutSeconds=120"
            ))
            .send()
            .await
            .expect("watch answered");
        watchers.push(tokio::spawn(async move {
            let mut response = response;
            let mut newlines = 0usize;
            while newlines < WATCHED_WRITES {
                match response.chunk().await {
                    Ok(Some(chunk)) => newlines += chunk.iter().filter(|b| **b == b'\n').count(),
                    _ => break,
                }
            }
            newlines
        }));
    }
    let started = Instant::now();
    for i in 0..WATCHED_WRITES {
        create(&http, &base, &format!("fan-{i}")).await;
    }
    let mut delivered = 0;
    for watcher in watchers {
        delivered += tokio::time::timeout(Duration::from_secs(120), watcher)
            .await
            .expect("watchers finish")
            .expect("watcher ran");
    }
    let seconds = started.elapsed().as_secs_f64();
    (seconds, delivered as f64 / seconds)
}

#[tokio::main]
async fn main() {
    let config = SandboxConfig {
        simulate_workloads: false,
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::start(config).await.expect("sandbox starts");
    let sequential = creates_per_second(&sandbox, 1, "seq").await;
    let concurrent = creates_per_second(&sandbox, 16, "par").await;
    println!("creates/s (1 client, sequential):   {sequential:>10.0}");
    println!("creates/s (16 concurrent requests): {concurrent:>10.0}");
    let (seconds, rate) = watch_fan_out(&sandbox).await;
    println!(
        "watch fan-out: 1 writer x {WATCHED_WRITES} creates, {WATCHERS} watchers: all delivered in {seconds:.2}s ({rate:.0} events/s delivered)"
    );
    println!("writes counted: {}", sandbox.total_writes());
    sandbox.shutdown().await;
}
