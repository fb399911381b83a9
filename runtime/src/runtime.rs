//! The process-wide [`Runtime`] every controller shares: the Kubernetes client, the metrics
//! registry, the event recorder (one, so that like events fold into one series) and the global
//! rate limit; and the settings it is built from.

use std::sync::Arc;

use kube::Client;
use kube::runtime::events::Reporter;

use crate::events::EventRecorder;
use crate::metrics::{ExternalCalls, Metrics};
use crate::ratelimit::RateLimiter;
use crate::requeue::RequeuePolicy;

/// Settings shared by every controller of the process.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Name of the reporting controller in events (default `ferroplane`).
    pub reporter: String,
    /// Instance in events, usually the pod name.
    pub instance: Option<String>,
    /// Reconciles per second across all controllers (default 50; ≤ 0 is unlimited).
    pub rate_limit: f64,
    /// Burst above the rate (default 100).
    pub rate_burst: u32,
    /// Defaults for each controller.
    pub controller: ControllerConfig,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            reporter: "ferroplane".to_owned(),
            instance: None,
            rate_limit: 50.0,
            rate_burst: 100,
            controller: ControllerConfig::default(),
        }
    }
}

/// Settings of one controller.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerConfig {
    /// Reconciles of this kind running at once (default 16).
    pub concurrency: u16,
    /// Poll interval, jitter, transition interval and backoff.
    pub requeue: RequeuePolicy,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            concurrency: 16,
            requeue: RequeuePolicy::default(),
        }
    }
}

struct RuntimeInner {
    client: Client,
    metrics: Metrics,
    limiter: Arc<RateLimiter>,
    recorder: EventRecorder,
    config: RuntimeConfig,
}

/// What every controller of the process shares. Create one and pass it to each
/// [`ManagedController`](crate::ManagedController). Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeInner>,
}

impl Runtime {
    pub fn new(client: Client, config: RuntimeConfig) -> Self {
        Self::with_metrics(client, config, Metrics::new())
    }

    /// Like [`Runtime::new`] with an existing metrics registry (shared with the HTTP server).
    pub fn with_metrics(client: Client, config: RuntimeConfig, metrics: Metrics) -> Self {
        let reporter = Reporter {
            controller: config.reporter.clone(),
            instance: config.instance.clone(),
        };
        Self {
            inner: Arc::new(RuntimeInner {
                recorder: EventRecorder::new(client.clone(), reporter),
                limiter: Arc::new(RateLimiter::new(config.rate_limit, config.rate_burst)),
                client,
                metrics,
                config,
            }),
        }
    }

    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// A handle for a provider to count its external API calls under `kind`.
    pub fn external_calls(&self, kind: &str) -> ExternalCalls {
        self.inner.metrics.external_calls(kind)
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// The process's event recorder (one, so that like events fold into one series).
    pub fn recorder(&self) -> EventRecorder {
        self.inner.recorder.clone()
    }

    pub(crate) fn rate_limiter(&self) -> Arc<RateLimiter> {
        self.inner.limiter.clone()
    }
}
