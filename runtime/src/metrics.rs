//! Prometheus metrics of every controller, in one registry served on `/metrics`:
//! reconciles and errors per kind and result, reconcile duration, time to first Ready, time to
//! delete, objects per state, and external API calls by action and result (recorded by providers
//! through an [`ExternalCalls`] handle). Beside them, under their own names, the ones
//! Crossplane's providers export (`crossplane_metrics`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::crossplane_metrics::{CrossplaneMetrics, Health};
use crate::error::ReconcileError;
use crate::object_table::ObjectTable;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindResult {
    kind: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindReason {
    kind: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindState {
    kind: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    kind: String,
    action: String,
    result: String,
}

/// The state an object is counted in by `ferroplane_managed_objects`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectState {
    Ready,
    NotReady,
    Error,
    Paused,
    Deleting,
}

impl ObjectState {
    fn as_str(self) -> &'static str {
        match self {
            ObjectState::Ready => "ready",
            ObjectState::NotReady => "not_ready",
            ObjectState::Error => "error",
            ObjectState::Paused => "paused",
            ObjectState::Deleting => "deleting",
        }
    }
}

fn histogram_seconds() -> Histogram {
    // 5 ms … ~40 min.
    Histogram::new(exponential_buckets(0.005, 2.0, 20))
}

struct Inner {
    registry: Mutex<Registry>,
    reconciles: Family<KindResult, Counter>,
    errors: Family<KindReason, Counter>,
    duration: Family<KindLabel, Histogram, fn() -> Histogram>,
    first_ready: Family<KindLabel, Histogram, fn() -> Histogram>,
    delete_time: Family<KindLabel, Histogram, fn() -> Histogram>,
    objects: Family<KindState, Gauge>,
    calls: Family<CallLabels, Counter>,
    /// Last counted state per (kind, namespace/name), to move objects between gauge buckets.
    states: Mutex<ObjectTable<ObjectState>>,
    crossplane: CrossplaneMetrics,
}

/// The metrics of the process. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut root = Registry::default();
        let crossplane = CrossplaneMetrics::register(&mut root);
        let registry = root.sub_registry_with_prefix("ferroplane");
        let reconciles = Family::<KindResult, Counter>::default();
        let errors = Family::<KindReason, Counter>::default();
        let duration = Family::<KindLabel, Histogram, fn() -> Histogram>::new_with_constructor(
            histogram_seconds as fn() -> Histogram,
        );
        let first_ready = Family::<KindLabel, Histogram, fn() -> Histogram>::new_with_constructor(
            histogram_seconds as fn() -> Histogram,
        );
        let delete_time = Family::<KindLabel, Histogram, fn() -> Histogram>::new_with_constructor(
            histogram_seconds as fn() -> Histogram,
        );
        let objects = Family::<KindState, Gauge>::default();
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "reconciles",
            "Reconciles by kind and result",
            reconciles.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Failed reconciles by kind and error reason",
            errors.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Duration of one reconcile",
            duration.clone(),
        );
        registry.register(
            "time_to_first_ready_seconds",
            "From object creation to its first Ready=True",
            first_ready.clone(),
        );
        registry.register(
            "time_to_delete_seconds",
            "From deletion request to finalizer removal",
            delete_time.clone(),
        );
        registry.register(
            "managed_objects",
            "Managed objects by kind and state",
            objects.clone(),
        );
        registry.register(
            "external_calls",
            "Calls to external APIs by kind, action and result",
            calls.clone(),
        );
        Self {
            inner: Arc::new(Inner {
                registry: Mutex::new(root),
                reconciles,
                errors,
                duration,
                first_ready,
                delete_time,
                objects,
                calls,
                states: Mutex::default(),
                crossplane,
            }),
        }
    }

    /// Runs `f` on the root registry (no prefix), e.g. to register a provider's own metrics.
    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> T {
        let mut registry = self
            .inner
            .registry
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        f(&mut registry)
    }

    /// The OpenMetrics text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        self.with_registry(|r| {
            // Writing into a String cannot fail.
            let _ = prometheus_client::encoding::text::encode(&mut out, r);
        });
        out
    }

    /// A handle for a provider to count its calls to the external API.
    pub fn external_calls(&self, kind: &str) -> ExternalCalls {
        ExternalCalls {
            kind: kind.to_owned(),
            metrics: self.clone(),
        }
    }

    pub(crate) fn reconciled(&self, kind: &str, result: &str, took: Duration) {
        self.inner
            .reconciles
            .get_or_create(&KindResult {
                kind: kind.into(),
                result: result.into(),
            })
            .inc();
        self.inner
            .duration
            .get_or_create(&KindLabel { kind: kind.into() })
            .observe(took.as_secs_f64());
    }

    pub(crate) fn error(&self, kind: &str, reason: &str) {
        self.inner
            .errors
            .get_or_create(&KindReason {
                kind: kind.into(),
                reason: reason.into(),
            })
            .inc();
    }

    pub(crate) fn first_ready(&self, kind: &str, after: Duration) {
        self.inner
            .first_ready
            .get_or_create(&KindLabel { kind: kind.into() })
            .observe(after.as_secs_f64());
    }

    /// Crossplane's `first_time_to_reconcile`: a reconcile starts on an object without `Synced`.
    pub(crate) fn first_reconcile(&self, gvk: &str, object: &str, age: Duration) {
        self.inner.crossplane.first_reconcile(gvk, object, age);
    }

    /// Crossplane's `first_time_to_readiness` (ferroplane's own is [`Self::first_ready`]).
    pub(crate) fn crossplane_first_ready(&self, gvk: &str, age: Duration) {
        self.inner.crossplane.first_ready(gvk, age);
    }

    /// An observation found the resource up to date (`true`) or drifted (`false`).
    pub(crate) fn observed(&self, gvk: &str, object: &str, up_to_date: bool) {
        if up_to_date {
            self.inner.crossplane.unchanged(gvk, object);
        } else {
            self.inner.crossplane.drifted(gvk, object);
        }
    }

    /// The object's `Ready` and `Synced` as this reconcile computed them.
    pub(crate) fn set_health(&self, gvk: &str, object: &str, ready: bool, synced: bool) {
        self.inner
            .crossplane
            .set_health(gvk, object, Health { ready, synced });
    }

    /// The object is gone from the API server; `deleting_for` how long its deletion took.
    pub(crate) fn gone(&self, kind: &str, gvk: &str, object: &str, deleting_for: Option<Duration>) {
        if let Some(took) = deleting_for {
            self.deleted(kind, object, took);
        } else {
            self.forget(kind, object);
        }
        self.inner.crossplane.gone(gvk, object, deleting_for);
    }

    fn deleted(&self, kind: &str, object: &str, after: Duration) {
        self.inner
            .delete_time
            .get_or_create(&KindLabel { kind: kind.into() })
            .observe(after.as_secs_f64());
        self.forget(kind, object);
    }

    /// Moves an object to `state` in the per-state gauge.
    pub(crate) fn set_state(&self, kind: &str, object: &str, state: ObjectState) {
        let mut states = self.inner.states.lock().unwrap_or_else(|p| p.into_inner());
        let mut new = false;
        let counted = states.get_or_insert_with(kind, object, || {
            new = true;
            state
        });
        let previous = if new {
            None
        } else if *counted == state {
            return;
        } else {
            Some(std::mem::replace(counted, state))
        };
        if let Some(prev) = previous {
            self.inner
                .objects
                .get_or_create(&KindState {
                    kind: kind.into(),
                    state: prev.as_str().into(),
                })
                .dec();
        }
        self.inner
            .objects
            .get_or_create(&KindState {
                kind: kind.into(),
                state: state.as_str().into(),
            })
            .inc();
    }

    /// Stops counting an object (it is gone).
    pub(crate) fn forget(&self, kind: &str, object: &str) {
        let mut states = self.inner.states.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(prev) = states.remove(kind, object) {
            self.inner
                .objects
                .get_or_create(&KindState {
                    kind: kind.into(),
                    state: prev.as_str().into(),
                })
                .dec();
        }
    }
}

