//! The managed-resource metrics Crossplane's providers export (crossplane-runtime's
//! `statemetrics` and `managed` metric recorders), with Crossplane's names, types, label and
//! buckets, so dashboards and alerts written for `crossplane_managed_resource_*` work on
//! ferroplane unchanged. They sit beside ferroplane's own `ferroplane_*` metrics, which stay.
//!
//! | metric | type | what |
//! |---|---|---|
//! | `crossplane_managed_resource_exists` | gauge | objects this process reconciles |
//! | `crossplane_managed_resource_ready` | gauge | … with `Ready=True` |
//! | `crossplane_managed_resource_synced` | gauge | … with `Synced=True` |
//! | `crossplane_managed_resource_first_time_to_reconcile_seconds` | histogram | creation → first reconcile (no `Synced` yet) |
//! | `crossplane_managed_resource_first_time_to_readiness_seconds` | histogram | creation → first `Ready=True` |
//! | `crossplane_managed_resource_deletion_seconds` | histogram | deletion request → object gone |
//! | `crossplane_managed_resource_drift_seconds` | histogram | last observation up to date → observation that is not |
//!
//! One label, `gvk`, valued as Go's `schema.GroupVersionKind.String()` spells it
//! (`alibabacloud.ferroplane.io/v1alpha1, Kind=VPC`). Where ferroplane differs: Crossplane
//! counts the gauges by listing every object at an interval; here they follow the conditions
//! each reconcile computes (the same numbers once every object was reconciled, and a standby
//! replica exports none). Ground floor: imports only [`ObjectTable`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::object_table::ObjectTable;

/// Crossplane's one label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GvkLabel {
    gvk: String,
}

type Histograms = Family<GvkLabel, Histogram, fn() -> Histogram>;

/// crossplane-runtime's buckets for times a person waits for (readiness, deletion).
fn lifecycle_buckets() -> Histogram {
    Histogram::new([
        1.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
    ])
}

/// crossplane-runtime's buckets for detection and drift: 10 ns … 10 s, ten decades.
fn detection_buckets() -> Histogram {
    Histogram::new(exponential_buckets(1e-8, 10.0, 10))
}

/// `gvk` as Go's `schema.GroupVersionKind.String()` writes it.
pub(crate) fn gvk_label(group: &str, version: &str, kind: &str) -> String {
    format!("{group}/{version}, Kind={kind}")
}

/// Ready and Synced of one object, as last computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Health {
    pub(crate) ready: bool,
    pub(crate) synced: bool,
}

/// What is kept per object (by gvk and `namespace/name`).
#[derive(Clone, Copy, Debug, Default)]
struct Tracked {
    /// Ready and Synced as last counted; `None` until the object is counted.
    health: Option<Health>,
    /// Its first reconcile was counted by this process.
    detected: bool,
    /// When it was last observed up to date (for drift).
    last_unchanged: Option<Instant>,
}

