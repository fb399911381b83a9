//! Request sequences sent the way kube-rs sends them (the client ferroplane's controllers are
//! built on), each mirroring a kind of request the controllers make: paged and selected lists,
//! watches from a version and with initial events, metadata-only lists (the Namespace watch),
//! server-side apply of children with conflicts and force, merge patches of finalizers and
//! `/status`, events.k8s.io Events with their series, optimistic-concurrency replaces (leases),
//! deletes with preconditions, dry runs. Each step's answer is the object, list or error as
//! JSON, compared after `normalize`.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent,
    WatchParams,
};
use kube::{Client, Resource};
use serde::Serialize;
use serde_json::{Value, json};

use crate::{Answer, normalize};

/// The sequences, by name (each runs in a namespace of its own).
pub const SEQUENCES: &[&str] = &[
    "client-list-paging",
    "client-list-selectors",
    "client-list-metadata",
    "client-watch-from-version",
    "client-watch-initial-events",
    "client-watch-streaming-list",
    "client-apply-conflicts",
    "client-apply-deployment-containers",
    "client-apply-dry-run",
    "client-finalizers-merge-patch",
    "client-json-patch",
    "client-status-merge-patch",
    "client-events-series",
    "client-lease-replace",
    "client-delete-preconditions",
    "client-create-errors",
];

/// How long a watch may take to deliver what was written; a guard against a hang, not a
/// measurement: the answer says the watch stopped short.
const WATCH_GUARD: Duration = Duration::from_secs(60);

pub async fn replay(client: &Client, namespace: &str, name: &str) -> Vec<Answer> {
    let mut steps = Steps::new(namespace);
    let ns = namespace;
    match name {
        "client-list-paging" => list_paging(client, ns, &mut steps).await,
        "client-list-selectors" => list_selectors(client, ns, &mut steps).await,
        "client-list-metadata" => list_metadata(client, ns, &mut steps).await,
        "client-watch-from-version" => watch_from_version(client, ns, &mut steps).await,
        "client-watch-initial-events" => watch_initial_events(client, ns, &mut steps).await,
        "client-watch-streaming-list" => watch_streaming_list(client, ns, &mut steps).await,
        "client-apply-conflicts" => apply_conflicts(client, ns, &mut steps).await,
        "client-apply-deployment-containers" => apply_containers(client, ns, &mut steps).await,
        "client-apply-dry-run" => apply_dry_run(client, ns, &mut steps).await,
        "client-finalizers-merge-patch" => finalizers(client, ns, &mut steps).await,
        "client-json-patch" => json_patch(client, ns, &mut steps).await,
        "client-status-merge-patch" => status_merge_patch(client, ns, &mut steps).await,
        "client-events-series" => events_series(client, ns, &mut steps).await,
        "client-lease-replace" => lease_replace(client, ns, &mut steps).await,
        "client-delete-preconditions" => delete_preconditions(client, ns, &mut steps).await,
        "client-create-errors" => create_errors(client, ns, &mut steps).await,
        other => panic!("no client sequence {other}"),
    }
    steps.answers
}

/// Collects the answers of one sequence.
struct Steps {
    namespace: String,
    answers: Vec<Answer>,
}

impl Steps {
    fn new(namespace: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            answers: Vec::new(),
        }
    }

    /// Records a result as its JSON (`project` picks what is compared) or its error.
    fn record<T: Serialize>(
        &mut self,
        result: &Result<T, kube::Error>,
        project: impl FnOnce(Value) -> Value,
    ) {
        let answer = match result {
            Ok(value) => {
                let value = serde_json::to_value(value).expect("a serializable answer");
                Answer {
                    success: true,
                    output: self.text(&project(value)),
                }
            }
            Err(error) => Answer {
                success: false,
                output: self.text(&error_json(error)),
            },
        };
        self.answers.push(answer);
    }

    /// Records a value computed by the sequence itself (a watch's events).
    fn record_value(&mut self, success: bool, value: &Value) {
        let output = self.text(value);
        self.answers.push(Answer { success, output });
    }

    fn text(&self, value: &Value) -> String {
        let compact = serde_json::to_string(value).expect("JSON prints");
        normalize::output(&compact, &self.namespace)
    }
}

