//! What a provider tells the framework about the external resource: the results of
//! `observe`, `create`, `update` and `delete`, and the reference it is called with.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// Which external resource a call is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalRef {
    /// The external name (cloud ID), from the `ferroplane.io/external-name` annotation or found
    /// by `observe`. `None` until it is known: `observe` must then search by the UID tag
    /// ([`UID_TAG`](crate::UID_TAG)) for a resource an earlier create may have made.
    pub name: Option<String>,
    /// The managed object's UID, the value of the UID tag or label.
    pub uid: String,
}

impl ExternalRef {
    /// The external name, when known.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// Credentials and endpoints for the connection Secret (`writeConnectionSecretToRef`).
///
/// `Debug` prints only the keys: values are often passwords or tokens.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ConnectionDetails(BTreeMap<String, Vec<u8>>);

impl ConnectionDetails {
    /// No details.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets one entry.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) {
        self.0.insert(key.into(), value.into());
    }

    /// Builder form of [`insert`](Self::insert).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.insert(key, value);
        self
    }

    /// Adds every entry of `other`, replacing entries with the same key.
    pub fn merge(&mut self, other: &ConnectionDetails) {
        for (k, v) in &other.0 {
            self.0.insert(k.clone(), v.clone());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.0.get(key).map(Vec::as_slice)
    }

    /// The entries, sorted by key.
    pub fn as_map(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.0
    }
}

impl From<BTreeMap<String, Vec<u8>>> for ConnectionDetails {
    fn from(map: BTreeMap<String, Vec<u8>>) -> Self {
        Self(map)
    }
}

impl fmt::Debug for ConnectionDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// Is the external resource usable? Becomes the `Ready` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Usable (`Ready=True`, reason `Available`).
    Available,
    /// Exists but not usable, with why (`Ready=False`, reason `Unavailable`).
    Unavailable(String),
    /// Still being created (`Ready=False`, reason `Creating`).
    Creating,
}

/// Does the external resource match the spec?
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum UpToDate {
    /// Nothing to do.
    #[default]
    Yes,
    /// `update` is needed; the message names what differs (e.g. `instanceName: "a" → "b"`)
    /// without secret values.
    No(String),
}

/// The result of `observe`.
///
/// Build it with [`Observation::missing`] or [`Observation::found`] and the `with_*` methods;
/// the struct is `#[non_exhaustive]` so that fields can be added without breaking providers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Observation {
    /// Does the external resource exist?
    pub exists: bool,
    /// Its external name, when `observe` found it without one (adoption by UID tag) or wants to
    /// correct it. The framework records it in the `ferroplane.io/external-name` annotation.
    pub external_name: Option<String>,
    /// Whether `update` is needed.
    pub up_to_date: UpToDate,
    /// A JSON merge patch (RFC 7386) of `spec` filling fields the user left unset with observed
    /// values. Applied only when the management policies allow `LateInitialize`.
    pub late_init: Option<Value>,
    /// Top-level fields of `.status` to set (merge patch), e.g. `atProvider` for cloud kinds or
    /// `availableReplicas` for in-cluster kinds. `conditions` and `observedGeneration` belong to
    /// the framework and are ignored here.
    pub status: Map<String, Value>,
    /// Becomes the `Ready` condition.
    pub readiness: Readiness,
    /// The resource is changing state (starting, stopping, resizing): requeue soon instead of
    /// after the poll interval.
    pub in_transition: bool,
    /// Entries for the connection Secret.
    pub connection_details: ConnectionDetails,
    /// Something the user should know that is not an error, shown in the `Synced` message
    /// (e.g. a change waiting for a restart the spec does not allow).
    pub note: Option<String>,
    /// Kind-specific conditions besides `Ready` and `Synced` (e.g. `Available`, `Progressing`,
    /// `Degraded` of in-cluster kinds), merged the same way and after them: a `Ready` here
    /// refines the one derived from `readiness` (e.g. a specific reason).
    pub conditions: Vec<crate::conditions::Desired>,
}

impl Observation {
    /// The external resource does not exist.
    pub fn missing() -> Self {
        Self {
            exists: false,
            external_name: None,
            up_to_date: UpToDate::Yes,
            late_init: None,
            status: Map::new(),
            readiness: Readiness::Creating,
            in_transition: false,
            connection_details: ConnectionDetails::new(),
            note: None,
            conditions: Vec::new(),
        }
    }

