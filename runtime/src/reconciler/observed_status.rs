//! The status an observation describes: `Ready` from its readiness, the kind's own conditions
//! and the observed `.status` fields (`atProvider`, ...). Once a reconcile has observed the
//! resource, whatever it ends in writes this with its `Synced`: success, and a failed step
//! after the observation too (late-initialization, update, the connection Secret), so that
//! `Ready` and `atProvider` never outlive what they describe.

use serde_json::{Map, Value};

use crate::conditions::{self, Desired};
use crate::observation::Observation;
use crate::readiness::Readiness;

/// What the status says about the resource, beside `Synced`.
pub(super) struct ObservedStatus {
    ready: Option<Desired>,
    /// The kind's own conditions, after `Ready` (one of them may refine it).
    extra: Vec<Desired>,
    pub(super) fields: Map<String, Value>,
}

impl ObservedStatus {
    /// What `obs` describes.
    pub(super) fn of(obs: &Observation) -> Self {
        Self {
            ready: Some(conditions::ready(&obs.readiness)),
            extra: obs.conditions.clone(),
            fields: obs.status.clone(),
        }
    }

    /// Nothing observed: `ready` when the step knows it (e.g. `Creating` after a create),
    /// else `Ready` and the status fields stay as they are.
    pub(super) fn unobserved(ready: Option<Desired>) -> Self {
        Self {
            ready,
            extra: Vec::new(),
            fields: Map::new(),
        }
    }

    /// The same status with `Ready=False` for `why` (something the object promises is missing
    /// although the resource is fine).
    pub(super) fn not_ready(&self, why: String) -> Self {
        Self {
            ready: Some(conditions::ready(&Readiness::Unavailable(why))),
            extra: self.extra.clone(),
            fields: self.fields.clone(),
        }
    }

    /// `Ready` as the observation gives it, if it gives one.
    pub(super) fn ready(&self) -> Option<&Desired> {
        self.ready.as_ref()
    }

    /// The conditions to write with `synced`.
    pub(super) fn conditions(&self, synced: Desired) -> Vec<Desired> {
        let mut desired: Vec<Desired> = self.ready.iter().cloned().collect();
        desired.push(synced);
        desired.extend(self.extra.iter().cloned());
        desired
    }
}
