//! Whose a child is: the label every rendered child carries (and the watch selector built on
//! it), whether children carry an owner reference under the object's policies, whether a live
//! child's owner references agree, and whether a live object is this owner's to change at all
//! ([`holder`]). Pure.

use ferroplane_apis::common::Managed;
use kube::runtime::watcher;
use serde_json::Value;

use crate::idempotency::UID_TAG;
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

/// Who holds a live object that has the name of a child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    /// This owner: its controller reference names it, or (no controller reference, as with
    /// deletion policy Orphan) its [`UID_TAG`] label does.
    Us,
    /// Another object's controller reference (`Kind/name`).
    Owner(String),
    /// Nobody ferroplane knows for this owner: made by hand or another tool, or left behind by
    /// a deleted object (deletion policy Orphan).
    Nobody,
}

/// Who holds `live`, for the owner with `owner_uid`. An object is changed, adopted or deleted
/// only when it is [`Holder::Us`]: like KubeVela's take-over policy, ferroplane never takes an
/// object someone else made by merely sharing its name.
pub fn holder(live: &Value, owner_uid: &str) -> Holder {
    let controller = live["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| {
            refs.iter()
                .find(|r| r["controller"].as_bool() == Some(true))
        });
    match controller {
        Some(r) if r["uid"].as_str() == Some(owner_uid) => Holder::Us,
        Some(r) => Holder::Owner(format!(
            "{}/{}",
            r["kind"].as_str().unwrap_or_default(),
            r["name"].as_str().unwrap_or_default()
        )),
        None if labelled_for(live, owner_uid) => Holder::Us,
        None => Holder::Nobody,
    }
}

/// Whether `live` carries the owner's [`UID_TAG`] label, whoever its controller reference names.
pub fn labelled_for(live: &Value, owner_uid: &str) -> bool {
    live["metadata"]["labels"][UID_TAG].as_str() == Some(owner_uid)
}

/// Why `child_key` (`Kind/name`) is refused, for a [`Holder`] other than [`Holder::Us`].
pub fn refusal_message(child_key: &str, holder: &Holder, owner_uid: &str) -> Option<String> {
    match holder {
        Holder::Us => None,
        Holder::Owner(other) => Some(format!(
            "{child_key} already exists and belongs to {other}; it is left unchanged and nothing \
             else is applied. Rename this object, or delete {other} first"
        )),
        Holder::Nobody => Some(format!(
            "{child_key} already exists and was not made for this object (no owner reference \
             or {UID_TAG} label of it); it is left unchanged and nothing else is applied. Rename \
             this object, delete {child_key}, or hand it over by labelling it \
             {UID_TAG}={owner_uid}"
        )),
    }
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
    fn only_our_controller_reference_or_uid_label_makes_a_live_object_ours() {
        let ours = json!({"metadata": {"ownerReferences": [
            {"uid": "u", "controller": true, "kind": "EtcdCluster", "name": "e"}]}});
        assert_eq!(holder(&ours, "u"), Holder::Us);
        let orphaned_ours = json!({"metadata": {"labels": {UID_TAG: "u"}}});
        assert_eq!(holder(&orphaned_ours, "u"), Holder::Us);
        let theirs = json!({"metadata": {
            "labels": {UID_TAG: "u"},
            "ownerReferences": [{"uid": "x", "controller": true, "kind": "Application", "name": "etcd-demo"}]}});
        assert_eq!(
            holder(&theirs, "u"),
            Holder::Owner("Application/etcd-demo".into())
        );
        let by_hand = json!({"metadata": {"labels": {"app": "web"}}});
        assert_eq!(holder(&by_hand, "u"), Holder::Nobody);
        let message = refusal_message("Deployment/web", &Holder::Nobody, "u").expect("refused");
        assert!(message.contains("Deployment/web") && message.contains("ferroplane.io/uid=u"));
        assert!(refusal_message("Deployment/web", &Holder::Us, "u").is_none());
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