    /// The external resource exists under `external_name`; up to date and available unless
    /// the `with_*` methods say otherwise.
    pub fn found(external_name: impl Into<String>) -> Self {
        Self {
            exists: true,
            external_name: Some(external_name.into()),
            readiness: Readiness::Available,
            ..Self::missing()
        }
    }

    /// It differs from the spec; `diff` says how.
    pub fn with_diff(mut self, diff: impl Into<String>) -> Self {
        self.up_to_date = UpToDate::No(diff.into());
        self
    }

    /// Late-initialization merge patch of `spec` (see [`Observation::late_init`]).
    pub fn with_late_init(mut self, spec_patch: Value) -> Self {
        self.late_init = Some(spec_patch);
        self
    }

    /// Sets `status.atProvider`.
    pub fn with_at_provider(self, at_provider: Value) -> Self {
        self.with_status_field("atProvider", at_provider)
    }

    /// Sets another top-level status field (in-cluster kinds: `availableReplicas`, `url`, ...).
    pub fn with_status_field(mut self, field: impl Into<String>, value: Value) -> Self {
        self.status.insert(field.into(), value);
        self
    }

    pub fn with_readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    /// Marks the resource as changing state (fast requeue).
    pub fn in_transition(mut self) -> Self {
        self.in_transition = true;
        self
    }

    pub fn with_connection_details(mut self, details: ConnectionDetails) -> Self {
        self.connection_details = details;
        self
    }

    /// Adds a kind-specific condition (see [`Observation::conditions`]).
    pub fn with_condition(mut self, condition: crate::conditions::Desired) -> Self {
        self.conditions.push(condition);
        self
    }

    /// A note for the `Synced` condition's message (see [`Observation::note`]).
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// The result of `create`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Creation {
    /// The external name of the new (or, with the same idempotency key, already existing)
    /// resource. Recorded in the annotation at once.
    pub external_name: String,
    /// Entries for the connection Secret known only at creation (e.g. a generated password).
    pub connection_details: ConnectionDetails,
}

impl Creation {
    pub fn new(external_name: impl Into<String>) -> Self {
        Self {
            external_name: external_name.into(),
            connection_details: ConnectionDetails::new(),
        }
    }

    pub fn with_connection_details(mut self, details: ConnectionDetails) -> Self {
        self.connection_details = details;
        self
    }
}

/// The result of `update`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Update {
    /// The update started a change that takes a while (a stop/start). Every update is followed
    /// by a prompt observe; this only changes how the event words it ("updating").
    pub in_transition: bool,
    /// Entries for the connection Secret that changed with the update.
    pub connection_details: ConnectionDetails,
}

impl Update {
    /// The external resource now matches the spec (or will shortly, without further calls).
    pub fn done() -> Self {
        Self::default()
    }

    /// The update is in progress; observe again soon.
    pub fn in_progress() -> Self {
        Self {
            in_transition: true,
            ..Self::default()
        }
    }

    pub fn with_connection_details(mut self, details: ConnectionDetails) -> Self {
        self.connection_details = details;
        self
    }
}

/// The result of `delete`. Either way, the finalizer is removed only once `observe` reports the
/// resource gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// The resource is gone (or was already): the framework observes again at once to confirm.
    Gone,
    /// Deletion was accepted and takes a while: the framework observes again soon.
    InProgress,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn connection_details_debug_hides_values() {
        let d = ConnectionDetails::new()
            .with("password", "hunter2")
            .with("host", "10.0.0.1");
        let printed = format!("{d:?}");
        assert!(printed.contains("password"));
        assert!(!printed.contains("hunter2"));
        assert!(!printed.contains("10.0.0.1"));
    }

    #[test]
    fn observation_builders() {
        let o = Observation::found("i-1")
            .with_diff("instanceName: a → b")
            .with_at_provider(json!({"status": "Running"}))
            .in_transition();
        assert!(o.exists);
        assert_eq!(o.external_name.as_deref(), Some("i-1"));
        assert_eq!(o.up_to_date, UpToDate::No("instanceName: a → b".into()));
        assert_eq!(o.status["atProvider"], json!({"status": "Running"}));
        assert!(o.in_transition);
        assert!(!Observation::missing().exists);
    }
}
