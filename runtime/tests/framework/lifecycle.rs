//! The reconcile against the sandbox API server and the fake cloud, one step at a time:
//! create, observe, late-init, update, drift, pause, import, orphan, delete, connection Secret,
//! and the number of Kubernetes writes each costs.

use ferroplane_apis::common::names::{
    READY, REASON_AVAILABLE, REASON_CREATING, REASON_RECONCILE_PAUSED, REASON_RECONCILE_SUCCESS,
    SYNCED,
};
use ferroplane_apis::common::{
    ConditionStatus, DeletionPolicy, LocalSecretReference, ManagementAction,
};
use ferroplane_testkit::conditions::{condition, external_name, has_condition, has_finalizer};
use ferroplane_testkit::widget::*;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

async fn patch(h: &WidgetEnv, name: &str, body: serde_json::Value) {
    h.widgets()
        .patch(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .expect("patched");
}

#[tokio::test]
async fn create_costs_three_writes_then_observe_settles_and_steady_state_writes_nothing() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("a", 1)).await;
    h.sandbox().reset_writes();

    // First reconcile: finalizer; external name together with the late-initialized zone (the
    // new resource is observed right away); status Ready with atProvider. Three writes in all.
    let first = h.latest(&w).await;
    r.reconcile(&first).await.expect("create reconcile");
    assert_eq!(h.widget_writes(), 3, "writes: {:?}", h.sandbox().writes());
    let (id, res) = h.cloud.only_resource();
    let w = h.get("a").await;
    assert_eq!(external_name(&w).as_deref(), Some(id.as_str()));
    assert!(has_finalizer(&w));
    assert_eq!(
        w.spec.for_provider.zone.as_deref(),
        Some("zone-a"),
        "late-initialized in the same write as the name"
    );
    assert!(has_condition(
        &w,
        READY,
        ConditionStatus::True,
        REASON_AVAILABLE
    ));
    assert!(has_condition(
        &w,
        SYNCED,
        ConditionStatus::True,
        REASON_RECONCILE_SUCCESS
    ));
    assert_eq!(
        res.uid,
        w.metadata.uid.clone().expect("uid"),
        "resource tagged with the object's UID"
    );
    // One event tells both: the create and the late-initialized fields.
    let events = h.events("a").await;
    assert!(
        events
            .iter()
            .any(|(reason, note)| reason == "CreatedExternalResource"
                && note.contains(&id)
                && note.contains(
                    "filled unset spec fields from the external resource: forProvider.zone"
                )),
        "{events:?}"
    );
    let status = w.status.clone().expect("status");
    assert_eq!(
        status.at_provider.expect("atProvider").id.as_deref(),
        Some(id.as_str())
    );
    assert_eq!(status.observed_generation, w.metadata.generation);
    let ready_time = condition(&w, READY)
        .expect("ready")
        .last_transition_time
        .clone();

    // The next reconcile finds nothing to write, even when the cache still hands it the
    // version from before its own writes (it reads the object instead of conflicting).
    h.sandbox().reset_writes();
    r.reconcile(&first)
        .await
        .expect("observe reconcile on a lagging cache");
    assert_eq!(h.widget_writes(), 0, "writes: {:?}", h.sandbox().writes());
    r.reconcile(&h.latest(&w).await)
        .await
        .expect("observe reconcile");
    assert_eq!(h.widget_writes(), 0, "writes: {:?}", h.sandbox().writes());

    // Steady state: nothing written, no new create.
    h.sandbox().reset_writes();
    for _ in 0..3 {
        r.reconcile(&h.latest(&w).await)
            .await
            .expect("steady reconcile");
    }
    assert_eq!(h.widget_writes(), 0, "writes: {:?}", h.sandbox().writes());
    assert_eq!(h.cloud.calls("create"), 1);
    let w = h.get("a").await;
    assert_eq!(
        condition(&w, READY).expect("ready").last_transition_time,
        ready_time
    );
    h.shutdown().await;
}

