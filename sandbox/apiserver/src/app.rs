//! The shared server state handed to every request: the store, configuration, the write
//! counter and the shutdown signal.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use crate::auth::Tokens;
use crate::store::Store;

/// How the sandbox runs.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Mark Deployments and StatefulSets ready after `workload_delay`.
    pub simulate_workloads: bool,
    pub workload_delay: Duration,
    /// Bind every Pending claim to a volume of the size it requests, as a cluster's default
    /// dynamic provisioner would (part of the workload simulator). Off, claims stay Pending, as
    /// on a control plane without a provisioner (the differential test's real one).
    pub provision_claims: bool,
    /// How many changes watches can replay.
    pub history_capacity: usize,
    /// How often a watch that allows bookmarks gets one.
    pub bookmark_interval: Duration,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            port: 0,
            simulate_workloads: true,
            workload_delay: Duration::from_millis(500),
            provision_claims: true,
            history_capacity: 10_000,
            bookmark_interval: Duration::from_secs(15),
        }
    }
}

/// Watch requests that have started streaming changes, ever. Tests wait on it as a barrier: a
/// client's watch counted here sees every later change. (A count of open watches would not
/// do: a closed client's watch ends on the server a moment later.)
#[derive(Debug, Default)]
pub struct WatchesStarted(AtomicUsize);

impl WatchesStarted {
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    pub fn started(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Write requests by `(verb, resource)`, e.g. `("patch", "deployments.apps/status")`.
#[derive(Debug, Default)]
pub struct WriteCounter(Mutex<BTreeMap<(String, String), u64>>);

impl WriteCounter {
    pub fn record(&self, verb: &str, resource: &str) {
        let mut counts = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *counts
            .entry((verb.to_owned(), resource.to_owned()))
            .or_default() += 1;
    }

    pub fn snapshot(&self) -> BTreeMap<(String, String), u64> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn reset(&self) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

#[derive(Debug)]
pub struct App {
    pub store: Store,
    pub config: SandboxConfig,
    pub writes: WriteCounter,
    pub shutdown: watch::Receiver<bool>,
    /// `127.0.0.1:<port>`.
    pub address: String,
    /// The ServiceAccount tokens issued so far.
    pub tokens: Tokens,
    /// The messages of the 403s answered so far, oldest first.
    pub refusals: Mutex<Vec<String>>,
    pub watches_started: WatchesStarted,
}

impl App {
    /// A fresh store for `config`, served at `address` until `shutdown`.
    pub fn new(config: SandboxConfig, shutdown: watch::Receiver<bool>, address: String) -> Self {
        Self {
            store: Store::new(config.history_capacity),
            config,
            writes: WriteCounter::default(),
            shutdown,
            address,
            tokens: Tokens::default(),
            refusals: Mutex::default(),
            watches_started: WatchesStarted::default(),
        }
    }

    /// The port served, as `Host` headers must name it.
    pub fn port(&self) -> u16 {
        self.address
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse().ok())
            .unwrap_or_default()
    }
}
