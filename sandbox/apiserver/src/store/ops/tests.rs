//! The write semantics end to end on a store: metadata, conflicts, no-op writes, finalizers,
//! garbage collection and namespace deletion.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::catalog::registry::ResourceDef;
use crate::meta;
use crate::store::ops::create::{create, create_default_namespaces};
use crate::store::ops::delete::delete;
use crate::store::ops::options::{DeleteOptions, Propagation, Target, WriteOptions};
use crate::store::ops::settle::FOREGROUND;
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

fn setup() -> State {
    let mut state = State::new(1000);
    create_default_namespaces(&mut state);
    state
}

fn options() -> WriteOptions {
    WriteOptions {
        manager: "test".into(),
        ..WriteOptions::default()
    }
}

fn def(state: &State, group: &str, plural: &str) -> Arc<ResourceDef> {
    state.registry.find(group, "v1", plural).expect("served")
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}})
}

#[test]
fn create_fills_metadata_and_rejects_duplicates_and_missing_namespaces() {
    let mut state = setup();
    let d = def(&state, "", "configmaps");
    let created = create(&mut state, &d, "default", cm("a"), &options()).expect("created");
    assert!(
        created.object["metadata"].get("generation").is_none(),
        "kube-apiserver counts no generation for ConfigMaps"
    );
    assert_eq!(created.object["metadata"]["namespace"], "default");
    assert!(created.object["metadata"]["uid"].is_string());
    assert_eq!(
        create(&mut state, &d, "default", cm("a"), &options())
            .expect_err("dup")
            .code,
        409
    );
    let missing = create(&mut state, &d, "nope", cm("a"), &options()).expect_err("no ns");
    assert_eq!(missing.message, "namespaces \"nope\" not found");
    let invalid =
        create(&mut state, &d, "default", cm("Bad_Name"), &options()).expect_err("invalid");
    assert_eq!(invalid.code, 422);
    let mismatched = create(
        &mut state,
        &d,
        "kube-system",
        json!({"metadata": {"name": "x", "namespace": "default"}}),
        &options(),
    );
    assert_eq!(mismatched.expect_err("ns mismatch").code, 400);
}

#[test]
fn stale_update_conflicts() {
    let mut state = setup();
    let d = def(&state, "", "configmaps");
    let created = create(&mut state, &d, "default", cm("a"), &options()).expect("created");
    let mut body = (*created.object).clone();
    body["data"]["a"] = json!("2");
    let updated = update(
        &mut state,
        &Target::main(&d, "default", "a"),
        body.clone(),
        UpdateKind::Update,
        &options(),
    )
    .expect("updated");
    assert!(updated.object["metadata"].get("generation").is_none());
    let stale = update(
        &mut state,
        &Target::main(&d, "default", "a"),
        body,
        UpdateKind::Update,
        &options(),
    )
    .expect_err("stale");
    assert_eq!(
        stale.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[test]
fn generation_counts_spec_changes_of_kinds_that_track_it() {
    let mut state = setup();
    let d = def(&state, "", "pods");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}});
    let created = create(&mut state, &d, "default", pod, &options()).expect("created");
    assert_eq!(created.object["metadata"]["generation"], 1);
    let mut body = (*created.object).clone();
    body["spec"]["containers"][0]["image"] = json!("nginx:2");
    let updated = update(
        &mut state,
        &Target::main(&d, "default", "p"),
        body,
        UpdateKind::Update,
        &options(),
    )
    .expect("updated");
    assert_eq!(updated.object["metadata"]["generation"], 2);
}

#[test]
fn noop_updates_keep_the_resource_version() {
    let mut state = setup();
    let d = def(&state, "", "configmaps");
    let created = create(&mut state, &d, "default", cm("a"), &options()).expect("created");
    let again = update(
        &mut state,
        &Target::main(&d, "default", "a"),
        (*created.object).clone(),
        UpdateKind::Update,
        &options(),
    )
    .expect("updated");
    assert_eq!(
        again.object["metadata"]["resourceVersion"],
        created.object["metadata"]["resourceVersion"]
    );
}