#[tokio::test]
async fn spec_change_and_drift_are_updated() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("b", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    r.reconcile(&h.latest(&w).await).await.expect("settle");

    // Spec change → update, with an event naming the diff.
    patch(&h, "b", json!({"spec": {"forProvider": {"size": 3}}})).await;
    r.reconcile(&h.latest(&w).await).await.expect("update");
    assert_eq!(h.cloud.only_resource().1.size, 3);
    let w2 = h.get("b").await;
    assert_eq!(
        w2.status.as_ref().and_then(|s| s.observed_generation),
        w2.metadata.generation
    );
    assert!(
        h.event_reasons("b")
            .await
            .contains(&"UpdatedExternalResource".to_owned())
    );

    // Drift made outside ferroplane is reverted.
    let (id, _) = h.cloud.only_resource();
    h.cloud.lock().resources.get_mut(&id).expect("res").size = 7;
    r.reconcile(&h.latest(&w).await)
        .await
        .expect("revert drift");
    assert_eq!(h.cloud.only_resource().1.size, 3);
    assert_eq!(h.cloud.calls("update"), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn paused_objects_are_left_alone_until_resumed() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("p", 1);
    w.metadata.annotations = Some([("ferroplane.io/paused".to_owned(), "true".to_owned())].into());
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await)
        .await
        .expect("paused reconcile");
    let got = h.get("p").await;
    assert!(has_condition(
        &got,
        SYNCED,
        ConditionStatus::False,
        REASON_RECONCILE_PAUSED
    ));
    assert_eq!(
        h.cloud.lock().calls.len(),
        0,
        "no external calls while paused"
    );
    assert!(!has_finalizer(&got));

    patch(
        &h,
        "p",
        json!({"metadata": {"annotations": {"ferroplane.io/paused": null}}}),
    )
    .await;
    r.reconcile(&h.latest(&w).await).await.expect("resumed");
    assert_eq!(h.cloud.count(), 1);
    h.shutdown().await;
}

#[tokio::test]
async fn observe_only_import_reports_but_never_changes_or_deletes() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    h.cloud.insert("w-existing", 5);
    let mut w = widget("imp", 2);
    w.spec.management_policies = vec![ManagementAction::Observe];
    w.metadata.annotations = Some(
        [(
            "ferroplane.io/external-name".to_owned(),
            "w-existing".to_owned(),
        )]
        .into(),
    );
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("import");
    let got = h.get("imp").await;
    assert!(has_condition(
        &got,
        READY,
        ConditionStatus::True,
        REASON_AVAILABLE
    ));
    let synced = condition(&got, SYNCED).expect("synced");
    assert_eq!(synced.status, ConditionStatus::True);
    assert!(
        synced.message.contains("do not allow Update"),
        "{}",
        synced.message
    );
    assert_eq!(
        got.status
            .as_ref()
            .and_then(|s| s.at_provider.as_ref())
            .and_then(|a| a.size),
        Some(5)
    );
    assert_eq!(
        got.spec.for_provider.zone, None,
        "no late-init without LateInitialize"
    );
    assert_eq!(h.cloud.calls("update") + h.cloud.calls("create"), 0);

    h.widgets()
        .delete("imp", &DeleteParams::default())
        .await
        .expect("delete");
    r.reconcile(&h.latest(&w).await)
        .await
        .expect("orphan on delete");
    assert!(h.get_opt("imp").await.is_none(), "object gone");
    assert_eq!(h.cloud.count(), 1, "imported resource kept");
    assert_eq!(h.cloud.calls("delete"), 0);
    h.shutdown().await;
}

#[tokio::test]
async fn observe_only_without_resource_reports_not_found() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("nf", 2);
    w.spec.management_policies = vec![ManagementAction::Observe];
    w.metadata.annotations = Some(
        [(
            "ferroplane.io/external-name".to_owned(),
            "w-nope".to_owned(),
        )]
        .into(),
    );
    let w = h.create(&w).await;
    let err = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("not found");
    assert_eq!(err.reason(), "ExternalResourceNotFound");
    let got = h.get("nf").await;
    let synced = condition(&got, SYNCED).expect("synced");
    assert_eq!(synced.reason, "ExternalResourceNotFound");
    assert!(synced.message.contains("w-nope"), "{}", synced.message);
    assert_eq!(h.cloud.calls("create"), 0);
    h.shutdown().await;
}

#[tokio::test]
async fn unsupported_policy_combination_is_a_clear_condition() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("bad", 1);
    w.spec.management_policies = vec![ManagementAction::Observe, ManagementAction::Update];
    let w = h.create(&w).await;
    let err = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("unsupported");
    assert_eq!(err.reason(), "UnsupportedManagementPolicies");
    let got = h.get("bad").await;
    let synced = condition(&got, SYNCED).expect("synced");
    assert!(
        synced.message.contains("not a supported combination"),
        "{}",
        synced.message
    );
    assert!(
        synced.message.contains(r#"["Observe", "Update"]"#),
        "{}",
        synced.message
    );
    assert_eq!(h.cloud.lock().calls.len(), 0);
    assert!(
        h.event_reasons("bad")
            .await
            .contains(&"CannotResolveManagementPolicies".to_owned())
    );
    h.shutdown().await;
}

#[tokio::test]
async fn orphan_deletion_keeps_the_external_resource() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("o", 1);
    w.spec.deletion_policy = DeletionPolicy::Orphan;
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    h.widgets()
        .delete("o", &DeleteParams::default())
        .await
        .expect("delete");
    r.reconcile(&h.latest(&w).await).await.expect("orphan");
    assert!(h.get_opt("o").await.is_none());
    assert_eq!(h.cloud.count(), 1);
    assert_eq!(h.cloud.calls("delete"), 0);
    h.shutdown().await;
}

