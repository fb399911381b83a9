//! Ownership of external resources, for any kind that reports its ownership tag (here the
//! widget): a resource another live object owns is never adopted, changed or deleted; an
//! untagged one, or one whose owner is gone, is taken over by rewriting the tag.

use ferroplane_apis::common::names::{READY, SYNCED};
use ferroplane_apis::common::{ConditionStatus, DeletionPolicy, names::EXTERNAL_NAME};
use ferroplane_runtime::OWNED_ELSEWHERE;
use ferroplane_testkit::conditions::{condition, has_condition, has_finalizer};
use ferroplane_testkit::widget::*;
use kube::api::DeleteParams;

fn importer(name: &str, id: &str, size: i64) -> Widget {
    let mut w = widget(name, size);
    w.metadata.annotations = Some([(EXTERNAL_NAME.to_owned(), id.to_owned())].into());
    w
}

/// The second of `w`'s creation time.
fn created(w: &Widget) -> i64 {
    w.metadata
        .creation_timestamp
        .clone()
        .map(|t| t.0.as_second())
        .expect("a creation time")
}

/// Waits until the clock is past the second `w` was created in. Creation times have a
/// resolution of one second; two importers of the same second are both refused (neither is
/// known to be first), so a later importer is made a second later.
async fn after_the_second_of(w: &Widget) {
    while jiff::Timestamp::now().as_second() <= created(w) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn delete(h: &WidgetEnv, name: &str) {
    h.widgets()
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete");
}

#[tokio::test]
async fn a_resource_of_a_live_object_is_refused_and_never_deleted_by_the_importer() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let owner = h.create(&widget("owner", 1)).await;
    r.reconcile(&h.latest(&owner).await).await.expect("create");
    let (id, before) = h.cloud.only_resource();

    let thief = h.create(&importer("thief", &id, 7)).await;
    let err = r
        .reconcile(&h.latest(&thief).await)
        .await
        .expect_err("refused");
    assert_eq!(err.reason(), OWNED_ELSEWHERE);
    let got = h.get("thief").await;
    assert!(has_condition(
        &got,
        SYNCED,
        ConditionStatus::False,
        OWNED_ELSEWHERE
    ));
    assert!(has_condition(
        &got,
        READY,
        ConditionStatus::False,
        "Unavailable"
    ));
    // Same namespace: the owner is named. Nothing of the resource is shown or written.
    let message = &condition(&got, SYNCED).expect("synced").message;
    assert!(message.contains("Widget owner"), "{message}");
    assert!(!has_finalizer(&got));
    assert!(
        got.status
            .as_ref()
            .and_then(|s| s.at_provider.as_ref())
            .is_none()
    );
    assert!(
        h.event_reasons("thief")
            .await
            .contains(&OWNED_ELSEWHERE.to_owned())
    );
    assert_eq!(h.cloud.only_resource(), (id.clone(), before.clone()));
    assert_eq!(h.cloud.calls("update") + h.cloud.calls("claim"), 0);

    delete(&h, "thief").await;
    r.reconcile(&h.latest(&thief).await).await.expect("gone");
    assert!(h.get_opt("thief").await.is_none());
    assert_eq!(h.cloud.only_resource(), (id, before));
    assert_eq!(h.cloud.calls("delete"), 0);
    h.shutdown().await;
}

#[tokio::test]
async fn an_object_that_holds_a_resource_lets_go_of_it_on_delete_once_another_owns_it() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    let first = h.create(&widget("first", 1)).await;
    r.reconcile(&h.latest(&first).await).await.expect("create");
    let (id, _) = h.cloud.only_resource();
    // Someone retags the resource for another live object while `first` holds it.
    let other = h.create(&widget("other", 2)).await;
    let other_uid = other.metadata.uid.clone().expect("uid");
    h.cloud.lock().resources.get_mut(&id).expect("resource").uid = other_uid.clone();

    delete(&h, "first").await;
    r.reconcile(&h.latest(&first).await).await.expect("lets go");
    assert!(h.get_opt("first").await.is_none(), "finalizer removed");
    assert_eq!(h.cloud.calls("delete"), 0, "not first's to delete");
    assert_eq!(h.cloud.lock().resources[&id].uid, other_uid);
    h.shutdown().await;
}

