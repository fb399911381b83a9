//! The full controller (kube-runtime `Controller` + watches) against the sandbox: lifecycle,
//! requeue when a related ProviderConfig appears, watch restarts, error backoff, missing
//! credentials during deletion, and 409 conflicts on status writes.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_apis::common::names::{
    READY, REASON_AVAILABLE, REASON_RECONCILE_ERROR, REASON_RECONCILE_SUCCESS, SYNCED,
};
use ferroplane_apis::common::{ConditionStatus, ProviderConfigKind};
use ferroplane_runtime::related::provider_config_mapper;
use ferroplane_runtime::{ControllerConfig, ManagedController, RetryClass, Runtime, RuntimeConfig};
use ferroplane_testkit::conditions::{condition, has_condition, has_finalizer};
use ferroplane_testkit::faulty_client::{WritePlan, faulty_client};
use ferroplane_testkit::wait::Seen;
use ferroplane_testkit::widget::*;
use ferroplane_testkit::{Controllers, eventually};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use serde_json::json;

struct Running {
    controllers: Controllers,
    runtime: Runtime,
}

impl Running {
    async fn stop(self) {
        self.controllers.stop().await;
    }
}

/// Runs the Widget controller with `client`, watching ConfigMaps as its ProviderConfigs.
fn run_controller(h: &WidgetEnv, client: kube::Client, backoff_base: Duration) -> Running {
    let mut requeue = fast_policy();
    requeue.backoff_base = backoff_base;
    requeue.backoff_max = backoff_base * 4;
    let runtime = Runtime::new(
        client.clone(),
        RuntimeConfig {
            rate_limit: 0.0,
            controller: ControllerConfig {
                concurrency: 4,
                requeue,
            },
            ..RuntimeConfig::default()
        },
    );
    let controller = ManagedController::new(
        &runtime,
        Api::<Widget>::namespaced(client.clone(), NS),
        FakeConnector::new(h.cloud.clone(), client.clone()),
    )
    .watches_related(
        Api::<ConfigMap>::namespaced(client, NS),
        watcher::Config::default(),
        provider_config_mapper::<ConfigMap, Widget>(ProviderConfigKind::ProviderConfig),
    );
    let controllers = Controllers::spawn(runtime.clone(), |_, shutdown| async move {
        controller.run(shutdown.cancelled_owned()).await;
        Ok(())
    });
    Running {
        controllers,
        runtime,
    }
}

fn ready(w: Option<&Widget>) -> bool {
    w.is_some_and(|w| has_condition(w, READY, ConditionStatus::True, REASON_AVAILABLE))
}

