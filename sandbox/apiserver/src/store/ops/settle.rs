//! What follows a removal or the start of a deletion, for the finalizers the server itself
//! implements: garbage collection of dependents (`ownerReferences`), foreground and orphan
//! propagation, namespace content and CRD objects. Runs synchronously under the store lock,
//! as a queue of tasks, until everything has settled.

use serde_json::{Value, json};

use crate::catalog::registry::{StoreKey, keys};
use crate::meta;
use crate::store::state::{ObjectKey, State};

pub const FOREGROUND: &str = "foregroundDeletion";
pub const ORPHAN: &str = "orphan";
pub const CRD_CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Background work a write leaves behind.
#[derive(Debug)]
pub enum Task {
    /// An object was removed: collect its orphans, unblock owners, namespaces and CRDs.
    Removed {
        key: StoreKey,
        namespace: String,
        uid: String,
        owners: Vec<String>,
    },
    /// An object is being deleted: drive its finalizers that the server itself implements.
    Terminating(StoreKey, ObjectKey),
}

/// Settles what the removal of `last` (stored under `key`) leaves behind.
pub fn settle_removed(state: &mut State, key: &StoreKey, last: &Value) {
    if *key == keys::crds() {
        state.registry.unregister_crd(meta::name_of(last));
    }
    let mut queue = vec![Task::Removed {
        key: key.clone(),
        namespace: meta::str_at(last, "/metadata/namespace").to_owned(),
        uid: meta::uid_of(last).to_owned(),
        owners: meta::owner_uids(last),
    }];
    run(state, &mut queue);
}

/// Runs the queued tasks, and those they queue, to the end.
pub fn run(state: &mut State, queue: &mut Vec<Task>) {
    while let Some(task) = queue.pop() {
        match task {
            Task::Removed {
                key,
                namespace,
                uid,
                owners,
            } => {
                for (dep_key, dep_ok) in state.dependents_of(&uid) {
                    let Some(dependent) = state.get(&dep_key, &dep_ok.0, &dep_ok.1) else {
                        continue;
                    };
                    let alive = meta::owner_uids(dependent)
                        .iter()
                        .any(|o| state.locate_uid(o).is_some());
                    if !alive && !meta::is_terminating(dependent) {
                        start_deleting(state, &dep_key, &dep_ok, queue);
                    }
                }
                for owner in owners {
                    if let Some((k, ok)) = state.locate_uid(&owner).cloned() {
                        queue.push(Task::Terminating(k, ok));
                    }
                }
                if !namespace.is_empty() {
                    queue.push(Task::Terminating(
                        keys::namespaces(),
                        (String::new(), namespace),
                    ));
                }
                if let Some(crd) = state.registry.crd_name_of(&key) {
                    queue.push(Task::Terminating(keys::crds(), (String::new(), crd)));
                }
            }
            Task::Terminating(key, ok) => finalize(state, &key, &ok, queue),
        }
    }
}

/// Deletes a dependent in the background (its own finalizers still apply).
fn start_deleting(state: &mut State, key: &StoreKey, ok: &ObjectKey, queue: &mut Vec<Task>) {
    let Some(current) = state.get(key, &ok.0, &ok.1).cloned() else {
        return;
    };
    if meta::finalizers(&current).is_empty() && *key != keys::namespaces() {
        state.remove(key, &ok.0, &ok.1);
        if *key == keys::crds() {
            state.registry.unregister_crd(&ok.1);
        }
        queue.push(Task::Removed {
            key: key.clone(),
            namespace: ok.0.clone(),
            uid: meta::uid_of(&current).to_owned(),
            owners: meta::owner_uids(&current),
        });
        return;
    }
    if meta::is_terminating(&current) {
        return;
    }
    let mut next = (*current).clone();
    let meta_map = meta::metadata_mut(&mut next);
    meta_map.insert("deletionTimestamp".into(), json!(meta::now_time()));
    meta_map.insert("deletionGracePeriodSeconds".into(), json!(0));
    if *key == keys::namespaces() {
        meta::set_at(&mut next, &["status", "phase"], json!("Terminating"));
    }
    state.replace(key, next);
    queue.push(Task::Terminating(key.clone(), ok.clone()));
}

/// Drives the server-implemented finalizers of an object being deleted.
fn finalize(state: &mut State, key: &StoreKey, ok: &ObjectKey, queue: &mut Vec<Task>) {
    let Some(current) = state.get(key, &ok.0, &ok.1).cloned() else {
        return;
    };
    if !meta::is_terminating(&current) {
        return;
    }
    let uid = meta::uid_of(&current).to_owned();
    let mut finalizers = meta::finalizers(&current);
    let mut blocked = false;
    if finalizers.iter().any(|f| f == ORPHAN) {
        for (dep_key, dep_ok) in state.dependents_of(&uid) {
            let Some(dependent) = state.get(&dep_key, &dep_ok.0, &dep_ok.1).cloned() else {
                continue;
            };
            let mut next = (*dependent).clone();
            if let Some(Value::Array(refs)) = next.pointer_mut("/metadata/ownerReferences") {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid.as_str()));
            }
            meta::normalize(&mut next);
            state.replace(&dep_key, next);
        }
        finalizers.retain(|f| f != ORPHAN);
    }
    if finalizers.iter().any(|f| f == FOREGROUND) {
        let dependents = state.dependents_of(&uid);
        if dependents.is_empty() {
            finalizers.retain(|f| f != FOREGROUND);
        } else {
            for (dep_key, dep_ok) in dependents {
                start_deleting(state, &dep_key, &dep_ok, queue);
            }
        }
    }
    let contents: Vec<(StoreKey, ObjectKey)> = if *key == keys::namespaces() {
        state.keys_in_namespace(&ok.1)
    } else if *key == keys::crds() && finalizers.iter().any(|f| f == CRD_CLEANUP) {
        let group = meta::str_at(&current, "/spec/group");
        let plural = meta::str_at(&current, "/spec/names/plural");
        let custom = StoreKey::new(group, plural);
        state
            .keys_of(&custom)
            .into_iter()
            .map(|ok| (custom.clone(), ok))
            .collect()
    } else {
        Vec::new()
    };
    if contents.is_empty() {
        finalizers.retain(|f| f != CRD_CLEANUP);
    } else {
        blocked = true;
        for (content_key, content_ok) in contents {
            start_deleting(state, &content_key, &content_ok, queue);
        }
    }
    let still_there = state.get(key, &ok.0, &ok.1).cloned();
    let Some(current) = still_there else { return };
    if finalizers.is_empty() && !(blocked && *key == keys::namespaces()) {
        let namespace_empty = *key != keys::namespaces() || state.count_in_namespace(&ok.1) == 0;
        if namespace_empty {
            state.remove(key, &ok.0, &ok.1);
            if *key == keys::crds() {
                state.registry.unregister_crd(&ok.1);
            }
            queue.push(Task::Removed {
                key: key.clone(),
                namespace: ok.0.clone(),
                uid,
                owners: meta::owner_uids(&current),
            });
            return;
        }
    }
    if finalizers != meta::finalizers(&current) {
        let mut next = (*current).clone();
        meta::set_finalizers(&mut next, &finalizers);
        state.replace(key, next);
    }
}
