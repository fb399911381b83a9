//! CPU cost per write and per watch event, on the write mix a provider controller sends for a
//! CRD object with a schema and CEL rules (the project's ECSInstance CRD): a metadata merge
//! patch (finalizer and annotation), a status merge patch on `/status`, an `events.k8s.io/v1`
//! Event create, and the same metadata patch again while 2 watchers follow the kind.
//!
//! Two sets of figures, both process CPU time per request (every thread) and wall time:
//! - in-process: requests handed straight to the server's handler (`Sandbox::handle`), without
//!   HTTP, so the figures are the API server's own work (watchers read the handler's streaming
//!   bodies);
//! - over HTTP: sequential requests from one in-process client through the listening server,
//!   the client's and hyper's work included.
//!
//! The watch figure is the extra CPU per delivered event: (patch with 2 watchers - patch
//! without) / 2. In process, one read figure too: the `kubectl get` table of every object
//! (a list rendered as a `meta.k8s.io/v1` Table with the CRD's printer columns).
//!
//! Run with `cargo bench -p ferroplane-sandbox --bench writes`; it prints figures, asserts
//! nothing about time.

use std::path::Path;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Method, Request};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use futures::StreamExt;
use serde_json::{Value, json};

const OBJECTS: usize = 400;
const ROUNDS: usize = 3;
const TABLE_READS: usize = 20;
const NAMESPACE: &str = "bench";
const GROUP_PATH: &str = "/apis/alibabacloud.ferroplane.io/v1alpha1";

/// CPU time of every live thread of this process, from `/proc/self/task/*/schedstat` (ns).
fn process_cpu() -> Duration {
    let mut total = 0u64;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat"))
                && let Some(ns) = text
                    .split_whitespace()
                    .next()
                    .and_then(|f| f.parse::<u64>().ok())
            {
                total += ns;
            }
        }
    }
    Duration::from_nanos(total)
}

struct Figures {
    cpu: Duration,
    wall: Duration,
    ops: usize,
}

impl Figures {
    fn per_op_cpu(&self) -> Duration {
        self.cpu / self.ops.max(1) as u32
    }

    fn print(&self, what: &str) {
        println!(
            "{what:<44} cpu {:>9.1?}/op  wall {:>9.1?}/op  ({} ops)",
            self.per_op_cpu(),
            self.wall / self.ops.max(1) as u32,
            self.ops
        );
    }
}

/// Runs `ops` requests built by `request` one after the other, each must succeed.
async fn timed(ops: usize, mut request: impl FnMut(usize) -> reqwest::RequestBuilder) -> Figures {
    let (cpu0, wall0) = (process_cpu(), Instant::now());
    for i in 0..ops {
        let response = request(i).send().await.expect("request answered");
        let status = response.status();
        let body = response.bytes().await.expect("body read");
        assert!(
            status.is_success(),
            "request {i} failed: {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    Figures {
        cpu: process_cpu().saturating_sub(cpu0),
        wall: wall0.elapsed(),
        ops,
    }
}

fn load_yaml(sub: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(sub);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn instance(i: usize) -> Value {
    static SAMPLE: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let mut object = SAMPLE
        .get_or_init(|| load_yaml("deploy/samples/ecsinstance.yaml"))
        .clone();
    object["metadata"] = json!({"name": format!("web-{i}"), "namespace": NAMESPACE,
        "labels": {"app": "bench"}});
    object["spec"]["forProvider"]["instanceName"] = json!(format!("web-{i}"));
    object["spec"]["providerConfigRef"] = json!({"kind": "ProviderConfig", "name": "default"});
    object
}

fn status(round: usize) -> Value {
    json!({"status": {
        "atProvider": {"instanceId": "i-2ze0123456789abcdef", "status": "Running",
            "publicIpAddress": format!("47.1.2.{round}"), "privateIpAddress": "172.16.0.8",
            "zoneId": "cn-beijing-h", "creationTime": "2024-05-01T11:00Z", "cpu": 2,
            "memory": 8192, "osName": "CentOS 7.8 64位"},
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Available", "message": "",
             "lastTransitionTime": "2024-05-01T11:00:00Z", "observedGeneration": 1},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
             "message": format!("round {round}"), "lastTransitionTime": "2024-05-01T11:00:00Z",
             "observedGeneration": 1}],
        "observedGeneration": 1}})
}

fn event(i: usize) -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": format!("web-{i}.17a2b3c4d5e6f7a8"), "namespace": NAMESPACE},
        "eventTime": "2024-05-01T11:00:00.000000Z", "reportingController": "ferroplane",
        "reportingInstance": "ferroplane-0", "action": "Create", "reason": "Created",
        "type": "Normal", "note": "created the external resource i-2ze0123456789abcdef",
        "regarding": {"apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "ECSInstance",
            "name": format!("web-{i}"), "namespace": NAMESPACE, "uid": "0"}})
}

