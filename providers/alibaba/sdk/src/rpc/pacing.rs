//! Quota-aware pacing of one client's calls.
//!
//! Alibaba Cloud limits calls per account, region and action in wall-clock minutes: once an
//! action is throttled in minute T it answers again from minute T+1 (ECS's "API call
//! throttling" page). Retrying each call on its own spends the quota on answers that say no and
//! arrives late. Instead every call of one (region, action) goes through one [`Lane`]:
//!
//! - **Open**: calls go out, spaced at the learned rate once a quota has been seen. A single
//!   `Throttling*` answer between successes is a passing refusal: the call's own retry deals with
//!   it. A run of throttled answers with no success between them shows that the quota is spent
//!   when it is longer than refusals at the lane's recent rate of passing refusals make by
//!   chance (see [`evidence_needed`]): at least [`QUOTA_EVIDENCE`] on a lane that was refused
//!   rarely, more on one refused often at random. A spent quota refuses every call until the
//!   minute turns, so any length is reached within a few answers; random refusals never reach
//!   it (less than once in [`FALSE_ALARM`]⁻¹ answers).
//! - **Probing**: one call at a time goes out (the probe), the others wait. A throttled probe
//!   doubles the pause before the next one (1 s, 2 s, 4 s ...) but never past our next minute
//!   boundary, when the quota refills; after that boundary, a probe a second until the server's
//!   minute turns too. A probe that passes opens the lane with a rate learned from the calls
//!   that passed in the minute before the quota ran out, at [`SAFETY`] of it. Each calm minute
//!   in which the rate held calls back raises it by [`RECOVERY`]; a minute in which it held
//!   none back forgets it, so neither a raised quota nor a burst after a quiet spell is held to
//!   an old rate.
//!
//! The state is pure and takes the time as an argument; [`QuotaPacer`] adds the clock and the
//! waiting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Fraction of the learned quota the lane spends, so that calls spread over a minute stay under
/// the limit even when our minute and the server's are not aligned.
pub const SAFETY: f64 = 0.9;
/// Growth of the rate per calm minute.
pub const RECOVERY: f64 = 1.1;
/// The fewest throttled answers in a row, with no success between them, that show a spent
/// quota. Calls in flight when a quota runs out are all refused, so a busy lane sees this many
/// at once. A lane refused at random needs a longer run: see [`evidence_needed`].
pub const QUOTA_EVIDENCE: u32 = 8;
/// The chance, per answer, that passing refusals make a run taken for a spent quota. A run of
/// 8 alone is not enough for this: at 30 % random refusals it comes once in about 21,000
/// answers, and the rate it teaches is the lane's demand of the minute before, not a quota
/// (a few calls a minute on a lane that just started).
pub const FALSE_ALARM: f64 = 1e-9;
/// The longest run ever required: a lane refused this often between successes is not paced by
/// a quota but failing.
const MAX_EVIDENCE: u32 = 100;
/// The first pause after a throttled probe.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// Margin after our minute boundary before probing: the server's clock may be a little behind.
const BOUNDARY_MARGIN: Duration = Duration::from_millis(500);
/// How often a waiting call looks again while a probe is out.
const PROBE_WAIT: Duration = Duration::from_millis(20);
/// Calls remembered per second of the last minute.
const WINDOW_SECONDS: usize = 60;

/// What a caller does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    /// Send the call now.
    Go {
        /// The call is the lane's probe: its outcome decides whether the lane opens.
        probe: bool,
    },
    /// Ask again after this long.
    Wait(Duration),
}

/// How many throttled answers in a row show a spent quota, given the answers of the last minute
/// outside the run: `refused` of `answered` were throttled between successes. Those estimate the
/// chance `p` that an answer is refused at random (with one refusal and one success assumed, so
/// that a lane with no history is not trusted); the run must be long enough that `p` to its
/// length stays below [`FALSE_ALARM`], and at least [`QUOTA_EVIDENCE`].
pub fn evidence_needed(refused: u32, answered: u32) -> u32 {
    let p = (f64::from(refused) + 1.0) / (f64::from(answered) + 2.0);
    let needed = (FALSE_ALARM.ln() / p.min(0.999).ln()).ceil();
    if needed >= f64::from(MAX_EVIDENCE) {
        MAX_EVIDENCE
    } else {
        QUOTA_EVIDENCE.max(needed as u32)
    }
}

/// Answers per second over the last minute: (second, passed, refused).
#[derive(Debug)]
struct RecentCalls {
    origin: Instant,
    slots: [(u64, u32, u32); WINDOW_SECONDS],
}

impl RecentCalls {
    fn new(origin: Instant) -> Self {
        Self {
            origin,
            slots: [(u64::MAX, 0, 0); WINDOW_SECONDS],
        }
    }

