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

const EXTERNAL_RESOURCE_NOT_FOUND: &str = "ExternalResourceNotFound";

fn refused_as_not_found(w: &Widget, name: &str) {
    let synced = condition(w, SYNCED).expect("Synced");
    assert_eq!(synced.status, ConditionStatus::False);
    assert_eq!(synced.reason, EXTERNAL_RESOURCE_NOT_FOUND, "{synced:?}");
    assert!(
        synced.message.contains(name)
            && synced
                .message
                .contains("remove the ferroplane.io/external-name annotation"),
        "{}",
        synced.message
    );
}

#[tokio::test]
async fn an_imported_name_that_does_not_exist_is_an_error_never_a_create() {
    let h = WidgetEnv::start().await;
    h.cloud.lock().assigns_names = true;
    let r = h.reconciler();
    let mut w = widget("imported", 1);
    w.metadata.annotations = Some(
        [(
            "ferroplane.io/external-name".to_owned(),
            "w-doesnotexist".to_owned(),
        )]
        .into(),
    );
    let w = h.create(&w).await;
    for _ in 0..2 {
        let err = r.reconcile(&h.latest(&w).await).await.expect_err("refused");
        assert_eq!(err.reason(), EXTERNAL_RESOURCE_NOT_FOUND);
    }
    assert_eq!(h.cloud.calls("create"), 0, "nothing was created");
    assert_eq!(h.cloud.count(), 0);
    let got = h.get("imported").await;
    refused_as_not_found(&got, "w-doesnotexist");
    assert!(
        h.event_reasons("imported")
            .await
            .iter()
            .any(|r| r == "CannotObserveExternalResource"),
        "a Warning event says so"
    );

    // Removing the annotation is the way to ask for a new resource.
    annotate(&h, "imported", "ferroplane.io/external-name", "").await;
    r.reconcile(&h.latest(&w).await).await.expect("created");
    assert_eq!(h.cloud.count(), 1);
    h.shutdown().await;
}

#[tokio::test]
async fn a_created_resource_deleted_behind_ferroplanes_back_is_not_created_again() {
    let h = WidgetEnv::start().await;
    h.cloud.lock().assigns_names = true;
    let r = h.reconciler();
    let w = h.create(&widget("made", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("created");
    let (id, _) = h.cloud.only_resource();
    h.cloud.lock().resources.remove(&id);
    r.reconcile(&h.latest(&w).await).await.expect_err("refused");
    assert_eq!(h.cloud.calls("create"), 1, "no second create");
    refused_as_not_found(&h.get("made").await, &id);
    h.shutdown().await;
}