#[tokio::test]
async fn delete_waits_until_observe_confirms_gone() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("d", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    h.cloud.lock().deleting_observes = 1;
    h.widgets()
        .delete("d", &DeleteParams::default())
        .await
        .expect("delete");

    // Deletion in progress: the finalizer stays while the resource is visible.
    for _ in 0..2 {
        r.reconcile(&h.latest(&w).await).await.expect("deleting");
        let got = h.get("d").await;
        assert!(
            has_finalizer(&got),
            "finalizer kept while the resource exists"
        );
        assert!(has_condition(
            &got,
            READY,
            ConditionStatus::False,
            "Deleting"
        ));
    }
    r.reconcile(&h.latest(&w).await).await.expect("gone");
    assert!(
        h.get_opt("d").await.is_none(),
        "finalizer removed once gone"
    );
    assert_eq!(h.cloud.count(), 0);
    assert!(
        h.event_reasons("d")
            .await
            .contains(&"DeletedExternalResource".to_owned())
    );
    h.shutdown().await;
}

#[tokio::test]
async fn connection_secret_is_owned_and_rewritten_only_on_change() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("c", 1);
    w.spec.write_connection_secret_to_ref = Some(LocalSecretReference {
        name: "c-conn".into(),
    });
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    r.reconcile(&h.latest(&w).await).await.expect("observe");
    let secrets: Api<Secret> = Api::namespaced(h.client.clone(), NS);
    let s = secrets.get("c-conn").await.expect("secret");
    let owner = &s.metadata.owner_references.as_ref().expect("owners")[0];
    assert_eq!(owner.kind, "Widget");
    assert_eq!(owner.controller, Some(true));
    let data = s.data.expect("data");
    let (id, _) = h.cloud.only_resource();
    assert_eq!(
        data["endpoint"].0,
        format!("{id}.widgets.test:1").into_bytes()
    );
    let rv = s.metadata.resource_version.clone();

    r.reconcile(&h.latest(&w).await).await.expect("steady");
    assert_eq!(
        secrets
            .get("c-conn")
            .await
            .expect("secret")
            .metadata
            .resource_version,
        rv,
        "not rewritten"
    );

    patch(&h, "c", json!({"spec": {"forProvider": {"size": 4}}})).await;
    r.reconcile(&h.latest(&w).await).await.expect("update");
    r.reconcile(&h.latest(&w).await).await.expect("observe");
    let data = secrets
        .get("c-conn")
        .await
        .expect("secret")
        .data
        .expect("data");
    assert_eq!(
        data["endpoint"].0,
        format!("{id}.widgets.test:4").into_bytes()
    );
    h.shutdown().await;
}

#[tokio::test]
async fn poll_interval_annotation_sets_the_requeue() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let mut w = widget("poll", 1);
    w.metadata.annotations =
        Some([("ferroplane.io/poll-interval".to_owned(), "30s".to_owned())].into());
    let w = h.create(&w).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    let action = r.reconcile(&h.latest(&w).await).await.expect("observe");
    // The next slot of the object's phase on the 30 s poll grid: 0.9 to 1.9 intervals away.
    let after = requeue_seconds(&action);
    assert!((27.0..57.0).contains(&after), "{action:?}");

    patch(
        &h,
        "poll",
        json!({"metadata": {"annotations": {"ferroplane.io/poll-interval": "often"}}}),
    )
    .await;
    let action = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect("bad annotation still reconciles");
    let after = requeue_seconds(&action);
    assert!((54.0..114.0).contains(&after), "{action:?}");
    let got = h.get("poll").await;
    assert!(
        condition(&got, SYNCED)
            .expect("synced")
            .message
            .contains("poll-interval")
    );
    h.shutdown().await;
}

#[tokio::test]
async fn in_transition_requeues_fast() {
    let h = WidgetEnv::start().await;
    h.cloud.lock().pending_observes = 2;
    let r = h.reconciler();
    let w = h.create(&widget("t", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    let action = r.reconcile(&h.latest(&w).await).await.expect("pending");
    assert_eq!(
        action,
        kube::runtime::controller::Action::requeue(fast_policy().transition_interval)
    );
    let got = h.get("t").await;
    assert!(has_condition(
        &got,
        READY,
        ConditionStatus::False,
        REASON_CREATING
    ));
    h.shutdown().await;
}

/// The requeue delay of an action in seconds (kube's `Action` shows it only through `Debug`,
/// e.g. `Action { requeue_after: Some(31.25s) }`).
fn requeue_seconds(action: &kube::runtime::controller::Action) -> f64 {
    let text = format!("{action:?}");
    let inner = text
        .split_once("Some(")
        .and_then(|(_, rest)| rest.split_once("s)"))
        .map(|(secs, _)| secs)
        .unwrap_or_else(|| panic!("no requeue in {text}"));
    inner
        .parse()
        .unwrap_or_else(|_| panic!("not whole seconds in {text}"))
}
