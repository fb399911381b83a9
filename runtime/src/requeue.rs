//! When to look at an object again: the poll interval (default or per-object annotation) with
//! jitter so that objects created together do not poll together, a short interval while the
//! external resource is in transition, and capped exponential backoff per object on errors.

use std::time::Duration;

use rand::Rng;

use crate::error::RetryClass;

/// Timing knobs of one controller.
#[derive(Clone, Debug, PartialEq)]
pub struct RequeuePolicy {
    /// How often an object is observed when nothing happens (default 60 s).
    pub poll_interval: Duration,
    /// Fraction of the interval added or removed at random (default 0.1 = ±10 %).
    pub jitter: f64,
    /// Interval while the external resource is in transition (default 5 s).
    pub transition_interval: Duration,
    /// First retry delay after an error (default 1 s); doubles per consecutive failure.
    pub backoff_base: Duration,
    /// Longest retry delay after errors (default 5 min).
    pub backoff_max: Duration,
    /// Shortest poll interval an annotation may ask for (default 5 s), to protect cloud quotas.
    pub min_poll_interval: Duration,
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
        }
    }
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
