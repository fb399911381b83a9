//! Status after a step that fails once the resource was observed (issue 32, defect 7): an
//! update the cloud refuses, or a connection Secret whose name another Secret holds, still
//! leaves the status the observation describes (`Ready`, `status.atProvider`) beside
//! `Synced=False` with the failure. `Ready` never outlives what it describes. And what only a
//! create returns is never lost to a connection Secret that cannot be written (defect 3).

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

/// A Secret named `name` that no widget controls.
fn someone_elses_secret(name: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        string_data: Some([("someone".to_owned(), "else's".to_owned())].into()),
        ..Secret::default()
    }
}

fn password_in(secret: Option<&Secret>) -> Option<String> {
    secret
        .and_then(|s| s.data.as_ref())
        .and_then(|d| d.get("password"))
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
}

/// Issue 32, defects 3 and 7: the connection Secret's name is taken by another Secret right
/// after the create. The status still shows what was observed, but the object is not Ready while
/// what only the create returned (the widget's password) is not stored; it is kept and written
/// once the name is free, never lost.
#[tokio::test]
async fn a_refused_connection_secret_still_shows_what_was_observed() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let h = WidgetEnv::start().await;
    let connector = h.connector();
    let r = ferroplane_runtime::Reconciler::new(&h.runtime(), connector.clone(), fast_policy());
    let secrets: Api<Secret> = Api::namespaced(h.client.clone(), NS);
    // The first look right after the create is when another Secret takes the name.
    let looks = Arc::new(AtomicUsize::new(0));
    let taker = secrets.clone();
    *connector.on_observe.lock().expect("hook") = Some(Box::new(move || {
        let look = looks.fetch_add(1, Ordering::SeqCst);
        let secrets = taker.clone();
        Box::pin(async move {
            if look == 1 {
                secrets
                    .create(&PostParams::default(), &someone_elses_secret("t-conn"))
                    .await
                    .expect("Secret created");
            }
        })
    }));
    let mut w = widget("t", 3);
    w.spec.write_connection_secret_to_ref = Some(LocalSecretReference {
        name: "t-conn".into(),
    });
    let w = h.create(&w).await;

    // Right after the create, and at a later reconcile: the resource runs, status says so, and
    // Ready says the password is not stored yet.
    for step in ["create", "steady"] {
        let err = r
            .reconcile(&h.latest(&w).await)
            .await
            .expect_err("the Secret is refused");
        assert_eq!(err.reason(), CONNECTION_SECRET_NOT_CONTROLLED, "{step}");
        let after = h.get("t").await;
        let ready = condition(&after, READY).expect("Ready");
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            (ConditionStatus::False, REASON_UNAVAILABLE),
            "{step}: {ready:?}"
        );
        assert!(ready.message.contains("password"), "{step}: {ready:?}");
        assert!(!ready.message.contains("s3cret"), "{step}: {ready:?}");
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

    // The name freed: the password the create returned is written, and the object is Ready.
    secrets
        .delete("t-conn", &Default::default())
        .await
        .expect("deleted");
    r.reconcile(&h.latest(&w).await).await.expect("published");
    let after = h.get("t").await;
    assert!(has_condition(
        &after,
        READY,
        ConditionStatus::True,
        REASON_AVAILABLE
    ));
    let written = secrets.get_opt("t-conn").await.expect("read");
    assert_eq!(password_in(written.as_ref()).as_deref(), Some("s3cret"));
    assert_eq!(h.cloud.calls("create"), 1);
    h.shutdown().await;
}

/// Issue 32, defect 3: a create whose connection Secret's name is taken would return a secret
/// (a generated private key) with nowhere to go; nothing is created until the name is free.
#[tokio::test]
async fn nothing_is_created_while_the_connection_secret_name_is_taken() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let secrets: Api<Secret> = Api::namespaced(h.client.clone(), NS);
    secrets
        .create(&PostParams::default(), &someone_elses_secret("k-conn"))
        .await
        .expect("Secret created");
    let mut w = widget("k", 1);
    w.spec.write_connection_secret_to_ref = Some(LocalSecretReference {
        name: "k-conn".into(),
    });
    let w = h.create(&w).await;
    let err = r.reconcile(&h.latest(&w).await).await.expect_err("refused");
    assert_eq!(err.reason(), CONNECTION_SECRET_NOT_CONTROLLED);
    assert!(err.message().contains("nothing is created"), "{err}");
    assert_eq!(h.cloud.calls("create"), 0);
    assert_eq!(h.cloud.count(), 0);

    secrets
        .delete("k-conn", &Default::default())
        .await
        .expect("deleted");
    r.reconcile(&h.latest(&w).await).await.expect("created");
    assert_eq!(h.cloud.calls("create"), 1);
    let written = secrets.get_opt("k-conn").await.expect("read");
    assert_eq!(password_in(written.as_ref()).as_deref(), Some("s3cret"));
    h.shutdown().await;
}