#[tokio::test]
async fn controller_creates_updates_and_deletes() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let h = WidgetEnv::start().await;
    let running = run_controller(&h, h.client.clone(), Duration::from_millis(100));
    h.create(&widget("life", 1)).await;
    h.wait_for("life", Duration::from_secs(10), ready).await;
    let w = h.get("life").await;
    assert_eq!(w.spec.for_provider.zone.as_deref(), Some("zone-a"));

    h.widgets()
        .patch(
            "life",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"size": 2}}})),
        )
        .await
        .expect("patch");
    h.wait_for("life", Duration::from_secs(10), |w| {
        w.and_then(|w| w.status.as_ref()?.at_provider.as_ref()?.size) == Some(2)
    })
    .await;
    // Found up to date at size 2 (that observation wrote it), a second change is drift measured
    // from that observation (Crossplane's drift_seconds).
    h.widgets()
        .patch(
            "life",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"size": 3}}})),
        )
        .await
        .expect("patch");
    h.wait_for("life", Duration::from_secs(10), |w| {
        w.and_then(|w| w.status.as_ref()?.at_provider.as_ref()?.size) == Some(3)
    })
    .await;

    h.widgets()
        .delete("life", &DeleteParams::default())
        .await
        .expect("delete");
    h.wait_for("life", Duration::from_secs(10), |w| w.is_none())
        .await;
    assert_eq!(h.cloud.count(), 0);
    assert_eq!(h.cloud.calls("create"), 1);

    // The metrics are recorded just after the writes the test waited for (status, finalizer
    // removal): wait for them rather than read them once.
    let expected = [
        r#"ferroplane_reconciles_total{kind="Widget",result="success"}"#,
        r#"ferroplane_time_to_first_ready_seconds_count{kind="Widget"} 1"#,
        r#"ferroplane_time_to_delete_seconds_count{kind="Widget"} 1"#,
        // Crossplane's, beside ferroplane's own.
        r#"crossplane_managed_resource_first_time_to_reconcile_seconds_count{gvk="test.ferroplane.io/v1, Kind=Widget"} 1"#,
        r#"crossplane_managed_resource_first_time_to_readiness_seconds_count{gvk="test.ferroplane.io/v1, Kind=Widget"} 1"#,
        r#"crossplane_managed_resource_deletion_seconds_count{gvk="test.ferroplane.io/v1, Kind=Widget"} 1"#,
        r#"crossplane_managed_resource_drift_seconds_count{gvk="test.ferroplane.io/v1, Kind=Widget"} 1"#,
        r#"crossplane_managed_resource_exists{gvk="test.ferroplane.io/v1, Kind=Widget"} 0"#,
        r#"crossplane_managed_resource_ready{gvk="test.ferroplane.io/v1, Kind=Widget"} 0"#,
    ];
    eventually("the reconcile, first-ready and delete metrics")
        .within(Duration::from_secs(10))
        .until(|| {
            let metrics = running.runtime.metrics().encode();
            if expected.iter().all(|line| metrics.contains(line)) {
                Ok(())
            } else {
                Err(Seen(metrics))
            }
        })
        .await;
    running.stop().await;
    h.shutdown().await;
}

#[tokio::test]
async fn a_new_provider_config_requeues_the_objects_that_use_it() {
    let h = WidgetEnv::start().await;
    // Backoff far beyond the test's patience: only the related watch can bring the retry.
    let running = run_controller(&h, h.client.clone(), Duration::from_secs(300));
    let mut w = widget("waits", 1);
    w.spec.provider_config_ref.name = "late-cfg".into();
    h.create(&w).await;
    h.wait_for("waits", Duration::from_secs(10), |w| {
        w.and_then(|w| condition(w, SYNCED))
            .is_some_and(|c| c.message.contains("ProviderConfigNotFound"))
    })
    .await;
    assert_eq!(h.cloud.count(), 0);
    h.create_config("late-cfg").await;
    h.wait_for("waits", Duration::from_secs(10), ready).await;
    running.stop().await;
    h.shutdown().await;
}

#[tokio::test]
async fn controller_survives_watch_restarts() {
    let h = WidgetEnv::start().await;
    let plan = Arc::new(Mutex::new(WritePlan::default()));
    let generation = plan.lock().expect("plan").watch_generation.clone();
    let running = run_controller(
        &h,
        faulty_client(&h.cluster.url(), "widgets", plan.clone()),
        Duration::from_millis(100),
    );
    h.create(&widget("before", 1)).await;
    h.wait_for("before", Duration::from_secs(10), ready).await;

    // Drop every watch connection and refuse the next re-watches; meanwhile objects change.
    plan.lock().expect("plan").fail_watches = 3;
    generation.fetch_add(1, Ordering::SeqCst);
    h.create(&widget("during", 1)).await;
    h.widgets()
        .patch(
            "before",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"size": 5}}})),
        )
        .await
        .expect("patch");

    h.wait_for("during", Duration::from_secs(20), ready).await;
    h.wait_for("before", Duration::from_secs(20), |w| {
        w.and_then(|w| w.status.as_ref()?.at_provider.as_ref()?.size) == Some(5)
    })
    .await;
    assert_eq!(
        h.cloud.calls("create"),
        2,
        "one create per object across the restart"
    );
    assert_eq!(
        plan.lock().expect("plan").fail_watches,
        0,
        "the re-watches were refused"
    );
    running.stop().await;
    h.shutdown().await;
}

