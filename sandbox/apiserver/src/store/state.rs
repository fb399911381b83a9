//! The in-memory storage: objects per resource, the global resourceVersion counter, the uid and
//! owner indexes, and the change history that watches replay and then follow live.
//!
//! Everything here runs under the server's one lock, so a write, its resourceVersion and its
//! watch event are atomic; the semantic rules (generation, finalizers, GC) live in `ops`.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::catalog::registry::{Registry, StoreKey};
use crate::meta;

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One committed write, as watches see it.
#[derive(Debug)]
pub struct Change {
    pub rv: u64,
    pub key: StoreKey,
    pub namespace: String,
    pub kind: ChangeKind,
    pub object: Arc<Value>,
    /// The state before the write, so that selector watches can turn it into ADDED or DELETED.
    pub old: Option<Arc<Value>>,
    /// The watch lines already encoded for this change, shared by watches that send the same.
    pub encoded: EncodedForms,
}

/// Watch lines of one change by (apiVersion, kind, event type) of the form they present:
/// watchers of the same resource version encode an event once between them.
#[derive(Debug, Default)]
pub struct EncodedForms(Mutex<Vec<EncodedForm>>);

#[derive(Debug)]
struct EncodedForm {
    api_version: String,
    kind: String,
    event: &'static str,
    bytes: Bytes,
}

impl EncodedForms {
    /// The line for this form, encoded by `encode` unless a watcher did it already.
    pub fn get_or_encode(
        &self,
        api_version: &str,
        kind: &str,
        event: &'static str,
        encode: impl FnOnce() -> Bytes,
    ) -> Bytes {
        // A panic elsewhere while holding the lock leaves a valid (maybe shorter) list.
        let mut forms = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(form) = forms
            .iter()
            .find(|f| f.event == event && f.api_version == api_version && f.kind == kind)
        {
            return form.bytes.clone();
        }
        let bytes = encode();
        forms.push(EncodedForm {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            event,
            bytes: bytes.clone(),
        });
        bytes
    }

    /// Drops the cached lines (a late replay encodes again).
    fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

/// Changes further back than this in the history drop their encoded lines: live watchers have
/// sent them long since, and the history should not hold every event twice.
const ENCODED_CHANGES: usize = 256;

/// `(namespace, name)`; the namespace is empty for cluster-scoped objects.
pub type ObjectKey = (String, String);

/// The store.
#[derive(Debug)]
pub struct State {
    pub registry: Registry,
    rv: u64,
    objects: HashMap<StoreKey, BTreeMap<ObjectKey, Arc<Value>>>,
    uids: HashMap<String, (StoreKey, ObjectKey)>,
    /// owner uid → dependents.
    dependents: HashMap<String, BTreeSet<(StoreKey, ObjectKey)>>,
    history: VecDeque<Arc<Change>>,
    history_capacity: usize,
    /// Every change with a resourceVersion above this is still in `history`.
    history_floor: u64,
    changes: broadcast::Sender<Arc<Change>>,
}

/// A replay of history and the live feed that continues it.
pub type Subscription = (Vec<Arc<Change>>, broadcast::Receiver<Arc<Change>>);

/// A watch start that the history cannot serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expired {
    pub oldest: u64,
}

impl State {
    pub fn new(history_capacity: usize) -> Self {
        let (changes, _) = broadcast::channel(16_384);
        Self {
            registry: Registry::default(),
            rv: 0,
            objects: HashMap::new(),
            uids: HashMap::new(),
            dependents: HashMap::new(),
            history: VecDeque::with_capacity(history_capacity.min(65_536)),
            history_capacity: history_capacity.max(1),
            history_floor: 0,
            changes,
        }
    }

    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    pub fn get(&self, key: &StoreKey, namespace: &str, name: &str) -> Option<&Arc<Value>> {
        self.objects
            .get(key)?
            .get(&(namespace.to_owned(), name.to_owned()))
    }