/// Counts a provider's calls to its external API (`ferroplane_external_calls_total`).
#[derive(Clone, Debug)]
pub struct ExternalCalls {
    kind: String,
    metrics: Metrics,
}

impl ExternalCalls {
    /// Records one call: `action` is the API operation (e.g. `DescribeInstances`), `result`
    /// `success` or an error code (e.g. `Throttling.User`).
    pub fn record(&self, action: &str, result: &str) {
        self.metrics
            .inner
            .calls
            .get_or_create(&CallLabels {
                kind: self.kind.clone(),
                action: action.into(),
                result: result.into(),
            })
            .inc();
    }

    /// Records a call from its outcome: `success` or the error's reason.
    pub fn record_result<T>(&self, action: &str, result: &Result<T, ReconcileError>) {
        match result {
            Ok(_) => self.record(action, "success"),
            Err(e) => self.record(action, e.reason()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_every_family_with_labels() {
        let m = Metrics::new();
        m.reconciled("ECSInstance", "success", Duration::from_millis(12));
        m.error("ECSInstance", "Throttling");
        m.external_calls("ECSInstance")
            .record("DescribeInstances", "success");
        m.set_state("ECSInstance", "default/a", ObjectState::NotReady);
        m.set_state("ECSInstance", "default/a", ObjectState::Ready);
        m.set_state("ECSInstance", "default/b", ObjectState::Ready);
        let text = m.encode();
        assert!(
            text.contains(r#"ferroplane_reconciles_total{kind="ECSInstance",result="success"} 1"#),
            "{text}"
        );
        assert!(text.contains(
            r#"ferroplane_reconcile_errors_total{kind="ECSInstance",reason="Throttling"} 1"#
        ));
        assert!(text.contains(
            r#"ferroplane_external_calls_total{kind="ECSInstance",action="DescribeInstances",result="success"} 1"#
        ));
        assert!(text.contains(r#"ferroplane_managed_objects{kind="ECSInstance",state="ready"} 2"#));
        assert!(
            text.contains(r#"ferroplane_managed_objects{kind="ECSInstance",state="not_ready"} 0"#)
        );
        assert!(
            text.contains("ferroplane_reconcile_duration_seconds_count{kind=\"ECSInstance\"} 1")
        );
        // Crossplane's families share the registry, under their own names.
        m.set_health(
            "alibabacloud.ferroplane.io/v1alpha1, Kind=ECSInstance",
            "default/a",
            true,
            true,
        );
        assert!(m.encode().contains(
            r#"crossplane_managed_resource_ready{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=ECSInstance"} 1"#
        ));
        m.forget("ECSInstance", "default/a");
        assert!(
            m.encode()
                .contains(r#"ferroplane_managed_objects{kind="ECSInstance",state="ready"} 1"#)
        );
    }
}