#[tokio::test]
async fn errors_back_off_exponentially_and_reset_on_success() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("flaky", 1)).await;
    let throttled = || Fault {
        reason: "Throttling",
        retry: RetryClass::Backoff,
        after_effect: false,
    };
    for _ in 0..3 {
        h.cloud.fail_next("create", throttled());
    }
    let mut delays = Vec::new();
    for _ in 0..3 {
        let err = r
            .reconcile(&h.latest(&w).await)
            .await
            .expect_err("throttled");
        assert_eq!(err.reason(), "Throttling");
        delays.push(r.error_action(&w, &err));
    }
    let ms = |n| Action::requeue(Duration::from_millis(n));
    assert_eq!(delays, vec![ms(100), ms(200), ms(400)]);
    let got = h.get("flaky").await;
    let synced = condition(&got, SYNCED).expect("synced");
    assert_eq!(synced.reason, REASON_RECONCILE_ERROR);
    assert!(
        synced.message.contains("cannot create external resource"),
        "{}",
        synced.message
    );
    assert!(synced.message.contains("Throttling"), "{}", synced.message);
    assert!(
        h.event_reasons("flaky")
            .await
            .contains(&"CannotCreateExternalResource".to_owned())
    );

    r.reconcile(&h.latest(&w).await).await.expect("recovers");
    let got = h.get("flaky").await;
    assert!(has_condition(
        &got,
        SYNCED,
        ConditionStatus::True,
        REASON_RECONCILE_SUCCESS
    ));
    h.cloud.fail_next("observe", throttled());
    let err = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("throttled again");
    assert_eq!(
        r.error_action(&w, &err),
        ms(100),
        "backoff reset after success"
    );

    // A terminal error waits for a spec change: retried only at the poll interval.
    h.cloud.fail_next(
        "observe",
        Fault {
            reason: "InvalidParameter",
            retry: RetryClass::UntilSpecChanges,
            after_effect: false,
        },
    );
    let err = r.reconcile(&h.latest(&w).await).await.expect_err("invalid");
    assert_eq!(
        r.error_action(&w, &err),
        Action::requeue(fast_policy().poll_interval)
    );
    h.shutdown().await;
}

