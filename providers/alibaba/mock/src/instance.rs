//! One instance as the store keeps it ([`StoredInstance`]) and its state machine; how it is shown
//! is `instance_view`'s.
//!
//! The state is never advanced by timers: an instance remembers the last operation (its
//! [`Phase`]), when it happened and the transition delay in force then, and its status is computed
//! from the clock whenever it is read. 100,000 instances therefore cost no tasks at all.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::catalog::{Image, InstanceType};

/// The status ECS reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Being created.
    Pending,
    /// Booting.
    Starting,
    /// Up.
    Running,
    /// Shutting down.
    Stopping,
    /// Down.
    Stopped,
}

impl Status {
    /// The name ECS uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Starting => "Starting",
            Self::Running => "Running",
            Self::Stopping => "Stopping",
            Self::Stopped => "Stopped",
        }
    }

    /// Parses a status name as ECS spells it.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Starting,
            Self::Running,
            Self::Stopping,
            Self::Stopped,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// The last operation that changed the power state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Created: Pending for one delay, Starting for another, then Running.
    Created,
    /// Started or rebooted: Starting for one delay, then Running.
    Started,
    /// Stopped: Stopping for one delay, then Stopped.
    Stopped,
}

/// Power state bookkeeping: phase, when it began and the delay in force then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifecycle {
    phase: Phase,
    since: Timestamp,
    delay: Duration,
}

impl Lifecycle {
    /// A lifecycle that entered `phase` at `since`.
    pub fn new(phase: Phase, since: Timestamp, delay: Duration) -> Self {
        Self {
            phase,
            since,
            delay,
        }
    }

    fn elapsed(&self, now: Timestamp) -> Duration {
        let elapsed = now.duration_since(self.since);
        elapsed.try_into().unwrap_or(Duration::ZERO)
    }

    /// The status at `now`.
    pub fn status(&self, now: Timestamp) -> Status {
        let elapsed = self.elapsed(now);
        match self.phase {
            Phase::Created if elapsed < self.delay => Status::Pending,
            Phase::Created if elapsed < self.delay.saturating_mul(2) => Status::Starting,
            Phase::Started if elapsed < self.delay => Status::Starting,
            Phase::Created | Phase::Started => Status::Running,
            Phase::Stopped if elapsed < self.delay => Status::Stopping,
            Phase::Stopped => Status::Stopped,
        }
    }

    /// When the instance becomes (or became) Running in this phase; `None` for a stop.
    pub fn running_from(&self) -> Option<Timestamp> {
        let steps = match self.phase {
            Phase::Created => 2,
            Phase::Started => 1,
            Phase::Stopped => return None,
        };
        let wait = SignedDuration::try_from(self.delay.saturating_mul(steps)).ok()?;
        self.since.checked_add(wait).ok()
    }
}

/// The `ExpiredTime` ECS reports for pay-as-you-go instances.
pub const POST_PAID_EXPIRY: &str = "2099-12-31T15:59Z";

/// Formats a time with minute precision, as instance descriptions do (`2017-12-10T04:04Z`).
pub fn minute_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%MZ").to_string()
}

/// An instance as the mock stores it.
#[derive(Debug, Clone)]
pub struct StoredInstance {
    /// `i-…`.
    pub id: String,
    /// Creation order, used for stable pagination.
    pub seq: u64,
    /// Owning account.
    pub account_id: Arc<str>,
    /// Region.
    pub region_id: &'static str,
    /// Zone.
    pub zone_id: String,
    /// `InstanceName`.
    pub name: String,
    /// `Description`.
    pub description: String,
    /// `HostName`.
    pub host_name: String,
    /// Type from the catalogue.
    pub instance_type: &'static InstanceType,
    /// Image from the catalogue.
    pub image: &'static Image,
    /// `PostPaid` or `PrePaid`.
    pub charge_type: &'static str,
    /// When a `PrePaid` instance's subscription ends.
    pub expires_at: Option<Timestamp>,
    /// A spot instance ECS is reclaiming: locked with `Recycling` until it is released.
    pub recycling: bool,
    /// `NoSpot`, `SpotWithPriceLimit` or `SpotAsPriceGo`.
    pub spot_strategy: &'static str,
    /// `PayByTraffic` or `PayByBandwidth`.
    pub internet_charge_type: &'static str,
    /// Mbit/s; a public IP exists while this is above 0.
    pub bandwidth_out: u32,
    /// VPC.
    pub vpc_id: String,
    /// vSwitch.
    pub vswitch_id: String,
    /// Primary private IP.
    pub private_ip: Ipv4Addr,
    /// Public IP, when bandwidth was ever above 0.
    pub public_ip: Option<Ipv4Addr>,
    /// Security groups.
    pub security_group_ids: Vec<String>,
    /// Tags in insertion order; keys are unique.
    pub tags: Vec<(String, String)>,
    /// `DeletionProtection`.
    pub deletion_protection: bool,
    /// `KeyPairName`.
    pub key_pair_name: String,
    /// Base64 user data.
    pub user_data: Option<String>,
    /// The logon password's digest, in effect and pending.
    pub password: crate::password::InstancePassword,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it starts to show in listings (creation plus the visibility lag).
    pub visible_from: Timestamp,
    /// Power state.
    pub lifecycle: Lifecycle,
    /// `StopCharging` or `KeepCharging` after a stop.
    pub stopped_mode: &'static str,
    /// The ClientToken it was created with.
    pub client_token: Option<String>,
    /// The instance RAM role attached to it (`AttachInstanceRamRole`).
    pub ram_role_name: Option<String>,
    /// Metadata service settings (`ModifyInstanceMetadataOptions`).
    pub metadata: MetadataOptions,
    /// `ResourceGroupId` (`JoinResourceGroup`).
    pub resource_group_id: String,
    /// Spot settings fixed at creation.
    pub spot: SpotSettings,
    /// Auto-renewal of a subscription (`PrePaid`) instance; `None` for pay-as-you-go.
    pub renewal: Option<Renewal>,
    /// `CreditSpecification` of a burstable type (`Standard` or `Unlimited`); `None` for the
    /// others.
    pub credit_specification: Option<&'static str>,
    /// IPv6 addresses of the primary network interface (`AssignIpv6Addresses`).
    pub ipv6_addresses: Vec<std::net::Ipv6Addr>,
    /// The deployment set (`DeploymentSetId`, `ModifyInstanceDeployment`).
    pub deployment_set_id: Option<String>,
}

