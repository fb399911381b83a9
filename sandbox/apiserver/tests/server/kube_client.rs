//! kube-rs against the sandbox: CRUD and conflicts, custom resources with schema validation,
//! defaults and the status subresource, server-side apply, watchers (default and streaming
//! lists), the finalizer helper, the event recorder, garbage collection, expired watches and
//! the workload simulator. Each test runs its own server.

use crate::common;
use crate::widget_crd;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ferroplane_sandbox::SandboxConfig;
use ferroplane_testkit::{TestCluster, eventually};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, ObjectReference};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::Status;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::{WatchStreamExt, finalizer, watcher};
use serde_json::json;

fn api_error(error: kube::Error) -> Status {
    match error {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"a": "1"}}))
        .expect("valid ConfigMap")
}

fn widgets(client: kube::Client) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.io", "v1", "Widget"),
        "widgets",
    );
    Api::namespaced_with(client, "default", &resource)
}

fn widget(name: &str, spec: serde_json::Value) -> DynamicObject {
    serde_json::from_value(json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}))
        .expect("valid widget")
}

async fn install_widget_crd(client: kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    let crd: CustomResourceDefinition = from_yaml(widget_crd::WIDGET_CRD);
    let created = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect("CRD created");
    let conditions = created
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );
}

/// Parses a YAML fixture into a typed object.
fn from_yaml<T: serde::de::DeserializeOwned>(yaml: &str) -> T {
    let value: serde_json::Value = serde_saphyr::from_str(yaml).expect("fixture is YAML");
    serde_json::from_value(value).expect("fixture matches the type")
}

// A real apiserver: create → 201 with uid/resourceVersion/creationTimestamp; a PUT with a stale
// resourceVersion → 409 "Operation cannot be fulfilled on configmaps "a": the object has been
// modified; ..."; a second create → 409 AlreadyExists; delete → the object; get → 404.
#[tokio::test]
async fn crud_conflicts_and_not_found() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    let created = api
        .create(&PostParams::default(), &config_map("a"))
        .await
        .expect("created");
    assert!(created.metadata.uid.is_some());
    // kube-apiserver counts no generation for ConfigMaps.
    assert_eq!(created.metadata.generation, None);
    let duplicate = api_error(
        api.create(&PostParams::default(), &config_map("a"))
            .await
            .expect_err("duplicate"),
    );
    assert_eq!(
        (duplicate.code, duplicate.reason.as_str()),
        (409, "AlreadyExists")
    );

    let mut changed = created.clone();
    changed.data = Some(BTreeMap::from([("a".to_owned(), "2".to_owned())]));
    let replaced = api
        .replace("a", &PostParams::default(), &changed)
        .await
        .expect("replaced");
    assert_ne!(
        replaced.metadata.resource_version,
        created.metadata.resource_version
    );
    let stale = api_error(
        api.replace("a", &PostParams::default(), &changed)
            .await
            .expect_err("stale"),
    );
    assert_eq!(stale.code, 409);
    assert_eq!(
        stale.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );

    let list = api.list(&ListParams::default()).await.expect("listed");
    assert!(
        list.metadata
            .resource_version
            .is_some_and(|rv| !rv.is_empty())
    );
    api.delete("a", &DeleteParams::default())
        .await
        .expect("deleted");
    let missing = api_error(api.get("a").await.expect_err("gone"));
    assert_eq!(
        (missing.code, missing.message.as_str()),
        (404, "configmaps \"a\" not found")
    );
    harness.shutdown().await;
}