    fn second(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.origin).as_secs()
    }

    fn slot(&mut self, now: Instant) -> &mut (u64, u32, u32) {
        let second = self.second(now);
        let slot = &mut self.slots[(second % WINDOW_SECONDS as u64) as usize];
        if slot.0 != second {
            *slot = (second, 0, 0);
        }
        slot
    }

    fn record(&mut self, now: Instant) {
        let slot = self.slot(now);
        slot.1 = slot.1.saturating_add(1);
    }

    fn record_refusal(&mut self, now: Instant) {
        let slot = self.slot(now);
        slot.2 = slot.2.saturating_add(1);
    }

    /// Passed and refused answers of the last minute.
    fn last_minute_answers(&self, now: Instant) -> (u32, u32) {
        let second = self.second(now);
        self.slots
            .iter()
            .filter(|(s, ..)| *s != u64::MAX && *s <= second && second - *s < WINDOW_SECONDS as u64)
            .fold((0, 0), |(p, r), (_, passed, refused)| {
                (p + passed, r + refused)
            })
    }

    fn last_minute(&self, now: Instant) -> u32 {
        self.last_minute_answers(now).0
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Open {
        /// Throttled answers since the last success.
        refused_in_a_row: u32,
    },
    Probing {
        /// No probe before this.
        not_before: Instant,
        /// A probe is out.
        in_flight: bool,
        /// The pause after the last throttled probe.
        pause: Duration,
        /// A pause of this episode ended at our minute boundary: a refusal after it means the
        /// server's minute ends a little later than ours.
        to_boundary: bool,
        /// Calls that passed in the minute before the episode began.
        passed_before: u32,
    },
}

/// The pacing state of one (region, action).
#[derive(Debug)]
pub struct Lane {
    phase: Phase,
    /// Calls per second the lane allows; `None` until a quota has been seen.
    rate: Option<f64>,
    tokens: f64,
    refilled_at: Instant,
    /// When the rate last changed (learned or raised).
    rate_changed_at: Instant,
    /// When the rate last made a call wait.
    limited_at: Option<Instant>,
    recent: RecentCalls,
}

impl Lane {
    pub fn new(now: Instant) -> Self {
        Self {
            phase: Phase::Open {
                refused_in_a_row: 0,
            },
            rate: None,
            tokens: 0.0,
            refilled_at: now,
            rate_changed_at: now,
            limited_at: None,
            recent: RecentCalls::new(now),
        }
    }

    /// The rate the lane allows, in calls per second (`None`: not paced).
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// Whether a call may go out at `now`.
    pub fn admit(&mut self, now: Instant) -> Admission {
        match &mut self.phase {
            Phase::Probing {
                not_before,
                in_flight,
                ..
            } => {
                if *in_flight {
                    Admission::Wait(PROBE_WAIT)
                } else if now < *not_before {
                    Admission::Wait(*not_before - now)
                } else {
                    *in_flight = true;
                    Admission::Go { probe: true }
                }
            }
            Phase::Open { .. } => self.take_token(now),
        }
    }

