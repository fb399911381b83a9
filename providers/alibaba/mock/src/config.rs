//! Configuration of the mock: [`MockConfig`] at start, [`Faults`] at start or at run time, and the
//! duration syntax the command line accepts (`0`, `500ms`, `2s`, `1m`, `1.5s`).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::auth::{AccessKey, MAX_SKEW};
use crate::faults_error::FaultsError;
use crate::injection::ErrorInjection;

/// The account that owns the key given by [`MockConfig::new`].
pub const DEFAULT_ACCOUNT_ID: &str = "1234567890123456";

/// Injected faults: each API request is answered with `Throttling.User` with probability
/// `throttle_rate`, else with `ServiceUnavailable` with probability `error_rate`, after `latency`.
/// With probability `drop_rate` a request is processed but its connection is then cut without an
/// answer (a lost response: the client cannot know whether the call took effect). With
/// `api_rate_limit_per_minute`, each (account, region, action) may make that many calls per
/// wall-clock minute; further calls in the same minute answer `Throttling.User`, as ECS's per-API
/// flow control does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Faults {
    /// Fraction (0–1) of requests throttled.
    pub throttle_rate: f64,
    /// Fraction (0–1) of requests failed with 503.
    pub error_rate: f64,
    /// Delay added to every API answer (after the request is processed; a ClientToken call
    /// repeated meanwhile answers `LastTokenProcessing`).
    #[serde(rename = "latencyMs", with = "millis")]
    pub latency: Duration,
    /// `x-acs-retry-after` (milliseconds) sent with every throttling answer, when set.
    #[serde(rename = "retryAfterMs", default)]
    pub retry_after_ms: Option<u64>,
    /// Fraction (0–1) of requests processed whose response is then dropped.
    #[serde(default)]
    pub drop_rate: f64,
    /// Calls allowed per (account, region, action) and minute; `None` is unlimited.
    #[serde(default)]
    pub api_rate_limit_per_minute: Option<u32>,
}

/// A partial update of [`Faults`], the body of `POST /_mock/faults`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultsPatch {
    pub throttle_rate: Option<f64>,
    pub error_rate: Option<f64>,
    pub latency_ms: Option<u64>,
    pub retry_after_ms: Option<u64>,
    pub drop_rate: Option<f64>,
    /// 0 removes the limit.
    pub api_rate_limit_per_minute: Option<u32>,
}

impl Faults {
    /// Checks the rates.
    pub fn validate(&self) -> Result<(), FaultsError> {
        for (name, value) in [
            ("throttleRate", self.throttle_rate),
            ("errorRate", self.error_rate),
            ("dropRate", self.drop_rate),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(FaultsError::Rate { name, value });
            }
        }
        Ok(())
    }

    /// These faults with `patch` applied, validated.
    pub fn patched(&self, patch: &FaultsPatch) -> Result<Self, FaultsError> {
        let next = Self {
            throttle_rate: patch.throttle_rate.unwrap_or(self.throttle_rate),
            error_rate: patch.error_rate.unwrap_or(self.error_rate),
            latency: patch.latency_ms.map_or(self.latency, Duration::from_millis),
            retry_after_ms: patch.retry_after_ms.or(self.retry_after_ms),
            drop_rate: patch.drop_rate.unwrap_or(self.drop_rate),
            api_rate_limit_per_minute: match patch.api_rate_limit_per_minute {
                Some(0) => None,
                Some(n) => Some(n),
                None => self.api_rate_limit_per_minute,
            },
        };
        next.validate()?;
        Ok(next)
    }
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// Everything the mock starts with.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// Where to listen; port 0 picks a free one. Default `127.0.0.1:0`.
    pub listen: SocketAddr,
    /// Accepted access keys.
    pub access_keys: Vec<AccessKey>,
    /// How long Pending, Starting and Stopping last. Default 2 s.
    pub transition_delay: Duration,
    /// Injected faults. Default none.
    pub faults: Faults,
    /// Most live instances per account; `None` (default) is unlimited. Exceeding it answers
    /// `QuotaExceed.ElasticQuota`.
    pub instance_quota: Option<usize>,
    /// How long nonces are remembered (at least the 15-minute skew window).
    pub nonce_window: Duration,
    /// Most nonces remembered; the oldest are forgotten first.
    pub nonce_capacity: usize,
    /// Scripted errors pending at start (see [`ErrorInjection`]).
    pub injections: Vec<ErrorInjection>,
    /// How long a new instance stays out of DescribeInstances and tag searches, and a released
    /// one stays in them, as on the real cloud. Default zero (consistent at once).
    pub visibility_lag: Duration,
    /// Calls allowed per (account, region) and wall-clock minute, per action; they override
    /// [`Faults::api_rate_limit_per_minute`] for their actions, as ECS's own table of API rate
    /// limits differs per action.
    pub api_rate_limits: ApiRateLimits,
}