    /// Objects of one resource, in one namespace or all, ordered by namespace then name.
    pub fn list<'a>(
        &'a self,
        key: &StoreKey,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        self.objects
            .get(key)
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(move |((ns, _), _)| namespace.is_none_or(|want| want == ns))
            .map(|(_, v)| v)
    }

    pub fn count_in_namespace(&self, namespace: &str) -> usize {
        self.objects
            .values()
            .map(|m| m.keys().filter(|(ns, _)| ns == namespace).count())
            .sum()
    }

    /// Every `(key, object key)` stored in a namespace.
    pub fn keys_in_namespace(&self, namespace: &str) -> Vec<(StoreKey, ObjectKey)> {
        self.objects
            .iter()
            .flat_map(|(k, m)| {
                m.keys()
                    .filter(|(ns, _)| ns == namespace)
                    .map(move |ok| (k.clone(), ok.clone()))
            })
            .collect()
    }

    pub fn keys_of(&self, key: &StoreKey) -> Vec<ObjectKey> {
        self.objects
            .get(key)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn locate_uid(&self, uid: &str) -> Option<&(StoreKey, ObjectKey)> {
        self.uids.get(uid)
    }

    pub fn dependents_of(&self, uid: &str) -> Vec<(StoreKey, ObjectKey)> {
        self.dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn set_rv(object: &mut Value, rv: u64) {
        meta::metadata_mut(object).insert("resourceVersion".into(), Value::String(rv.to_string()));
    }

    fn index(&mut self, key: &StoreKey, ok: &ObjectKey, object: &Value, add: bool) {
        let entry = (key.clone(), ok.clone());
        for owner in meta::owner_uids(object) {
            if add {
                self.dependents
                    .entry(owner)
                    .or_default()
                    .insert(entry.clone());
            } else if let Some(set) = self.dependents.get_mut(&owner) {
                set.remove(&entry);
                if set.is_empty() {
                    self.dependents.remove(&owner);
                }
            }
        }
        let uid = meta::uid_of(object);
        if !uid.is_empty() {
            if add {
                self.uids.insert(uid.to_owned(), entry);
            } else {
                self.uids.remove(uid);
            }
        }
    }

    fn record(
        &mut self,
        key: &StoreKey,
        namespace: &str,
        kind: ChangeKind,
        object: Arc<Value>,
        old: Option<Arc<Value>>,
    ) {
        let change = Arc::new(Change {
            rv: self.rv,
            key: key.clone(),
            namespace: namespace.to_owned(),
            kind,
            object,
            old,
            encoded: EncodedForms::default(),
        });
        if let Some(stale) = self
            .history
            .len()
            .checked_sub(ENCODED_CHANGES)
            .and_then(|i| self.history.get(i))
        {
            stale.encoded.clear();
        }
        if self.history.len() >= self.history_capacity
            && let Some(dropped) = self.history.pop_front()
        {
            self.history_floor = dropped.rv;
        }
        self.history.push_back(change.clone());
        // No receiver is not an error: nobody watches yet.
        let _ = self.changes.send(change);
    }

    /// Stores a new object, assigning its resourceVersion.
    pub fn insert(&mut self, key: &StoreKey, mut object: Value) -> Arc<Value> {
        let rv = self.next_rv();
        Self::set_rv(&mut object, rv);
        let ok = (
            meta::str_at(&object, "/metadata/namespace").to_owned(),
            meta::name_of(&object).to_owned(),
        );
        self.index(key, &ok, &object, true);
        let object = Arc::new(object);
        self.objects
            .entry(key.clone())
            .or_default()
            .insert(ok.clone(), object.clone());
        self.record(key, &ok.0, ChangeKind::Added, object.clone(), None);
        object
    }

    /// Replaces a stored object. A write that changes nothing keeps the resourceVersion and
    /// emits no event.
    pub fn replace(&mut self, key: &StoreKey, mut object: Value) -> Arc<Value> {
        let ok = (
            meta::str_at(&object, "/metadata/namespace").to_owned(),
            meta::name_of(&object).to_owned(),
        );
        let old = self.get(key, &ok.0, &ok.1).cloned();
        if let Some(old) = &old {
            Self::set_rv(
                &mut object,
                meta::str_at(old, "/metadata/resourceVersion")
                    .parse()
                    .unwrap_or(0),
            );
            if **old == object {
                return old.clone();
            }
            self.index(key, &ok, old, false);
        }
        let rv = self.next_rv();
        Self::set_rv(&mut object, rv);
        self.index(key, &ok, &object, true);
        let object = Arc::new(object);
        self.objects
            .entry(key.clone())
            .or_default()
            .insert(ok.clone(), object.clone());
        let kind = if old.is_some() {
            ChangeKind::Modified
        } else {
            ChangeKind::Added
        };
        self.record(key, &ok.0, kind, object.clone(), old);
        object
    }

    /// Removes an object; the DELETED event carries its last state with a new resourceVersion.
    pub fn remove(&mut self, key: &StoreKey, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.remove_as(key, namespace, name, None)
    }

    /// Removes an object whose final write is `last` (e.g. the update that dropped the last
    /// finalizer): one DELETED event carries it.
    pub fn remove_as(
        &mut self,
        key: &StoreKey,
        namespace: &str,
        name: &str,
        last: Option<Value>,
    ) -> Option<Arc<Value>> {
        let ok = (namespace.to_owned(), name.to_owned());
        let old = self.objects.get_mut(key)?.remove(&ok)?;
        self.index(key, &ok, &old, false);
        let rv = self.next_rv();
        let mut last = last.unwrap_or_else(|| (*old).clone());
        Self::set_rv(&mut last, rv);
        let last = Arc::new(last);
        self.record(key, namespace, ChangeKind::Deleted, last.clone(), Some(old));
        Some(last)
    }

    /// The changes after `rv` and a live receiver for everything later, without a gap.
    pub fn subscribe_after(&self, rv: u64) -> Result<Subscription, Expired> {
        self.check_replayable(rv)?;
        let replay = self.history.iter().filter(|c| c.rv > rv).cloned().collect();
        Ok((replay, self.changes.subscribe()))
    }

    /// Whether every change after `rv` is still in the history.
    pub fn check_replayable(&self, rv: u64) -> Result<(), Expired> {
        if rv < self.history_floor {
            return Err(Expired {
                oldest: self.history_floor + 1,
            });
        }
        Ok(())
    }

    /// A live receiver starting now.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str, data: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")}, "data": {"k": data}})
    }

    #[test]
    fn resource_versions_increase_and_noop_writes_keep_them() {
        let key = StoreKey::new("", "configmaps");
        let mut state = State::new(100);
        let a = state.insert(&key, cm("a", "1"));
        assert_eq!(meta::str_at(&a, "/metadata/resourceVersion"), "1");
        let same = state.replace(&key, cm("a", "1"));
        assert_eq!(meta::str_at(&same, "/metadata/resourceVersion"), "1");
        let changed = state.replace(&key, cm("a", "2"));
        assert_eq!(meta::str_at(&changed, "/metadata/resourceVersion"), "2");
        let gone = state.remove(&key, "default", "a").expect("stored");
        assert_eq!(meta::str_at(&gone, "/metadata/resourceVersion"), "3");
        assert_eq!(state.resource_version(), 3);
        assert!(state.locate_uid("uid-a").is_none());
    }

    #[test]
    fn history_is_bounded_and_old_starts_expire() {
        let key = StoreKey::new("", "configmaps");
        let mut state = State::new(2);
        for i in 0..5 {
            state.insert(&key, cm(&format!("c{i}"), "x"));
        }
        assert_eq!(state.subscribe_after(1).err(), Some(Expired { oldest: 4 }));
        let (replay, _) = state.subscribe_after(3).expect("in history");
        assert_eq!(replay.iter().map(|c| c.rv).collect::<Vec<_>>(), vec![4, 5]);
    }

    #[test]
    fn owner_index_follows_writes() {
        let key = StoreKey::new("", "configmaps");
        let mut state = State::new(10);
        let mut child = cm("child", "x");
        child["metadata"]["ownerReferences"] =
            json!([{"uid": "owner-1", "name": "o", "kind": "X", "apiVersion": "v1"}]);
        state.insert(&key, child);
        assert_eq!(state.dependents_of("owner-1").len(), 1);
        state.remove(&key, "default", "child");
        assert!(state.dependents_of("owner-1").is_empty());
    }

    #[test]
    fn encoded_forms_are_shared_per_form_and_dropped_further_back() {
        let forms = EncodedForms::default();
        let mut calls = 0;
        for _ in 0..3 {
            let bytes = forms.get_or_encode("v1", "ConfigMap", "MODIFIED", || {
                calls += 1;
                Bytes::from_static(b"line")
            });
            assert_eq!(bytes, Bytes::from_static(b"line"));
        }
        forms.get_or_encode("v1", "ConfigMap", "ADDED", || {
            calls += 1;
            Bytes::from_static(b"added")
        });
        assert_eq!(calls, 2, "one encoding per form");

        let mut state = State::new(1000);
        let key = StoreKey::new("", "configmaps");
        state.insert(&key, cm("first", "x"));
        let first = state.history.back().expect("history").clone();
        let cached = |change: &Change| change.encoded.0.lock().expect("lock").len();
        first
            .encoded
            .get_or_encode("v1", "ConfigMap", "ADDED", || Bytes::from_static(b"x"));
        for i in 1..ENCODED_CHANGES {
            state.insert(&key, cm(&format!("c{i}"), "x"));
        }
        assert_eq!(cached(&first), 1, "recent changes keep their lines");
        state.insert(&key, cm("one-more", "x"));
        assert_eq!(cached(&first), 0, "older changes drop them");
    }
}
