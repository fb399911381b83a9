//! Reading what the framework writes on any managed kind: conditions, the external-name
//! annotation and the finalizer.

use ferroplane_apis::common::names::{EXTERNAL_NAME, FINALIZER, READY};
use ferroplane_apis::common::{Condition, ConditionStatus, Managed};
use kube::Resource;

/// The condition of `type_`, if the object has one.
pub fn condition<'a, K: Managed>(object: &'a K, type_: &str) -> Option<&'a Condition> {
    object.conditions().iter().find(|c| c.type_ == type_)
}

/// Whether the object's condition `type_` has this status and reason.
pub fn has_condition<K: Managed>(
    object: &K,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
) -> bool {
    condition(object, type_).is_some_and(|c| c.status == status && c.reason == reason)
}

/// Whether the object is Ready=True (any reason).
pub fn is_ready<K: Managed>(object: &K) -> bool {
    condition(object, READY).is_some_and(|c| c.status == ConditionStatus::True)
}

/// The `ferroplane.io/external-name` annotation.
pub fn external_name<K: Resource>(object: &K) -> Option<String> {
    object
        .meta()
        .annotations
        .as_ref()?
        .get(EXTERNAL_NAME)
        .cloned()
}

/// Whether the object carries the framework's finalizer.
pub fn has_finalizer<K: Resource>(object: &K) -> bool {
    object
        .meta()
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == FINALIZER)
}
