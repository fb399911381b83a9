//! Which configuration each managed object references, so that a configuration is reconciled
//! when its users change.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroplane_apis::common::{Managed, ProviderConfigKind};
use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;

use super::config_kind::ConfigKind;

/// Which configuration each managed object referenced last, so that only a new, changed or
/// dropped reference reconciles a configuration (not every status write of an instance).
#[derive(Default)]
pub(super) struct ReferenceChanges {
    /// By object UID (unique across kinds): the configuration referenced, and whether deletion had started.
    seen: Mutex<HashMap<String, (ProviderConfigKind, String, bool)>>,
}

/// A configuration whose users an instance's change concerns.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Concerned {
    pub(super) kind: ProviderConfigKind,
    name: String,
    /// The instance's namespace (where a ProviderConfig lives).
    namespace: Option<String>,
}

impl Concerned {
    pub(super) fn object_ref<P: ConfigKind>(&self) -> ObjectRef<P> {
        let r = ObjectRef::new(&self.name);
        match (P::KIND, &self.namespace) {
            (ProviderConfigKind::ProviderConfig, Some(ns)) => r.within(ns),
            _ => r,
        }
    }
}

impl ReferenceChanges {
    /// The configurations this version of `instance` concerns: the one it references when that
    /// reference or the deletion state is new, and the one it referenced before, if another.
    pub(super) fn concerned<K: Managed + ResourceExt>(&self, instance: &K) -> Vec<Concerned> {
        let Some(reference) = instance.provider_config_ref() else {
            return Vec::new();
        };
        let uid = instance.uid().unwrap_or_else(|| instance.name_any());
        let deleting = instance.meta().deletion_timestamp.is_some();
        let finished = deleting && instance.finalizers().is_empty();
        let state = (reference.kind, reference.name.clone(), deleting);
        let previous = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            if finished {
                seen.remove(&uid)
            } else {
                seen.insert(uid, state.clone())
            }
        };
        if !finished && previous.as_ref() == Some(&state) {
            return Vec::new();
        }
        let concerned = |kind, name: &str| Concerned {
            kind,
            name: name.to_owned(),
            namespace: instance.namespace(),
        };
        let mut out = vec![concerned(reference.kind, &reference.name)];
        // A changed reference also frees the configuration referenced before.
        if let Some((kind, name, _)) = previous
            && (kind, &name) != (reference.kind, &reference.name)
        {
            out.push(concerned(kind, &name));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ECSInstance, ProviderConfig};
    use jiff::Timestamp;
    use serde_json::json;

    use super::*;

    fn instance(config: &str, deleting: bool, finalizers: &[&str]) -> ECSInstance {
        let mut i: ECSInstance = serde_json::from_value(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ECSInstance",
            "metadata": {"name": "vm", "namespace": "ns", "uid": "u-vm"},
            "spec": {
                "providerConfigRef": {"name": config},
                "forProvider": {"regionId": "cn-beijing", "imageId": "img", "instanceType": "ecs.g6.large"},
            },
        }))
        .expect("instance");
        if deleting {
            i.metadata.deletion_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now()),
            );
        }
        i.metadata.finalizers = Some(finalizers.iter().map(|f| (*f).to_owned()).collect());
        i
    }

    /// The references of kind `P` among what a change concerns.
    fn refs<P: ConfigKind>(
        changes: &ReferenceChanges,
        instance: &ECSInstance,
    ) -> Vec<ObjectRef<P>> {
        changes
            .concerned(instance)
            .iter()
            .filter(|c| c.kind == P::KIND)
            .map(Concerned::object_ref::<P>)
            .collect()
    }

    #[test]
    fn only_reference_changes_reconcile_a_config() {
        let changes = ReferenceChanges::default();
        let refs_a = refs::<ProviderConfig>(&changes, &instance("a", false, &[]));
        assert_eq!(refs_a, vec![ObjectRef::new("a").within("ns")]);
        assert!(refs::<ProviderConfig>(&changes, &instance("a", false, &[])).is_empty());
        // Moved to another config: both are reconciled.
        let moved = refs::<ProviderConfig>(&changes, &instance("b", false, &[]));
        assert_eq!(moved.len(), 2);
        // Not of this kind (each kind's controller gets only its own).
        let cluster = ReferenceChanges::default();
        assert!(refs::<ClusterProviderConfig>(&cluster, &instance("c", false, &[])).is_empty());
        // Deletion started, then finished.
        assert_eq!(
            refs::<ProviderConfig>(&changes, &instance("b", true, &["x"])).len(),
            1
        );
        assert_eq!(
            refs::<ProviderConfig>(&changes, &instance("b", true, &[])).len(),
            1
        );
    }
}
