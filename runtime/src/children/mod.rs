//! Child objects of in-cluster kinds (EtcdCluster, Application): the "external resource" of
//! those kinds is a set of Kubernetes objects rendered from the spec. This module holds what
//! every such provider needs once: a rendered child ([`Child`]), how it differs from the live
//! object ([`difference`]: drifted fields, owner references), whose it is ([`owned`], the
//! [`MANAGED_BY_LABEL`] and the [`watch_config`] selecting by it), and the API calls
//! ([`Children`]): refusing children that are not the owner's (reason [`CHILD_NOT_OURS`]),
//! server-side apply with the kind's field manager (forced, so hand edits of fields we own are
//! reverted), and deleting the owner's children ([`Children::delete_owned`]), a failed call being
//! a [`CallError`]. Orphaning is a rendering choice: children rendered without an owner
//! reference are left alone by garbage collection, and the framework drops the finalizer without
//! calling the provider's delete.

mod call_error;
mod child;
mod client;
mod drift;
mod ownership;

pub use call_error::CallError;
pub use child::Child;
pub use client::Children;
pub use ownership::{
    Holder, MANAGED_BY, MANAGED_BY_LABEL, holder, labelled_for, owned, refusal_message,
    watch_config,
};

pub use crate::reasons::CHILD_NOT_OURS;

use serde_json::Value;

use self::drift::drift;
use self::ownership::owner_reference_mismatch;

/// How the live object differs from the rendered `child`, as a message naming the child: the
/// first drifted field, else owner references that disagree with `owned` (see [`owned`]).
/// `None` when it matches.
pub fn difference(child: &Child, live: &Value, owner_uid: &str, owned: bool) -> Option<String> {
    if let Some(path) = drift(&child.object, live) {
        Some(format!("{} differs at {path}", child.key()))
    } else if owner_reference_mismatch(live, owner_uid, owned) {
        Some(format!(
            "{} owner reference does not match the deletion policy",
            child.key()
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use serde_json::json;

    #[test]
    fn difference_names_drift_before_ownership() {
        let child = Child::from_typed(&ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            data: Some([("k".to_owned(), "v".to_owned())].into()),
            ..ConfigMap::default()
        })
        .expect("serializes");
        let mut live = child.object.clone();
        assert_eq!(difference(&child, &live, "u", false), None);
        assert_eq!(
            difference(&child, &live, "u", true).as_deref(),
            Some("ConfigMap/a owner reference does not match the deletion policy")
        );
        live["data"]["k"] = json!("w");
        assert_eq!(
            difference(&child, &live, "u", true).as_deref(),
            Some("ConfigMap/a differs at data.k")
        );
    }
}
