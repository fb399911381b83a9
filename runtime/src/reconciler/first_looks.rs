//! Creates waiting for their first look. A provider whose cloud lists new resources late asks
//! for the first look once the lag has passed (see `Creation::listed_after`). The watch events
//! of the create's own writes (finalizer, external name) may reach the controller before the
//! reconciler has noted their versions, and would then reconcile the object at once: a look
//! that finds nothing, and a status write saying so. Until the first look is due, a reconcile
//! of an object nobody else changed only waits for it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct FirstLooks {
    due: Mutex<HashMap<String, Instant>>,
}

impl FirstLooks {
    /// The object `key` is looked at first `after` from now.
    pub(super) fn schedule(&self, key: &str, after: Duration) {
        self.lock().insert(key.to_owned(), Instant::now() + after);
    }

    /// How long until the first look of `key` is due; `None` when it is due (it is then
    /// forgotten) or none is scheduled.
    pub(super) fn remaining(&self, key: &str) -> Option<Duration> {
        let mut due = self.lock();
        let at = *due.get(key)?;
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            due.remove(key);
            return None;
        }
        Some(left)
    }

    pub(super) fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.due.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_look_is_awaited_until_due_then_forgotten() {
        let looks = FirstLooks::default();
        assert_eq!(looks.remaining("ns/a"), None);
        looks.schedule("ns/a", Duration::from_secs(60));
        let left = looks.remaining("ns/a").expect("scheduled");
        // Well below 60 s only if this thread stalled for half a minute.
        assert!(left > Duration::from_secs(30) && left <= Duration::from_secs(60));
        looks.forget("ns/a");
        assert_eq!(looks.remaining("ns/a"), None);
        looks.schedule("ns/b", Duration::ZERO);
        assert_eq!(looks.remaining("ns/b"), None, "due");
        assert!(looks.lock().is_empty(), "forgotten once due");
    }
}
