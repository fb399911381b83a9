//! Management policies and the deletion policy, resolved into the yes/no questions the
//! reconciler asks: may I create, update, late-initialize, delete?
//!
//! The supported combinations are Crossplane's, so manifests carry over: everything (`*` or the
//! five actions), Observe-only import, no-LateInitialize, no-Delete (orphan), no-Update, their
//! combinations, and Observe+Delete. Anything else is rejected with a condition that lists what is
//! accepted, rather than guessed at. An empty list means paused, as in Crossplane.

use std::collections::BTreeSet;
use std::fmt;

use ferroplane_apis::common::{DeletionPolicy, ManagementAction};

use ManagementAction::{All, Create, Delete, LateInitialize, Observe, Update};

/// Every accepted set of actions (order inside a set does not matter).
const SUPPORTED: &[&[ManagementAction]] = &[
    &[All],
    &[Observe, Create, Update, Delete, LateInitialize],
    &[Observe],
    &[],
    &[Observe, Create, Update, Delete],
    &[Observe, Create, Update, LateInitialize],
    &[Observe, Create, Update],
    &[Observe, Create, Delete, LateInitialize],
    &[Observe, Create, LateInitialize],
    &[Observe, Create, Delete],
    &[Observe, Create],
    &[Observe, Delete],
];

/// The policies of one object, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policies {
    actions: BTreeSet<ManagementAction>,
    deletion: DeletionPolicy,
}

/// `spec.managementPolicies` is not one of the supported combinations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "spec.managementPolicies {given} is not a supported combination; use [\"*\"], [\"Observe\"], \
     or Observe with any of Create, Update, Delete, LateInitialize where Update and LateInitialize \
     need Create (Observe+Delete is also accepted)"
)]
pub struct UnsupportedPolicies {
    given: String,
}

impl Policies {
    /// Validates the combination.
    pub fn resolve(
        actions: &[ManagementAction],
        deletion: DeletionPolicy,
    ) -> Result<Self, UnsupportedPolicies> {
        let set: BTreeSet<ManagementAction> = actions.iter().copied().collect();
        let supported = SUPPORTED
            .iter()
            .any(|combo| combo.iter().copied().collect::<BTreeSet<_>>() == set);
        if !supported {
            return Err(UnsupportedPolicies {
                given: format!("{:?}", ActionList(actions)),
            });
        }
        Ok(Self {
            actions: set,
            deletion,
        })
    }

    fn allows(&self, action: ManagementAction) -> bool {
        self.actions.contains(&All) || self.actions.contains(&action)
    }

    /// An empty list: reconcile nothing, like the `paused` annotation.
    pub fn is_paused(&self) -> bool {
        self.actions.is_empty()
    }

    pub fn should_create(&self) -> bool {
        self.allows(Create)
    }

    pub fn should_update(&self) -> bool {
        self.allows(Update)
    }

    pub fn should_late_initialize(&self) -> bool {
        self.allows(LateInitialize)
    }

    /// Delete the external resource with the object? Both fields must agree when the
    /// management policies are the default `*`; an explicit non-default list wins over
    /// `deletionPolicy`, as in Crossplane (so `[Observe, Delete]` deletes, and a list without
    /// Delete orphans even with `deletionPolicy: Delete`).
    pub fn should_delete(&self) -> bool {
        let default = self.actions.len() == 1 && self.actions.contains(&All);
        if default {
            self.deletion == DeletionPolicy::Delete
        } else {
            self.actions.contains(&Delete)
        }
    }
}

/// Prints actions as users write them (`"*"`, `Observe`, ...).
struct ActionList<'a>(&'a [ManagementAction]);

impl fmt::Debug for ActionList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .0
            .iter()
            .map(|a| match a {
                All => "*",
                Observe => "Observe",
                Create => "Create",
                Update => "Update",
                Delete => "Delete",
                LateInitialize => "LateInitialize",
            })
            .collect();
        write!(f, "{names:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DeletionPolicy::{Delete as DelPolicy, Orphan};

    fn p(actions: &[ManagementAction], d: DeletionPolicy) -> Policies {
        Policies::resolve(actions, d).expect("supported")
    }

    /// Only reading: an import that ferroplane never changes.
    fn observe_only(p: &Policies) -> bool {
        p.actions.len() == 1 && p.actions.contains(&Observe)
    }

    #[test]
    fn default_does_everything_and_follows_deletion_policy() {
        let all = p(&[All], DelPolicy);
        assert!(all.should_create() && all.should_update() && all.should_late_initialize());
        assert!(all.should_delete());
        assert!(!p(&[All], Orphan).should_delete());
        assert!(!observe_only(&all) && !all.is_paused());
    }

    #[test]
    fn explicit_list_wins_over_deletion_policy() {
        assert!(p(&[Observe, Delete], Orphan).should_delete());
        assert!(!p(&[Observe, Create, Update, LateInitialize], DelPolicy).should_delete());
        assert!(p(&[Observe, Create, Update, Delete, LateInitialize], Orphan).should_delete());
    }

    #[test]
    fn observe_only_import() {
        let o = p(&[Observe], DelPolicy);
        assert!(observe_only(&o));
        assert!(!o.should_create() && !o.should_update() && !o.should_late_initialize());
        assert!(!o.should_delete());
    }

    #[test]
    fn order_and_duplicates_do_not_matter() {
        assert!(Policies::resolve(&[Create, Observe, Create], DelPolicy).is_ok());
    }

    #[test]
    fn empty_is_paused() {
        assert!(p(&[], DelPolicy).is_paused());
    }

    #[test]
    fn unsupported_combinations_are_named() {
        for bad in [
            &[Create][..],
            &[Observe, Update],
            &[All, Observe],
            &[Observe, LateInitialize],
            &[Delete],
            &[Observe, Update, Delete, LateInitialize],
        ] {
            let err = Policies::resolve(bad, DelPolicy).expect_err("unsupported");
            assert!(
                err.to_string().contains("not a supported combination"),
                "{err}"
            );
        }
        let err = Policies::resolve(&[All, Observe], DelPolicy).expect_err("unsupported");
        assert!(err.to_string().contains(r#"["*", "Observe"]"#), "{err}");
    }

    #[test]
    fn every_supported_set_resolves() {
        for combo in SUPPORTED {
            assert!(Policies::resolve(combo, DelPolicy).is_ok(), "{combo:?}");
        }
    }
}
