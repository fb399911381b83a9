//! The shared server state handed to every request: the store behind its lock, configuration,
//! the write counter and the shutdown signal.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use crate::state::State;

/// How the sandbox runs.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Mark Deployments and StatefulSets ready after `workload_delay`.
    pub simulate_workloads: bool,
    pub workload_delay: Duration,
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
            history_capacity: 10_000,
            bookmark_interval: Duration::from_secs(15),
        }
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
    state: Mutex<State>,
    pub config: SandboxConfig,
    pub writes: WriteCounter,
    pub shutdown: watch::Receiver<bool>,
    /// `127.0.0.1:<port>`.
    pub address: String,
}

impl App {
    pub fn new(
        state: State,
        config: SandboxConfig,
        shutdown: watch::Receiver<bool>,
        address: String,
    ) -> Self {
        Self {
            state: Mutex::new(state),
            config,
            writes: WriteCounter::default(),
            shutdown,
            address,
        }
    }

    /// The store. Nothing panics while holding it, but a poisoned lock still holds a
    /// consistent store (every write is completed before its guard drops), so recover it.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