// A real apiserver validates custom objects against the CRD schema (422 with the field path),
// applies schema defaults, keeps .status out of main-resource writes when the status
// subresource is enabled, bumps generation only for spec changes, and rejects an edit that
// breaks a CEL transition rule.
#[tokio::test]
async fn custom_resources_validate_default_and_split_status() {
    let harness = common::start().await;
    install_widget_crd(harness.client()).await;
    let api = widgets(harness.client());

    let invalid = api_error(
        api.create(&PostParams::default(), &widget("big", json!({"size": 12})))
            .await
            .expect_err("invalid"),
    );
    assert_eq!(invalid.code, 422);
    assert_eq!(
        invalid.message,
        "Widget.example.io \"big\" is invalid: spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9"
    );

    let mut body = widget("w", json!({"size": 3, "region": "eu"}));
    body.data["status"] = json!({"phase": "Ignored"});
    let created = api
        .create(&PostParams::default(), &body)
        .await
        .expect("created");
    assert_eq!(
        created.data["spec"]["policy"], "Delete",
        "schema default applied"
    );
    assert!(
        created.data.get("status").is_none(),
        "status is ignored on create"
    );

    let status =
        json!({"status": {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True"}]}});
    let patched = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status patched");
    assert_eq!(patched.data["status"]["phase"], "Ready");
    assert_eq!(
        patched.metadata.generation,
        Some(1),
        "status writes keep generation"
    );

    let applied_status = json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w"}, "status": {"phase": "Applied"}});
    let ssa = PatchParams::apply("widget-controller").force();
    let first = api
        .patch_status("w", &ssa, &Patch::Apply(&applied_status))
        .await
        .expect("status applied");
    assert_eq!(first.data["status"]["phase"], "Applied");
    let again = api
        .patch_status("w", &ssa, &Patch::Apply(&applied_status))
        .await
        .expect("status re-applied");
    assert_eq!(
        again.metadata.resource_version, first.metadata.resource_version,
        "a no-op apply writes nothing"
    );

    let spec = json!({"spec": {"size": 4}, "status": {"phase": "Ignored"}});
    let patched = api
        .patch("w", &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .expect("spec patched");
    assert_eq!(patched.metadata.generation, Some(2));
    assert_eq!(
        patched.data["status"]["phase"], "Applied",
        "main resource writes ignore status"
    );

    let immutable = api_error(
        api.patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"region": "us"}})),
        )
        .await
        .expect_err("immutable"),
    );
    assert_eq!(immutable.code, 422);
    assert!(
        immutable.message.contains("region is immutable"),
        "{}",
        immutable.message
    );

    let strategic = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Strategic(&json!({"spec": {"size": 5}})),
        )
        .await;
    assert_eq!(api_error(strategic.expect_err("unsupported")).code, 415);
    harness.shutdown().await;
}

// Server-side apply creates (201), merges, and removes fields the same manager stops applying;
// managedFields names the manager with operation Apply.
#[tokio::test]
async fn server_side_apply_with_a_field_manager() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    let params = PatchParams::apply("ferroplane").force();
    let first = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "labels": {"a": "1", "b": "2"}}, "data": {"x": "1"}});
    let created = api
        .patch("ssa", &params, &Patch::Apply(&first))
        .await
        .expect("applied");
    let managers: Vec<(String, String)> = created
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            (
                m.manager.unwrap_or_default(),
                m.operation.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        managers,
        vec![("ferroplane".to_owned(), "Apply".to_owned())]
    );

    api.patch(
        "ssa",
        &PatchParams::default(),
        &Patch::Merge(&json!({"data": {"y": "2"}})),
    )
    .await
    .expect("merged");
    let second = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "labels": {"a": "1"}}, "data": {"x": "3"}});
    let applied = api
        .patch("ssa", &params, &Patch::Apply(&second))
        .await
        .expect("re-applied");
    assert_eq!(
        applied.metadata.labels,
        Some(BTreeMap::from([("a".to_owned(), "1".to_owned())]))
    );
    let data = applied.data.unwrap_or_default();
    assert_eq!(data.get("x").map(String::as_str), Some("3"));
    assert_eq!(
        data.get("y").map(String::as_str),
        Some("2"),
        "fields of other managers stay"
    );

    // A real apiserver: another manager applying a different value for an owned field gets
    // 409 "Apply failed with 1 conflict: conflict with "ferroplane": .data.x" unless it
    // forces, which takes the field over.
    let rival = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"x": "rival"}});
    let conflict = api_error(
        api.patch("ssa", &PatchParams::apply("rival"), &Patch::Apply(&rival))
            .await
            .expect_err("conflict"),
    );
    assert_eq!(conflict.code, 409);
    assert_eq!(
        conflict.message,
        "Apply failed with 1 conflict: conflict with \"ferroplane\": .data.x"
    );
    let forced = api
        .patch(
            "ssa",
            &PatchParams::apply("rival").force(),
            &Patch::Apply(&rival),
        )
        .await
        .expect("forced");
    assert_eq!(
        forced.data.unwrap_or_default().get("x").map(String::as_str),
        Some("rival")
    );

    let missing_manager = api
        .patch("ssa", &PatchParams::default(), &Patch::Apply(&second))
        .await;
    assert_eq!(
        api_error(missing_manager.expect_err("no manager")).code,
        422
    );
    harness.shutdown().await;
}