#[test]
fn finalizers_hold_deletion_until_removed() {
    let mut state = setup();
    let d = def(&state, "", "configmaps");
    let mut body = cm("f");
    body["metadata"]["finalizers"] = json!(["x/y"]);
    create(&mut state, &d, "default", body, &options()).expect("created");
    let deleting = delete(
        &mut state,
        &Target::main(&d, "default", "f"),
        &DeleteOptions::default(),
    )
    .expect("deleting");
    assert!(meta::is_terminating(&deleting));
    let mut next = (*deleting).clone();
    next["metadata"]["finalizers"] = json!(["x/y", "new"]);
    assert_eq!(
        update(
            &mut state,
            &Target::main(&d, "default", "f"),
            next.clone(),
            UpdateKind::Update,
            &options()
        )
        .expect_err("no new")
        .code,
        422
    );
    next["metadata"]["finalizers"] = json!([]);
    update(
        &mut state,
        &Target::main(&d, "default", "f"),
        next,
        UpdateKind::Update,
        &options(),
    )
    .expect("released");
    assert!(state.get(&d.store_key(), "default", "f").is_none());
}

#[test]
fn garbage_collection_follows_owner_references() {
    let mut state = setup();
    let d = def(&state, "", "configmaps");
    let owner = create(&mut state, &d, "default", cm("owner"), &options()).expect("created");
    let mut child = cm("child");
    child["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.object["metadata"]["uid"]}]);
    create(&mut state, &d, "default", child.clone(), &options()).expect("created");
    delete(
        &mut state,
        &Target::main(&d, "default", "owner"),
        &DeleteOptions::default(),
    )
    .expect("deleted");
    assert!(state.get(&d.store_key(), "default", "child").is_none());

    let owner = create(&mut state, &d, "default", cm("owner"), &options()).expect("created");
    child["metadata"]["ownerReferences"][0]["uid"] = owner.object["metadata"]["uid"].clone();
    create(&mut state, &d, "default", child.clone(), &options()).expect("created");
    let orphan = DeleteOptions {
        propagation: Propagation::Orphan,
        ..DeleteOptions::default()
    };
    delete(&mut state, &Target::main(&d, "default", "owner"), &orphan).expect("deleted");
    assert!(state.get(&d.store_key(), "default", "owner").is_none());
    let kept = state
        .get(&d.store_key(), "default", "child")
        .expect("orphaned");
    assert!(kept["metadata"].get("ownerReferences").is_none());
}

#[test]
fn foreground_deletion_waits_for_dependents() {
    let mut state = setup();
    let d = def(&state, "", "configmaps");
    let owner = create(&mut state, &d, "default", cm("owner"), &options()).expect("created");
    let mut child = cm("child");
    child["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.object["metadata"]["uid"]}]);
    child["metadata"]["finalizers"] = json!(["hold"]);
    create(&mut state, &d, "default", child, &options()).expect("created");
    let foreground = DeleteOptions {
        propagation: Propagation::Foreground,
        ..DeleteOptions::default()
    };
    let deleting = delete(
        &mut state,
        &Target::main(&d, "default", "owner"),
        &foreground,
    )
    .expect("deleting");
    assert_eq!(meta::finalizers(&deleting), vec![FOREGROUND.to_owned()]);
    let held = (*state
        .get(&d.store_key(), "default", "child")
        .expect("held")
        .clone())
    .clone();
    assert!(meta::is_terminating(&held));
    let mut released = held;
    released["metadata"]["finalizers"] = json!([]);
    update(
        &mut state,
        &Target::main(&d, "default", "child"),
        released,
        UpdateKind::Update,
        &options(),
    )
    .expect("released");
    assert!(state.get(&d.store_key(), "default", "owner").is_none());
}

#[test]
fn namespace_deletion_removes_its_content() {
    let mut state = setup();
    let ns = def(&state, "", "namespaces");
    let d = def(&state, "", "configmaps");
    create(
        &mut state,
        &ns,
        "",
        json!({"metadata": {"name": "team"}}),
        &options(),
    )
    .expect("created");
    create(&mut state, &d, "team", cm("a"), &options()).expect("created");
    delete(
        &mut state,
        &Target::main(&ns, "", "team"),
        &DeleteOptions::default(),
    )
    .expect("deleted");
    assert!(state.get(&d.store_key(), "team", "a").is_none());
    assert!(state.get(&ns.store_key(), "", "team").is_none());
}
