//! The cases every kind runs ([`Case`]), the classes of cloud failure injected at each step
//! ([`FaultClass`]), and which cases apply to which kind.

use std::fmt;

use alibaba_mock::{ErrorInjection, ResourceKind, ScriptedFault};

use super::registration::{Naming, Registration};

/// A class of failure one cloud call is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultClass {
    /// `Throttling.User`.
    Throttling,
    /// `ServiceUnavailable` (503) on reads, `InternalError` (500) on writes.
    ServerError,
    /// The not-found code of a resource of another kind (e.g. `InvalidVpcId.NotFound` to an
    /// instance call).
    OtherNotFound,
    /// `Forbidden.RAM`.
    Forbidden,
    /// The call runs; its answer is cut.
    DroppedConnection,
    /// The call runs; the answer is a 200 with truncated JSON.
    MalformedBody,
}

impl FaultClass {
    pub const ALL: [Self; 6] = [
        Self::Throttling,
        Self::ServerError,
        Self::OtherNotFound,
        Self::Forbidden,
        Self::DroppedConnection,
        Self::MalformedBody,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Throttling => "throttling",
            Self::ServerError => "5xx",
            Self::OtherNotFound => "other-not-found",
            Self::Forbidden => "forbidden",
            Self::DroppedConnection => "dropped-connection",
            Self::MalformedBody => "malformed-body",
        }
    }

    /// The injection answering the next call of `action` by `account` with this class, for a
    /// kind whose resources are `kind`.
    pub fn injection(self, action: &str, kind: ResourceKind, account: &str) -> ErrorInjection {
        let read = action.starts_with("Describe") || action.starts_with("List");
        let code = |code: &str| ErrorInjection::new(code, Some(action), 1);
        let injection = match self {
            Self::Throttling => code("Throttling.User"),
            Self::ServerError if read => code("ServiceUnavailable"),
            Self::ServerError => code("InternalError"),
            Self::OtherNotFound if kind == ResourceKind::Vpc => code("InvalidVSwitchId.NotFound"),
            Self::OtherNotFound => code("InvalidVpcId.NotFound"),
            Self::Forbidden => code("Forbidden.RAM"),
            Self::DroppedConnection => {
                ErrorInjection::fault(ScriptedFault::DroppedResponse, Some(action), 1)
            }
            Self::MalformedBody => {
                ErrorInjection::fault(ScriptedFault::TruncatedBody, Some(action), 1)
            }
        };
        injection.for_account(account)
    }
}

/// One case of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Case {
    /// Each cloud call of each step (first look, create, poll, update, delete) answered once
    /// with the class.
    Fault(FaultClass),
    /// The controllers killed again and again while objects are created, then deleted.
    CrashStorm,
    /// An external name that names nothing.
    ImportMissing,
    /// A resource with the object's name that nobody owns exists already (user-chosen names).
    SameNameUnowned,
    /// The connection Secret's name is taken by a Secret the object does not control.
    SecretNameTaken,
    /// Deleted right after its create call.
    DeleteWhileCreating,
    /// Deleted right after its update call.
    DeleteWhileUpdating,
    /// Objects in two namespaces import one unowned resource at once.
    TwoNamespacesClaim,
    /// `providerConfigRef` moved to a configuration of another account.
    ProviderConfigMoved,
    /// Crossplane's annotations: created `crossplane.io/paused`, then resumed with a
    /// `crossplane.io/reconcile-requested-at` token; named under both external-name keys.
    CrossplaneAnnotations,
}

impl Case {
    /// Every case, in the matrix's order.
    pub fn all() -> Vec<Self> {
        let mut all: Vec<Self> = FaultClass::ALL.into_iter().map(Self::Fault).collect();
        all.extend([
            Self::CrashStorm,
            Self::ImportMissing,
            Self::SameNameUnowned,
            Self::SecretNameTaken,
            Self::DeleteWhileCreating,
            Self::DeleteWhileUpdating,
            Self::TwoNamespacesClaim,
            Self::ProviderConfigMoved,
            Self::CrossplaneAnnotations,
        ]);
        all
    }

    /// Why the case does not apply to the kind, if it does not.
    pub fn not_applicable(self, kind: &Registration) -> Option<&'static str> {
        match self {
            Self::SameNameUnowned if kind.naming == Naming::CloudAssigned => {
                Some("the cloud assigns names")
            }
            Self::SameNameUnowned | Self::TwoNamespacesClaim if kind.naming == Naming::Binding => {
                Some(
                    "a binding carries no owner tag: objects naming the same two resources share it",
                )
            }
            Self::SecretNameTaken if !kind.writes_connection_secret => {
                Some("writes no connection Secret")
            }
            Self::DeleteWhileUpdating if kind.update.is_none() => Some("nothing updates in place"),
            _ => None,
        }
    }

    /// A short name for namespaces and the matrix.
    pub fn name(self) -> String {
        match self {
            Self::Fault(class) => format!("fault-{}", class.name()),
            Self::CrashStorm => "crash-storm".into(),
            Self::ImportMissing => "import-missing".into(),
            Self::SameNameUnowned => "same-name-unowned".into(),
            Self::SecretNameTaken => "secret-name-taken".into(),
            Self::DeleteWhileCreating => "delete-while-creating".into(),
            Self::DeleteWhileUpdating => "delete-while-updating".into(),
            Self::TwoNamespacesClaim => "two-namespaces-claim".into(),
            Self::ProviderConfigMoved => "provider-config-moved".into(),
            Self::CrossplaneAnnotations => "crossplane-annotations".into(),
        }
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
