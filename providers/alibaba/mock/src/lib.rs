//! alibaba-mock: an in-process fake of Alibaba Cloud ECS (API version `2014-05-26`), the VPC API
//! (`2016-04-28`) and STS (`2015-04-01`) on one HTTP port, for tests, benchmarks, the sandbox and
//! `ferroplane ecs-mock`; the request's `Version` selects the API.
//!
//! It refuses what the real API refuses, with the real error code and HTTP status: V1 and V3
//! signatures verified with alibaba-sdk's [`alibaba_sdk::signature`] (the code that signs), nonce
//! and timestamp checks (at most 15 minutes of clock skew), access keys per account and STS
//! credentials, the instance state machine with a configurable transition delay (computed lazily
//! from timestamps), RunInstances' placement rules (a security group and a vSwitch of its VPC)
//! and subscription rules (`Period`, no release before expiry), ClientToken idempotency, filters
//! and both pagination styles, tags, an optional visibility lag of listings, a catalogue of
//! regions, instance types and images, VPCs, vSwitches and security groups with their dependency
//! rules (every account starts with the default network of [`defaults`]), cloud disks (`disks`:
//! the system and data disks of each instance, and disks created apart, with ECS's attach,
//! resize, performance-level and release rules), SSH key pairs (`key_pairs`), elastic IP
//! addresses and their associations with instances and NAT gateways (`eips`), enhanced NAT
//! gateways with their SNAT and DNAT entries (`nat_gateways`), ECS prefix lists that security group
//! rules name as their peer (`prefix_lists`), and fault injection. The actions
//! served are the rows of the `ACTIONS` tables (name and handler) of `ecs_actions`,
//! `instance_read_actions`, `security_group_actions`, `security_group_change_actions`,
//! `catalog_actions`, `disk_actions`, `key_pair_actions`, `prefix_list_actions`, `vpc_actions` (EIPs and NAT gateways included) and
//! `sts_actions`, the one list of them; the crate's integration tests pin the behaviour,
//! also against Alibaba Cloud's official Python SDKs (`tests/sdk/official_sdk.py`).
//!
//! Modules, in request order: `server` (HTTP) → `state` (pipeline) → `auth` → `products` (the
//! API a `Version` selects and its tables) → `ecs_actions` (with the `instance_*_actions` and
//! `tag_actions` handlers) / `security_group_actions` / `disk_actions` / `key_pair_actions` /
//! `prefix_list_actions` /
//! `vpc_actions` / `sts_actions` → `store` (instances, with `network`, `disks`, `key_pairs`, `eips`,
//! `nat_gateways`, `prefix_lists` and `visibility`) → `instance` and `instance_view`, with `launch`, `launch_spec`,
//! `subscription`, `param_checks`, `tags`, `catalog`, `cidr`, `defaults`, `config`, `stats`,
//! `md5`, `received_params`, `injection`, `ledger`, `resource_records`, `locks` and `error`
//! underneath. What every action shares (its
//! context, dry runs, `InvalidAction.NotFound`) is `action`'s; ClientToken fingerprints are
//! `idempotency`'s and resource IDs `ids`'. No module imports one that imports it back.
//!
//! It depends on alibaba-sdk for its `signature` module only, and on nothing of Kubernetes or of
//! the controllers; the SDK and the controllers must not depend on it (only their tests may).
//!
//! ```no_run
//! # async fn demo() -> Result<(), alibaba_mock::MockError> {
//! use alibaba_mock::{MockConfig, MockServer};
//! let mock = MockServer::start(MockConfig::new("ak", "secret")).await?;
//! println!("ECS at {}", mock.endpoint());
//! # Ok(()) }
//! ```

mod action;
mod auth;
mod catalog;
mod catalog_actions;
mod cidr;
mod config;
mod credit;
pub mod defaults;
mod deployment_sets;
mod disk_actions;
mod disk_view;
mod disks;
mod ecs_actions;
mod eips;
mod error;
mod faults_error;
mod glob;
mod idempotency;
mod ids;
mod image_actions;
mod injection;
mod instance;
mod instance_attribute_actions;
mod instance_deployment_actions;
mod instance_describe_actions;
mod instance_ipv6_actions;
mod instance_launch_actions;
mod instance_read_actions;
mod instance_settings_actions;
mod instance_unserved;
mod instance_view;
mod instance_vpc_actions;
mod ipv6;
mod key_pair_actions;
mod key_pairs;
mod launch;
mod launch_spec;
mod ledger;
mod locks;
mod md5;
pub mod nat_gateways;
mod network;
mod network_interface_actions;
mod oidc_token;
mod oss;
mod oss_http;
mod param_checks;
mod password;
mod prefix_list_actions;
mod prefix_lists;
mod private_ip;
mod products;
mod received_params;
mod reclaim;
pub mod resource_groups;
mod resource_records;
mod security_group_actions;
mod security_group_change_actions;
mod security_group_rule_changes;
mod security_group_rule_view;
mod security_group_rules;
mod server;
mod state;
mod stats;
mod stock;
mod store;
mod sts_actions;
mod subscription;
mod tag_actions;
mod tags;
pub mod unproduced_codes;
mod visibility;
mod vpc_actions;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use auth::{AccessKey, StsCredentials};
pub use catalog::OUT_OF_STOCK_TYPE;
pub use config::{
    ApiRateLimits, DEFAULT_ACCOUNT_ID, DurationError, Faults, MockConfig, RateLimitSyntaxError,
    parse_api_rate_limits, parse_duration,
};
pub use disks::DiskSummary;
pub use error::{ErrorResponse, MockError};
pub use faults_error::FaultsError;
pub use injection::{ErrorInjection, ScriptedFault};
pub use instance_view::InstanceSummary;
pub use launch_spec::LaunchSpec;
pub use ledger::{Change, LedgerEntry, secret_digest};
pub use password::password_digest;
pub use products::served_actions;
pub use resource_records::{ResourceKind, ResourceRecord};
pub use stats::MockStats;
pub use stock::StockLimit;