fn error_json(error: &kube::Error) -> Value {
    match error {
        kube::Error::Api(status) => json!({
            "code": status.code,
            "reason": status.reason,
            "message": status.message,
        }),
        other => json!({ "client error": other.to_string() }),
    }
}

/// The object without what the servers fill in by nature (times of managed fields stay: the
/// normalization masks them).
fn object(mut value: Value) -> Value {
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("selfLink");
    }
    value
}

/// A list as names in order, with its paging fields.
fn names_of_list(value: Value) -> Value {
    let names: Vec<Value> = value["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["metadata"]["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    json!({
        "names": names,
        "continues": value["metadata"]["continue"].as_str().is_some_and(|c| !c.is_empty()),
        "remainingItemCount": value["metadata"]["remainingItemCount"],
    })
}

fn config_map(name: &str, labels: Value, data: Value) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data,
    }))
    .expect("a ConfigMap")
}

async fn create_config_maps(api: &Api<ConfigMap>, maps: &[(&str, Value)]) {
    for (name, labels) in maps {
        api.create(
            &PostParams::default(),
            &config_map(name, labels.clone(), json!({})),
        )
        .await
        .unwrap_or_else(|e| panic!("ConfigMap {name}: {e}"));
    }
}

fn lease(name: &str, holder: &str) -> Lease {
    serde_json::from_value(json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15},
    }))
    .expect("a Lease")
}

/// Leases, because kube-controller-manager puts a ConfigMap of its own in every namespace and
/// an unselected ConfigMap list would differ by it.
async fn list_paging(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<Lease> = Api::namespaced(client.clone(), ns);
    for name in ["a", "b", "c", "d", "e"] {
        api.create(&PostParams::default(), &lease(name, "x"))
            .await
            .expect("a Lease");
    }
    let first = api.list(&ListParams::default().limit(2)).await;
    steps.record(&first, names_of_list);
    let token = first
        .ok()
        .and_then(|l| l.metadata.continue_)
        .unwrap_or_default();
    let second = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await;
    steps.record(&second, names_of_list);
    let token = second
        .ok()
        .and_then(|l| l.metadata.continue_)
        .unwrap_or_default();
    let third = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await;
    steps.record(&third, names_of_list);
    let bad = api
        .list(&ListParams::default().limit(2).continue_token("not-a-token"))
        .await;
    steps.record(&bad, names_of_list);
}

async fn list_selectors(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(
        &api,
        &[
            ("a", json!({"app": "x", "set": "s"})),
            ("b", json!({"app": "y", "set": "s"})),
            ("c", json!({"tier": "db", "set": "s"})),
        ],
    )
    .await;
    for selector in [
        "app=x",
        "app in (x,y)",
        "set=s,!app",
        "set=s,app!=x",
        "set=s,app notin (x)",
        "app==",
    ] {
        let listed = api.list(&ListParams::default().labels(selector)).await;
        steps.record(&listed, names_of_list);
    }
    for selector in ["metadata.name=b", "metadata.namespace!=other", "data.k=1"] {
        let listed = api
            .list(&ListParams::default().labels("set=s").fields(selector))
            .await;
        steps.record(&listed, names_of_list);
    }
}

/// The metadata-only list kube-runtime's `metadata_watcher` makes (ferroplane watches
/// Namespaces that way).
async fn list_metadata(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(
        &api,
        &[("a", json!({"set": "m"})), ("b", json!({"set": "m"}))],
    )
    .await;
    let listed = api
        .list_metadata(&ListParams::default().labels("set=m"))
        .await;
    steps.record(&listed, |v| {
        json!({
            "kind": v["kind"],
            "apiVersion": v["apiVersion"],
            "items": v["items"].as_array().map(|items| items.iter().map(|i| json!({
                "kind": i["kind"],
                "apiVersion": i["apiVersion"],
                "name": i["metadata"]["name"],
                "labels": i["metadata"]["labels"],
                "hasData": i.get("data").is_some(),
            })).collect::<Vec<_>>()),
        })
    });
    let one = api.get_metadata("a").await;
    steps.record(&one, |v| {
        json!({"kind": v["kind"], "apiVersion": v["apiVersion"], "name": v["metadata"]["name"]})
    });
}