/// The auto-renewal settings of a subscription instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renewal {
    /// Renewed automatically before it expires.
    pub auto_renew: bool,
    /// Length of each renewal, in `unit`s.
    pub duration: u32,
    /// `Month`, `Week` or `Year`.
    pub unit: &'static str,
}

/// The metadata service settings of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataOptions {
    /// `enabled` or `disabled`.
    pub http_endpoint: &'static str,
    /// `optional` or `required`.
    pub http_tokens: &'static str,
    /// 1–64.
    pub http_put_response_hop_limit: u32,
}

impl Default for MetadataOptions {
    /// What ECS gives an instance launched without metadata options.
    fn default() -> Self {
        Self {
            http_endpoint: "enabled",
            http_tokens: "optional",
            http_put_response_hop_limit: 1,
        }
    }
}

/// The spot settings of an instance, as `RunInstances` fixed them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SpotSettings {
    /// `SpotPriceLimit` (0 when none).
    pub price_limit: f64,
    /// `SpotDuration` in hours.
    pub duration: u32,
    /// `Terminate` or `Stop`.
    pub interruption_behavior: &'static str,
}

impl StoredInstance {
    /// Status at `now`.
    pub fn status(&self, now: Timestamp) -> Status {
        self.lifecycle.status(now)
    }

    /// Whether this is a subscription instance whose period has not ended at `now`.
    pub fn unexpired_subscription(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|end| now < end)
    }

    /// Whether the instance carries tag `key` (with `value`, when given).
    pub fn has_tag(&self, key: &str, value: Option<&str>) -> bool {
        self.tags
            .iter()
            .any(|(k, v)| k == key && value.is_none_or(|want| want == v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + secs).unwrap()
    }

    #[test]
    fn created_goes_pending_starting_running() {
        let l = Lifecycle::new(Phase::Created, at(0), Duration::from_secs(2));
        assert_eq!(l.status(at(0)), Status::Pending);
        assert_eq!(l.status(at(1)), Status::Pending);
        assert_eq!(l.status(at(2)), Status::Starting);
        assert_eq!(l.status(at(3)), Status::Starting);
        assert_eq!(l.status(at(4)), Status::Running);
        assert_eq!(l.running_from(), Some(at(4)));
    }

    #[test]
    fn stop_and_start_transitions() {
        let stop = Lifecycle::new(Phase::Stopped, at(0), Duration::from_secs(2));
        assert_eq!(stop.status(at(1)), Status::Stopping);
        assert_eq!(stop.status(at(2)), Status::Stopped);
        assert_eq!(stop.running_from(), None);
        let start = Lifecycle::new(Phase::Started, at(0), Duration::from_secs(2));
        assert_eq!(start.status(at(1)), Status::Starting);
        assert_eq!(start.status(at(2)), Status::Running);
    }

    #[test]
    fn zero_delay_settles_at_once_and_clock_skew_backwards_is_safe() {
        let l = Lifecycle::new(Phase::Created, at(10), Duration::ZERO);
        assert_eq!(l.status(at(10)), Status::Running);
        let l = Lifecycle::new(Phase::Stopped, at(10), Duration::from_secs(1));
        assert_eq!(l.status(at(0)), Status::Stopping);
    }

    #[test]
    fn minute_precision_and_status_names() {
        let ts: Timestamp = "2017-12-10T04:04:59Z".parse().unwrap();
        assert_eq!(minute_time(ts), "2017-12-10T04:04Z");
        assert_eq!(Status::parse("Stopped"), Some(Status::Stopped));
        assert_eq!(Status::parse("stopped"), None);
    }
}
