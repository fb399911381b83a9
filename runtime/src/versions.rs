//! The resourceVersions of each managed object as this process last wrote or read them. Two
//! uses:
//! - The informer cache lags behind our own writes by a moment, and a reconcile that starts in
//!   that moment would act on a version without the status written just before, and pay for it
//!   with a conflict and a retry. When the cache's version is not the last one we know, the
//!   reconcile reads the object instead; in steady state they match and nothing is read.
//! - A watch event carrying a version we wrote (our finalizer, our external name and
//!   late-initialized spec) needs no reconcile: the reconcile that wrote it already acted. A
//!   create writes the finalizer, the name and the status one after the other, and the watch
//!   delivers the first two after the third was noted, so the last few versions count, not
//!   only the last one (else each create would be reconciled again at once, before the cloud
//!   lists the new resource).

use std::collections::HashMap;
use std::sync::Mutex;

use kube::Resource;

/// Versions remembered per object: the writes of one reconcile (finalizer, name, status).
const REMEMBERED: usize = 3;

#[derive(Default)]
pub(crate) struct KnownVersions {
    /// Per object, its versions, the last one first.
    by_object: Mutex<HashMap<String, Vec<Box<str>>>>,
}

impl KnownVersions {
    /// Remembers `obj`'s version, just written or read.
    pub(crate) fn note<K: Resource>(&self, key: &str, obj: &K) {
        if let Some(version) = &obj.meta().resource_version {
            let mut known = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
            match known.get_mut(key) {
                Some(versions) if versions.first().is_some_and(|v| **v == **version) => {}
                Some(versions) => {
                    versions.retain(|v| **v != **version);
                    versions.truncate(REMEMBERED - 1);
                    versions.insert(0, version.as_str().into());
                }
                None => {
                    known.insert(key.to_owned(), vec![version.as_str().into()]);
                }
            }
        }
    }

    /// Whether `cached` may be acted on: it is the last version we know, or we know none (the
    /// first reconcile since this process started, when the cache is all there is).
    pub(crate) fn is_current<K: Resource>(&self, key: &str, cached: &K) -> bool {
        let known = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
        known
            .get(key)
            .and_then(|v| v.first())
            .is_none_or(|v| cached.meta().resource_version.as_deref() == Some(&**v))
    }

    /// Whether `obj` is one of the versions we last wrote or read.
    pub(crate) fn is_own<K: Resource>(&self, key: &str, obj: &K) -> bool {
        let known = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
        obj.meta().resource_version.as_ref().is_some_and(|rv| {
            known
                .get(key)
                .is_some_and(|versions| versions.iter().any(|v| **v == **rv))
        })
    }

    pub(crate) fn forget(&self, key: &str) {
        self.by_object
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn at(version: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.resource_version = Some(version.to_owned());
        cm
    }

    #[test]
    fn a_cache_is_trusted_until_it_lags_behind_our_own_write() {
        let known = KnownVersions::default();
        assert!(known.is_current("ns/a", &at("5")), "nothing known yet");
        assert!(!known.is_own("ns/a", &at("5")));
        known.note("ns/a", &at("7"));
        assert!(!known.is_current("ns/a", &at("5")), "cache lags");
        assert!(known.is_current("ns/a", &at("7")));
        assert!(known.is_own("ns/a", &at("7")), "the event of our own write");
        assert!(!known.is_own("ns/a", &at("8")), "someone else's write");
        known.forget("ns/a");
        assert!(known.is_current("ns/a", &at("5")));
    }

    #[test]
    fn the_events_of_a_reconciles_earlier_writes_are_its_own_too() {
        let known = KnownVersions::default();
        // Finalizer, name, status: the watch delivers 7 and 8 after 9 was noted.
        for version in ["7", "8", "9"] {
            known.note("ns/a", &at(version));
        }
        assert!(known.is_own("ns/a", &at("7")));
        assert!(known.is_own("ns/a", &at("8")));
        assert!(
            !known.is_current("ns/a", &at("8")),
            "only the last is current"
        );
        assert!(known.is_current("ns/a", &at("9")));
        known.note("ns/a", &at("12"));
        assert!(!known.is_own("ns/a", &at("7")), "a few versions only");
        assert!(known.is_own("ns/a", &at("9")));
        assert!(!known.is_own("ns/a", &at("10")), "someone else's write");
        known.forget("ns/a");
        assert!(known.is_current("ns/a", &at("5")));
    }
}
