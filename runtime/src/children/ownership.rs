//! Whose a child is: the label every rendered child carries (and the watch selector built on
//! it), whether children carry an owner reference under the object's policies, and whether a
//! live child's owner references agree. Pure.

use ferroplane_apis::common::Managed;
use kube::runtime::watcher;
use serde_json::Value;

use crate::policy::Policies;

/// Label on every child ferroplane renders, with the value [`MANAGED_BY`].
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Value of [`MANAGED_BY_LABEL`].
pub const MANAGED_BY: &str = "ferroplane";

/// Whether `mr`'s children carry an owner reference to it: only when its policies let the
/// framework delete them. Without one (deletion policy Orphan, or no Delete among the
/// management policies), garbage collection leaves the children running when `mr` goes.
pub fn owned<K: Managed>(mr: &K) -> bool {
    Policies::resolve(mr.management_policies(), mr.deletion_policy())
        .is_ok_and(|p| p.should_delete())
}

/// Whether the live child's owner references disagree with `owned`: an owned child must refer
/// to the owner's `uid`, an orphaned one must not.
pub fn owner_reference_mismatch(live: &Value, owner_uid: &str, owned: bool) -> bool {
    let refers = live["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["uid"].as_str() == Some(owner_uid)));
    refers != owned
}

/// A watch of one child kind that sees only children ferroplane rendered (and, narrowed by
/// `extra` labels, only those of one provider), so that child watches stay small.
pub fn watch_config(extra: &[(&str, &str)]) -> watcher::Config {
    let selector = std::iter::once((MANAGED_BY_LABEL, MANAGED_BY))
        .chain(extra.iter().copied())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    watcher::Config::default().labels(&selector)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ownership_follows_the_policy() {
        let live = json!({"metadata": {"ownerReferences": [{"uid": "u"}]}});
        assert!(!owner_reference_mismatch(&live, "u", true));
        assert!(owner_reference_mismatch(&live, "u", false));
        assert!(owner_reference_mismatch(
            &json!({"metadata": {}}),
            "u",
            true
        ));
    }

    #[test]
    fn the_selector_names_ferroplane_then_the_extra_labels() {
        assert_eq!(
            watch_config(&[]).label_selector.as_deref(),
            Some("app.kubernetes.io/managed-by=ferroplane")
        );
        assert_eq!(
            watch_config(&[("app.kubernetes.io/name", "etcd")])
                .label_selector
                .as_deref(),
            Some("app.kubernetes.io/managed-by=ferroplane,app.kubernetes.io/name=etcd")
        );
    }
}