    fn take_token(&mut self, now: Instant) -> Admission {
        let Some(mut rate) = self.rate else {
            return Admission::Go { probe: false };
        };
        let minute = Duration::from_secs(60);
        if now.saturating_duration_since(self.rate_changed_at) >= minute {
            let idle = self
                .limited_at
                .is_none_or(|at| now.saturating_duration_since(at) >= minute);
            if idle {
                // Demand stayed below the rate for a minute: what was learned may no longer
                // hold (a quota shared with other clients, a raised quota). Unpaced until the
                // next spent quota says otherwise.
                self.rate = None;
                return Admission::Go { probe: false };
            }
            rate *= RECOVERY;
            self.set_rate(rate, now);
        }
        let capacity = rate.max(1.0);
        let elapsed = now
            .saturating_duration_since(self.refilled_at)
            .as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate).min(capacity);
        self.refilled_at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Admission::Go { probe: false }
        } else {
            self.limited_at = Some(now);
            // At least a millisecond: a rounding remainder must not make a wait of zero.
            Admission::Wait(
                Duration::from_secs_f64((1.0 - self.tokens) / rate).max(Duration::from_millis(1)),
            )
        }
    }

    fn set_rate(&mut self, rate: f64, now: Instant) {
        self.rate = Some(rate.max(1.0 / 60.0));
        self.rate_changed_at = now;
    }

    /// A call admitted by [`Self::admit`] was answered without throttling.
    pub fn passed(&mut self, now: Instant, probe: bool) {
        self.recent.record(now);
        match self.phase {
            Phase::Open {
                ref mut refused_in_a_row,
            } => *refused_in_a_row = 0,
            Phase::Probing { passed_before, .. } => {
                if !probe {
                    // Sent before the quota ran out; the probe decides.
                    return;
                }
                let learned = f64::from(passed_before.max(1)) / 60.0;
                let rate = self.rate.map_or(learned, |r| r.min(learned)) * SAFETY;
                self.set_rate(rate, now);
                self.phase = Phase::Open {
                    refused_in_a_row: 0,
                };
                self.tokens = 0.0;
                self.refilled_at = now;
            }
        }
    }

    /// A call admitted by [`Self::admit`] was throttled. `into_minute` is how far the wall clock
    /// is into its minute; `retry_after` the server's own hint, if it gave one.
    pub fn throttled(
        &mut self,
        now: Instant,
        probe: bool,
        into_minute: Duration,
        retry_after: Option<Duration>,
    ) {
        let to_boundary = Duration::from_secs(60).saturating_sub(into_minute) + BOUNDARY_MARGIN;
        if matches!(self.phase, Phase::Open { .. }) {
            self.recent.record_refusal(now);
        }
        let (passed, refused) = self.recent.last_minute_answers(now);
        match &mut self.phase {
            Phase::Open { refused_in_a_row } => {
                *refused_in_a_row += 1;
                // The run itself is not evidence of how often refusals come at random.
                let between = refused.saturating_sub(*refused_in_a_row);
                if *refused_in_a_row >= evidence_needed(between, passed + between) {
                    let pause = FIRST_PAUSE.min(to_boundary);
                    self.phase = Phase::Probing {
                        not_before: now + pause.max(retry_after.unwrap_or_default()),
                        in_flight: false,
                        pause,
                        to_boundary: pause >= to_boundary,
                        passed_before: self.recent.last_minute(now),
                    };
                }
            }
            Phase::Probing {
                not_before,
                in_flight,
                pause,
                to_boundary: capped,
                ..
            } => {
                if !probe {
                    // Sent before the quota ran out: already part of the evidence.
                    return;
                }
                *in_flight = false;
                // Once past our minute boundary, the server's must be near: probe every
                // second instead of doubling.
                let next = if *capped { FIRST_PAUSE } else { *pause * 2 };
                *capped = *capped || next >= to_boundary;
                *pause = next.min(to_boundary);
                *not_before = now + (*pause).max(retry_after.unwrap_or_default());
            }
        }
    }

    /// A probe ended without an answer about the quota (a transport error, a cancelled call):
    /// the next caller probes instead.
    pub fn abandoned(&mut self, probe: bool) {
        if probe && let Phase::Probing { in_flight, .. } = &mut self.phase {
            *in_flight = false;
        }
    }
}

/// The lanes of one client, keyed by region and action. Cheap to share.
#[derive(Debug, Default, Clone)]
pub struct QuotaPacer {
    lanes: Arc<Mutex<HashMap<(String, String), Lane>>>,
}

impl QuotaPacer {
    fn with_lane<T>(&self, region: &str, action: &str, f: impl FnOnce(&mut Lane) -> T) -> T {
        let mut lanes = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
        let lane = lanes
            .entry((region.to_owned(), action.to_owned()))
            .or_insert_with(|| Lane::new(Instant::now()));
        f(lane)
    }

    /// Waits until a call of `action` in `region` may go out; the permit reports its outcome.
    pub async fn acquire(&self, region: &str, action: &str) -> Permit {
        loop {
            match self.with_lane(region, action, |lane| lane.admit(Instant::now())) {
                Admission::Go { probe } => {
                    return Permit {
                        pacer: self.clone(),
                        region: region.to_owned(),
                        action: action.to_owned(),
                        probe,
                        settled: false,
                    };
                }
                Admission::Wait(delay) => tokio::time::sleep(delay).await,
            }
        }
    }

    /// The rate a lane allows (calls per second), `None` when it is not paced.
    pub fn rate(&self, region: &str, action: &str) -> Option<f64> {
        self.with_lane(region, action, |lane| lane.rate())
    }
}

/// One admitted call. Dropped without an outcome, it counts as abandoned.
#[derive(Debug)]
pub struct Permit {
    pacer: QuotaPacer,
    region: String,
    action: String,
    probe: bool,
    settled: bool,
}

impl Permit {
    /// The server answered without throttling (success or any other error).
    pub fn passed(mut self) {
        self.settled = true;
        let probe = self.probe;
        self.pacer.with_lane(&self.region, &self.action, |lane| {
            lane.passed(Instant::now(), probe)
        });
    }

    /// The server answered `Throttling*`.
    pub fn throttled(mut self, retry_after: Option<Duration>) {
        self.settled = true;
        let probe = self.probe;
        let into_minute = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| Duration::from_secs_f64(d.as_secs_f64() % 60.0))
            .unwrap_or_default();
        self.pacer.with_lane(&self.region, &self.action, |lane| {
            lane.throttled(Instant::now(), probe, into_minute, retry_after)
        });
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.settled {
            let probe = self.probe;
            self.pacer
                .with_lane(&self.region, &self.action, |lane| lane.abandoned(probe));
        }
    }
}

#[cfg(test)]
mod tests;