/// A watch's events as (type, name, data), bookmarks left out (when a server sends them is
/// its own choice), until `done` says the last expected event arrived.
async fn collect_events(
    api: &Api<ConfigMap>,
    params: &WatchParams,
    version: &str,
    writes: impl Future<Output = ()>,
    done: impl Fn(&[Value]) -> bool,
) -> (bool, Value) {
    let stream = match api.watch(params, version).await {
        Ok(stream) => stream,
        Err(e) => return (false, error_json(&e)),
    };
    writes.await;
    let mut stream = stream.boxed();
    let mut seen = Vec::new();
    let finished = tokio::time::timeout(WATCH_GUARD, async {
        while let Ok(Some(event)) = stream.try_next().await {
            let (kind, object) = match event {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                WatchEvent::Bookmark(_) => continue,
                WatchEvent::Error(e) => {
                    seen.push(json!({"type": "ERROR", "code": e.code, "reason": e.reason}));
                    return;
                }
            };
            seen.push(json!({
                "type": kind,
                "name": object.meta().name,
                "data": object.data,
            }));
            if done(&seen) {
                return;
            }
        }
    })
    .await;
    (finished.is_ok(), Value::Array(seen))
}

async fn watch_from_version(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(&api, &[("before", json!({"set": "w"}))]).await;
    let listed = api
        .list(&ListParams::default().labels("set=w"))
        .await
        .expect("a list");
    let version = listed.metadata.resource_version.unwrap_or_default();
    let writer = api.clone();
    let writes = async move {
        writer
            .create(
                &PostParams::default(),
                &config_map("w", json!({"set": "w"}), json!({"k": "1"})),
            )
            .await
            .expect("created");
        writer
            .patch(
                "w",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"k": "2"}})),
            )
            .await
            .expect("patched");
        writer
            .delete("w", &DeleteParams::default())
            .await
            .expect("deleted");
    };
    let params = WatchParams::default().labels("set=w");
    let (ok, events) = collect_events(&api, &params, &version, writes, |seen| {
        seen.last().is_some_and(|e| e["type"] == "DELETED")
    })
    .await;
    steps.record_value(ok, &events);
}

async fn watch_initial_events(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(
        &api,
        &[("b", json!({"set": "i"})), ("a", json!({"set": "i"}))],
    )
    .await;
    let writer = api.clone();
    let writes = async move {
        writer
            .create(
                &PostParams::default(),
                &config_map("c", json!({"set": "i"}), json!({})),
            )
            .await
            .expect("created");
    };
    let params = WatchParams::default().labels("set=i");
    // From "0": the server starts with what it holds, as ADDED events.
    let (ok, events) = collect_events(&api, &params, "0", writes, |seen| {
        seen.iter().any(|e| e["name"] == "c")
    })
    .await;
    // Which of the existing objects comes first is the server's choice.
    let mut events = events.as_array().cloned().unwrap_or_default();
    let last = events.pop();
    events.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
    events.extend(last);
    steps.record_value(ok, &Value::Array(events));
}

