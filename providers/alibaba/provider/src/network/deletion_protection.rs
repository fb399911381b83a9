//! Deletion protection of EIPs and NAT gateways (the VPC API's `DeletionProtection`): the
//! drift between the spec and the cloud, applying it in place, and lifting it before a delete
//! when, and only when, the spec says `false`.

use alibaba_sdk::vpc::{ALREADY_ENABLED, Protected};
use ferroplane_runtime::ReconcileError;

use crate::cloud_connector::CloudClients;
use crate::reasons::DELETION_PROTECTION;

/// The protection to set, when the spec asks for one the cloud does not have.
pub fn drift(want: Option<bool>, have: bool) -> Option<bool> {
    want.filter(|w| *w != have)
}

/// The diff line of a drift.
pub fn diff_line(want: bool) -> String {
    format!("deletionProtection: {} → {want}", !want)
}

fn refused(kind: Protected, id: &str) -> ReconcileError {
    let what = match kind {
        Protected::Eip => "EIP",
        Protected::NatGateway => "NAT gateway",
    };
    ReconcileError::terminal(
        DELETION_PROTECTION,
        format!(
            "{what} {id} has deletion protection on, so the cloud refuses to delete it: set spec.forProvider.deletionProtection: false (the object can still be edited while it is being deleted), or deletionPolicy: Orphan to keep it"
        ),
    )
}

impl CloudClients {
    /// Turns the protection of `id` on or off; protecting a protected one is no error.
    pub(crate) async fn set_deletion_protection(
        &self,
        kind: Protected,
        id: &str,
        enable: bool,
    ) -> Result<(), ReconcileError> {
        match self
            .raw(
                "DeletionProtection",
                self.region.vpc.deletion_protection(kind, id, enable),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if enable && e.code() == Some(ALREADY_ENABLED) => Ok(()),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// Before a delete: a protected resource is unprotected only when the spec says `false`;
    /// otherwise the delete fails with the reason until the spec changes.
    pub(crate) async fn lift_deletion_protection(
        &self,
        kind: Protected,
        id: &str,
        protected: bool,
        want: Option<bool>,
    ) -> Result<(), ReconcileError> {
        match (protected, want) {
            (false, _) => Ok(()),
            (true, Some(false)) => self.set_deletion_protection(kind, id, false).await,
            (true, _) => Err(refused(kind, id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_stated_protection_that_differs_drifts() {
        assert_eq!(drift(None, true), None);
        assert_eq!(drift(Some(true), true), None);
        assert_eq!(drift(Some(true), false), Some(true));
        assert_eq!(drift(Some(false), true), Some(false));
        assert_eq!(diff_line(true), "deletionProtection: false → true");
    }

    #[test]
    fn the_refusal_names_the_resource_and_the_way_out() {
        let e = refused(Protected::NatGateway, "ngw-1");
        assert_eq!(e.reason(), DELETION_PROTECTION);
        assert!(e.message().contains("NAT gateway ngw-1"), "{}", e.message());
        assert!(
            e.message().contains("deletionProtection: false"),
            "{}",
            e.message()
        );
    }
}
