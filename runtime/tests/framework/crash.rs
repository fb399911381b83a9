//! Never a duplicate, never stuck: the reconcile is killed at every step between "create sent"
//! and "status written" (a Kubernetes write that never lands or whose response is lost, a cloud
//! call whose reconcile is dropped mid-flight), then a fresh reconciler — a restarted process —
//! runs. Each time exactly one external resource exists, the object records its name, and no
//! human had to remove anything.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::{READY, REASON_AVAILABLE};
use ferroplane_testkit::conditions::{external_name, has_condition, has_finalizer};
use ferroplane_testkit::faulty_client::{WriteFault, WritePlan};
use ferroplane_testkit::widget::*;
use kube::api::DeleteParams;

/// Resources in the fake cloud tagged with this object's UID.
fn resources_for(h: &WidgetEnv, w: &Widget) -> Vec<String> {
    let uid = w.metadata.uid.clone().expect("uid");
    h.cloud
        .lock()
        .resources
        .iter()
        .filter(|(_, r)| r.uid == uid)
        .map(|(k, _)| k.clone())
        .collect()
}

/// Runs fresh reconcilers until the widget is Ready, then checks the invariants.
async fn recover_and_check(h: &WidgetEnv, name: &str) {
    let w = h.get(name).await;
    for _ in 0..4 {
        let fresh = h.reconciler();
        let _ = fresh.reconcile(&h.latest(&w).await).await;
        let got = h.get(name).await;
        if has_condition(&got, READY, ConditionStatus::True, REASON_AVAILABLE) {
            break;
        }
    }
    let got = h.get(name).await;
    let ids = resources_for(h, &got);
    assert_eq!(
        ids.len(),
        1,
        "{name}: exactly one external resource, got {ids:?}"
    );
    assert_eq!(
        external_name(&got).as_deref(),
        Some(ids[0].as_str()),
        "{name}: name recorded"
    );
    assert!(has_finalizer(&got), "{name}: finalizer present");
    assert!(
        has_condition(&got, READY, ConditionStatus::True, REASON_AVAILABLE),
        "{name}: ready: {:?}",
        got.status
    );
}

#[tokio::test]
async fn kubernetes_write_lost_at_each_step_of_a_create() {
    let h = WidgetEnv::start().await;
    // Write 1 = finalizer, 2 = external name, 3 = status (see lifecycle test).
    for step in 1..=3u32 {
        for fault in [WriteFault::Before, WriteFault::After] {
            let name = format!(
                "k{step}-{}",
                if fault == WriteFault::Before {
                    "before"
                } else {
                    "after"
                }
            );
            let w = h.create(&widget(&name, 1)).await;
            let plan = Arc::new(Mutex::new(WritePlan {
                fail_at: Some((step, fault)),
                ..WritePlan::default()
            }));
            let crashing = h.faulty_reconciler(plan.clone());
            let result = crashing.reconcile(&h.latest(&w).await).await;
            assert!(
                result.is_err(),
                "{name}: the injected fault surfaces as an error"
            );
            recover_and_check(&h, &name).await;
        }
    }
    h.shutdown().await;
}

#[tokio::test]
async fn reconcile_killed_after_create_is_adopted_by_uid() {
    let h = WidgetEnv::start().await;
    let w = h.create(&widget("killed", 1)).await;
    h.cloud.lock().hang_after = Some("create");
    let crashing = h.reconciler();
    let outcome = tokio::time::timeout(
        Duration::from_millis(500),
        crashing.reconcile(&h.latest(&w).await),
    )
    .await;
    assert!(outcome.is_err(), "the reconcile was killed inside create");
    drop(crashing);
    h.cloud.lock().hang_after = None;
    assert_eq!(
        resources_for(&h, &w).len(),
        1,
        "the create reached the cloud"
    );
    assert_eq!(
        external_name(&h.get("killed").await),
        None,
        "the name was never saved"
    );

    recover_and_check(&h, "killed").await;
    assert_eq!(h.cloud.calls("create"), 1, "adopted, not created again");
    assert!(
        h.event_reasons("killed")
            .await
            .contains(&"AdoptedExternalResource".to_owned())
    );
    h.shutdown().await;
}