/// The streaming list (`sendInitialEvents`) kube-runtime's watcher uses when asked to: the
/// initial objects, then a bookmark that marks the end of them.
async fn watch_streaming_list(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(
        &api,
        &[("a", json!({"set": "l"})), ("b", json!({"set": "l"}))],
    )
    .await;
    let params = WatchParams::streaming_lists().labels("set=l");
    let stream = api.watch(&params, "").await;
    let Ok(stream) = stream else {
        steps.record(&stream.map(|_| ()), |v| v);
        return;
    };
    let mut stream = stream.boxed();
    let mut seen = Vec::new();
    let finished = tokio::time::timeout(WATCH_GUARD, async {
        while let Ok(Some(event)) = stream.try_next().await {
            match event {
                WatchEvent::Added(o) => seen.push(json!({"type": "ADDED", "name": o.meta().name})),
                WatchEvent::Bookmark(b) => {
                    let end = b
                        .metadata
                        .annotations
                        .get("k8s.io/initial-events-end")
                        .cloned();
                    seen.push(json!({"type": "BOOKMARK", "initial-events-end": end}));
                    if end.is_some() {
                        return;
                    }
                }
                other => seen.push(json!({"type": format!("{other:?}")})),
            }
        }
    })
    .await;
    let mut added: Vec<Value> = seen
        .iter()
        .filter(|e| e["type"] == "ADDED")
        .cloned()
        .collect();
    added.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
    let ends: Vec<Value> = seen
        .iter()
        .filter(|e| e["type"] == "BOOKMARK" && !e["initial-events-end"].is_null())
        .cloned()
        .collect();
    steps.record_value(
        finished.is_ok(),
        &json!({"added": added, "end bookmarks": ends}),
    );
}

/// The managed fields as compared: who owns what, through which operation. In manager order:
/// kube-apiserver orders entries by their time, to the second, which differs between runs.
fn ownership(value: Value) -> Value {
    let mut entries = value["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            json!({
                "manager": e["manager"],
                "operation": e["operation"],
                "subresource": e["subresource"],
                "fieldsV1": e["fieldsV1"],
            })
        })
        .collect::<Vec<_>>();
    entries.sort_by_key(|e| (e["operation"].to_string(), e["manager"].to_string()));
    json!({"data": value["data"], "managedFields": entries})
}

async fn apply_conflicts(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let apply = |manager: &str, data: Value, force: bool| {
        let api = api.clone();
        let mut params = PatchParams::apply(manager);
        if force {
            params = params.force();
        }
        let body = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "applied"}, "data": data,
        });
        async move { api.patch("applied", &params, &Patch::Apply(body)).await }
    };
    steps.record(
        &apply("first", json!({"a": "1", "b": "1"}), false).await,
        ownership,
    );
    steps.record(&apply("second", json!({"a": "2"}), false).await, ownership);
    steps.record(
        &apply("second", json!({"a": "2", "c": "2"}), true).await,
        ownership,
    );
    // The first manager gives up `b`: the field goes, as no one else owns it.
    steps.record(&apply("first", json!({}), false).await, ownership);
    // An update by another writer shares ownership of what it sets.
    let updated = api
        .patch(
            "applied",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"c": "3"}})),
        )
        .await;
    steps.record(&updated, ownership);
    steps.record(
        &apply("second", json!({"a": "2", "c": "2"}), false).await,
        ownership,
    );
    // Apply bodies must name the object they apply to.
    let nameless = api
        .patch(
            "applied",
            &PatchParams::apply("first"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})),
        )
        .await;
    steps.record(&nameless, ownership);
    let no_manager = api
        .patch(
            "applied",
            &PatchParams::default(),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"},
            })),
        )
        .await;
    steps.record(&no_manager, ownership);
}

fn deployment(manager_image: &str, containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": manager_image}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers},
            },
        },
    })
}