/// Starts `n` watchers of ECSInstances in the bench namespace; each task ends after `events`
/// lines and returns how many it saw.
async fn watchers(
    http: &reqwest::Client,
    base: &str,
    n: usize,
    events: usize,
) -> Vec<tokio::task::JoinHandle<usize>> {
    let mut handles = Vec::new();
    for _ in 0..n {
        let list: Value = http
            .get(format!(
                "{base}{GROUP_PATH}/namespaces/{NAMESPACE}/ecsinstances?limit=1"
            ))
            .send()
            .await
            .expect("list answered")
            .json()
            .await
            .expect("list decoded");
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .expect("list resourceVersion")
            .to_owned();
        let mut response = http
            .get(format!(
                "{base}{GROUP_PATH}/namespaces/{NAMESPACE}/ecsinstances?watch=true&resourceVersion={rv}&timeoutSeconds=600"
            ))
            .send()
            .await
            .expect("watch answered");
        handles.push(tokio::spawn(async move {
            let mut lines = 0usize;
            while lines < events {
                match response.chunk().await {
                    Ok(Some(chunk)) => lines += chunk.iter().filter(|b| **b == b'\n').count(),
                    _ => break,
                }
            }
            lines
        }));
    }
    handles
}

/// One request handed to the handler; `None` body for GET.
fn request(method: Method, uri: &str, content_type: &str, body: Option<&Value>) -> Request<Body> {
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", content_type)
        .body(body)
        .expect("request builds")
}

/// Sends `request` to the handler; it must succeed. Returns the response body.
async fn call(sandbox: &Sandbox, request: Request<Body>) -> bytes::Bytes {
    let response = sandbox.handle(request).await;
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body read");
    assert!(
        status.is_success(),
        "{status}: {}",
        String::from_utf8_lossy(&body)
    );
    body
}

async fn timed_in_process(
    sandbox: &Sandbox,
    ops: usize,
    mut build: impl FnMut(usize) -> Request<Body>,
) -> Figures {
    let (cpu0, wall0) = (process_cpu(), Instant::now());
    for i in 0..ops {
        call(sandbox, build(i)).await;
    }
    Figures {
        cpu: process_cpu().saturating_sub(cpu0),
        wall: wall0.elapsed(),
        ops,
    }
}

const OBJECTS_PATH: &str =
    "/apis/alibabacloud.ferroplane.io/v1alpha1/namespaces/bench/ecsinstances";

fn merge_request(round: usize, i: usize) -> Request<Body> {
    let body = json!({"metadata": {
        "finalizers": ["ferroplane.io/managed-resource"],
        "annotations": {"ferroplane.io/external-name": format!("i-{i}"),
                        "bench/round": round.to_string()}}});
    request(
        Method::PATCH,
        &format!("{OBJECTS_PATH}/web-{i}?fieldManager=ferroplane"),
        "application/merge-patch+json",
        Some(&body),
    )
}

fn status_request(round: usize, i: usize) -> Request<Body> {
    request(
        Method::PATCH,
        &format!("{OBJECTS_PATH}/web-{i}/status?fieldManager=ferroplane"),
        "application/merge-patch+json",
        Some(&status(round)),
    )
}

