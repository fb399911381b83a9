//! When to look at an object again: the poll interval (default or per-object annotation), a
//! short interval while the external resource is in transition, and capped exponential backoff
//! per object on errors.
//!
//! Polls land on a grid: each object polls at the same phase of every interval, a phase drawn
//! from its identity, so objects created together still poll spread over the interval, and an
//! object polls exactly once per interval in steady state. (A random jitter per poll would make
//! each object's period vary and the shared observation calls of all objects, which run once per
//! shortest period, more frequent than the average object's poll.) The other delays get jitter.

use std::hash::{Hash, Hasher};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use rand::Rng;

use crate::error::RetryClass;

/// Timing knobs of one controller.
#[derive(Clone, Debug, PartialEq)]
pub struct RequeuePolicy {
    /// How often an object is observed when nothing happens (default 60 s).
    pub poll_interval: Duration,
    /// Fraction of the transition, conflict and backoff delays added or removed at random
    /// (default 0.1 = ±10 %). Polls follow the grid instead (see the module docs).
    pub jitter: f64,
    /// Interval while the external resource is in transition (default 5 s).
    pub transition_interval: Duration,
    /// First retry delay after an error (default 1 s); doubles per consecutive failure.
    pub backoff_base: Duration,
    /// Longest retry delay after errors (default 5 min).
    pub backoff_max: Duration,
    /// Shortest poll interval an annotation may ask for (default 5 s), to protect cloud quotas.
    pub min_poll_interval: Duration,
    /// How long after its creation a resource the cloud does not list yet is taken to be still
    /// appearing rather than gone (default 120 s): eventually consistent APIs list new resources
    /// late, and concluding "gone" would create a second one or drop the finalizer of a live one.
    pub visibility_grace: Duration,
}

impl Default for RequeuePolicy {
    fn default() -> Self {
        Self {
            poll_interval: Duration::from_secs(60),
            jitter: 0.1,
            transition_interval: Duration::from_secs(5),
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(300),
            min_poll_interval: Duration::from_secs(5),
            visibility_grace: Duration::from_secs(120),
        }
    }
}

/// The origin of the poll grid: this process's first use of it.
static GRID_ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

/// How long until the object `identity` polls next, with polls every `interval`: the next slot
/// of its phase that is at least 90 % of an interval away. In steady state (each poll scheduled
/// by the one before) that is exactly one interval; after a reconcile between slots (a watch
/// event) the next poll comes 0.9 to 1.9 intervals later, back on the object's phase.
pub(crate) fn until_next_poll(interval: Duration, identity: &str) -> Duration {
    until_slot(interval, identity, GRID_ORIGIN.elapsed())
}

fn until_slot(interval: Duration, identity: &str, since_origin: Duration) -> Duration {
    let period = interval.as_nanos();
    if period == 0 {
        return interval;
    }
    let mut hasher = std::hash::DefaultHasher::new();
    identity.hash(&mut hasher);
    let phase = u128::from(hasher.finish()) % period;
    let position = (since_origin.as_nanos() + phase) % period;
    let mut wait = period - position;
    // Polls fire a little late (timers, queueing): a slot sooner than this is the one just
    // served, so the next one is meant.
    if wait < period - period / 10 {
        wait += period;
    }
    Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
}

/// How long until the first look at a resource created now that the cloud lists `lag` later:
/// the first instant at least `lag` away that is a whole multiple of `lag` on the wall clock.
/// Every create within one period gets the same instant, so their first looks share one read;
/// the wait is at most twice the lag.
pub(crate) fn until_listed(lag: Duration) -> Duration {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    until_grid_slot(lag, since_epoch)
}

fn until_grid_slot(lag: Duration, now: Duration) -> Duration {
    let period = lag.as_nanos();
    if period == 0 {
        return lag;
    }
    let wait = match now.as_nanos() % period {
        0 => period,
        into_period => 2 * period - into_period,
    };
    Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
}

/// The `ferroplane.io/poll-interval` annotation is not a duration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "annotation ferroplane.io/poll-interval={0:?} is not a duration; write it like 30s, 5m, 1h or 1m30s"
)]
pub struct BadPollInterval(pub String);

/// Parses durations like `30s`, `5m`, `1h`, `1m30s`, `500ms` (Go's `time.ParseDuration` units
/// `ms`, `s`, `m`, `h`; integers only).
pub fn parse_duration(text: &str) -> Result<Duration, BadPollInterval> {
    let bad = || BadPollInterval(text.to_owned());
    let s = text.trim();
    if s.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.checked_mul(60).ok_or_else(bad)?),
            "h" => Duration::from_secs(n.checked_mul(3600).ok_or_else(bad)?),
            _ => return Err(bad()),
        };
        total = total.checked_add(unit).ok_or_else(bad)?;
        rest = &rest[unit_len..];
    }
    Ok(total)
}

impl RequeuePolicy {
    /// The poll interval for an object: its annotation if valid (and not below the minimum),
    /// else the default. A bad annotation is returned as an error for a condition message, with
    /// the default interval still in force.
    pub fn poll_interval(&self, annotation: Option<&str>) -> (Duration, Option<BadPollInterval>) {
        match annotation.map(parse_duration) {
            None => (self.poll_interval, None),
            Some(Ok(d)) => (d.max(self.min_poll_interval), None),
            Some(Err(e)) => (self.poll_interval, Some(e)),
        }
    }