/// Per-action quotas: action name → calls per minute.
pub type ApiRateLimits = std::collections::BTreeMap<String, u32>;

/// Why a per-action quota was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid API rate limit {entry:?}: expected ACTION=CALLS or ACTION=CALLS/min with CALLS > 0, e.g. RunInstances=600/min"
)]
pub struct RateLimitSyntaxError {
    pub entry: String,
}

/// Parses `RunInstances=600,DescribeInstances=3000/min` (a `/min` suffix is optional: the
/// window is always a wall-clock minute, as ECS's is).
pub fn parse_api_rate_limits(text: &str) -> Result<ApiRateLimits, RateLimitSyntaxError> {
    let mut limits = ApiRateLimits::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let refused = || RateLimitSyntaxError {
            entry: entry.to_owned(),
        };
        let (action, calls) = entry.split_once('=').ok_or_else(refused)?;
        let calls = calls.trim();
        let calls = calls.strip_suffix("/min").unwrap_or(calls);
        let calls: u32 = calls.parse().map_err(|_| refused())?;
        let action = action.trim();
        if calls == 0 || action.is_empty() || !action.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(refused());
        }
        limits.insert(action.to_owned(), calls);
    }
    Ok(limits)
}

impl MockConfig {
    /// A mock accepting one enabled key owned by [`DEFAULT_ACCOUNT_ID`].
    pub fn new(access_key_id: impl Into<String>, access_key_secret: impl Into<String>) -> Self {
        Self {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            access_keys: vec![AccessKey::new(
                access_key_id,
                access_key_secret,
                DEFAULT_ACCOUNT_ID,
            )],
            transition_delay: Duration::from_secs(2),
            faults: Faults::default(),
            instance_quota: None,
            nonce_window: MAX_SKEW + Duration::from_secs(60),
            nonce_capacity: 1_000_000,
            injections: Vec::new(),
            visibility_lag: Duration::ZERO,
            api_rate_limits: ApiRateLimits::new(),
        }
    }

    /// Sets the visibility lag of listings.
    pub fn with_visibility_lag(mut self, lag: Duration) -> Self {
        self.visibility_lag = lag;
        self
    }

    /// Sets the transition delay.
    pub fn with_transition_delay(mut self, delay: Duration) -> Self {
        self.transition_delay = delay;
        self
    }

    /// Sets the faults.
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Limits `action` to `calls_per_minute` per (account, region) and wall-clock minute.
    pub fn with_api_rate_limit(mut self, action: impl Into<String>, calls_per_minute: u32) -> Self {
        self.api_rate_limits.insert(action.into(), calls_per_minute);
        self
    }

    /// Adds a scripted error pending at start.
    pub fn with_error(mut self, injection: ErrorInjection) -> Self {
        self.injections.push(injection);
        self
    }

    /// Sets the per-account instance quota.
    pub fn with_instance_quota(mut self, quota: usize) -> Self {
        self.instance_quota = Some(quota);
        self
    }

    /// Adds another key.
    pub fn with_access_key(mut self, key: AccessKey) -> Self {
        self.access_keys.push(key);
        self
    }

    /// Sets the listen address.
    pub fn with_listen(mut self, listen: SocketAddr) -> Self {
        self.listen = listen;
        self
    }
}

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: use a number with a unit, e.g. 0, 500ms, 2s, 1.5s or 1m")]
pub struct DurationError {
    input: String,
}

/// Parses `0`, `250ms`, `2s`, `1.5s`, `1m`, `1h` (a bare number other than 0 is seconds).
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let err = || DurationError {
        input: input.to_owned(),
    };
    let s = input.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number.parse().map_err(|_| err())?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(err()),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        for bad in ["", "s", "2x", "-1s", "1..2s", "ms500"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn faults_patch_and_validation() {
        let f = Faults::default();
        let patch: FaultsPatch =
            serde_json::from_str(r#"{"throttleRate":0.5,"latencyMs":20}"#).unwrap();
        let next = f.patched(&patch).unwrap();
        assert_eq!(next.throttle_rate, 0.5);
        assert_eq!(next.latency, Duration::from_millis(20));
        assert!(
            f.patched(&FaultsPatch {
                error_rate: Some(1.5),
                ..FaultsPatch::default()
            })
            .is_err()
        );
        assert!(serde_json::from_str::<FaultsPatch>(r#"{"nope":1}"#).is_err());
        let json = serde_json::to_value(next).unwrap();
        assert_eq!(json["latencyMs"], 20);
    }

    #[test]
    fn config_debug_hides_the_secret() {
        let c = MockConfig::new("ak", "top-secret-value");
        assert!(!format!("{c:?}").contains("top-secret-value"));
    }
}
