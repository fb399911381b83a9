//! Leader election on a Lease in the sandbox: of two replicas only one runs its controllers;
//! when the leader shuts down (releasing the lease) the other takes over.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use ferroplane_runtime::leader::{LeaderConfig, run_while_leader};
use ferroplane_testkit::{TestCluster, client_for, eventually};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use tokio::sync::oneshot;

#[derive(Default)]
struct Observed {
    running: [AtomicBool; 2],
    starts: [AtomicU32; 2],
    overlap: AtomicBool,
}

fn replica(
    client: kube::Client,
    index: usize,
    seen: Arc<Observed>,
) -> (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), ferroplane_runtime::RunError>>,
) {
    let (stop, stopped) = oneshot::channel::<()>();
    let mut config = LeaderConfig::new("ferroplane-test", "default", format!("replica-{index}"));
    config.lease_duration = Duration::from_secs(2);
    config.renew_grace = Duration::from_secs(1);
    let task = tokio::spawn(async move {
        run_while_leader(
            client,
            config,
            async move {
                let _ = stopped.await;
            },
            |token| {
                let seen = seen.clone();
                async move {
                    seen.starts[index].fetch_add(1, Ordering::SeqCst);
                    seen.running[index].store(true, Ordering::SeqCst);
                    if seen.running[1 - index].load(Ordering::SeqCst) {
                        seen.overlap.store(true, Ordering::SeqCst);
                    }
                    token.cancelled().await;
                    seen.running[index].store(false, Ordering::SeqCst);
                }
            },
        )
        .await
    });
    (stop, task)
}

/// Waits (at most 15 s) until `check` holds.
async fn wait_until(what: &str, check: impl Fn() -> bool) {
    eventually(what)
        .within(Duration::from_secs(15))
        .until(check)
        .await;
}

#[tokio::test]
async fn only_the_lease_holder_runs_and_the_other_takes_over() {
    let cluster = TestCluster::start().await;
    let seen = Arc::new(Observed::default());
    let (stop_a, task_a) = replica(client_for(&cluster.url()), 0, seen.clone());
    wait_until("replica 0 to lead", || {
        seen.running[0].load(Ordering::SeqCst)
    })
    .await;
    let (stop_b, task_b) = replica(client_for(&cluster.url()), 1, seen.clone());

    // The follower must not start while the leader renews: judged once the lease was renewed
    // three times since the follower started (a renewal is due every second, the lease lasts
    // two), by replica 0 every time.
    let leases: Api<Lease> = Api::namespaced(cluster.client(), "default");
    let renewals = std::sync::Mutex::new(BTreeSet::new());
    eventually("replica 0 renewed the lease three times")
        .within(Duration::from_secs(15))
        .every(Duration::from_millis(100))
        .until_async(|| async {
            let lease = leases.get("ferroplane-test").await.expect("the lease");
            let spec = lease.spec.unwrap_or_default();
            assert_eq!(
                spec.holder_identity.as_deref(),
                Some("replica-0"),
                "the leader holds the lease"
            );
            let mut renewals = renewals.lock().expect("renewals");
            renewals.extend(spec.renew_time.map(|t| t.0));
            renewals.len() > 3
        })
        .await;
    assert!(
        !seen.running[1].load(Ordering::SeqCst),
        "follower stays idle"
    );

    let _ = stop_a.send(());
    task_a
        .await
        .expect("join")
        .expect("replica 0 stops cleanly");
    assert!(!seen.running[0].load(Ordering::SeqCst));
    wait_until("replica 1 to take over", || {
        seen.running[1].load(Ordering::SeqCst)
    })
    .await;

    let _ = stop_b.send(());
    task_b
        .await
        .expect("join")
        .expect("replica 1 stops cleanly");
    assert!(
        !seen.overlap.load(Ordering::SeqCst),
        "never two leaders at once"
    );
    assert_eq!(seen.starts[0].load(Ordering::SeqCst), 1);
    assert_eq!(seen.starts[1].load(Ordering::SeqCst), 1);
    cluster.shutdown().await;
}
