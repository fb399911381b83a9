//! Crossplane's annotations on any kind, through the runtime: `crossplane.io/paused`,
//! `crossplane.io/external-name` and `crossplane.io/reconcile-requested-at` act as the
//! `ferroplane.io/` ones; ferroplane writes the external name under both keys; the
//! `ferroplane.io/` value wins a disagreement, which is reported once.

use std::time::Duration;

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::{
    CROSSPLANE_EXTERNAL_NAME, CROSSPLANE_PAUSED, CROSSPLANE_RECONCILE_REQUESTED_AT, EXTERNAL_NAME,
    REASON_RECONCILE_PAUSED, RECONCILE_REQUESTED_AT, SYNCED,
};
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, RuntimeConfig};
use ferroplane_testkit::Controllers;
use ferroplane_testkit::conditions::condition;
use ferroplane_testkit::widget::*;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

const CONFLICTING_ANNOTATIONS: &str = "ConflictingAnnotations";

async fn annotate(h: &WidgetEnv, name: &str, key: &str, value: &str) {
    h.widgets()
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {key: value}}})),
        )
        .await
        .expect("patched");
}

fn annotation<'a>(w: &'a Widget, key: &str) -> Option<&'a str> {
    w.annotations().get(key).map(String::as_str)
}

fn handled(w: &Widget) -> Option<&str> {
    w.status.as_ref()?.last_handled_reconcile_at.as_deref()
}

#[tokio::test]
async fn a_created_resource_is_named_under_both_keys() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("both", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("created");
    let (id, _) = h.cloud.only_resource();
    let got = h.get("both").await;
    assert_eq!(annotation(&got, EXTERNAL_NAME), Some(id.as_str()));
    assert_eq!(
        annotation(&got, CROSSPLANE_EXTERNAL_NAME),
        Some(id.as_str())
    );
    h.shutdown().await;
}

#[tokio::test]
async fn crossplane_paused_pauses_and_says_which_annotation() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("xp-paused", 1);
    w.metadata.annotations = Some([(CROSSPLANE_PAUSED.to_owned(), "true".to_owned())].into());
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("paused");
    assert_eq!(h.cloud.lock().calls.len(), 0, "nothing reaches the cloud");
    let got = h.get("xp-paused").await;
    let synced = condition(&got, SYNCED).expect("Synced");
    assert_eq!(synced.status, ConditionStatus::False);
    assert_eq!(synced.reason, REASON_RECONCILE_PAUSED);
    assert!(
        synced.message.contains(CROSSPLANE_PAUSED),
        "{}",
        synced.message
    );

    // A value not understood is refused under Crossplane's key as under ours.
    annotate(&h, "xp-paused", CROSSPLANE_PAUSED, "yes").await;
    r.reconcile(&h.latest(&w).await).await.expect("left alone");
    let got = h.get("xp-paused").await;
    let synced = condition(&got, SYNCED).expect("Synced");
    assert_eq!(synced.reason, "InvalidAnnotation");
    assert!(
        synced.message.contains(CROSSPLANE_PAUSED),
        "{}",
        synced.message
    );
    assert_eq!(h.cloud.lock().calls.len(), 0);

    annotate(&h, "xp-paused", CROSSPLANE_PAUSED, "false").await;
    r.reconcile(&h.latest(&w).await).await.expect("resumed");
    assert_eq!(h.cloud.count(), 1);
    h.shutdown().await;
}

#[tokio::test]
async fn crossplane_external_name_imports_and_gets_ours_beside_it() {
    let h = WidgetEnv::start().await;
    h.cloud.lock().assigns_names = true;
    h.cloud.insert("w-made-by-hand", 3);
    let r = h.reconciler();
    let mut w = widget("xp-import", 3);
    w.metadata.annotations = Some(
        [(
            CROSSPLANE_EXTERNAL_NAME.to_owned(),
            "w-made-by-hand".to_owned(),
        )]
        .into(),
    );
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("imported");
    assert_eq!(h.cloud.calls("create"), 0, "imported, not created");
    assert_eq!(h.cloud.count(), 1);
    let got = h.get("xp-import").await;
    assert_eq!(annotation(&got, EXTERNAL_NAME), Some("w-made-by-hand"));
    assert_eq!(
        annotation(&got, CROSSPLANE_EXTERNAL_NAME),
        Some("w-made-by-hand")
    );
    h.shutdown().await;
}

