//! Status after a step that fails once the resource was observed (issue 32, defect 7): an
//! update the cloud refuses, or a connection Secret whose name another Secret holds, still
//! leaves the status the observation describes (`Ready`, `status.atProvider`) beside
//! `Synced=False` with the failure. `Ready` never outlives what it describes.

use ferroplane_apis::common::names::{READY, REASON_AVAILABLE, REASON_UNAVAILABLE, SYNCED};
use ferroplane_apis::common::{ConditionStatus, LocalSecretReference};
use ferroplane_runtime::RetryClass;
use ferroplane_testkit::conditions::{condition, has_condition};
use ferroplane_testkit::widget::*;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;

const CONNECTION_SECRET_NOT_CONTROLLED: &str = "ConnectionSecretNotControlled";
const RECONCILE_ERROR: &str = "ReconcileError";

fn at_provider(w: &Widget) -> WidgetObservation {
    w.status
        .as_ref()
        .and_then(|s| s.at_provider.clone())
        .unwrap_or_default()
}

fn refused_update() -> Fault {
    Fault {
        reason: "ResizeRefused",
        retry: RetryClass::UntilSpecChanges,
        after_effect: false,
    }
}

#[tokio::test]
async fn an_update_that_fails_still_shows_what_was_observed() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("s", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    r.reconcile(&h.latest(&w).await).await.expect("settle");
    let settled = h.get("s").await;
    assert!(has_condition(
        &settled,
        READY,
        ConditionStatus::True,
        REASON_AVAILABLE
    ));
    assert_eq!(at_provider(&settled).state.as_deref(), Some("Running"));

    // Outside ferroplane the resource is being released and shrank; the user asks for a resize
    // the cloud refuses.
    let (id, _) = h.cloud.only_resource();
    {
        let mut cloud = h.cloud.lock();
        let res = cloud.resources.get_mut(&id).expect("resource");
        res.state = "Deleting".into();
        res.size = 5;
    }
    h.widgets()
        .patch(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"size": 2}}})),
        )
        .await
        .expect("resized");
    h.cloud.fail_next("update", refused_update());
    let err = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("the update is refused");
    assert_eq!(err.reason(), "ResizeRefused");

    let after = h.get("s").await;
    let ready = condition(&after, READY).expect("Ready");
    assert_eq!(
        (ready.status, ready.reason.as_str(), ready.message.as_str()),
        (ConditionStatus::False, REASON_UNAVAILABLE, "deleting"),
        "Ready is what the observation says, not what it was before"
    );
    assert_eq!(ready.observed_generation, after.metadata.generation);
    let observed = at_provider(&after);
    assert_eq!(
        (observed.state.as_deref(), observed.size),
        (Some("Deleting"), Some(5)),
        "status.atProvider is the observation's"
    );
    let synced = condition(&after, SYNCED).expect("Synced");
    assert_eq!(synced.status, ConditionStatus::False);
    assert_eq!(synced.reason, RECONCILE_ERROR);
    assert!(
        synced.message.contains("ResizeRefused"),
        "{}",
        synced.message
    );
    h.shutdown().await;
}

#[tokio::test]
async fn a_refused_connection_secret_still_shows_what_was_observed() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    // The Secret's name is taken by one the widget does not control.
    let secrets: Api<Secret> = Api::namespaced(h.client.clone(), NS);
    let taken = Secret {
        metadata: ObjectMeta {
            name: Some("t-conn".into()),
            ..ObjectMeta::default()
        },
        string_data: Some([("someone".to_owned(), "else's".to_owned())].into()),
        ..Secret::default()
    };
    secrets
        .create(&PostParams::default(), &taken)
        .await
        .expect("Secret created");
    let mut w = widget("t", 3);
    w.spec.write_connection_secret_to_ref = Some(LocalSecretReference {
        name: "t-conn".into(),
    });
    let w = h.create(&w).await;

    // Right after the create, and at every later reconcile: the resource runs, status says so.
    for step in ["create", "steady"] {
        let err = r
            .reconcile(&h.latest(&w).await)
            .await
            .expect_err("the Secret is refused");
        assert_eq!(err.reason(), CONNECTION_SECRET_NOT_CONTROLLED, "{step}");
        let after = h.get("t").await;
        assert!(
            has_condition(&after, READY, ConditionStatus::True, REASON_AVAILABLE),
            "{step}: Ready is the observation's: {:?}",
            condition(&after, READY)
        );
        let (id, _) = h.cloud.only_resource();
        let observed = at_provider(&after);
        assert_eq!(
            (
                observed.id.as_deref(),
                observed.size,
                observed.state.as_deref()
            ),
            (Some(id.as_str()), Some(3), Some("Running")),
            "{step}: status.atProvider is the observation's"
        );
        assert!(
            has_condition(
                &after,
                SYNCED,
                ConditionStatus::False,
                CONNECTION_SECRET_NOT_CONTROLLED
            ),
            "{step}: {:?}",
            condition(&after, SYNCED)
        );
    }
    assert_eq!(h.cloud.calls("create"), 1);
    h.shutdown().await;
}
