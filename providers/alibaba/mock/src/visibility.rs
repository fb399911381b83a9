//! Eventual consistency of listings, as on the real cloud: with a visibility lag, a new instance
//! shows in DescribeInstances and tag searches only once the lag has passed, and a released one
//! keeps showing (Stopping if it was released while running, else Stopped) for the lag.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::instance::{Lifecycle, Phase, Status, StoredInstance};

/// `now + lag` (or `now` when the lag does not fit).
pub fn after_lag(now: Timestamp, lag: Duration) -> Timestamp {
    SignedDuration::try_from(lag)
        .ok()
        .and_then(|d| now.checked_add(d).ok())
        .unwrap_or(now)
}

/// Released instances still listed, each until its lag has passed.
#[derive(Debug, Default)]
pub struct Releasing {
    entries: Vec<(Timestamp, StoredInstance)>,
}

impl Releasing {
    /// Keeps listing `instance`, released at `now`, until `now + lag`.
    pub fn push(&mut self, mut instance: StoredInstance, now: Timestamp, lag: Duration) {
        self.entries.retain(|(until, _)| *until > now);
        if lag.is_zero() {
            return;
        }
        let shown = if instance.status(now) == Status::Stopped {
            Duration::ZERO
        } else {
            lag
        };
        // Stopping for the whole lag when it was running, Stopped otherwise.
        instance.lifecycle = Lifecycle::new(Phase::Stopped, now, shown);
        self.entries.push((after_lag(now, lag), instance));
    }

    /// The released instances of an account and region still listed at `now`.
    pub fn listed(
        &self,
        account_id: &str,
        region_id: &str,
        now: Timestamp,
    ) -> Vec<&StoredInstance> {
        self.entries
            .iter()
            .filter(|(until, i)| {
                *until > now && &*i.account_id == account_id && i.region_id == region_id
            })
            .map(|(_, i)| i)
            .collect()
    }
}
