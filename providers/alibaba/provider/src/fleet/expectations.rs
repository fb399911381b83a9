//! What a fleet's last reconcile created and deleted, until the ECSInstance cache shows it;
//! and the members it replaced as lost, until a status write counts them.
//!
//! The fleet plans from the cache; a reconcile that ran before the cache saw the last one's
//! deletes would count a deleted Ready member as still serving and delete one more, going below
//! `replicas - maxUnavailable`. So a fleet with unseen changes waits (a short requeue) instead
//! of planning; changes unseen for longer than [`FORGET_AFTER`] are dropped (their watch
//! events were lost to a restart of the watch, and a fresh list shows the truth).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferroplane_apis::alibabacloud::ECSInstance;
use kube::ResourceExt;
use kube::runtime::reflector::Store;

/// How long an unseen change holds a fleet back at most.
const FORGET_AFTER: Duration = Duration::from_secs(30);

/// A fleet's changes the cache has not shown yet.
#[derive(Debug)]
struct Unseen {
    created: BTreeSet<String>,
    /// Name and UID of each deleted member.
    deleted: BTreeSet<(String, String)>,
    since: Instant,
}

/// Unseen changes per fleet (`namespace/name`).
#[derive(Debug, Default)]
pub struct Expectations {
    fleets: Mutex<HashMap<String, Unseen>>,
}

impl Expectations {
    /// Records what a reconcile of `fleet` did.
    pub fn record(&self, fleet: &str, created: Vec<String>, deleted: Vec<(String, String)>) {
        if created.is_empty() && deleted.is_empty() {
            return;
        }
        let mut fleets = self.fleets.lock().unwrap_or_else(|e| e.into_inner());
        let entry = fleets.entry(fleet.to_owned()).or_insert_with(|| Unseen {
            created: BTreeSet::new(),
            deleted: BTreeSet::new(),
            since: Instant::now(),
        });
        entry.created.extend(created);
        entry.deleted.extend(deleted);
        entry.since = Instant::now();
    }

    /// Whether the cache shows everything recorded for `fleet` in `namespace` (and forgets it
    /// then, or once it is too old).
    pub fn satisfied(&self, fleet: &str, namespace: &str, cache: &Store<ECSInstance>) -> bool {
        let mut fleets = self.fleets.lock().unwrap_or_else(|e| e.into_inner());
        let Some(unseen) = fleets.get_mut(fleet) else {
            return true;
        };
        let state = cache.state();
        let find = |name: &str| {
            state
                .iter()
                .find(|o| o.name_any() == name && o.namespace().as_deref() == Some(namespace))
                .cloned()
        };
        unseen.created.retain(|name| find(name).is_none());
        unseen.deleted.retain(|(name, uid)| {
            find(name).is_some_and(|o| {
                o.uid().as_deref() == Some(uid.as_str()) && o.metadata.deletion_timestamp.is_none()
            })
        });
        let done = (unseen.created.is_empty() && unseen.deleted.is_empty())
            || unseen.since.elapsed() > FORGET_AFTER;
        if done {
            fleets.remove(fleet);
        }
        done
    }
}

/// Members replaced as lost whose count no status write holds yet, per fleet: a reconcile that
/// fails after deleting a lost member (a create refused, a status write that conflicts) would
/// otherwise never count it, since the next one sees the member deleting, not lost.
#[derive(Debug, Default)]
pub struct UncountedLosses {
    fleets: Mutex<HashMap<String, u32>>,
}

impl UncountedLosses {
    /// `n` more members of `fleet` replaced.
    pub fn add(&self, fleet: &str, n: u32) {
        if n > 0 {
            let mut fleets = self.fleets.lock().unwrap_or_else(|e| e.into_inner());
            *fleets.entry(fleet.to_owned()).or_default() += n;
        }
    }

    /// How many are not counted yet.
    pub fn pending(&self, fleet: &str) -> u32 {
        let fleets = self.fleets.lock().unwrap_or_else(|e| e.into_inner());
        fleets.get(fleet).copied().unwrap_or(0)
    }

    /// `n` of them are now in the status.
    pub fn counted(&self, fleet: &str, n: u32) {
        let mut fleets = self.fleets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(left) = fleets.get_mut(fleet) {
            *left = left.saturating_sub(n);
            if *left == 0 {
                fleets.remove(fleet);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_stay_pending_until_counted() {
        let losses = UncountedLosses::default();
        losses.add("ns/web", 1);
        losses.add("ns/web", 2);
        losses.add("ns/api", 0);
        assert_eq!(losses.pending("ns/web"), 3);
        assert_eq!(losses.pending("ns/api"), 0);
        losses.counted("ns/web", 2);
        assert_eq!(losses.pending("ns/web"), 1);
        losses.counted("ns/web", 1);
        assert_eq!(losses.pending("ns/web"), 0);
    }
}