async fn watch_until_synced_then_see(config: watcher::Config) {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    api.create(&PostParams::default(), &config_map("before"))
        .await
        .expect("created");
    let mut stream = watcher(api.clone(), config).boxed();
    let mut initial = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await {
            Ok(Ok(Some(watcher::Event::InitApply(cm)))) => {
                initial.push(cm.metadata.name.unwrap_or_default())
            }
            Ok(Ok(Some(watcher::Event::InitDone))) => break,
            Ok(Ok(Some(_))) => {}
            other => panic!("watcher did not finish its initial sync: {other:?}"),
        }
    }
    assert_eq!(initial, vec!["before"]);
    api.create(&PostParams::default(), &config_map("after"))
        .await
        .expect("created");
    let next = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .expect("event in time")
        .expect("no error");
    match next {
        Some(watcher::Event::Apply(cm)) => assert_eq!(cm.metadata.name.as_deref(), Some("after")),
        other => panic!("expected the new object, got {other:?}"),
    }
    api.delete("after", &DeleteParams::default())
        .await
        .expect("deleted");
    let next = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .expect("event in time")
        .expect("no error");
    assert!(matches!(next, Some(watcher::Event::Delete(_))), "{next:?}");
    drop(stream);
    harness.shutdown().await;
}

// kube-runtime's watcher: list (limit=500, non-empty resourceVersion) then watch.
#[tokio::test]
async fn watcher_with_list_then_watch() {
    watch_until_synced_then_see(watcher::Config::default()).await;
}

// Streaming lists: sendInitialEvents=true, ADDED events, then a BOOKMARK annotated
// k8s.io/initial-events-end, without which the watcher never completes its initial sync.
#[tokio::test]
async fn watcher_with_streaming_lists() {
    watch_until_synced_then_see(watcher::Config::default().streaming_lists()).await;
}