/// What `kubectl get ecs` asks for: the list as a Table with the CRD's printer columns.
fn table_request() -> Request<Body> {
    Request::builder()
        .method(Method::GET)
        .uri(OBJECTS_PATH)
        .header(
            "Accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Body::empty())
        .expect("request builds")
}

/// The server's own work per request, without HTTP.
async fn in_process() {
    let config = SandboxConfig {
        simulate_workloads: false,
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::start(config).await.expect("sandbox starts");
    let crd = load_yaml("deploy/crds/alibabacloud.ferroplane.io_ecsinstances.yaml");
    call(
        &sandbox,
        request(
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            Some(&crd),
        ),
    )
    .await;
    call(
        &sandbox,
        request(
            Method::POST,
            "/api/v1/namespaces",
            "application/json",
            Some(&json!({"metadata": {"name": NAMESPACE}})),
        ),
    )
    .await;
    let create = timed_in_process(&sandbox, OBJECTS, |i| {
        request(
            Method::POST,
            &format!("{OBJECTS_PATH}?fieldManager=kubectl"),
            "application/json",
            Some(&instance(i)),
        )
    })
    .await;
    let (mut merges, mut statuses, mut watched) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        merges.push(timed_in_process(&sandbox, OBJECTS, |i| merge_request(round * 3, i)).await);
        statuses.push(timed_in_process(&sandbox, OBJECTS, |i| status_request(round, i)).await);
        let rv = sandbox.resource_version();
        let mut readers = Vec::new();
        for _ in 0..2 {
            let response = sandbox
                .handle(request(
                    Method::GET,
                    &format!("{OBJECTS_PATH}?watch=true&resourceVersion={rv}"),
                    "",
                    None,
                ))
                .await;
            let mut stream = response.into_body().into_data_stream();
            readers.push(tokio::spawn(async move {
                let mut lines = 0usize;
                while lines < OBJECTS {
                    match stream.next().await {
                        Some(Ok(chunk)) => lines += chunk.iter().filter(|b| **b == b'\n').count(),
                        _ => break,
                    }
                }
                lines
            }));
        }
        let (cpu0, wall0) = (process_cpu(), Instant::now());
        for i in 0..OBJECTS {
            call(&sandbox, merge_request(round * 3 + 1, i)).await;
        }
        for reader in readers {
            let seen = reader.await.expect("reader ran");
            assert_eq!(seen, OBJECTS, "every patch is one event per watcher");
        }
        watched.push(Figures {
            cpu: process_cpu().saturating_sub(cpu0),
            wall: wall0.elapsed(),
            ops: OBJECTS,
        });
    }
    let events = timed_in_process(&sandbox, OBJECTS, |i| {
        request(
            Method::POST,
            &format!("/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"),
            "application/json",
            Some(&event(i)),
        )
    })
    .await;
    let table = timed_in_process(&sandbox, TABLE_READS, |_| table_request()).await;
    let rendered: Value =
        serde_json::from_slice(&call(&sandbox, table_request()).await).expect("table decodes");
    assert_eq!(rendered["kind"], "Table");
    assert_eq!(rendered["rows"].as_array().map(Vec::len), Some(OBJECTS));
    println!("in-process (handler, no HTTP):");
    report(create, merges, statuses, watched, events);
    table.print(&format!("kubectl get: Table of {OBJECTS} ECSInstances"));
    sandbox.shutdown().await;
}

/// The lowest round of each (the least disturbed by other load on the machine), printed.
fn report(
    create: Figures,
    merges: Vec<Figures>,
    statuses: Vec<Figures>,
    watched: Vec<Figures>,
    events: Figures,
) {
    let best = |figures: Vec<Figures>| {
        figures
            .into_iter()
            .min_by_key(|f| f.cpu)
            .expect("at least one round")
    };
    let (merge, status, watched) = (best(merges), best(statuses), best(watched));
    create.print("create ECSInstance (POST)");
    merge.print("merge patch (finalizer + annotations)");
    status.print("status merge patch (/status)");
    watched.print("merge patch, 2 watchers");
    events.print("create events.k8s.io/v1 Event");
    let per_event = watched.per_op_cpu().saturating_sub(merge.per_op_cpu()) / 2;
    println!(
        "{:<44} cpu {per_event:>9.1?}/event",
        "watch event delivered (per watcher)"
    );
}

#[tokio::main]
async fn main() {
    in_process().await;
    let config = SandboxConfig {
        simulate_workloads: false,
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::start(config).await.expect("sandbox starts");
    let base = sandbox.url();
    let http = reqwest::Client::new();
    let json_post = |url: String, body: &Value| {
        http.post(url)
            .header("Content-Type", "application/json")
            .body(body.to_string())
    };

    let crd = load_yaml("deploy/crds/alibabacloud.ferroplane.io_ecsinstances.yaml");
    timed(1, |_| {
        json_post(
            format!("{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
            &crd,
        )
    })
    .await;
    timed(1, |_| {
        json_post(
            format!("{base}/api/v1/namespaces"),
            &json!({"metadata": {"name": NAMESPACE}}),
        )
    })
    .await;
    let objects = format!("{base}{GROUP_PATH}/namespaces/{NAMESPACE}/ecsinstances");

    let create = timed(OBJECTS, |i| {
        json_post(format!("{objects}?fieldManager=kubectl"), &instance(i))
    })
    .await;

    let merge = |round: usize| {
        let (http, objects) = (&http, &objects);
        move |i: usize| {
            let body = json!({"metadata": {
                "finalizers": ["ferroplane.io/managed-resource"],
                "annotations": {"ferroplane.io/external-name": format!("i-{i}"),
                                "bench/round": round.to_string()}}});
            http.patch(format!("{objects}/web-{i}?fieldManager=ferroplane"))
                .header("Content-Type", "application/merge-patch+json")
                .body(body.to_string())
        }
    };
    let status_patch = |round: usize| {
        let (http, objects) = (&http, &objects);
        move |i: usize| {
            http.patch(format!("{objects}/web-{i}/status?fieldManager=ferroplane"))
                .header("Content-Type", "application/merge-patch+json")
                .body(status(round).to_string())
        }
    };

    let mut merge_figures = Vec::new();
    let mut status_figures = Vec::new();
    let mut watched_figures = Vec::new();
    for round in 0..ROUNDS {
        merge_figures.push(timed(OBJECTS, merge(round * 3)).await);
        status_figures.push(timed(OBJECTS, status_patch(round)).await);
        let handles = watchers(&http, &base, 2, OBJECTS).await;
        watched_figures.push(timed(OBJECTS, merge(round * 3 + 1)).await);
        for handle in handles {
            let seen = tokio::time::timeout(Duration::from_secs(60), handle)
                .await
                .expect("watchers finish")
                .expect("watcher ran");
            assert_eq!(seen, OBJECTS, "every patch is one event per watcher");
        }
    }
    let events = timed(OBJECTS, |i| {
        json_post(
            format!("{base}/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"),
            &event(i),
        )
    })
    .await;

    println!("over HTTP (one sequential client):");
    report(
        create,
        merge_figures,
        status_figures,
        watched_figures,
        events,
    );
    sandbox.shutdown().await;
}
