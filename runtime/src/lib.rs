//! ferroplane-runtime: the managed-resource framework every ferroplane provider plugs into, in
//! the spirit of crossplane-runtime's managed reconciler.
//!
//! A provider implements two traits, [`Connector`] (resolve credentials, return a client) and
//! [`ExternalClient`] (`observe`, `create`, `update`, `delete` one external resource). The
//! framework owns everything else, once, for every kind: the finalizer, the
//! `ferroplane.io/external-name` / `paused` / `poll-interval` annotations, `deletionPolicy` and
//! `managementPolicies`, the `Ready` and `Synced` conditions, `status.atProvider`, the connection
//! Secret, events, metrics, requeue with jitter and backoff, and leader election.
//!
//! # Guarantees
//! - **Never a duplicate.** `create` receives an [`IdempotencyKey`] derived from the object's
//!   UID and its create parameters (pass it as the cloud's idempotency token) and the UID to tag
//!   the resource with ([`UID_TAG`]). `observe` without an external name searches by that tag, so
//!   a crash between "create sent" and "name saved" ends in adoption, not a second resource.
//! - **Never a leak.** The finalizer goes only after `observe` reports the resource gone, or the
//!   policies say orphan. A missing ProviderConfig or Secret during deletion is reported and
//!   waited for.
//! - **Tenants stay apart.** A resource whose [`UID_TAG`] names another live managed object is
//!   never adopted, changed or deleted (`Synced=False`, reason [`OWNED_ELSEWHERE`], the owner
//!   named only when it is in the same namespace); an untagged or orphaned one is taken over
//!   ([`ExternalClient::claim`]). A connection Secret the object does not control is never
//!   written. See [`ExternalOwner`].
//! - **Errors are visible.** Every failure sets `Synced=False` with the [`ReconcileError`]'s reason
//!   and message, emits a Warning event, and is retried according to its [`RetryClass`]. Every
//!   reason the framework shows is a constant in [`reasons`].
//! - **Status is cheap.** Nothing is written when nothing changed; a create costs at most three
//!   writes (finalizer, external name, status).
//! - **One bad object stops nothing.** An object that does not decode as the Rust type is left
//!   out of the watch and told why (`Synced=False` and a Warning event); the others keep
//!   reconciling.
//!
//! # The reconcile, in order
//! get → paused? (a value not understood: refuse, stay paused) → valid policies? → deleting with orphan? → deleting? (Ready=False/Deleting at
//! once) → connect → observe → owned by another live object? (refuse; while deleting, let go
//! without a cloud delete) → adopt a found name → deleting? (delete, wait for observe to say
//! gone, drop finalizer) → ensure finalizer → missing? (a named resource of a kind whose names
//! the cloud assigns: refuse, `ExternalResourceNotFound`; else create, save the name at once) → take
//! over an untagged or orphaned resource → late-initialize → outdated? (update) → connection
//! Secret → status and conditions → requeue (poll interval with jitter; sooner in transition).
//! See [`Reconciler`].
//!
//! # A provider
//! ```no_run
//! use ferroplane_runtime::{
//!     Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey, ManagedController,
//!     Observation, ReconcileError, Runtime, RuntimeConfig, Update,
//! };
//! # use ferroplane_apis::application::{Application as MyKind, ApplicationStatus as MyStatus};
//!
//! struct MyConnector;
//! struct MyClient;
//!
//! impl Connector<MyKind> for MyConnector {
//!     type Client = MyClient;
//!     async fn connect(&self, _mr: &MyKind) -> Result<MyClient, ReconcileError> {
//!         // Resolve the ProviderConfig and its Secret; a missing one is a dependency error.
//!         Ok(MyClient)
//!     }
//! }
//!
//! impl ExternalClient<MyKind> for MyClient {
//!     async fn observe(&self, _mr: &MyKind, ext: &ExternalRef) -> Result<Observation, ReconcileError> {
//!         // ext.name() is None until known: then search by the UID tag (ext.uid).
//!         match ext.name() {
//!             // The kind's own status type; the framework writes its fields into `.status`.
//!             Some(id) => Observation::found(id).with_status(MyStatus {
//!                 url: Some(format!("https://{id}.example.com")),
//!                 ..MyStatus::default()
//!             }),
//!             None => Ok(Observation::missing()),
//!         }
//!     }
//!     async fn create(&self, _mr: &MyKind, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
//!         // Send key.token() as the idempotency token and tag the resource with key.uid().
//!         Ok(Creation::new(format!("res-{}", &key.token()[3..11])))
//!     }
//!     async fn update(&self, _mr: &MyKind, _ext: &ExternalRef) -> Result<Update, ReconcileError> {
//!         Ok(Update::done())
//!     }
//!     async fn delete(&self, _mr: &MyKind, _ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
//!         Ok(Deletion::Gone)
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = kube::Client::try_default().await?;
//! // One Runtime per process: shared metrics, event reporter and global rate limit.
//! let runtime = Runtime::new(client.clone(), RuntimeConfig::default());
//! ManagedController::new(&runtime, kube::Api::<MyKind>::all(client), MyConnector)
//!     .run(async { let _ = tokio::signal::ctrl_c().await; })
//!     .await;
//! # Ok(())
//! # }
//! ```
//! Related kinds (a ProviderConfig, its Secret) requeue the objects that use them through
//! [`ManagedController::watches_related`] and the helpers in [`related`]. In-cluster kinds,
//! whose external resource is a set of child objects, find what they share in [`children`].
//! The binary serves [`Metrics`] on `--metrics-addr` and wraps controllers in
//! [`leader::run_while_leader`].
//!
//! # Dependencies
//! Of ferroplane's crates, only `ferroplane-apis` (the shared spec and status fields): never a
//! provider, the binary or the sandbox (its tests use the sandbox).

pub mod annotations;
pub mod children;
pub mod conditions;
mod connection_details;
mod connection_secret;
mod controller;
mod crossplane_metrics;
mod error;
pub mod events;
mod external;
mod field_manager;
mod finalizer;
mod idempotency;
mod import_census;
mod invalid;
pub mod leader;
mod metrics;
mod missing;
mod object_table;
mod observation;
mod observation_digests;
mod ownership;
mod paused;
mod policy;
mod provider;
mod ratelimit;
mod readiness;
pub mod reasons;
mod reconciler;
pub mod references;
pub mod related;
pub mod requeue;
mod resource;
mod runtime;
mod scope;
pub mod shutdown;
mod status;
mod versions;

pub use connection_details::ConnectionDetails;
pub use controller::ManagedController;
pub use error::{ReconcileError, RetryClass, RunError};
pub use external::{Creation, Deletion, ExternalRef, Update};
pub use field_manager::FIELD_MANAGER;
pub use idempotency::{IdempotencyKey, UID_TAG};
pub use metrics::{ExternalCalls, Metrics};
pub use observation::{Observation, UpToDate};
pub use ownership::{ExternalOwner, ImportersPreview, OwnershipPreview, preview_ownership};
pub use paused::paused_by;
pub use provider::{Connector, ExternalClient};
pub use readiness::Readiness;
pub use reasons::{EXISTS_UNMANAGED, OWNED_ELSEWHERE};
pub use reconciler::Reconciler;
pub use resource::ManagedResource;
pub use runtime::{ControllerConfig, Runtime, RuntimeConfig};