// A real apiserver answers an expired resourceVersion on a watch with HTTP 200 and an ERROR
// event carrying a 410 Expired Status.
#[tokio::test]
async fn expired_watch_gets_an_in_stream_410() {
    let harness = TestCluster::start_with(SandboxConfig {
        history_capacity: 3,
        ..SandboxConfig::default()
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    for i in 0..6 {
        api.create(&PostParams::default(), &config_map(&format!("c{i}")))
            .await
            .expect("created");
    }
    let mut stream = api
        .watch(&WatchParams::default(), "1")
        .await
        .expect("watch accepted")
        .boxed();
    match stream.try_next().await.expect("readable") {
        Some(WatchEvent::Error(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected an expired error, got {other:?}"),
    }
    harness.shutdown().await;
}

// kube-runtime's finalizer helper: adds the finalizer with a JSON patch whose `test` op expects
// null at a missing /metadata/finalizers, runs cleanup once deletionTimestamp is set, then
// removes the finalizer, after which the object disappears.
#[tokio::test]
async fn finalizer_helper_adds_and_releases() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    api.create(&PostParams::default(), &config_map("fin"))
        .await
        .expect("created");
    let name = "sandbox.ferroplane.io/test";
    let object = Arc::new(api.get("fin").await.expect("exists"));
    finalizer(&api, name, object, |event| async move {
        assert!(
            matches!(event, finalizer::Event::Apply(_)),
            "first pass applies"
        );
        Ok::<_, std::convert::Infallible>(kube::runtime::controller::Action::await_change())
    })
    .await
    .expect("finalizer added");
    let with = api.get("fin").await.expect("exists");
    assert_eq!(with.metadata.finalizers, Some(vec![name.to_owned()]));

    api.delete("fin", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let deleting = Arc::new(api.get("fin").await.expect("held by the finalizer"));
    assert!(deleting.metadata.deletion_timestamp.is_some());
    finalizer(&api, name, deleting, |event| async move {
        assert!(
            matches!(event, finalizer::Event::Cleanup(_)),
            "second pass cleans up"
        );
        Ok::<_, std::convert::Infallible>(kube::runtime::controller::Action::await_change())
    })
    .await
    .expect("finalizer released");
    assert_eq!(api_error(api.get("fin").await.expect_err("gone")).code, 404);
    harness.shutdown().await;
}

// kube-runtime's Recorder writes events.k8s.io/v1 Events (create, then a merge patch of the
// series for a repeat); kubectl describe reads core v1 events by involvedObject field selectors.
#[tokio::test]
async fn recorder_events_are_visible_as_core_events() {
    let harness = common::start().await;
    let client = harness.client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = cms
        .create(&PostParams::default(), &config_map("subject"))
        .await
        .expect("created");
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        name: owner.metadata.name.clone(),
        namespace: Some("default".into()),
        uid: owner.metadata.uid.clone(),
        ..ObjectReference::default()
    };
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "sandbox-test".into(),
            instance: Some("one".into()),
        },
    );
    let event = Event {
        type_: EventType::Normal,
        reason: "Synced".into(),
        note: Some("all good".into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    recorder
        .publish(&event, &reference)
        .await
        .expect("published");
    recorder
        .publish(&event, &reference)
        .await
        .expect("published again");
    let core: Api<CoreEvent> = Api::namespaced(client, "default");
    let selector = "involvedObject.name=subject,involvedObject.kind=ConfigMap";
    let events = core
        .list(&ListParams::default().fields(selector))
        .await
        .expect("listed");
    assert_eq!(
        events.items.len(),
        1,
        "the repeat is a series on the same event"
    );
    let only = &events.items[0];
    assert_eq!(only.reason.as_deref(), Some("Synced"));
    assert_eq!(only.message.as_deref(), Some("all good"));
    assert_eq!(only.reporting_component.as_deref(), Some("sandbox-test"));
    assert_eq!(only.series.as_ref().and_then(|s| s.count), Some(2));
    harness.shutdown().await;
}

// Garbage collection: removing an owner deletes dependents (Background), keeps them without
// the owner reference (Orphan).
#[tokio::test]
async fn owner_references_are_garbage_collected() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    for (owner, dependent, params, kept) in [
        ("o1", "d1", DeleteParams::background(), false),
        ("o2", "d2", DeleteParams::orphan(), true),
        ("o3", "d3", DeleteParams::foreground(), false),
    ] {
        let owner_object = api
            .create(&PostParams::default(), &config_map(owner))
            .await
            .expect("created");
        let mut child = config_map(dependent);
        child.metadata.owner_references = Some(vec![
            k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: owner.into(),
                uid: owner_object.metadata.uid.clone().expect("uid"),
                ..Default::default()
            },
        ]);
        api.create(&PostParams::default(), &child)
            .await
            .expect("created");
        api.delete(owner, &params).await.expect("deleted");
        let api = api.clone();
        eventually("the owner to go")
            .within(Duration::from_secs(5))
            .every(Duration::from_millis(20))
            .until_async(|| {
                let api = api.clone();
                async move { api.get_opt(owner).await.expect("readable").is_none() }
            })
            .await;
        let remaining = api.get_opt(dependent).await.expect("readable");
        assert_eq!(remaining.is_some(), kept, "dependent of {owner}");
        if let Some(orphan) = remaining {
            assert!(orphan.metadata.owner_references.is_none());
        }
    }
    harness.shutdown().await;
}

// The workload simulator marks a Deployment available shortly after each change.
#[tokio::test]
async fn simulator_marks_deployments_available() {
    let harness = common::start().await;
    let api: Api<Deployment> = Api::namespaced(harness.client(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
    }))
    .expect("valid Deployment");
    api.create(&PostParams::default(), &deployment)
        .await
        .expect("created");
    let ready =
        kube::runtime::wait::await_condition(api.clone(), "web", |d: Option<&Deployment>| {
            d.and_then(|d| d.status.as_ref()).is_some_and(|s| {
                s.available_replicas == Some(3) && s.observed_generation == Some(1)
            })
        });
    tokio::time::timeout(Duration::from_secs(5), ready)
        .await
        .expect("available in time")
        .expect("watch ok");
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 1}})),
    )
    .await
    .expect("scaled");
    let scaled =
        kube::runtime::wait::await_condition(api.clone(), "web", |d: Option<&Deployment>| {
            d.and_then(|d| d.status.as_ref())
                .is_some_and(|s| s.ready_replicas == Some(1) && s.observed_generation == Some(2))
        });
    tokio::time::timeout(Duration::from_secs(5), scaled)
        .await
        .expect("scaled in time")
        .expect("watch ok");
    let writes = harness.sandbox().writes();
    assert_eq!(
        writes.get(&("create".to_owned(), "deployments.apps".to_owned())),
        Some(&1)
    );
    assert_eq!(
        writes.get(&("patch".to_owned(), "deployments.apps".to_owned())),
        Some(&1)
    );
    harness.shutdown().await;
}