/// Children are applied by ferroplane while others (a sidecar injector, kubectl) add to the
/// same lists: containers merge by name, env entries by name, ports by containerPort+protocol.
async fn apply_containers(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let project = |v: Value| {
        let owned = ownership(v.clone())["managedFields"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e["subresource"].is_null())
            .collect::<Vec<_>>();
        json!({
            "containers": v["spec"]["template"]["spec"]["containers"],
            "labels": v["metadata"]["labels"],
            "managedFields": owned,
        })
    };
    let ours = PatchParams::apply("ferroplane-application").force();
    let first = deployment(
        "web",
        json!([{"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}],
                "ports": [{"containerPort": 80}]}]),
    );
    steps.record(
        &api.patch("web", &ours, &Patch::Apply(&first)).await,
        project,
    );
    let sidecar = deployment(
        "web",
        json!([{"name": "app", "env": [{"name": "INJECTED", "value": "x"}]},
               {"name": "proxy", "image": "envoy:1"}]),
    );
    let mut sidecar = sidecar;
    sidecar["metadata"]["labels"] = json!({});
    steps.record(
        &api.patch(
            "web",
            &PatchParams::apply("injector"),
            &Patch::Apply(&sidecar),
        )
        .await,
        project,
    );
    let second = deployment(
        "web",
        json!([{"name": "app", "image": "nginx:2", "env": [{"name": "A", "value": "2"}],
                "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]}]),
    );
    steps.record(
        &api.patch("web", &ours, &Patch::Apply(&second)).await,
        project,
    );
    let duplicate_port = deployment(
        "web",
        json!([{"name": "app", "image": "nginx:2",
                "ports": [{"containerPort": 81}, {"containerPort": 81}]}]),
    );
    steps.record(
        &api.patch("web", &ours, &Patch::Apply(&duplicate_port))
            .await,
        project,
    );
}

async fn apply_dry_run(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let body = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "dry"}, "data": {"a": "1"},
    });
    let dry = api
        .patch(
            "dry",
            &PatchParams::apply("m").dry_run(),
            &Patch::Apply(&body),
        )
        .await;
    steps.record(&dry, ownership);
    steps.record(&api.get("dry").await, object);
    let created = api
        .create(
            &PostParams {
                dry_run: true,
                ..PostParams::default()
            },
            &config_map("dry", json!({}), json!({"b": "2"})),
        )
        .await;
    steps.record(
        &created,
        |v| json!({"data": v["data"], "name": v["metadata"]["name"]}),
    );
    steps.record(&api.get("dry").await, object);
}

async fn finalizers(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(&api, &[("held", json!({}))]).await;
    let meta = |v: Value| {
        json!({
            "finalizers": v["metadata"]["finalizers"],
            "deleting": v["metadata"].get("deletionTimestamp").is_some(),
            "annotations": v["metadata"]["annotations"],
        })
    };
    // What the reconciler writes: the finalizer, then the external name, as merge patches.
    let patched = api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["ferroplane.io/managed-resource"]}})),
        )
        .await;
    steps.record(&patched, meta);
    let annotated = api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"ferroplane.io/external-name": "i-1"}}}),
            ),
        )
        .await;
    steps.record(&annotated, meta);
    let deleted = api.delete("held", &DeleteParams::default()).await;
    steps.record(
        &deleted.map(|answer| answer.is_right()),
        |at_once| json!({"deleted at once": at_once}),
    );
    steps.record(&api.get("held").await, meta);
    // A finalizer cannot be added while the object is being deleted.
    let added = api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["ferroplane.io/managed-resource", "other.io/x"]}})),
        )
        .await;
    steps.record(&added, meta);
    let released = api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await;
    steps.record(&released, |v| json!({"name": v["metadata"]["name"]}));
    steps.record(&api.get("held").await, meta);
}

