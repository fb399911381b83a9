//! An in-process ECS (and STS) mock server, for tests, benchmarks and `ferroplane ecs-mock`.
//!
//! It behaves like ECS as described in `ECS-API.md`: V1 and V3 signatures verified with this
//! crate's [`crate::signature`] module, nonce and timestamp checks, access keys per account and
//! STS credentials, the instance state machine with a configurable transition delay (computed
//! lazily from timestamps), ClientToken idempotency, filters and both pagination styles, tags,
//! a catalogue of regions, instance types and images, the real error codes and HTTP statuses, and
//! fault injection. Modules, in request order:
//! [`server`] (HTTP) → [`state`] (pipeline) → [`auth`] → [`ecs`] / [`sts`] → [`store`] →
//! [`instance`], with [`params`], [`launch`], [`catalog`], [`config`], [`stats`] and [`error`]
//! underneath.
//!
//! ```no_run
//! # async fn demo() -> Result<(), provider_alibaba::mock::MockError> {
//! use provider_alibaba::mock::{MockConfig, MockServer};
//! let mock = MockServer::start(MockConfig::new("ak", "secret")).await?;
//! println!("ECS at {}", mock.endpoint());
//! # Ok(()) }
//! ```

pub mod auth;
pub mod catalog;
pub mod config;
pub mod ecs;
pub mod error;
pub mod instance;
pub mod launch;
pub mod params;
mod server;
mod state;
pub mod stats;
pub mod store;
pub mod sts;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use jiff::Timestamp;
use rand::Rng as _;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use auth::{AccessKey, StsCredentials};
pub use config::{DEFAULT_ACCOUNT_ID, Faults, MockConfig, parse_duration};
pub use error::{ApiError, MockError};
pub use instance::InstanceSummary;
pub use launch::LaunchSpec;
pub use stats::MockStats;

/// Locks a mutex; a panic elsewhere while holding it does not make the mock unusable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// A random string over `alphabet`.
pub(crate) fn random_string(len: usize, alphabet: &[u8]) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

/// A running mock. Dropping it stops the server.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<state::Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Binds `config.listen` and serves until [`MockServer::shutdown`] or drop.
    pub async fn start(config: MockConfig) -> Result<Self, MockError> {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| MockError::Bind {
                addr: config.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(MockError::LocalAddr)?;
        let shared = Arc::new(state::Shared::new(&config));
        let app = server::router(shared.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    // A dropped sender means the handle is gone: stop as well.
                    let _ = rx.await;
                })
                .await;
            if let Err(error) = served {
                tracing::warn!(%error, "ECS mock server stopped with an error");
            }
        });
        Ok(Self {
            addr,
            shared,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Counters of calls and errors, and instance figures.
    pub fn stats(&self) -> MockStats {
        self.shared.stats()
    }

    /// Every live instance, oldest first.
    pub fn instances(&self) -> Vec<InstanceSummary> {
        self.shared.instances()
    }

    /// The faults in force.
    pub fn faults(&self) -> Faults {
        self.shared.settings().faults
    }

    /// Replaces the faults; rates outside 0–1 are refused.
    pub fn set_faults(&self, faults: Faults) -> Result<(), config::FaultsError> {
        faults.validate()?;
        write(&self.shared.settings).faults = faults;
        Ok(())
    }

    /// Changes the transition delay for operations from now on.
    pub fn set_transition_delay(&self, delay: Duration) {
        write(&self.shared.settings).transition_delay = delay;
    }

    /// Changes the per-account instance quota (`None`: unlimited).
    pub fn set_instance_quota(&self, quota: Option<usize>) {
        write(&self.shared.settings).instance_quota = quota;
    }

    /// Adds (or replaces) an access key; a disabled one answers `InvalidAccessKeyId.Inactive`.
    pub fn add_access_key(&self, key: AccessKey) {
        write(&self.shared.keys).add(key);
    }

    /// Enables or disables a key; false when the key is unknown.
    pub fn set_access_key_enabled(&self, access_key_id: &str, enabled: bool) -> bool {
        write(&self.shared.keys).set_enabled(access_key_id, enabled)
    }

    /// Issues STS credentials for `account_id`, valid for `ttl`, as `AssumeRole` would.
    pub fn issue_sts_credentials(&self, account_id: &str, ttl: Duration) -> StsCredentials {
        sts::issue(
            &mut write(&self.shared.keys),
            account_id,
            ttl,
            Timestamp::now(),
        )
    }

    /// Creates `count` instances for `account_id` directly (no HTTP, no 100-instance limit),
    /// with the same checks as `RunInstances`; returns their IDs.
    pub fn create_instances(
        &self,
        account_id: &str,
        spec: &LaunchSpec,
        count: usize,
    ) -> Result<Vec<String>, MockError> {
        let settings = self.shared.settings();
        let account: Arc<str> = Arc::from(account_id);
        let ids = lock(&self.shared.store).launch(
            &account,
            spec,
            count,
            Timestamp::now(),
            settings.transition_delay,
            settings.instance_quota,
        )?;
        Ok(ids)
    }

    /// The status of an instance (any account), if it exists.
    pub fn instance_status(&self, instance_id: &str) -> Option<String> {
        lock(&self.shared.store)
            .get(instance_id)
            .map(|i| i.status(Timestamp::now()).as_str().to_owned())
    }

    /// Stops accepting connections and waits for the server task to end.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take() {
            // Graceful shutdown waits for open keep-alive connections; do not wait forever.
            if tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