#[tokio::test]
async fn lost_create_response_is_adopted() {
    let h = WidgetEnv::start().await;
    let w = h.create(&widget("lost", 1)).await;
    h.cloud.fail_next(
        "create",
        Fault {
            reason: "RequestTimeout",
            retry: ferroplane_runtime::RetryClass::Backoff,
            after_effect: true,
        },
    );
    let err = h
        .reconciler()
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("response lost");
    assert_eq!(err.reason(), "RequestTimeout");
    recover_and_check(&h, "lost").await;
    assert_eq!(h.cloud.calls("create"), 1);
    h.shutdown().await;
}

#[tokio::test]
async fn idempotency_key_prevents_a_duplicate_when_the_search_cannot_see_it_yet() {
    let h = WidgetEnv::start().await;
    let w = h.create(&widget("blind", 1)).await;
    {
        let mut st = h.cloud.lock();
        st.hang_after = Some("create");
        st.blind_search = true;
    }
    let outcome = tokio::time::timeout(
        Duration::from_millis(500),
        h.reconciler().reconcile(&h.latest(&w).await),
    )
    .await;
    assert!(outcome.is_err(), "killed inside create");
    h.cloud.lock().hang_after = None;

    // The search by tag misses it, so the framework creates again — with the same token.
    recover_and_check(&h, "blind").await;
    assert_eq!(h.cloud.calls("create"), 2, "a second create was sent");
    assert_eq!(
        resources_for(&h, &w).len(),
        1,
        "the cloud deduplicated it by token"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn crash_during_delete_is_finished_by_the_next_reconcile() {
    let h = WidgetEnv::start().await;
    let w = h.create(&widget("del", 1)).await;
    let r = h.reconciler();
    r.reconcile(&h.latest(&w).await).await.expect("create");
    h.widgets()
        .delete("del", &DeleteParams::default())
        .await
        .expect("delete");
    h.cloud.lock().hang_after = Some("delete");
    let outcome =
        tokio::time::timeout(Duration::from_millis(500), r.reconcile(&h.latest(&w).await)).await;
    assert!(outcome.is_err(), "killed inside delete");
    h.cloud.lock().hang_after = None;
    assert!(
        h.get_opt("del").await.is_some_and(|w| has_finalizer(&w)),
        "still guarded"
    );

    h.reconciler()
        .reconcile(&h.latest(&w).await)
        .await
        .expect("finish deletion");
    assert!(h.get_opt("del").await.is_none());
    assert!(resources_for(&h, &w).is_empty());
    h.shutdown().await;
}

#[tokio::test]
async fn finalizer_write_lost_during_delete_is_retried() {
    let h = WidgetEnv::start().await;
    let w = h.create(&widget("fin", 1)).await;
    h.reconciler()
        .reconcile(&h.latest(&w).await)
        .await
        .expect("create");
    h.widgets()
        .delete("fin", &DeleteParams::default())
        .await
        .expect("delete");
    // Writes during deletion: 1 = status (Deleting), 2 = finalizer removal.
    let plan = Arc::new(Mutex::new(WritePlan {
        fail_at: Some((2, WriteFault::Before)),
        ..WritePlan::default()
    }));
    let err = h
        .faulty_reconciler(plan)
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("finalizer write lost");
    assert!(err.message().contains("finalizer"), "{err}");
    assert!(
        resources_for(&h, &w).is_empty(),
        "external resource already deleted"
    );
    assert!(
        h.get_opt("fin").await.is_some(),
        "object kept until the finalizer write lands"
    );
    h.reconciler()
        .reconcile(&h.latest(&w).await)
        .await
        .expect("retry");
    assert!(h.get_opt("fin").await.is_none());
    h.shutdown().await;
}