// A watch started through a label selector sees an object that stops matching as DELETED.
#[tokio::test]
async fn selector_watches_see_objects_leave() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    let mut labelled = config_map("l");
    labelled.metadata.labels = Some(BTreeMap::from([("team".to_owned(), "a".to_owned())]));
    api.create(&PostParams::default(), &labelled)
        .await
        .expect("created");
    let stream =
        watcher(api.clone(), watcher::Config::default().labels("team=a")).applied_objects();
    let mut stream = stream.boxed();
    let first = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .expect("in time")
        .expect("ok");
    assert_eq!(first.and_then(|c| c.metadata.name).as_deref(), Some("l"));
    let mut raw = api
        .watch(&WatchParams::default().labels("team=a"), "0")
        .await
        .expect("watch")
        .boxed();
    assert!(matches!(
        raw.try_next().await.expect("ok"),
        Some(WatchEvent::Added(_))
    ));
    api.patch(
        "l",
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"labels": {"team": "b"}}})),
    )
    .await
    .expect("relabelled");
    let left = tokio::time::timeout(Duration::from_secs(5), raw.try_next())
        .await
        .expect("in time")
        .expect("ok");
    assert!(matches!(left, Some(WatchEvent::Deleted(_))), "{left:?}");
    harness.shutdown().await;
}

// A real apiserver pages lists with `limit` and `continue` (kube-runtime's watcher lists with
// limit=500), reporting remainingItemCount.
#[tokio::test]
async fn lists_page_with_limit_and_continue() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    for i in 0..7 {
        api.create(&PostParams::default(), &config_map(&format!("p{i}")))
            .await
            .expect("created");
    }
    let mut names = Vec::new();
    let mut params = ListParams::default().limit(3);
    let mut pages = 0;
    loop {
        let page = api.list(&params).await.expect("listed");
        pages += 1;
        names.extend(page.items.into_iter().filter_map(|c| c.metadata.name));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => {
                params = ListParams::default().limit(3).continue_token(&token)
            }
            _ => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, (0..7).map(|i| format!("p{i}")).collect::<Vec<_>>());
    harness.shutdown().await;
}

// A change to an object of an earlier page, made while a client pages, must reach a watch that
// starts from the list's resourceVersion (kube-runtime's watcher does exactly that). Every page
// reports the first page's version, so the watch replays the change.
#[tokio::test]
async fn a_watch_from_a_paged_list_sees_changes_made_while_paging() {
    let harness = common::start().await;
    let api: Api<ConfigMap> = Api::namespaced(harness.client(), "default");
    for i in 0..4 {
        api.create(&PostParams::default(), &config_map(&format!("q{i}")))
            .await
            .expect("created");
    }
    let first = api
        .list(&ListParams::default().limit(2))
        .await
        .expect("first page");
    let token = first.metadata.continue_.clone().expect("more pages");
    // q0 was on the first page; change it before the second page is read.
    let mut changed = config_map("q0");
    changed.data = Some([("k".to_owned(), "changed".to_owned())].into());
    api.replace("q0", &PostParams::default(), &changed)
        .await
        .expect("replaced");
    let second = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .expect("second page");
    assert_eq!(
        second.metadata.resource_version, first.metadata.resource_version,
        "every page reports the first page's version"
    );
    let rv = second.metadata.resource_version.expect("version");
    let mut events = api
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .expect("watch")
        .boxed();
    let seen = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = events.try_next().await.expect("event") {
            if let WatchEvent::Modified(cm) = event
                && cm.metadata.name.as_deref() == Some("q0")
            {
                return cm.data.and_then(|d| d.get("k").cloned());
            }
        }
        None
    })
    .await
    .expect("the change arrives");
    assert_eq!(seen.as_deref(), Some("changed"));
    harness.shutdown().await;
}

// kube-controller-manager gives every namespace a `default` ServiceAccount, and re-creates it.
#[tokio::test]
async fn every_namespace_has_a_default_service_account() {
    use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
    let harness = common::start().await;
    let namespaces: Api<Namespace> = Api::all(harness.client());
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("valid");
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("created");
    let accounts: Api<ServiceAccount> = Api::namespaced(harness.client(), "team");
    let present = || {
        let accounts = accounts.clone();
        async move {
            accounts
                .get_opt("default")
                .await
                .expect("readable")
                .is_some()
        }
    };
    eventually("the default ServiceAccount")
        .within(Duration::from_secs(5))
        .every(Duration::from_millis(20))
        .until_async(present)
        .await;
    accounts
        .delete("default", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually("the default ServiceAccount to come back")
        .within(Duration::from_secs(5))
        .every(Duration::from_millis(20))
        .until_async(present)
        .await;
    harness.shutdown().await;
}