#[tokio::test]
async fn ours_wins_a_disagreement_which_is_reported_once() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("split", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("created");
    let (id, _) = h.cloud.only_resource();

    annotate(&h, "split", CROSSPLANE_EXTERNAL_NAME, "w-someone-elses").await;
    for _ in 0..2 {
        r.reconcile(&h.latest(&w).await).await.expect("reconciled");
    }
    assert_eq!(h.cloud.calls("create"), 1, "no second resource");
    let got = h.get("split").await;
    assert_eq!(annotation(&got, EXTERNAL_NAME), Some(id.as_str()));
    assert_eq!(
        annotation(&got, CROSSPLANE_EXTERNAL_NAME),
        Some("w-someone-elses"),
        "the user's value is reported, not overwritten"
    );
    let synced = condition(&got, SYNCED).expect("Synced");
    assert_eq!(synced.status, ConditionStatus::True, "{synced:?}");
    assert!(
        synced.message.contains("conflicting annotations")
            && synced.message.contains("w-someone-elses"),
        "{}",
        synced.message
    );
    let warnings = h
        .event_reasons("split")
        .await
        .into_iter()
        .filter(|r| r == CONFLICTING_ANNOTATIONS)
        .count();
    assert_eq!(warnings, 1, "one Warning for one disagreement");
    h.shutdown().await;
}

#[tokio::test]
async fn a_reconcile_request_is_echoed_in_status_under_either_key() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("asked", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("created");
    assert_eq!(handled(&h.get("asked").await), None);

    annotate(&h, "asked", CROSSPLANE_RECONCILE_REQUESTED_AT, "t1").await;
    r.reconcile(&h.latest(&w).await).await.expect("reconciled");
    assert_eq!(handled(&h.get("asked").await), Some("t1"));

    annotate(&h, "asked", RECONCILE_REQUESTED_AT, "t2").await;
    r.reconcile(&h.latest(&w).await).await.expect("reconciled");
    assert_eq!(handled(&h.get("asked").await), Some("t2"), "ours wins");
    h.shutdown().await;
}

/// The controller, polling rarely (60 s): a new token alone brings the reconcile that echoes it.
#[tokio::test]
async fn a_new_token_reconciles_at_once() {
    let h = WidgetEnv::start().await;
    let runtime = Runtime::new(
        h.client.clone(),
        RuntimeConfig {
            rate_limit: 0.0,
            controller: ControllerConfig {
                concurrency: 2,
                requeue: fast_policy(),
            },
            ..RuntimeConfig::default()
        },
    );
    let controller = ManagedController::new(
        &runtime,
        Api::<Widget>::namespaced(h.client.clone(), NS),
        FakeConnector::new(h.cloud.clone(), h.client.clone()),
    );
    let controllers = Controllers::spawn(runtime, |_, shutdown| async move {
        controller.run(shutdown.cancelled_owned()).await;
        Ok(())
    });
    h.create(&widget("poked", 1)).await;
    let synced = |w: Option<&Widget>| {
        w.and_then(|w| condition(w, SYNCED))
            .is_some_and(|c| c.status == ConditionStatus::True)
    };
    h.wait_for("poked", Duration::from_secs(10), synced).await;
    for token in ["2026-11-29T10:00:00Z", "2026-11-29T10:00:01Z"] {
        annotate(&h, "poked", CROSSPLANE_RECONCILE_REQUESTED_AT, token).await;
        h.wait_for("poked", Duration::from_secs(10), |w| {
            w.and_then(handled) == Some(token)
        })
        .await;
    }
    controllers.stop().await;
    h.shutdown().await;
}
