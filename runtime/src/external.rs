//! What the framework tells a provider about the external resource ([`ExternalRef`]) and what a
//! provider tells the framework back from `create`, `update` and `delete`. The result of
//! `observe` is an [`Observation`](crate::Observation).

use std::time::Duration;

use crate::connection_details::ConnectionDetails;

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

/// The result of `create`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Creation {
    /// The external name of the new (or, with the same idempotency key, already existing)
    /// resource. Recorded in the annotation at once.
    pub external_name: String,
    /// Entries for the connection Secret known only at creation (e.g. a generated password).
    pub connection_details: ConnectionDetails,
    /// The cloud lists a new resource this long after its create (eventual consistency), and
    /// `observe` shares its reads between objects. Set, the framework does not look at the new
    /// resource at once (a read of its own that would find nothing): the object says Creating
    /// and is looked at again once the lag has passed, on a grid of that period, so that the
    /// first looks of every create within one period fall together and share one read.
    /// `None`: the framework looks at once, which saves writes when the cloud lists at once.
    pub listed_after: Option<Duration>,
}

impl Creation {
    pub fn new(external_name: impl Into<String>) -> Self {
        Self {
            external_name: external_name.into(),
            connection_details: ConnectionDetails::new(),
            listed_after: None,
        }
    }

    /// See [`Creation::listed_after`].
    pub fn with_listed_after(mut self, lag: Duration) -> Self {
        self.listed_after = Some(lag);
        self
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// The resource is gone (or was already): the framework observes again at once to confirm.
    Gone,
    /// Deletion was accepted and takes a while: the framework observes again soon.
    InProgress,
    /// The cloud refuses the deletion for now for an expected reason that resolves itself (a
    /// VPC whose vSwitches are still being deleted): the framework says why in Synced and a
    /// Normal event, not as a failure, and tries again soon.
    Waiting(String),
}