#[tokio::test]
async fn deletion_without_credentials_reports_and_waits_instead_of_leaking() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let w = h.create(&widget("nocreds", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    h.delete_config("cfg").await;
    h.widgets()
        .delete("nocreds", &DeleteParams::default())
        .await
        .expect("delete");

    let err = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("cannot connect");
    assert_eq!(err.reason(), "ProviderConfigNotFound");
    assert_eq!(err.retry(), RetryClass::WaitForDependency);
    let got = h.get_opt("nocreds").await.expect("object kept");
    assert!(has_finalizer(&got));
    let synced = condition(&got, SYNCED).expect("synced");
    assert!(
        synced.message.contains("ProviderConfig cfg not found"),
        "{}",
        synced.message
    );
    assert!(
        h.event_reasons("nocreds")
            .await
            .contains(&"CannotConnectToProvider".to_owned())
    );
    assert_eq!(h.cloud.count(), 1, "external resource not forgotten");

    h.create_config("cfg").await;
    r.reconcile(&h.latest(&w).await).await.expect("deleted");
    assert!(h.get_opt("nocreds").await.is_none());
    assert_eq!(h.cloud.count(), 0);
    h.shutdown().await;
}

#[tokio::test]
async fn status_write_conflict_requeues_soon_without_reporting_an_error() {
    let h = WidgetEnv::start().await;
    let connector = h.connector();
    let r = ferroplane_runtime::Reconciler::new(&h.runtime(), connector.clone(), fast_policy());
    let w = h.create(&widget("race", 1)).await;
    r.reconcile(&h.latest(&w).await).await.expect("create");
    r.reconcile(&h.latest(&w).await).await.expect("settle");

    // The external resource changes (status must be written) and, while observe runs, someone
    // else updates the object: the status patch carries a stale resourceVersion.
    let (id, _) = h.cloud.only_resource();
    h.cloud.lock().resources.get_mut(&id).expect("res").zone = "zone-c".into();
    let api = h.widgets();
    *connector.on_observe.lock().expect("hook") = Some(Box::new(move || {
        let api = api.clone();
        Box::pin(async move {
            let body = json!({"metadata": {"labels": {"touched": "yes"}}});
            api.patch("race", &PatchParams::default(), &Patch::Merge(body))
                .await
                .expect("concurrent write");
        })
    }));
    let err = r
        .reconcile(&h.latest(&w).await)
        .await
        .expect_err("conflict");
    assert_eq!(err.reason(), "Conflict");
    assert_eq!(
        r.error_action(&w, &err),
        Action::requeue(Duration::from_millis(500))
    );
    let got = h.get("race").await;
    assert!(
        has_condition(
            &got,
            SYNCED,
            ConditionStatus::True,
            REASON_RECONCILE_SUCCESS
        ),
        "conflict is not a failure"
    );
    assert!(
        !h.event_reasons("race")
            .await
            .iter()
            .any(|r| r.starts_with("Cannot"))
    );

    *connector.on_observe.lock().expect("hook") = None;
    r.reconcile(&h.latest(&w).await)
        .await
        .expect("retry succeeds");
    let got = h.get("race").await;
    assert_eq!(
        got.status
            .as_ref()
            .and_then(|s| s.at_provider.as_ref()?.zone.clone())
            .as_deref(),
        Some("zone-c")
    );
    h.shutdown().await;
}

/// Widget sheds `atProvider` from the controller's cache (`observation_uncached`): a steady
/// object costs no status write however often it is observed, and an observation that lost a
/// field replaces the stored one whole (a merge patch made against the cache, which holds no
/// observation to compare with, could not remove the field).
#[tokio::test]
async fn a_shed_observation_is_written_only_when_it_changes_and_then_whole() {
    let h = WidgetEnv::start().await;
    let plan = Arc::new(Mutex::new(WritePlan::default()));
    let running = run_controller(
        &h,
        faulty_client(&h.cluster.url(), "widgets", plan.clone()),
        Duration::from_millis(100),
    );
    let mut w = widget("steady", 1);
    w.metadata.annotations =
        Some([("ferroplane.io/poll-interval".to_owned(), "100ms".to_owned())].into());
    h.create(&w).await;
    h.wait_for("steady", Duration::from_secs(10), ready).await;
    let writes = || plan.lock().unwrap_or_else(|p| p.into_inner()).writes;
    let observes = || h.cloud.calls("observe");
    // Three more observations: the two reconciles before the third ended, writes included.
    // The first three let the object settle; the next three must write nothing.
    let mut before = 0;
    for window in ["settling", "steady"] {
        before = writes();
        let seen = observes();
        eventually(format!("three more observations ({window})"))
            .within(Duration::from_secs(10))
            .until(|| observes() >= seen + 3)
            .await;
    }
    assert_eq!(
        writes(),
        before,
        "a steady observation is not written again"
    );

    let (id, _) = h.cloud.only_resource();
    h.cloud.lock().resources.get_mut(&id).expect("res").zone = String::new();
    h.wait_for("steady", Duration::from_secs(10), |w| {
        w.and_then(|w| w.status.as_ref()?.at_provider.as_ref())
            .is_some_and(|a| a.zone.is_none())
    })
    .await;
    let at = h.get("steady").await.status.and_then(|s| s.at_provider);
    let at = at.expect("atProvider");
    assert_eq!((at.size, at.state.as_deref()), (Some(1), Some("Running")));
    running.stop().await;
    h.shutdown().await;
}

#[tokio::test]
async fn pausing_and_resuming_through_the_watch() {
    let h = WidgetEnv::start().await;
    let running = run_controller(&h, h.client.clone(), Duration::from_millis(100));
    h.create(&widget("pz", 1)).await;
    h.wait_for("pz", Duration::from_secs(10), ready).await;

    let pause = json!({"metadata": {"annotations": {"ferroplane.io/paused": "true"}}});
    h.widgets()
        .patch("pz", &PatchParams::default(), &Patch::Merge(pause))
        .await
        .expect("pause");
    h.wait_for("pz", Duration::from_secs(10), |w| {
        w.is_some_and(|w| has_condition(w, SYNCED, ConditionStatus::False, "ReconcilePaused"))
    })
    .await;
    let size = json!({"spec": {"forProvider": {"size": 9}}});
    let edited = h
        .widgets()
        .patch("pz", &PatchParams::default(), &Patch::Merge(size))
        .await
        .expect("edit");
    // Progress barrier: the controller has reconciled the edited generation (and stayed paused).
    let generation = edited.metadata.generation;
    h.wait_for("pz", Duration::from_secs(10), |w| {
        w.is_some_and(|w| {
            w.status.as_ref().and_then(|s| s.observed_generation) == generation
                && has_condition(w, SYNCED, ConditionStatus::False, "ReconcilePaused")
        })
    })
    .await;
    assert_eq!(h.cloud.only_resource().1.size, 1, "no update while paused");
    assert_eq!(h.cloud.calls("update"), 0, "no update call while paused");

    let resume = json!({"metadata": {"annotations": {"ferroplane.io/paused": null}}});
    h.widgets()
        .patch("pz", &PatchParams::default(), &Patch::Merge(resume))
        .await
        .expect("resume");
    h.wait_for("pz", Duration::from_secs(10), |w| {
        w.and_then(|w| w.status.as_ref()?.at_provider.as_ref()?.size) == Some(9)
    })
    .await;
    running.stop().await;
    h.shutdown().await;
}

#[tokio::test]
async fn controller_retries_failures_with_backoff_until_they_clear() {
    let h = WidgetEnv::start().await;
    for _ in 0..3 {
        h.cloud.fail_next(
            "create",
            Fault {
                reason: "ServiceUnavailable",
                retry: RetryClass::Backoff,
                after_effect: false,
            },
        );
    }
    let running = run_controller(&h, h.client.clone(), Duration::from_millis(100));
    h.create(&widget("retry", 1)).await;
    h.wait_for("retry", Duration::from_secs(15), ready).await;
    assert_eq!(h.cloud.calls("create"), 4, "three failures, then success");
    assert_eq!(h.cloud.count(), 1);
    let metrics = running.runtime.metrics().encode();
    assert!(
        metrics.contains(
            r#"ferroplane_reconcile_errors_total{kind="Widget",reason="ServiceUnavailable"} 3"#
        ),
        "{metrics}"
    );
    running.stop().await;
    h.shutdown().await;
}

#[tokio::test]
async fn an_object_that_does_not_decode_is_reported_and_does_not_stop_the_others() {
    use kube::CustomResourceExt;
    use kube::api::{DynamicObject, PostParams};
    use kube::core::ApiResource;

    // A CRD looser than the Rust type: size may be a string.
    let mut crd = serde_json::to_value(Widget::crd()).expect("crd json");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["forProvider"]
        ["properties"]["size"] = json!({"x-kubernetes-int-or-string": true});
    let h = WidgetEnv::start_with_crd(serde_json::from_value(crd).expect("crd")).await;
    let resource = ApiResource::erase::<Widget>(&());
    let dynamic: Api<DynamicObject> = Api::namespaced_with(h.client.clone(), NS, &resource);
    let mut bad = DynamicObject::new("bad", &resource).within(NS);
    bad.data =
        json!({"spec": {"forProvider": {"size": "big"}, "providerConfigRef": {"name": "cfg"}}});
    dynamic
        .create(&PostParams::default(), &bad)
        .await
        .expect("bad widget accepted by the CRD");

    let running = run_controller(&h, h.client.clone(), Duration::from_millis(100));
    h.create(&widget("good", 1)).await;
    h.wait_for("good", Duration::from_secs(10), ready).await;

    let obj = eventually("the bad widget to be reported")
        .within(Duration::from_secs(10))
        .until_async(|| async {
            let obj = dynamic.get("bad").await.expect("bad widget");
            let message = obj.data["status"]["conditions"][0]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if message.contains("cannot decode this Widget") {
                Ok(obj)
            } else {
                Err(obj.data)
            }
        })
        .await;
    assert_eq!(obj.data["status"]["conditions"][0]["status"], "False");
    eventually("a CannotDecodeObject event")
        .within(Duration::from_secs(5))
        .until_async(|| async {
            h.event_reasons("bad")
                .await
                .contains(&"CannotDecodeObject".to_owned())
        })
        .await;
    assert_eq!(h.cloud.count(), 1, "only the good widget was created");
    running.stop().await;
    h.shutdown().await;
}
