//! The resourceVersion of each managed object as this process last wrote or read it. Two uses:
//! - The informer cache lags behind our own writes by a moment, and a reconcile that starts in
//!   that moment would act on a version without the status written just before, and pay for it
//!   with a conflict and a retry. When the cache's version is not the one we know, the
//!   reconcile reads the object instead; in steady state they match and nothing is read.
//! - A watch event carrying exactly the version we wrote (our finalizer, our external name and
//!   late-initialized spec) needs no reconcile: the reconcile that wrote it already acted.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::Resource;

#[derive(Default)]
pub(crate) struct KnownVersions {
    by_object: Mutex<HashMap<String, String>>,
}

impl KnownVersions {
    /// Remembers `obj`'s version, just written or read.
    pub(crate) fn note<K: Resource>(&self, key: &str, obj: &K) {
        if let Some(version) = &obj.meta().resource_version {
            let mut known = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
            match known.get_mut(key) {
                Some(v) if v == version => {}
                Some(v) => v.clone_from(version),
                None => {
                    known.insert(key.to_owned(), version.clone());
                }
            }
        }
    }

    /// Whether `cached` may be acted on: it is the version we know, or we know none (the first
    /// reconcile since this process started, when the cache is all there is).
    pub(crate) fn is_current<K: Resource>(&self, key: &str, cached: &K) -> bool {
        let known = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
        known
            .get(key)
            .is_none_or(|v| cached.meta().resource_version.as_ref() == Some(v))
    }

    /// Whether `obj` is exactly the version we last wrote or read.
    pub(crate) fn is_own<K: Resource>(&self, key: &str, obj: &K) -> bool {
        let known = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
        obj.meta()
            .resource_version
            .as_ref()
            .is_some_and(|rv| known.get(key) == Some(rv))
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
}
