//! Consecutive failures per object, the exponent of its retry backoff.
//!
//! A streak counts failures of one [`RetryClass`] in a row. A failure of another class starts a
//! new streak: an object that waited for a referenced object (every change of that object
//! re-reconciles it and fails again, many times a second while a network is being built) and then
//! meets its first throttled cloud call has made progress, and retrying that call minutes later
//! (the backoff its waiting streak had grown to) would leave it un-Ready long after the cloud
//! recovered.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::RetryClass;

/// Failure streaks by object key.
#[derive(Debug, Default)]
pub(crate) struct Streaks {
    by_object: Mutex<HashMap<String, (RetryClass, u32)>>,
}

impl Streaks {
    /// Records a failure of `class` for `key`; returns the length of its streak (1 = first).
    pub(crate) fn fail(&self, key: String, class: RetryClass) -> u32 {
        let mut map = self.by_object.lock().unwrap_or_else(|p| p.into_inner());
        let streak = map.entry(key).or_insert((class, 0));
        if streak.0 != class {
            *streak = (class, 0);
        }
        streak.1 = streak.1.saturating_add(1);
        streak.1
    }

    /// The object reconciled successfully (or is gone): its next failure starts a new streak.
    pub(crate) fn clear(&self, key: &str) {
        self.by_object
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_of_one_class_lengthen_the_streak() {
        let s = Streaks::default();
        assert_eq!(s.fail("a".into(), RetryClass::Backoff), 1);
        assert_eq!(s.fail("a".into(), RetryClass::Backoff), 2);
        assert_eq!(s.fail("b".into(), RetryClass::Backoff), 1);
        assert_eq!(s.fail("a".into(), RetryClass::Backoff), 3);
        s.clear("a");
        assert_eq!(s.fail("a".into(), RetryClass::Backoff), 1);
    }

    /// The reliability_network e2e's instances failed to resolve their vSwitch reference about
    /// ten times while the network was built, then met one throttled DescribeInstances: with one
    /// streak for both, that retry came after 2^10 s, capped at five minutes.
    #[test]
    fn the_first_cloud_error_after_waiting_for_a_dependency_starts_a_new_streak() {
        let s = Streaks::default();
        for n in 1..=10 {
            assert_eq!(s.fail("vm".into(), RetryClass::WaitForDependency), n);
        }
        assert_eq!(s.fail("vm".into(), RetryClass::Backoff), 1);
        assert_eq!(s.fail("vm".into(), RetryClass::Backoff), 2);
        assert_eq!(s.fail("vm".into(), RetryClass::WaitForDependency), 1);
    }
}
