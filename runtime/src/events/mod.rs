//! Kubernetes Events about managed objects, published through the [`EventRecorder`] (which
//! also folds repeats into a series). Their reasons are constants in [`crate::reasons`], so that
//! users and alerts can match on them.

mod recorder;

pub use recorder::EventRecorder;

use kube::runtime::events::{Event, EventType};
use kube::{Resource, ResourceExt};
use tracing::warn;

/// Largest event note the API accepts is 1 kB.
const MAX_NOTE: usize = 1000;

/// Publishes events for one controller.
#[derive(Clone)]
pub struct Events {
    recorder: EventRecorder,
}

impl Events {
    pub fn new(recorder: EventRecorder) -> Self {
        Self { recorder }
    }

    /// A Normal event. Failures to publish are logged, never fail the reconcile.
    pub async fn normal<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.publish(obj, EventType::Normal, reason, note).await;
    }

    /// A Warning event.
    pub async fn warning<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
        reason: &str,
        note: String,
    ) {
        self.publish(obj, EventType::Warning, reason, note).await;
    }

    async fn publish<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
        type_: EventType,
        reason: &str,
        mut note: String,
    ) {
        if note.len() > MAX_NOTE {
            let mut cut = MAX_NOTE;
            while !note.is_char_boundary(cut) {
                cut -= 1;
            }
            note.truncate(cut);
        }
        let action = reason.strip_prefix("Cannot").unwrap_or(reason).to_owned();
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action,
            secondary: None,
        };
        if let Err(err) = self.recorder.publish(&event, &obj.object_ref(&())).await {
            warn!(object = %obj.name_any(), reason, error = %err, "cannot publish event");
        }
    }
}