#[tokio::test]
async fn untagged_and_orphaned_resources_are_taken_over() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();

    // Untagged (made outside ferroplane): imported, tag rewritten, then managed.
    h.cloud.insert("w-legacy", 3);
    let legacy = h.create(&importer("legacy", "w-legacy", 4)).await;
    r.reconcile(&h.latest(&legacy).await).await.expect("import");
    let uid = legacy.metadata.uid.clone().expect("uid");
    let res = h.cloud.lock().resources["w-legacy"].clone();
    assert_eq!(res.uid, uid);
    assert_eq!(res.size, 4, "updated once taken over");
    assert!(
        h.event_reasons("legacy")
            .await
            .contains(&"AdoptedExternalResource".to_owned())
    );

    // Its owner deleted with Orphan: another object takes it over.
    let mut orphaning = h.get("legacy").await;
    orphaning.spec.deletion_policy = DeletionPolicy::Orphan;
    h.widgets()
        .replace("legacy", &Default::default(), &orphaning)
        .await
        .expect("orphan policy");
    delete(&h, "legacy").await;
    r.reconcile(&h.latest(&legacy).await)
        .await
        .expect("orphaned");
    assert!(h.get_opt("legacy").await.is_none());
    let heir = h.create(&importer("heir", "w-legacy", 5)).await;
    r.reconcile(&h.latest(&heir).await)
        .await
        .expect("import again");
    let res = h.cloud.lock().resources["w-legacy"].clone();
    assert_eq!(res.uid, heir.metadata.uid.clone().expect("uid"));
    assert_eq!(res.size, 5);
    let got = h.get("heir").await;
    assert!(has_finalizer(&got));
    assert_eq!(h.cloud.calls("delete"), 0);
    h.shutdown().await;
}

#[tokio::test]
async fn a_controller_that_may_not_look_in_every_namespace_refuses_a_foreign_tag() {
    use ferroplane_testkit::faulty_client::WritePlan;
    use std::sync::{Arc, Mutex};

    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    // A resource tagged for an object that is gone (deleted with Orphan).
    let mut gone = widget("gone", 1);
    gone.spec.deletion_policy = DeletionPolicy::Orphan;
    let gone = h.create(&gone).await;
    r.reconcile(&h.latest(&gone).await).await.expect("create");
    delete(&h, "gone").await;
    r.reconcile(&h.latest(&gone).await).await.expect("orphaned");
    let (id, before) = h.cloud.only_resource();

    // Namespaced RBAC: the owner cannot be looked up, so the resource is not taken.
    let namespaced = h.faulty_reconciler(Arc::new(Mutex::new(WritePlan {
        forbid_cluster_wide: Some("widgets".into()),
        ..WritePlan::default()
    })));
    let heir = h.create(&importer("heir", &id, 9)).await;
    let err = namespaced
        .reconcile(&h.latest(&heir).await)
        .await
        .expect_err("fails closed");
    assert_eq!(err.reason(), OWNED_ELSEWHERE);
    assert!(err.message().contains("may not list"), "{err}");
    assert_eq!(h.cloud.only_resource(), (id.clone(), before));

    // Allowed to look: the owner is gone, so the import proceeds.
    r.reconcile(&h.latest(&heir).await).await.expect("import");
    let res = h.cloud.lock().resources[&id].clone();
    assert_eq!(res.uid, heir.metadata.uid.clone().expect("uid"));
    assert_eq!(res.size, 9);
    h.shutdown().await;
}

