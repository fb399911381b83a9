//! Guards the runtime owns for every kind: a `ferroplane.io/paused` value that is not
//! understood keeps the object paused and says so, and an imported external name the cloud does
//! not know is an error, never a create.

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::conditions::{condition, has_finalizer};
use ferroplane_testkit::widget::*;
use kube::api::{Patch, PatchParams};
use serde_json::json;

const INVALID_ANNOTATION: &str = "InvalidAnnotation";

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

#[tokio::test]
async fn a_paused_value_not_understood_keeps_the_object_paused_and_says_so() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("p", 1);
    w.metadata.annotations = Some([("ferroplane.io/paused".to_owned(), "True".to_owned())].into());
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("reconcile");
    assert_eq!(
        h.cloud.lock().calls.len(),
        0,
        "nothing reaches the cloud while the value is not understood"
    );
    let got = h.get("p").await;
    assert!(!has_finalizer(&got));
    let synced = condition(&got, SYNCED).expect("Synced");
    assert_eq!(synced.status, ConditionStatus::False);
    assert_eq!(synced.reason, INVALID_ANNOTATION, "{synced:?}");
    assert!(
        synced.message.contains("\"True\"") && synced.message.contains("\"true\""),
        "{}",
        synced.message
    );
    let events = h.events("p").await;
    assert!(
        events
            .iter()
            .any(|(reason, note)| reason == INVALID_ANNOTATION && note.contains("\"false\"")),
        "a Warning event names the accepted values: {events:?}"
    );

    // "false" is understood: reconciliation resumes.
    annotate(&h, "p", "ferroplane.io/paused", "false").await;
    r.reconcile(&h.latest(&w).await).await.expect("resumed");
    assert_eq!(h.cloud.count(), 1);
    h.shutdown().await;
}