async fn json_patch(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    api.create(
        &PostParams::default(),
        &config_map("j", json!({}), json!({"a": "1"})),
    )
    .await
    .expect("created");
    let patch = |ops: Value| {
        let api = api.clone();
        async move {
            let patch = Patch::<()>::Json(serde_json::from_value(ops).expect("a JSON patch"));
            api.patch("j", &PatchParams::default(), &patch).await
        }
    };
    let data = |v: Value| json!({"data": v["data"]});
    steps.record(
        &patch(json!([{"op": "test", "path": "/data/a", "value": "1"},
                      {"op": "replace", "path": "/data/a", "value": "2"}]))
        .await,
        data,
    );
    steps.record(
        &patch(json!([{"op": "test", "path": "/data/a", "value": "1"},
                      {"op": "replace", "path": "/data/a", "value": "3"}]))
        .await,
        data,
    );
    steps.record(
        &patch(json!([{"op": "remove", "path": "/data/missing"}])).await,
        data,
    );
    steps.record(
        &patch(json!([{"op": "add", "path": "/data/b", "value": "x"},
                      {"op": "move", "from": "/data/b", "path": "/data/c"}]))
        .await,
        data,
    );
    // The resourceVersion a patch leaves in the object is the write's precondition (how the
    // reconciler's whole-field status writes carry theirs): a stale one is a conflict.
    let current = api.get("j").await.expect("read").metadata.resource_version;
    patch(json!([{"op": "replace", "path": "/data/a", "value": "4"}]))
        .await
        .expect("a newer version");
    let stale = patch(
        json!([{"op": "replace", "path": "/metadata/resourceVersion", "value": current},
                             {"op": "replace", "path": "/data/a", "value": "5"}]),
    )
    .await;
    assert!(
        matches!(&stale, Err(kube::Error::Api(s)) if s.code == 409),
        "{stale:?}"
    );
    steps.record(&stale, data);
    let current = api.get("j").await.expect("read").metadata.resource_version;
    steps.record(
        &patch(
            json!([{"op": "replace", "path": "/metadata/resourceVersion", "value": current},
                      {"op": "replace", "path": "/data/a", "value": "6"}]),
        )
        .await,
        data,
    );
}

/// The status writes of the reconciler are merge patches to `/status`; what they carry outside
/// status is ignored there, as a spec change through the main resource leaves status alone.
async fn status_merge_patch(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let mut body = deployment("web", json!([{"name": "app", "image": "nginx:1"}]));
    body["spec"]["paused"] = json!(true);
    api.patch(
        "web",
        &PatchParams::apply("setup").force(),
        &Patch::Apply(&body),
    )
    .await
    .expect("applied");
    let project = |v: Value| {
        json!({
            "labels": v["metadata"]["labels"],
            "image": v["spec"]["template"]["spec"]["containers"][0]["image"],
        })
    };
    let through_status = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"labels": {"app": "from-status"}},
                "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:9"}]}}},
                "status": {"observedGeneration": 1},
            })),
        )
        .await;
    steps.record(&through_status, project);
    let missing = Api::<Deployment>::namespaced(client.clone(), ns)
        .patch_status(
            "absent",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {}})),
        )
        .await;
    steps.record(&missing, project);
}

fn event(name: &str, namespace: &str, regarding: &str) -> Event {
    serde_json::from_value(json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "action": "Reconcile",
        "reason": "Created",
        "note": "created i-1",
        "type": "Normal",
        "reportingController": "ferroplane.io/ecsinstance",
        "reportingInstance": "ferroplane-0",
        "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "name": regarding, "namespace": namespace},
    }))
    .expect("an Event")
}

/// The event recorder creates an Event, then counts repeats into its series.
async fn events_series(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<Event> = Api::namespaced(client.clone(), ns);
    let project = |v: Value| {
        json!({
            "reason": v["reason"], "note": v["note"], "type": v["type"],
            "series": v["series"], "regarding": v["regarding"]["name"],
            "deprecatedCount": v["deprecatedCount"],
        })
    };
    steps.record(
        &api.create(&PostParams::default(), &event("e1", ns, "cm"))
            .await,
        project,
    );
    // What the recorder sends for a repeat: the series only.
    let repeated = api
        .patch(
            "e1",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
            })),
        )
        .await;
    steps.record(&repeated, project);
    // An event's note cannot change.
    let reworded = api
        .patch(
            "e1",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "series": {"count": 3, "lastObservedTime": "2026-01-01T00:02:00.000000Z"},
                "note": "created i-1 again",
            })),
        )
        .await;
    steps.record(&reworded, project);
    let mut no_time = serde_json::to_value(event("e2", ns, "cm")).expect("JSON");
    no_time
        .as_object_mut()
        .expect("an object")
        .remove("eventTime");
    let no_time: Event = serde_json::from_value(no_time).expect("an Event");
    steps.record(&api.create(&PostParams::default(), &no_time).await, project);
    let mut wrong_type = event("e3", ns, "cm");
    wrong_type.type_ = Some("Fine".to_owned());
    steps.record(
        &api.create(&PostParams::default(), &wrong_type).await,
        project,
    );
    // About a cluster-scoped object: only `default` and `kube-system` may hold such events.
    let mut about_a_node = serde_json::to_value(event("e4", ns, "n1")).expect("JSON");
    about_a_node["regarding"] = json!({"apiVersion": "v1", "kind": "Node", "name": "n1"});
    let about_a_node: Event = serde_json::from_value(about_a_node).expect("an Event");
    steps.record(
        &api.create(&PostParams::default(), &about_a_node).await,
        project,
    );
}