/// Issue 32, defect 6: two namespaces importing one orphaned resource at once both took it over
/// and both changed it before one was refused. Of two importers only the one created first
/// changes it; the other is refused without naming it.
#[tokio::test]
async fn of_two_namespaces_importing_one_resource_at_once_only_the_first_changes_it() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const OTHER_NS: &str = "team-a";
    let h = WidgetEnv::start().await;
    h.cloud.insert("w-shared", 3);
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(h.client.clone());
    let namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": OTHER_NS}}))
        .expect("a Namespace");
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("team-a");
    let configs: Api<ConfigMap> = Api::namespaced(h.client.clone(), OTHER_NS);
    let mut config: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "cfg"}, "data": {"endpoint": "fake"}
    }))
    .expect("a ConfigMap");
    config.metadata.namespace = Some(OTHER_NS.into());
    configs
        .create(&PostParams::default(), &config)
        .await
        .expect("team-a's config");
    let here = h.create(&importer("here", "w-shared", 7)).await;
    after_the_second_of(&here).await;
    let mut there = importer("there", "w-shared", 9);
    there.metadata.namespace = Some(OTHER_NS.into());
    let elsewhere: Api<Widget> = Api::namespaced(h.client.clone(), OTHER_NS);
    let there = elsewhere
        .create(&PostParams::default(), &there)
        .await
        .expect("created in team-a");
    assert!(created(&there) > created(&here));
    // The later one is reconciled first: the order of creation decides, not of reconciles.
    let (first, second) = (&there, &here);

    // Both look at the untagged resource before either changes anything.
    let connector = h.connector();
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let looks = Arc::new(AtomicUsize::new(0));
    *connector.on_observe.lock().expect("hook") = Some(Box::new(move || {
        let barrier = barrier.clone();
        let look = looks.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if look < 2 {
                barrier.wait().await;
            }
        })
    }));
    let r = ferroplane_runtime::Reconciler::new(&h.runtime(), connector, fast_policy());
    let (first_result, second_result) = tokio::join!(r.reconcile(first), r.reconcile(second));
    let err = first_result.expect_err("the later importer is refused");
    second_result.expect("the earlier importer takes it over");
    assert_eq!(err.reason(), OWNED_ELSEWHERE);
    assert!(err.message().contains("outside this namespace"), "{err}");
    assert!(!err.message().contains(OTHER_NS), "{err}");
    assert_eq!(h.cloud.calls("claim"), 1, "claimed once");
    assert_eq!(h.cloud.calls("update"), 1, "changed once");
    let res = h.cloud.lock().resources["w-shared"].clone();
    assert_eq!(res.uid, second.metadata.uid.clone().expect("uid"));
    assert_eq!(res.size, 7);
    h.shutdown().await;
}

#[tokio::test]
async fn an_import_that_matches_its_spec_is_not_written_until_the_spec_asks_for_a_change() {
    let h = WidgetEnv::start().await;
    let r = h.reconciler();
    h.cloud.insert("w-steady", 3);
    let steady = h.create(&importer("steady", "w-steady", 3)).await;
    for _ in 0..2 {
        r.reconcile(&h.latest(&steady).await)
            .await
            .expect("observed");
    }
    assert_eq!(
        (h.cloud.calls("claim"), h.cloud.calls("update")),
        (0, 0),
        "a matching import writes nothing to the cloud"
    );
    assert!(
        h.cloud.lock().resources["w-steady"].uid.is_empty(),
        "still untagged"
    );
    // A later importer of the same resource is refused at once, though neither writes.
    after_the_second_of(&steady).await;
    let copy = h.create(&importer("copy", "w-steady", 3)).await;
    let err = r
        .reconcile(&h.latest(&copy).await)
        .await
        .expect_err("the later importer is refused");
    assert_eq!(err.reason(), OWNED_ELSEWHERE);
    delete(&h, "copy").await;
    r.reconcile(&h.latest(&copy).await).await.expect("gone");
    assert!(has_condition(
        &h.get("steady").await,
        READY,
        ConditionStatus::True,
        "Available"
    ));

    // The spec asks for a change: the tag is taken first, then the change is made.
    let mut bigger = h.get("steady").await;
    bigger.spec.for_provider.size = 6;
    h.widgets()
        .replace("steady", &Default::default(), &bigger)
        .await
        .expect("edited");
    r.reconcile(&h.latest(&steady).await)
        .await
        .expect("changed");
    let res = h.cloud.lock().resources["w-steady"].clone();
    assert_eq!(res.uid, steady.metadata.uid.clone().expect("uid"));
    assert_eq!(res.size, 6);
    let writes: Vec<String> = h
        .cloud
        .lock()
        .calls
        .iter()
        .filter(|c| *c == "claim" || *c == "update")
        .map(|c| c.to_string())
        .collect();
    assert_eq!(
        writes,
        ["claim", "update"],
        "claimed once, right before the change"
    );
    h.shutdown().await;
}
