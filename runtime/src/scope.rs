//! The external scope: where an object's external resource lives (for a cloud, its account and
//! region), recorded beside the external name in `ferroplane.io/external-scope` when the name is
//! recorded, and compared with where the object's client acts now on every reconcile. Moving
//! `providerConfigRef` to credentials of another account must not create a second resource there
//! while the first keeps running, unmanaged, and is never deleted: such an object is refused
//! until the configuration points back, or the object is orphaned and replaced.

use crate::error::{ReconcileError, RetryClass};
use crate::reasons::SCOPE_CHANGED;

/// The refusal when the recorded scope and the client's differ; `None` when they agree or
/// either is unknown (a kind without scopes, or a name recorded before scopes were).
pub(crate) fn moved(
    external_name: Option<&str>,
    recorded: Option<&str>,
    current: Option<&str>,
) -> Option<ReconcileError> {
    let (name, recorded, current) = (external_name?, recorded?, current?);
    if recorded == current {
        return None;
    }
    Some(ReconcileError::new(
        SCOPE_CHANGED,
        format!(
            "external resource {name} lives in {recorded} (account/region), but \
             spec.providerConfigRef now resolves to credentials acting in {current}; ferroplane \
             never moves a resource between accounts or regions, and neither creates one in the \
             new place nor deletes the old one meanwhile. Set providerConfigRef back to a \
             configuration of {recorded}; to manage a resource in the new place instead, set \
             deletionPolicy: Orphan, delete this object, and create a new one (or import an \
             existing resource there with ferroplane.io/external-name)"
        ),
        RetryClass::UntilSpecChanges,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_two_known_different_scopes_are_a_move() {
        let a = Some("111/cn-beijing");
        let b = Some("222/cn-beijing");
        assert!(moved(Some("i-1"), a, a).is_none());
        assert!(
            moved(Some("i-1"), None, b).is_none(),
            "recorded before scopes"
        );
        assert!(
            moved(Some("i-1"), a, None).is_none(),
            "a kind without scopes"
        );
        assert!(moved(None, a, b).is_none(), "nothing named");
        let err = moved(Some("i-1"), a, b).expect("moved");
        assert_eq!(err.reason(), SCOPE_CHANGED);
        assert!(err.message().contains("111/cn-beijing"), "{err}");
        assert!(err.message().contains("222/cn-beijing"), "{err}");
        assert!(err.message().contains("deletionPolicy: Orphan"), "{err}");
    }
}
