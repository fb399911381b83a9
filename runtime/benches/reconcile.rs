//! Throughput of the framework against the sandbox API server and the in-memory fake cloud:
//! N objects created at once, time until all are Ready, Kubernetes writes per object, then the
//! cost of a steady-state poll round. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p ferroplane-runtime --bench reconcile` (N from `FERROPLANE_BENCH_OBJECTS`,
//! default 200).

use std::time::{Duration, Instant};

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::{READY, REASON_AVAILABLE};
use ferroplane_runtime::requeue::RequeuePolicy;
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, RuntimeConfig};
use ferroplane_testkit::Controllers;
use ferroplane_testkit::conditions::has_condition;
use ferroplane_testkit::widget::*;
use kube::api::{Api, ListParams};

async fn all_ready(h: &WidgetEnv, n: usize) -> bool {
    let list = h
        .widgets()
        .list(&ListParams::default())
        .await
        .expect("list");
    list.items.len() == n
        && list
            .items
            .iter()
            .all(|w| has_condition(w, READY, ConditionStatus::True, REASON_AVAILABLE))
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("FERROPLANE_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let h = WidgetEnv::start().await;
    let poll = Duration::from_secs(2);
    let runtime = Runtime::new(
        h.client.clone(),
        RuntimeConfig {
            rate_limit: 0.0,
            controller: ControllerConfig {
                concurrency: 16,
                requeue: RequeuePolicy {
                    poll_interval: poll,
                    transition_interval: Duration::from_millis(200),
                    ..RequeuePolicy::default()
                },
            },
            ..RuntimeConfig::default()
        },
    );
    let controller = ManagedController::new(
        &runtime,
        Api::<Widget>::namespaced(h.client.clone(), NS),
        h.connector(),
    );
    let controllers = Controllers::spawn(runtime, |_, shutdown| async move {
        controller.run(shutdown.cancelled_owned()).await;
        Ok(())
    });

    h.sandbox().reset_writes();
    let started = Instant::now();
    for i in 0..n {
        h.create(&widget(&format!("bench-{i}"), 1)).await;
    }
    let created = started.elapsed();
    while !all_ready(&h, n).await {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ready = started.elapsed();
    // Creates by the test itself are writes too; subtract them.
    let writes = h.widget_writes() - n as u64;

    h.sandbox().reset_writes();
    let observes_before = h.cloud.calls("observe");
    tokio::time::sleep(poll * 3).await;
    let steady_writes = h.widget_writes();
    let observes = h.cloud.calls("observe") - observes_before;

    println!("objects                         {n}");
    println!(
        "create requests sent            {:.2} s",
        created.as_secs_f64()
    );
    println!(
        "all Ready after                 {:.2} s",
        ready.as_secs_f64()
    );
    println!(
        "objects Ready per second        {:.1}",
        n as f64 / ready.as_secs_f64()
    );
    println!(
        "controller writes per object    {:.2}",
        writes as f64 / n as f64
    );
    println!(
        "external creates                {}",
        h.cloud.calls("create")
    );
    println!(
        "steady state, {} s: observes {observes} ({:.2} per object per poll), writes {steady_writes}",
        (poll * 3).as_secs(),
        observes as f64 / n as f64 / 3.0
    );

    controllers.stop().await;
    h.shutdown().await;
}
