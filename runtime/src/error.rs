//! The one error type a provider returns from [`Connector`](crate::Connector) and
//! [`ExternalClient`](crate::ExternalClient) calls, and the framework's own failures.
//!
//! Every error carries three things the framework needs to act on it without knowing the
//! provider: a stable `reason` (one CamelCase word, used in condition messages, Warning events and
//! metric labels), a `message` the user can act on (secrets already redacted by whoever built it),
//! and a [`RetryClass`] that picks the requeue policy.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

use crate::reasons;

/// How the framework retries after an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetryClass {
    /// A transient failure (throttling, 5xx, network): retry with per-object exponential backoff.
    Backoff,
    /// Retrying the same spec cannot succeed (invalid parameter, immutable field changed, quota a
    /// human must raise). The framework retries only at the slow poll interval; a spec change
    /// (a new generation) triggers a reconcile at once.
    UntilSpecChanges,
    /// Something the object depends on is missing or not ready yet (ProviderConfig, Secret,
    /// referenced resource). Retried with backoff, and at once when a watched related object
    /// changes.
    WaitForDependency,
}

impl RetryClass {
    /// A label for metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryClass::Backoff => "backoff",
            RetryClass::UntilSpecChanges => "until_spec_changes",
            RetryClass::WaitForDependency => "wait_for_dependency",
        }
    }
}

/// A failed step of a reconcile, with what a user needs to fix it.
///
/// `Display` prints `reason: message`. The source, when set, is kept for `Error::source` chains in
/// logs; it must not contain secrets either.
pub struct ReconcileError {
    reason: Cow<'static, str>,
    message: String,
    retry: RetryClass,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl ReconcileError {
    /// An error with an explicit retry class.
    pub fn new(
        reason: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
        retry: RetryClass,
    ) -> Self {
        Self {
            reason: reason.into(),
            message: message.into(),
            retry,
            source: None,
        }
    }

    /// A transient failure, retried with exponential backoff.
    pub fn retryable(reason: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(reason, message, RetryClass::Backoff)
    }

    /// A failure that repeats until the user changes the spec.
    pub fn terminal(reason: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(reason, message, RetryClass::UntilSpecChanges)
    }

    /// A missing or not-yet-ready dependency (ProviderConfig, credentials Secret, ...).
    pub fn dependency(reason: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(reason, message, RetryClass::WaitForDependency)
    }

    /// Attaches the underlying error (for logs). It must not print secrets.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Stable CamelCase reason, e.g. `InvalidParameter`, `Throttling`, `ProviderConfigNotFound`.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// What went wrong and what to do about it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How the framework retries.
    pub fn retry(&self) -> RetryClass {
        self.retry
    }

    /// Prefixes the message with what was being done, e.g. `cannot create external resource`,
    /// keeping reason and retry class.
    pub fn context(mut self, what: &str) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// An error talking to the Kubernetes API, classified by status code.
    pub(crate) fn kube(what: &str, err: kube::Error) -> Self {
        let (reason, retry) = match &err {
            kube::Error::Api(status) if status.code == 409 => {
                (reasons::CONFLICT, RetryClass::Backoff)
            }
            kube::Error::Api(status) if status.code == 404 => {
                (reasons::NOT_FOUND, RetryClass::Backoff)
            }
            kube::Error::Api(status) if status.code == 422 || status.code == 400 => {
                (reasons::INVALID, RetryClass::UntilSpecChanges)
            }
            kube::Error::Api(status) if status.code == 403 => {
                (reasons::FORBIDDEN, RetryClass::Backoff)
            }
            _ => (reasons::KUBERNETES_API_ERROR, RetryClass::Backoff),
        };
        Self::new(reason, format!("{what}: {err}"), retry).with_source(err)
    }

    /// True when the error is an optimistic-concurrency conflict on a Kubernetes write: the
    /// object changed under us and the reconcile simply runs again on the new version.
    pub(crate) fn is_conflict(&self) -> bool {
        self.reason == reasons::CONFLICT
    }
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.message)
    }
}

impl fmt::Debug for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconcileError")
            .field("reason", &self.reason)
            .field("message", &self.message)
            .field("retry", &self.retry)
            .field("source", &self.source.as_ref().map(|s| s.to_string()))
            .finish()
    }
}

impl StdError for ReconcileError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

/// Failures starting or running a controller (not a single reconcile).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A provider could not set its controller up (e.g. build the HTTP client it needs).
    #[error("cannot start the {kind} controller: {source}")]
    Start {
        kind: &'static str,
        #[source]
        source: Box<dyn StdError + Send + Sync + 'static>,
    },
    /// The leader-election Lease could not be created or renewed.
    #[error("leader election on Lease {lease}: {source}")]
    LeaderElection {
        lease: String,
        #[source]
        source: kube_lease_manager::LeaseManagerError,
    },
    /// The leader-election task ended abnormally.
    #[error("leader election task for Lease {lease} failed: {message}")]
    LeaderTask { lease: String, message: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_has_reason_and_message() {
        let e = ReconcileError::terminal("InvalidParameter", "zoneId cn-x-z does not exist")
            .context("cannot create external resource");
        assert_eq!(
            e.to_string(),
            "InvalidParameter: cannot create external resource: zoneId cn-x-z does not exist"
        );
        assert_eq!(e.retry(), RetryClass::UntilSpecChanges);
    }

    #[test]
    fn source_is_chained() {
        let io = std::io::Error::other("connection reset");
        let e = ReconcileError::retryable("NetworkError", "ECS unreachable").with_source(io);
        assert_eq!(
            e.source().map(|s| s.to_string()).as_deref(),
            Some("connection reset")
        );
    }
}