pub(crate) struct CrossplaneMetrics {
    exists: Family<GvkLabel, Gauge>,
    ready: Family<GvkLabel, Gauge>,
    synced: Family<GvkLabel, Gauge>,
    first_reconcile: Histograms,
    first_ready: Histograms,
    deletion: Histograms,
    drift: Histograms,
    objects: Mutex<ObjectTable<Tracked>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CrossplaneMetrics {
    /// Registers the families under `crossplane_` in `root`.
    pub(crate) fn register(root: &mut Registry) -> Self {
        let histograms = |f: fn() -> Histogram| Histograms::new_with_constructor(f);
        let m = Self {
            exists: Family::default(),
            ready: Family::default(),
            synced: Family::default(),
            first_reconcile: histograms(detection_buckets),
            first_ready: histograms(lifecycle_buckets),
            deletion: histograms(lifecycle_buckets),
            drift: histograms(detection_buckets),
            objects: Mutex::default(),
        };
        let r = root.sub_registry_with_prefix("crossplane");
        r.register(
            "managed_resource_exists",
            "The number of managed resources that exist",
            m.exists.clone(),
        );
        r.register(
            "managed_resource_ready",
            "The number of managed resources in Ready=True state",
            m.ready.clone(),
        );
        r.register(
            "managed_resource_synced",
            "The number of managed resources in Synced=True state",
            m.synced.clone(),
        );
        r.register(
            "managed_resource_first_time_to_reconcile_seconds",
            "The time it took for a managed resource to be detected by the controller",
            m.first_reconcile.clone(),
        );
        r.register(
            "managed_resource_first_time_to_readiness_seconds",
            "The time it took for a managed resource to become ready first time after creation",
            m.first_ready.clone(),
        );
        r.register(
            "managed_resource_deletion_seconds",
            "The time it took for a managed resource to be deleted",
            m.deletion.clone(),
        );
        r.register(
            "managed_resource_drift_seconds",
            "How long since the previous successful reconcile when a resource was found to be out of sync",
            m.drift.clone(),
        );
        m
    }

    fn label(gvk: &str) -> GvkLabel {
        GvkLabel {
            gvk: gvk.to_owned(),
        }
    }

    /// A reconcile starts on an object without `Synced` yet: counted once per object and
    /// process, `age` after its creation.
    pub(crate) fn first_reconcile(&self, gvk: &str, object: &str, age: Duration) {
        let first = {
            let mut objects = lock(&self.objects);
            let tracked = objects.get_or_insert_with(gvk, object, Tracked::default);
            !std::mem::replace(&mut tracked.detected, true)
        };
        if first {
            self.first_reconcile
                .get_or_create(&Self::label(gvk))
                .observe(age.as_secs_f64());
        }
    }

    /// The object's first `Ready=True`, `age` after its creation.
    pub(crate) fn first_ready(&self, gvk: &str, age: Duration) {
        self.first_ready
            .get_or_create(&Self::label(gvk))
            .observe(age.as_secs_f64());
    }

    /// An observation found the resource as the spec wants it.
    pub(crate) fn unchanged(&self, gvk: &str, object: &str) {
        lock(&self.objects)
            .get_or_insert_with(gvk, object, Tracked::default)
            .last_unchanged = Some(Instant::now());
    }

    /// An observation found the resource differing from the spec: the time since it was last
    /// found up to date (nothing when this process never saw it so, as after a restart).
    pub(crate) fn drifted(&self, gvk: &str, object: &str) {
        let mut objects = lock(&self.objects);
        if let Some(last) = objects
            .get_mut(gvk, object)
            .and_then(|t| t.last_unchanged.as_mut())
        {
            self.drift
                .get_or_create(&Self::label(gvk))
                .observe(last.elapsed().as_secs_f64());
            *last = Instant::now();
        }
    }

    /// The object's conditions as this reconcile computed them.
    pub(crate) fn set_health(&self, gvk: &str, object: &str, now: Health) {
        let before = lock(&self.objects)
            .get_or_insert_with(gvk, object, Tracked::default)
            .health
            .replace(now);
        let label = Self::label(gvk);
        let step = |family: &Family<GvkLabel, Gauge>, was: Option<bool>, is: bool| match (was, is) {
            (Some(true), false) => {
                family.get_or_create(&label).dec();
            }
            (None | Some(false), true) => {
                family.get_or_create(&label).inc();
            }
            _ => {
                // Touch the series so that a kind with none ready still shows 0.
                let _ = family.get_or_create(&label);
            }
        };
        if before.is_none() {
            self.exists.get_or_create(&label).inc();
        }
        step(&self.ready, before.map(|h| h.ready), now.ready);
        step(&self.synced, before.map(|h| h.synced), now.synced);
    }

    /// The object is gone; `deleting_for` is how long its deletion took, when it was deleted.
    pub(crate) fn gone(&self, gvk: &str, object: &str, deleting_for: Option<Duration>) {
        let label = Self::label(gvk);
        let tracked = lock(&self.objects).remove(gvk, object);
        if let Some(before) = tracked.and_then(|t| t.health) {
            self.exists.get_or_create(&label).dec();
            if before.ready {
                self.ready.get_or_create(&label).dec();
            }
            if before.synced {
                self.synced.get_or_create(&label).dec();
            }
        }
        if let Some(took) = deleting_for {
            self.deletion
                .get_or_create(&label)
                .observe(took.as_secs_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;

    const VPC: &str = "alibabacloud.ferroplane.io/v1alpha1, Kind=VPC";

    fn text(root: &Registry) -> String {
        let mut out = String::new();
        encode(&mut out, root).expect("encodes");
        out
    }

    #[test]
    fn gvk_is_spelled_as_go_spells_it() {
        assert_eq!(
            gvk_label("alibabacloud.ferroplane.io", "v1alpha1", "VPC"),
            VPC
        );
    }

    #[test]
    fn gauges_count_objects_by_condition() {
        let mut root = Registry::default();
        let m = CrossplaneMetrics::register(&mut root);
        let up = Health {
            ready: true,
            synced: true,
        };
        m.set_health(VPC, "ns/a", up);
        m.set_health(
            VPC,
            "ns/b",
            Health {
                ready: false,
                synced: true,
            },
        );
        m.set_health(
            VPC,
            "ns/c",
            Health {
                ready: false,
                synced: false,
            },
        );
        m.set_health(
            VPC,
            "ns/c",
            Health {
                ready: true,
                synced: false,
            },
        );
        let out = text(&root);
        for line in [
            "# TYPE crossplane_managed_resource_exists gauge",
            "# TYPE crossplane_managed_resource_ready gauge",
            "# TYPE crossplane_managed_resource_synced gauge",
            r#"crossplane_managed_resource_exists{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 3"#,
            r#"crossplane_managed_resource_ready{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 2"#,
            r#"crossplane_managed_resource_synced{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 2"#,
        ] {
            assert!(out.contains(line), "{line} in\n{out}");
        }
        m.gone(VPC, "ns/a", Some(Duration::from_secs(7)));
        let out = text(&root);
        for line in [
            r#"crossplane_managed_resource_exists{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 2"#,
            r#"crossplane_managed_resource_ready{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
            r#"crossplane_managed_resource_synced{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
            "# TYPE crossplane_managed_resource_deletion_seconds histogram",
            r#"crossplane_managed_resource_deletion_seconds_bucket{le="10.0",gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
            r#"crossplane_managed_resource_deletion_seconds_bucket{le="5.0",gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 0"#,
        ] {
            assert!(out.contains(line), "{line} in\n{out}");
        }
    }

    #[test]
    fn lifecycle_histograms_have_crossplanes_names_and_buckets() {
        let mut root = Registry::default();
        let m = CrossplaneMetrics::register(&mut root);
        m.first_reconcile(VPC, "ns/a", Duration::from_millis(300));
        m.first_reconcile(VPC, "ns/a", Duration::from_secs(5));
        m.first_ready(VPC, Duration::from_secs(42));
        // Drift needs an up-to-date observation first (none after a restart).
        m.drifted(VPC, "ns/a");
        m.unchanged(VPC, "ns/a");
        m.drifted(VPC, "ns/a");
        let out = text(&root);
        for line in [
            "# TYPE crossplane_managed_resource_first_time_to_reconcile_seconds histogram",
            r#"crossplane_managed_resource_first_time_to_reconcile_seconds_count{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
            r#"crossplane_managed_resource_first_time_to_reconcile_seconds_bucket{le="1.0",gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
            r#"crossplane_managed_resource_first_time_to_reconcile_seconds_bucket{le="1e-8",gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 0"#,
            "# TYPE crossplane_managed_resource_first_time_to_readiness_seconds histogram",
            r#"crossplane_managed_resource_first_time_to_readiness_seconds_bucket{le="30.0",gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 0"#,
            r#"crossplane_managed_resource_first_time_to_readiness_seconds_bucket{le="60.0",gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
            "# TYPE crossplane_managed_resource_drift_seconds histogram",
            r#"crossplane_managed_resource_drift_seconds_count{gvk="alibabacloud.ferroplane.io/v1alpha1, Kind=VPC"} 1"#,
        ] {
            assert!(out.contains(line), "{line} in\n{out}");
        }
    }
}
