//! The provider API: the two traits a provider implements. Everything else (finalizer, policies,
//! conditions, events, requeue, connection Secret) is the framework's job.

use std::future::Future;

use crate::connection_details::ConnectionDetails;
use crate::error::ReconcileError;
use crate::external::{Creation, Deletion, ExternalRef, Update};
use crate::idempotency::IdempotencyKey;
use crate::observation::Observation;
use crate::reasons;

/// Opens a session with the external system for one managed object: resolves its
/// ProviderConfig and credentials and returns a client. Called once per reconcile; cache
/// expensive work (credentials per config resourceVersion, HTTP clients) inside the connector.
///
/// A missing ProviderConfig or Secret is [`ReconcileError::dependency`]: the framework reports
/// it and waits, also while the object is being deleted (the finalizer stays, nothing leaks).
pub trait Connector<K>: Send + Sync + 'static {
    type Client: ExternalClient<K>;

    fn connect(&self, mr: &K) -> impl Future<Output = Result<Self::Client, ReconcileError>> + Send;
}

/// Reads and changes one external resource. Implementations may write `async fn` directly.
pub trait ExternalClient<K>: Send + Sync {
    /// Reports whether the resource exists and how it differs from the spec. With
    /// `ext.name == None` search by the UID tag ([`UID_TAG`](crate::UID_TAG)) and return the
    /// name found, so that a resource whose creation was not recorded is adopted.
    fn observe(
        &self,
        mr: &K,
        ext: &ExternalRef,
    ) -> impl Future<Output = Result<Observation, ReconcileError>> + Send;

    /// Creates the resource. Pass `key.token()` as the cloud's idempotency token (ECS
    /// `ClientToken`) and tag or label the resource with `UID_TAG = key.uid()`.
    fn create(
        &self,
        mr: &K,
        key: &IdempotencyKey,
    ) -> impl Future<Output = Result<Creation, ReconcileError>> + Send;

    /// Secrets the kind makes itself for a create (a key pair's private key), given what the
    /// connection Secret holds already (`stored`). The framework writes them to the connection
    /// Secret *before* it creates, so that no answer lost and no crash can lose them, and hands
    /// the Secret's content to [`create_with_secrets`](Self::create_with_secrets). Return `None`
    /// when `stored` holds them already, or the kind makes none (the default).
    fn secrets_before_create(
        &self,
        mr: &K,
        stored: &ConnectionDetails,
    ) -> Option<ConnectionDetails> {
        let _ = (mr, stored);
        None
    }

    /// [`create`](Self::create), given what the connection Secret holds (with the secrets of
    /// [`secrets_before_create`](Self::secrets_before_create)); empty without a connection
    /// Secret. The default ignores them.
    fn create_with_secrets(
        &self,
        mr: &K,
        key: &IdempotencyKey,
        stored: &ConnectionDetails,
    ) -> impl Future<Output = Result<Creation, ReconcileError>> + Send {
        let _ = stored;
        self.create(mr, key)
    }

    /// Makes the resource match the spec. Called only after `observe` reported a diff.
    fn update(
        &self,
        mr: &K,
        ext: &ExternalRef,
    ) -> impl Future<Output = Result<Update, ReconcileError>> + Send;

    /// Takes the resource over for this object: rewrites its ownership tag
    /// ([`UID_TAG`](crate::UID_TAG)) to `ext.uid`. Called when `observe` reported the resource
    /// untagged or tagged by an object that no longer exists, and the management policies allow
    /// `Update`. Kinds that report no ownership tag are never asked; the default refuses, so a
    /// kind that reports tags but cannot rewrite them never manages a resource it did not claim.
    fn claim(
        &self,
        mr: &K,
        ext: &ExternalRef,
    ) -> impl Future<Output = Result<(), ReconcileError>> + Send {
        let _ = mr;
        let name = ext.name().unwrap_or("(unnamed)").to_owned();
        async move {
            Err(ReconcileError::terminal(
                reasons::OWNERSHIP_TAG_NOT_WRITABLE,
                format!(
                    "external resource {name} has no ownership tag naming this object, and this kind cannot write one; it is left alone"
                ),
            ))
        }
    }

    /// Whether the external system assigns the external name when it creates the resource (an
    /// ECS instance ID), rather than the spec choosing it (a key pair's name, a child object's
    /// name). For such kinds a named resource that `observe` does not find is never replaced by
    /// a create: the reconcile fails with `ExternalResourceNotFound` and says how to ask for a
    /// new one. The default (`false`) creates again under the same name.
    fn assigns_names(&self) -> bool {
        false
    }

    /// Where this client's resources live: for a cloud, the account and region its credentials
    /// act in (`<account ID>/<region>` for Alibaba Cloud). The framework records it beside the
    /// external name (`ferroplane.io/external-scope`) and refuses an object whose client now
    /// acts somewhere else (`ExternalScopeChanged`, see `scope`): nothing is created there, and
    /// the resource where it lives is neither forgotten nor deleted. `None` (the default)
    /// records and checks nothing.
    fn scope(&self) -> Option<String> {
        None
    }

    /// Deletes the resource. Idempotent: "already gone" is `Ok(Deletion::Gone)`.
    fn delete(
        &self,
        mr: &K,
        ext: &ExternalRef,
    ) -> impl Future<Output = Result<Deletion, ReconcileError>> + Send;
}
