//! Errors of the EtcdCluster provider, each with a stable reason for conditions and events.

use ferroplane_runtime::ReconcileError;

use crate::membership::MembershipError;
use crate::reasons;

/// A spec ferroplane refuses to act on. The cluster keeps running as it is.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("version {0:?} is not an etcd version like 3.5.17")]
    BadVersion(String),
    #[error("etcd {0} is not supported; use 3.4 or later")]
    UnsupportedVersion(String),
    #[error(
        "spec.version {version} does not match the tag of spec.image {image:?}; set one of them or make them agree"
    )]
    VersionImageMismatch { version: String, image: String },
    #[error(
        "cannot change etcd from {from} (the version the cluster runs) to {to}: {}",
        upgrade_advice(path.as_ref())
    )]
    UnsupportedUpgrade {
        from: String,
        to: String,
        /// The release to move to first, when there is a path.
        path: Option<UpgradeStep>,
    },
    #[error(
        "name {name:?} is {len} characters long; EtcdCluster names may have at most {max} so that pod names stay valid DNS labels"
    )]
    NameTooLong {
        name: String,
        len: usize,
        max: usize,
    },
    #[error("size {0} is out of range; use 1 to 9 members")]
    BadSize(i32),
    #[error(
        "spec.options.{name} {problem}; the members keep running with the configuration they have until spec.options is fixed"
    )]
    Option {
        name: String,
        problem: OptionProblem,
    },
}

/// Why an entry of `spec.options` cannot go into etcd's configuration file. `given` is the value
/// as written (quoted when text), or a placeholder for options whose value is not shown.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OptionProblem {
    #[error("is set by ferroplane itself (names, URLs, data directory, bootstrap, TLS); remove it")]
    Reserved,
    #[error(
        "is not an entry of etcd's configuration file that ferroplane knows{}; options are etcd's flag names without --",
        suggestion.map(|s| format!(" (did you mean {s}?)")).unwrap_or_default()
    )]
    Unknown { suggestion: Option<&'static str> },
    #[error("is {0}; options take a number or a string")]
    NotScalar(&'static str),
    #[error("is {given}; etcd reads a whole number here{range}, written unquoted")]
    NotInteger { given: String, range: String },
    #[error("is {given}; etcd takes {range}")]
    OutOfRange { given: String, range: String },
    #[error("is {given}; etcd reads a boolean here: write \"true\" or \"false\"")]
    NotBoolean { given: String },
    #[error(
        "is {given}; etcd reads a duration here: write a Go duration such as \"500ms\" or \"1m30s\", or whole nanoseconds, not negative"
    )]
    NotDuration { given: String },
    #[error("is {given}; etcd accepts {}", allowed.join(", "))]
    NotOneOf {
        given: String,
        allowed: &'static [&'static str],
    },
    #[error("is {given}; etcd expects {expected}")]
    Malformed {
        given: String,
        expected: &'static str,
    },
    #[error("{0}")]
    Conflict(String),
}

fn upgrade_advice(path: Option<&UpgradeStep>) -> String {
    match path {
        Some(UpgradeStep { first, then, hazard }) => format!(
            "upgrade to {first} or later first, wait for every member to be healthy, then to {then}, as etcd's published upgrade path says{}. Set spec.version to {first} or a later {minor} release, wait for Ready, then change it again",
            hazard.map(|h| format!(" ({h})")).unwrap_or_default(),
            minor = first.rsplit_once('.').map_or(first.as_str(), |(m, _)| m),
        ),
        None => "etcd changes one minor version at a time, upward (a minor downgrade needs etcd's downgrade procedure, which ferroplane does not run), and never the major version; set spec.version back to the running minor version".to_owned(),
    }
}

impl SpecError {
    /// Stable CamelCase reason for conditions and events.
    pub fn reason(&self) -> &'static str {
        match self {
            SpecError::UnsupportedUpgrade { .. } => reasons::UNSUPPORTED_UPGRADE,
            SpecError::Option { .. } => reasons::INVALID_ETCD_OPTION,
            _ => reasons::INVALID_SPEC,
        }
    }
}

/// The release a cluster must run before it moves on to a later minor version
/// (`upgrade_path`'s table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeStep {
    /// The release to move to first: `3.5.26`.
    pub first: String,
    /// The minor version that may follow: `3.6`.
    pub then: String,
    /// What goes wrong when the step is skipped, with etcd's source.
    pub hazard: Option<&'static str>,
}

/// A rollout to the next minor version that waits for the members (`upgrade_path`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the rollout to etcd {to} waits until every member is healthy{}: {}; it starts by itself then",
    floor.as_deref().map(|f| format!(" on {f} or later")).unwrap_or_default(),
    waiting.join(", ")
)]
pub struct RolloutWait {
    pub to: String,
    /// The patch every member must report first.
    pub floor: Option<String>,
    /// Why, member by member.
    pub waiting: Vec<String>,
}

/// Everything that can make a reconcile of an EtcdCluster fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    RolloutWaits(#[from] RolloutWait),
    #[error("etcd membership change failed: {0}")]
    Membership(#[from] MembershipError),
    #[error("Kubernetes API call failed while {action}: {source}")]
    Kube {
        action: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot serialize {what}: {source}")]
    Serialize {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("the EtcdCluster has no {0}; it must come from the API server")]
    MissingMetadata(&'static str),
    #[error(
        "TLS Secret {name} lacks {missing}; give a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt, or remove the secret references to let ferroplane make the certificates"
    )]
    TlsSecret { name: String, missing: String },
    #[error(
        "auth Secret {name} {problem}; spec.auth.rootSecretRef must name a Secret in the cluster's namespace whose key password holds root's password"
    )]
    AuthSecret { name: String, problem: &'static str },
    #[error(transparent)]
    Certificate(#[from] crate::tls::certs::CertError),
    #[error("{0}")]
    NotOurs(String),
}

impl Error {
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            action: action.into(),
            source,
        }
    }

    /// Stable CamelCase reason for conditions and events.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Spec(e) => e.reason(),
            Error::RolloutWaits(_) => reasons::UPGRADE_WAITS_FOR_MEMBERS,
            Error::Membership(MembershipError::AuthFailed { .. }) => reasons::AUTH_FAILED,
            Error::Membership(MembershipError::CommonNameRefused { .. }) => {
                reasons::CLIENT_CERTIFICATE_HAS_COMMON_NAME
            }
            Error::Membership(_) => reasons::MEMBERSHIP_CHANGE_FAILED,
            Error::Kube { .. } => reasons::KUBERNETES_API_ERROR,
            Error::Serialize { .. } | Error::MissingMetadata(_) | Error::Certificate(_) => {
                reasons::INTERNAL_ERROR
            }
            Error::TlsSecret { .. } => reasons::TLS_SECRET_INVALID,
            Error::AuthSecret { .. } => reasons::AUTH_SECRET_INVALID,
            Error::NotOurs(_) => reasons::CHILD_NOT_OURS,
        }
    }
}

/// The runtime's error for `e`: a spec or ownership problem waits for the user, the rest is
/// retried.
pub(crate) fn to_reconcile(e: Error) -> ReconcileError {
    let reason = e.reason();
    match &e {
        Error::Spec(_) | Error::NotOurs(_) => ReconcileError::terminal(reason, e.to_string()),
        _ => ReconcileError::retryable(reason, e.to_string()).with_source(e),
    }
}
