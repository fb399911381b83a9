//! Publishes `events.k8s.io/v1` Events, folding repeats into a series the way Kubernetes
//! recorders do: an event like one published in the last [`SERIES_WINDOW`] (same type, reason,
//! action, note, reporter and object) is not created again; the first one's `series` is patched
//! with the new count and time. The note is part of what makes events alike because
//! kube-apiserver refuses to change an `events.k8s.io` Event's note ("field is immutable"): a
//! failure whose message changed is a new event, so the latest reason is always readable.
//!
//! Written here rather than taken from kube-runtime's `Recorder`, which keeps a whole `Event`
//! (about 2 KB) per object for its series and scans all of them on every publish: O(N) memory
//! and O(N) work per event with N managed objects. This one keeps a hash and the event's name
//! per series and prunes at most every [`PRUNE_EVERY`].

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as KubeEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::{Client, Error};
use serde_json::json;

/// How long after an event a like one joins its series instead of being created anew
/// (the value Kubernetes' own recorders use).
pub const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// How often the series past the window are dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(30);

/// Publishes events for one process; cheap to clone.
#[derive(Clone)]
pub struct EventRecorder {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    reporter: Reporter,
    series: Mutex<SeriesCache>,
}

struct SeriesCache {
    by_key: HashMap<u64, Series>,
    pruned_at: Instant,
}

/// The event a series of like events is folded into.
struct Series {
    namespace: String,
    name: String,
    count: i32,
    last_seen: Instant,
}

/// What to do for one publish.
enum Publish {
    Create,
    Repeat {
        namespace: String,
        name: String,
        count: i32,
    },
}

impl EventRecorder {
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            inner: Arc::new(Inner {
                client,
                reporter,
                series: Mutex::new(SeriesCache {
                    by_key: HashMap::new(),
                    pruned_at: Instant::now(),
                }),
            }),
        }
    }

    /// Publishes `event` about the object `regarding`, in that object's namespace (`default`
    /// for cluster-scoped objects).
    pub async fn publish(&self, event: &Event, regarding: &ObjectReference) -> Result<(), Error> {
        let key = self.series_key(event, regarding);
        let now = Instant::now();
        let plan = self.plan(key, now);
        if let Publish::Repeat {
            namespace,
            name,
            count,
        } = plan
        {
            let series = EventSeries {
                count,
                last_observed_time: MicroTime(Timestamp::now()),
            };
            let api: Api<KubeEvent> = Api::namespaced(self.inner.client.clone(), &namespace);
            let patch = json!({ "series": series });
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(()),
                // The event expired (the API server keeps events for an hour by default):
                // start a new series.
                Err(Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let created = self.build(event, regarding);
        let namespace = created.metadata.namespace.clone().unwrap_or_default();
        let name = created.metadata.name.clone().unwrap_or_default();
        Api::<KubeEvent>::namespaced(self.inner.client.clone(), &namespace)
            .create(&PostParams::default(), &created)
            .await?;
        self.lock().by_key.insert(
            key,
            Series {
                namespace,
                name,
                count: 1,
                last_seen: now,
            },
        );
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SeriesCache> {
        self.inner.series.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this publish starts an event or repeats one (counted at once, so that
    /// concurrent repeats get distinct counts).
    fn plan(&self, key: u64, now: Instant) -> Publish {
        let mut cache = self.lock();
        if now.duration_since(cache.pruned_at) >= PRUNE_EVERY {
            cache
                .by_key
                .retain(|_, s| now.duration_since(s.last_seen) < SERIES_WINDOW);
            cache.pruned_at = now;
        }
        match cache.by_key.get_mut(&key) {
            Some(series) if now.duration_since(series.last_seen) < SERIES_WINDOW => {
                series.count = series.count.saturating_add(1);
                series.last_seen = now;
                Publish::Repeat {
                    namespace: series.namespace.clone(),
                    name: series.name.clone(),
                    count: series.count,
                }
            }
            _ => Publish::Create,
        }
    }

    /// Identifies "like" events: same type, reason, action, note, related object and object.
    fn series_key(&self, event: &Event, regarding: &ObjectReference) -> u64 {
        let mut hasher = std::hash::DefaultHasher::new();
        matches!(event.type_, EventType::Warning).hash(&mut hasher);
        event.reason.hash(&mut hasher);
        event.action.hash(&mut hasher);
        event.note.hash(&mut hasher);
        for reference in [Some(regarding), event.secondary.as_ref()] {
            reference.is_some().hash(&mut hasher);
            if let Some(r) = reference {
                r.api_version.hash(&mut hasher);
                r.kind.hash(&mut hasher);
                r.namespace.hash(&mut hasher);
                r.name.hash(&mut hasher);
                r.uid.hash(&mut hasher);
                r.field_path.hash(&mut hasher);
            }
        }
        hasher.finish()
    }

    fn build(&self, event: &Event, regarding: &ObjectReference) -> KubeEvent {
        let now = Timestamp::now();
        let reporter = &self.inner.reporter;
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        // `<object>.<hex nanoseconds>`, the name Kubernetes recorders give events.
        let object = regarding.name.as_deref().unwrap_or(&reporter.controller);
        let name = format!("{object}.{:x}", now.as_nanosecond());
        KubeEvent {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            reason: Some(event.reason.clone()),
            action: Some(event.action.clone()),
            note: event.note.clone(),
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            reporting_controller: Some(reporter.controller.clone()),
            reporting_instance: Some(
                reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| reporter.controller.clone()),
            ),
            ..KubeEvent::default()
        }
    }
}
