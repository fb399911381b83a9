//! The retry policy: which errors are retried (see [`crate::Error::is_retryable`]), how long to
//! wait (exponential backoff with jitter from `backon`, never shorter than the server's
//! `x-acs-retry-after`), and the bounds (attempts and total time).

use std::time::{Duration, Instant};

use backon::ExponentialBuilder;

/// Bounds and pacing of retries; `max_attempts = 1` disables retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first one included.
    pub max_attempts: usize,
    /// The first backoff delay.
    pub min_delay: Duration,
    /// The largest backoff delay (a longer `x-acs-retry-after` still wins).
    pub max_delay: Duration,
    /// No retry starts once this much time has passed since the first attempt started.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            min_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
            max_elapsed: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    pub(crate) fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_min_delay(self.min_delay)
            .with_max_delay(self.max_delay)
            .with_max_times(self.max_attempts.saturating_sub(1))
            .with_jitter()
    }

    /// The delay before the next attempt given backon's proposal and the server's request, or
    /// `None` to stop because the total time budget would be exceeded.
    pub(crate) fn next_delay(
        &self,
        started: Instant,
        proposed: Option<Duration>,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let delay = proposed?.max(retry_after.unwrap_or_default());
        (started.elapsed() + delay <= self.max_elapsed).then_some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_wins_over_a_shorter_backoff() {
        let policy = RetryPolicy::default();
        let now = Instant::now();
        assert_eq!(
            policy.next_delay(
                now,
                Some(Duration::from_millis(10)),
                Some(Duration::from_secs(2))
            ),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            policy.next_delay(
                now,
                Some(Duration::from_secs(3)),
                Some(Duration::from_millis(5))
            ),
            Some(Duration::from_secs(3))
        );
    }

    #[test]
    fn stops_when_backoff_is_exhausted_or_budget_exceeded() {
        let policy = RetryPolicy {
            max_elapsed: Duration::from_secs(1),
            ..RetryPolicy::default()
        };
        let now = Instant::now();
        assert_eq!(policy.next_delay(now, None, None), None);
        assert_eq!(
            policy.next_delay(
                now,
                Some(Duration::from_millis(1)),
                Some(Duration::from_secs(5))
            ),
            None
        );
    }
}