/// Leader election: the holder renews by replacing the Lease it read; a replace from a stale
/// read is refused.
async fn lease_replace(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<Lease> = Api::namespaced(client.clone(), ns);
    let created = api
        .create(&PostParams::default(), &lease("leader", "a"))
        .await;
    steps.record(&created, object);
    let read = api.get("leader").await.expect("the Lease");
    let mut renewed = read.clone();
    renewed.spec.as_mut().expect("a spec").holder_identity = Some("b".to_owned());
    steps.record(
        &api.replace("leader", &PostParams::default(), &renewed)
            .await,
        object,
    );
    let mut stale = read;
    stale.spec.as_mut().expect("a spec").holder_identity = Some("c".to_owned());
    steps.record(
        &api.replace("leader", &PostParams::default(), &stale).await,
        object,
    );
    let mut nameless = lease("other", "a");
    nameless.metadata.resource_version = None;
    steps.record(
        &api.replace("leader", &PostParams::default(), &nameless)
            .await,
        object,
    );
}

async fn delete_preconditions(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create_config_maps(&api, &[("p", json!({}))]).await;
    let live = api.get("p").await.expect("the ConfigMap");
    let wrong_uid = DeleteParams::default().preconditions(Preconditions {
        uid: Some("00000000-0000-0000-0000-000000000000".to_owned()),
        resource_version: None,
    });
    steps.record(
        &api.delete("p", &wrong_uid).await.map(|a| a.is_right()),
        |v| v,
    );
    let wrong_version = DeleteParams::default().preconditions(Preconditions {
        uid: None,
        resource_version: Some("1".to_owned()),
    });
    steps.record(
        &api.delete("p", &wrong_version).await.map(|a| a.is_right()),
        |v| v,
    );
    let right = DeleteParams::default().preconditions(Preconditions {
        uid: live.metadata.uid.clone(),
        resource_version: live.metadata.resource_version.clone(),
    });
    steps.record(&api.delete("p", &right).await.map(|a| a.is_right()), |v| v);
    steps.record(
        &api.delete("p", &DeleteParams::default())
            .await
            .map(|a| a.is_right()),
        |v| v,
    );
}

async fn create_errors(client: &Client, ns: &str, steps: &mut Steps) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let name_only = |v: Value| json!({"name": v["metadata"]["name"]});
    let mut nameless = config_map("", json!({}), json!({}));
    nameless.metadata.name = None;
    let mut generated = nameless.clone();
    generated.metadata.generate_name = Some("gen-".to_owned());
    let duplicate = config_map("dup", json!({}), json!({}));
    // Created, refused as a duplicate, refused as an invalid name, named by the server,
    // refused without a name.
    for body in [
        &duplicate,
        &duplicate,
        &config_map("Not_Valid", json!({}), json!({})),
        &generated,
        &nameless,
    ] {
        steps.record(&api.create(&PostParams::default(), body).await, name_only);
    }
    steps.record(&api.get("absent").await, name_only);
    let bad_label = config_map("labelled", json!({"bad key": "v"}), json!({}));
    steps.record(
        &api.create(&PostParams::default(), &bad_label).await,
        name_only,
    );
}
