//! Instances this process created a moment ago. ECS lists a new instance with a short delay
//! (eventual consistency), and an observe that misses it must not conclude "gone": the framework
//! would create a second instance under a new token. Within [`GRACE`] of its creation an instance
//! that is not listed yet is reported as still being created.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a created instance may stay invisible to `DescribeInstances`.
pub const GRACE: Duration = Duration::from_secs(120);

/// When a new instance is usually listed: its first look waits this long (on a grid of this
/// period, so that the first looks of many creates share one batched read). The sandbox's mock
/// lists a new instance 1 s late; Alibaba Cloud documents no bound, so a longer lag is waited
/// for as before (the object says so in Synced and looks again).
pub const LISTED_AFTER: Duration = Duration::from_secs(1);

/// Instance IDs created recently, by when.
#[derive(Debug, Default)]
pub struct RecentCreations {
    created: Mutex<HashMap<String, Instant>>,
}

impl RecentCreations {
    /// Records a creation.
    pub fn record(&self, instance_id: &str) {
        let mut created = self.created.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        created.retain(|_, at| now.duration_since(*at) < GRACE);
        created.insert(instance_id.to_owned(), now);
    }

    /// Whether the instance was created within the grace period.
    pub fn is_recent(&self, instance_id: &str) -> bool {
        self.created
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(instance_id)
            .is_some_and(|at| at.elapsed() < GRACE)
    }

    /// The instance was seen (or is gone for good): no grace needed any more.
    pub fn settle(&self, instance_id: &str) {
        self.created
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(instance_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_until_settled() {
        let recent = RecentCreations::default();
        assert!(!recent.is_recent("i-1"));
        recent.record("i-1");
        assert!(recent.is_recent("i-1"));
        recent.settle("i-1");
        assert!(!recent.is_recent("i-1"));
    }
}
