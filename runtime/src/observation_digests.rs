//! What a kind's cache keeps of `status.atProvider` when the kind sheds it
//! ([`Managed::shed_observation`]): a 64-bit digest per object instead of the observation, often
//! the largest part of a cached object (about 1.1 KiB of an ECSInstance's 2.4 KiB before its
//! heap). The status write compares the observation it reports with the digest, so a steady
//! object still costs no write; a changed one replaces `atProvider` whole, since a merge patch
//! could not remove the fields that went without knowing them.
//!
//! The watch records a digest for every version it delivers (and forgets deleted objects, and
//! after a re-list those that were not listed again); the reconciler reads it.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use kube::runtime::watcher::Event;
use serde_json::Value;

use crate::object_table::object_key;
use crate::resource::ManagedResource;

#[derive(Default)]
pub(crate) struct ObservationDigests {
    state: Mutex<State>,
}

/// The digest of one object's observation, and of the resourceVersion it was stored with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Entry {
    version: u64,
    observation: u64,
}

#[derive(Default)]
struct State {
    by_object: HashMap<Box<str>, Entry>,
    /// During a re-list, the objects listed so far.
    relisted: Option<HashSet<Box<str>>>,
}

impl ObservationDigests {
    /// Sheds the observation of the object `event` carries, noting its digest.
    pub(crate) fn on_event<K: ManagedResource>(&self, event: &mut Event<K>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::Init => state.relisted = Some(HashSet::new()),
            Event::InitApply(obj) | Event::Apply(obj) => match obj.shed_observation() {
                Some(observed) => {
                    let key: Box<str> = object_key(&*obj).into();
                    let entry = Entry {
                        version: version_digest(obj.meta().resource_version.as_deref()),
                        observation: digest(&observed),
                    };
                    if let Some(relisted) = state.relisted.as_mut() {
                        relisted.insert(key.clone());
                    }
                    state.by_object.insert(key, entry);
                }
                // Nothing shed (most kinds: the table stays empty and costs nothing per event).
                None if state.by_object.is_empty() => {}
                None => {
                    state.by_object.remove(object_key(&*obj).as_str());
                }
            },
            Event::Delete(obj) => {
                obj.shed_observation();
                if !state.by_object.is_empty() {
                    state.by_object.remove(object_key(&*obj).as_str());
                }
            }
            Event::InitDone => {
                if let Some(relisted) = state.relisted.take() {
                    state.by_object.retain(|key, _| relisted.contains(key));
                }
            }
        }
    }

    /// Whether `obj`, a copy from the cache without its observation, was stored with `observed`
    /// as it: `None` when nothing is known of that version (the watch delivered a newer one
    /// meanwhile, or the kind sheds nothing).
    pub(crate) fn matches<K: ManagedResource>(&self, obj: &K, observed: &Value) -> Option<bool> {
        let version = version_digest(obj.meta().resource_version.as_deref());
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let entry = state.by_object.get(object_key(obj).as_str())?;
        (entry.version == version).then(|| entry.observation == digest(observed))
    }
}

fn version_digest(version: Option<&str>) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    version.hash(&mut hasher);
    hasher.finish()
}

/// A digest of `value` as a status holds it: object keys in sorted order, `null` members left
/// out (a merge patch cannot store them), so that equal statuses digest equally whatever the
/// order their maps were built in.
pub(crate) fn digest(value: &Value) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    feed(value, &mut hasher);
    hasher.finish()
}

fn feed(value: &Value, h: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            for item in items {
                feed(item, h);
            }
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> =
                map.iter().filter(|(_, v)| !v.is_null()).collect();
            members.sort_by_key(|(k, _)| *k);
            (5u8, members.len()).hash(h);
            for (k, v) in members {
                k.hash(h);
                feed(v, h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_statuses_digest_equally_whatever_their_order_and_nulls() {
        let a = json!({"status": "Running", "ips": ["10.0.0.1"], "nested": {"x": 1, "y": "z"}});
        let b = json!({"nested": {"y": "z", "x": 1, "gone": null}, "ips": ["10.0.0.1"], "status": "Running", "eip": null});
        assert_eq!(digest(&a), digest(&b));
        for changed in [
            json!({"status": "Stopped", "ips": ["10.0.0.1"], "nested": {"x": 1, "y": "z"}}),
            json!({"status": "Running", "ips": [], "nested": {"x": 1, "y": "z"}}),
            json!({"status": "Running", "ips": ["10.0.0.1"], "nested": {"x": 1}}),
            json!({"status": "Running", "ips": ["10.0.0.1"], "nested": {"x": "1", "y": "z"}}),
            json!({"status": "Running", "ips": [["10.0.0.1"]], "nested": {"x": 1, "y": "z"}}),
        ] {
            assert_ne!(digest(&a), digest(&changed), "{changed}");
        }
    }
}