    /// `base` ± jitter, using `rng`.
    pub fn jittered(&self, base: Duration, rng: &mut impl Rng) -> Duration {
        let j = self.jitter.clamp(0.0, 1.0);
        if j == 0.0 {
            return base;
        }
        let factor = rng.random_range((1.0 - j)..=(1.0 + j));
        base.mul_f64(factor)
    }

    /// Delay before retrying after `failures` consecutive failures (1 = first failure).
    pub fn backoff(&self, failures: u32, class: RetryClass, poll: Duration) -> Duration {
        match class {
            // The watch reconciles at once when the spec changes; until then only poll.
            RetryClass::UntilSpecChanges => poll,
            RetryClass::Backoff | RetryClass::WaitForDependency => {
                let exp = failures.saturating_sub(1).min(30);
                let delay = self.backoff_base.saturating_mul(1u32 << exp);
                delay.min(self.backoff_max)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn parses_go_style_durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        for bad in [
            "",
            "30",
            "s",
            "1.5m",
            "-1s",
            "10x",
            "1d",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn annotation_overrides_with_floor() {
        let p = RequeuePolicy::default();
        assert_eq!(p.poll_interval(None), (Duration::from_secs(60), None));
        assert_eq!(
            p.poll_interval(Some("30s")),
            (Duration::from_secs(30), None)
        );
        assert_eq!(p.poll_interval(Some("1s")), (Duration::from_secs(5), None));
        let (d, err) = p.poll_interval(Some("soon"));
        assert_eq!(d, Duration::from_secs(60));
        assert!(err.expect("error").to_string().contains("poll-interval"));
    }

    #[test]
    fn jitter_stays_in_bounds_and_varies() {
        let p = RequeuePolicy::default();
        let mut rng = StdRng::seed_from_u64(7);
        let base = Duration::from_secs(60);
        let samples: Vec<Duration> = (0..200).map(|_| p.jittered(base, &mut rng)).collect();
        assert!(
            samples
                .iter()
                .all(|d| *d >= Duration::from_secs(54) && *d <= Duration::from_secs(66))
        );
        assert!(samples.iter().any(|d| *d != samples[0]));
    }

    #[test]
    fn polls_land_on_the_objects_phase_once_per_interval() {
        let interval = Duration::from_secs(10);
        let ms = Duration::from_millis;
        // From any moment, the first poll lands on the object's phase, 0.9 to 1.9 intervals on.
        let first = until_slot(interval, "uid-a", ms(3_217));
        assert!(first >= ms(9_000) && first < ms(19_000), "{first:?}");
        let slot = ms(3_217) + first;
        // Served a little late, the slot schedules the next one exactly an interval later.
        for late in [0, 1, 40, 900] {
            assert_eq!(
                slot + ms(late) + until_slot(interval, "uid-a", slot + ms(late)),
                slot + interval
            );
        }
        // Objects get different phases, spread over the interval.
        let phases: Vec<Duration> = (0..100)
            .map(|i| ms(50_000) + until_slot(interval, &format!("uid-{i}"), ms(50_000)))
            .map(|at| Duration::from_nanos((at.as_nanos() % interval.as_nanos()) as u64))
            .collect();
        let early = phases.iter().filter(|p| **p < interval / 2).count();
        assert!(
            (30..=70).contains(&early),
            "{early} of 100 in the first half"
        );
        assert_eq!(until_slot(Duration::ZERO, "uid-a", ms(5)), Duration::ZERO);
    }

    #[test]
    fn first_looks_after_creates_of_one_period_fall_on_one_instant() {
        let lag = Duration::from_secs(1);
        let ms = Duration::from_millis;
        // Creates at 10.001, 10.300, 10.999 and 11.000 s all look at 12 s.
        let at = |now: Duration| now + until_grid_slot(lag, now);
        assert_eq!(at(ms(10_000)), ms(11_000));
        for now in [ms(10_001), ms(10_300), ms(10_999), ms(11_000)] {
            assert_eq!(at(now), ms(12_000), "{now:?}");
            let wait = until_grid_slot(lag, now);
            assert!(wait >= lag && wait <= 2 * lag, "{wait:?}");
        }
        assert_eq!(at(ms(11_001)), ms(13_000));
        assert_eq!(until_grid_slot(Duration::ZERO, ms(5)), Duration::ZERO);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RequeuePolicy::default();
        let poll = Duration::from_secs(60);
        let b = |n| p.backoff(n, RetryClass::Backoff, poll);
        assert_eq!(b(1), Duration::from_secs(1));
        assert_eq!(b(2), Duration::from_secs(2));
        assert_eq!(b(5), Duration::from_secs(16));
        assert_eq!(b(9), Duration::from_secs(256));
        assert_eq!(b(10), Duration::from_secs(300));
        assert_eq!(b(u32::MAX), Duration::from_secs(300));
        assert_eq!(p.backoff(4, RetryClass::UntilSpecChanges, poll), poll);
        assert_eq!(
            p.backoff(3, RetryClass::WaitForDependency, poll),
            Duration::from_secs(4)
        );
    }
}