use crate::locks::{lock, write};

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

    /// Every disk (any account), oldest first.
    pub fn disks(&self) -> Vec<DiskSummary> {
        let mut store = lock(&self.shared.store);
        store.disks.settle(Timestamp::now());
        store
            .disks
            .all()
            .into_iter()
            .map(disks::Disk::summary)
            .collect()
    }

    /// The names of the key pairs `account_id` holds in `region_id`, oldest first.
    pub fn key_pair_names(&self, account_id: &str, region_id: &str) -> Vec<String> {
        let Ok(region) = catalog::region_by_id(region_id) else {
            return Vec::new();
        };
        lock(&self.shared.store)
            .key_pairs
            .in_region(&Arc::from(account_id), region.id)
            .into_iter()
            .map(|k| k.name.clone())
            .collect()
    }

    /// The key pair name an instance (any account) carries, if the instance exists.
    pub fn instance_key_pair(&self, instance_id: &str) -> Option<String> {
        lock(&self.shared.store)
            .get(instance_id)
            .map(|i| i.key_pair_name.clone())
    }

    /// Every live resource of every account (instances, VPCs, vSwitches, security groups,
    /// disks, key pairs, EIPs and EIP associations), each account's default network included.
    pub fn resources(&self) -> Vec<ResourceRecord> {
        self.shared.resources()
    }

    /// What every successful call created, changed or deleted, oldest first.
    pub fn ledger(&self) -> Vec<LedgerEntry> {
        lock(&self.shared.ledger).entries().to_vec()
    }

    /// How many resources of `kind` successful calls ever created, deleted ones included: a
    /// duplicate made and deleted again, or hidden by the listing lag, still counts. The
    /// default network the mock starts with was made by no call and does not count.
    pub fn created(&self, kind: ResourceKind) -> u64 {
        lock(&self.shared.ledger)
            .entries()
            .iter()
            .filter(|e| e.kind == kind && e.change == Change::Created)
            .count() as u64
    }

    /// The faults in force.
    pub fn faults(&self) -> Faults {
        self.shared.settings().faults
    }

    /// Replaces the faults; rates outside 0–1 are refused.
    pub fn set_faults(&self, faults: Faults) -> Result<(), FaultsError> {
        faults.validate()?;
        write(&self.shared.settings).faults = faults;
        Ok(())
    }

    /// Answers the next `injection.times` calls of its action (of its account, when it names
    /// one) with its error code (after authentication, before processing) or its transport
    /// fault; adds to the injections already pending.
    pub fn inject_error(&self, injection: ErrorInjection) -> Result<(), FaultsError> {
        injection.validate()?;
        lock(&self.shared.injections).push(injection);
        Ok(())
    }

    /// The scripted answers still pending, oldest first.
    pub fn pending_injections(&self) -> Vec<ErrorInjection> {
        lock(&self.shared.injections).clone()
    }

    /// Changes the transition delay for operations from now on.
    pub fn set_transition_delay(&self, delay: Duration) {
        write(&self.shared.settings).transition_delay = delay;
    }

    /// Changes the visibility lag of listings for creates and releases from now on.
    pub fn set_visibility_lag(&self, lag: Duration) {
        write(&self.shared.settings).visibility_lag = lag;
        lock(&self.shared.store).visibility_lag = lag;
    }

    /// Limits `action` to `calls_per_minute` per (account, region) and wall-clock minute, over
    /// the faults' all-actions limit; `None` removes the action's own limit.
    pub fn set_api_rate_limit(&self, action: &str, calls_per_minute: Option<u32>) {
        let mut limits = write(&self.shared.api_rate_limits);
        match calls_per_minute {
            Some(calls) => limits.insert(action.to_owned(), calls),
            None => limits.remove(action),
        };
    }

    /// Reclaims a spot instance as ECS does: locked with `OperationLocks` `Recycling` now,
    /// released after `notice`. Refused (with the reason) for an instance that is not live or not
    /// a spot instance.
    pub fn reclaim_spot(&self, instance_id: &str, notice: Duration) -> Result<(), String> {
        reclaim::reclaim(&self.shared, instance_id, notice)
    }

    /// Sets (or, with `available: None`, removes) the stock of an instance type in a zone.
    pub fn set_stock(&self, limit: &StockLimit) {
        lock(&self.shared.store).stock.set(limit);
    }

    /// The stock limits in force.
    pub fn stock(&self) -> Vec<StockLimit> {
        lock(&self.shared.store).stock.limits()
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
        sts_actions::issue(
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

    /// Ends the subscription of a `PrePaid` instance now, as if its period had run out (so
    /// DeleteInstance with `TerminateSubscription` may release it); false when the instance
    /// does not exist or is pay-as-you-go.
    pub fn expire_subscription(&self, instance_id: &str) -> bool {
        let now = Timestamp::now();
        let mut store = lock(&self.shared.store);
        match store.get_mut(instance_id) {
            Some(i) if i.expires_at.is_some() => {
                i.expires_at = Some(now);
                true
            }
            _ => false,
        }
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
