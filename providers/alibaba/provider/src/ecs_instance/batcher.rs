//! The observation batcher: every instance observed through one [`Batcher`] (one per
//! credentials version, endpoint and region) is described by shared `DescribeInstances` calls of
//! up to 100 IDs, so N instances cost ceil(N/100) calls per poll round instead of N.
//!
//! Two mechanisms make that hold although each object polls on its own (jittered) schedule:
//! - **Collection window.** A call waits a few milliseconds for other IDs; callers asking for
//!   the same ID wait on the same call.
//! - **Sweep and freshness.** A call also carries every other known ID whose answer was read and
//!   is older than half the freshness bound (or was never read and is past the bound), and
//!   answers are reused while younger than the freshness bound (the poll interval). The first object of a poll round therefore refreshes the others, which are
//!   then answered from that sweep. Each object polls once per interval on its own phase (the
//!   runtime's poll grid), so in steady state the first poll of a round finds every answer
//!   older than half the bound: one sweep of all N IDs per interval, ceil(N/100) calls.
//!
//! A new instance is [`expect`](Batcher::expect)ed: once ECS should list it, the next call
//! carries it too, so the first looks of many creates are answered by one sweep instead of
//! each costing a call (a look at one moment takes as many reconciles as run at once, 16, not
//! the hundreds whose first look falls due together).
//!
//! Answers about instances in transition (Pending, Starting, Stopping) are never reused, and the
//! external client [`invalidate`](Batcher::invalidate)s an instance whenever it changes it, so a
//! reconcile never acts on what it has just made stale. An instance absent from an answer is gone
//! (ECS omits unknown IDs instead of failing); an error answer, whatever its code, is handed to
//! every caller of the call as an error, never as "gone".

use crate::call_metrics::record_call;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alibaba_sdk::Error;
use alibaba_sdk::ecs::{DescribeInstancesRequest, EcsClient, Instance, MAX_INSTANCE_IDS_PER_CALL};
use ferroplane_runtime::ExternalCalls;
use tokio::sync::oneshot;

use super::diff::status;

/// What one caller gets: the instance, `None` when ECS does not know it, or the error of the
/// shared call.
pub type Described = Result<Option<Instance>, Arc<Error>>;

/// How many freshness periods an ID stays in the sweep after it was last asked for.
const KNOWN_FOR: u32 = 6;
/// Calls of one batch under way at once. A sweep of 10,000 IDs is 100 calls: all at once, their
/// responses (about 200 kB of JSON each) and parsed instances would be in memory together.
const CALLS_AT_ONCE: usize = 4;

#[derive(Default)]
struct State {
    waiters: HashMap<String, Vec<oneshot::Sender<Described>>>,
    /// When the earliest scheduled call goes out, while callers wait for one.
    flush_due: Option<tokio::time::Instant>,
    /// Every ID asked for recently, with when it was last asked for.
    known: HashMap<String, Instant>,
    /// New instances, with when ECS should list them: from then on they are known.
    expected: HashMap<String, Instant>,
    /// The last answer per ID and when it arrived.
    answers: HashMap<String, (Instant, Answer)>,
    /// IDs of calls under way, with the callers that arrived after the call was sent: they
    /// ride along instead of starting another call.
    in_flight: HashMap<String, Flight>,
}

/// An answer is handed out once: each object's observe reads its own instance once per poll,
/// so keeping it after that would only hold memory (an `Instance` per managed object). When
/// it was read still counts for the sweep.
enum Answer {
    Unread(Option<Box<Instance>>),
    Read,
}

#[derive(Default)]
struct Flight {
    riders: Vec<oneshot::Sender<Described>>,
    /// The instance was changed after the call was sent: its answer is not kept, and later
    /// callers start a new call.
    stale: bool,
}

/// Where the batcher reads the time: freshness and sweeps are judged by it. Tests move a
/// manual clock instead of sleeping past a bound.
#[derive(Clone, Default)]
enum Clock {
    #[default]
    Real,
    #[cfg(test)]
    Manual(Arc<Mutex<Instant>>),
}

impl Clock {
    fn now(&self) -> Instant {
        match self {
            Clock::Real => Instant::now(),
            #[cfg(test)]
            Clock::Manual(at) => *at.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// Coalesces `DescribeInstances` for one client.
pub struct Batcher {
    client: EcsClient,
    window: Duration,
    freshness: Duration,
    calls: ExternalCalls,
    clock: Clock,
    state: Mutex<State>,
}

impl fmt::Debug for Batcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batcher")
            .field("endpoint", &self.client.endpoint().as_str())
            .field("region", &self.client.region())
            .field("window", &self.window)
            .field("freshness", &self.freshness)
            .finish_non_exhaustive()
    }
}

impl Batcher {
    /// A batcher that collects IDs for `window` before calling and reuses answers younger than
    /// `freshness`.
    pub fn new(
        client: EcsClient,
        window: Duration,
        freshness: Duration,
        calls: ExternalCalls,
    ) -> Self {
        Self {
            client,
            window,
            freshness,
            calls,
            clock: Clock::default(),
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Describes one instance: from a fresh answer, or as part of the next shared call (within
    /// the window). The external client goes through [`describe_within`](Self::describe_within).
    #[cfg(test)]
    pub async fn describe(self: &Arc<Self>, instance_id: &str) -> Described {
        self.describe_within(instance_id, self.window).await
    }

    /// Describes one instance: from a fresh answer, or as part of the next shared call, which
    /// goes out within `wait` (at least the window). A longer wait suits a caller whose next step
    /// does not hurry, e.g. an object being deleted: a fleet's rollout deletes as many objects at once as reconciles run, and with
    /// the short window their looks went out in calls of a few IDs each.
    pub async fn describe_within(self: &Arc<Self>, instance_id: &str, wait: Duration) -> Described {
        let due = tokio::time::Instant::now() + wait.max(self.window);
        let (tx, rx) = oneshot::channel();
        let schedule = {
            let mut state = self.lock();
            let now = self.clock.now();
            state.known.insert(instance_id.to_owned(), now);
            if let Some((at, answer)) = state.answers.get_mut(instance_id)
                && now.duration_since(*at) < self.freshness
                && let Answer::Unread(instance) = answer
                && instance
                    .as_ref()
                    .is_none_or(|i| !status::in_transition(&i.status))
            {
                let instance = instance.take().map(|boxed| *boxed);
                *answer = Answer::Read;
                return Ok(instance);
            }
            if let Some(flight) = state.in_flight.get_mut(instance_id).filter(|f| !f.stale) {
                flight.riders.push(tx);
                false
            } else {
                state
                    .waiters
                    .entry(instance_id.to_owned())
                    .or_default()
                    .push(tx);
                // A call is scheduled unless one already goes out no later than this one must.
                if state.flush_due.is_some_and(|at| at <= due) {
                    false
                } else {
                    state.flush_due = Some(due);
                    true
                }
            }
        };
        if schedule {
            let this = Arc::clone(self);
            tokio::spawn(async move {
                tokio::time::sleep_until(due).await;
                this.flush().await;
            });
        }
        rx.await.unwrap_or_else(|_| {
            Err(Arc::new(Error::InvalidRequest {
                action: "DescribeInstances".into(),
                reason: "the shared call was abandoned (the process is shutting down)".into(),
            }))
        })
    }

    /// A new instance, listed from `listed_at`: from then on every call carries it, so that its
    /// first look finds an answer.
    pub fn expect(&self, instance_id: &str, listed_at: Instant) {
        self.lock()
            .expected
            .insert(instance_id.to_owned(), listed_at);
    }

    /// Forgets the answer about an instance that was just changed.
    pub fn invalidate(&self, instance_id: &str) {
        let mut state = self.lock();
        state.answers.remove(instance_id);
        if let Some(flight) = state.in_flight.get_mut(instance_id) {
            flight.stale = true;
        }
    }

    /// Stops sweeping an instance (it is gone or no longer managed).
    pub fn forget(&self, instance_id: &str) {
        self.invalidate(instance_id);
        let mut state = self.lock();
        state.known.remove(instance_id);
        state.expected.remove(instance_id);
    }

    /// The IDs of the next call: those asked for, then the known ones about to go stale.
    fn take_batch(
        &self,
    ) -> (
        HashMap<String, Vec<oneshot::Sender<Described>>>,
        Vec<String>,
    ) {
        let mut guard = self.lock();
        let state = &mut *guard;
        state.flush_due = None;
        let now = self.clock.now();
        let forget_after = self.freshness * KNOWN_FOR;
        state
            .known
            .retain(|_, asked| now.duration_since(*asked) < forget_after);
        let known = &mut state.known;
        state.expected.retain(|id, listed_at| {
            if *listed_at > now {
                return true;
            }
            known.entry(id.clone()).or_insert(now);
            false
        });
        let known = &state.known;
        state.answers.retain(|id, _| known.contains_key(id));
        let waiters = std::mem::take(&mut state.waiters);
        // The IDs asked for first: their callers wait, the swept ones do not.
        let mut ids: Vec<String> = waiters.keys().cloned().collect();
        for id in state.known.keys() {
            // An answer no poll has read yet is not read again before it is of no use: sweeps
            // come whenever any object needs a call (every second while instances are being
            // created), and re-reading unread answers at half the bound would read every
            // instance twice per interval.
            let stale = state.answers.get(id).is_none_or(|(at, answer)| {
                let age = now.duration_since(*at);
                match answer {
                    Answer::Read => age >= self.freshness / 2,
                    Answer::Unread(_) => age >= self.freshness,
                }
            });
            if stale && state.in_flight.get(id).is_none_or(|f| f.stale) && !waiters.contains_key(id)
            {
                ids.push(id.clone());
            }
        }
        tracing::debug!(
            asked = waiters.len(),
            swept = ids.len() - waiters.len(),
            known = state.known.len(),
            "describing a batch of instances"
        );
        for id in &ids {
            state.in_flight.entry(id.clone()).or_default();
        }
        (waiters, ids)
    }

    async fn flush(&self) {
        use futures::StreamExt as _;
        // An earlier scheduled call took every caller already: nothing to ask for.
        if self.lock().waiters.is_empty() {
            return;
        }
        let (mut waiters, ids) = self.take_batch();
        let calls = ids
            .chunks(MAX_INSTANCE_IDS_PER_CALL)
            .map(|chunk| async move {
                // At most 100 IDs match at most 100 instances: one page of 100 holds them
                // all, so the NextToken of a full page is not followed.
                let request = DescribeInstancesRequest {
                    max_results: Some(MAX_INSTANCE_IDS_PER_CALL as u32),
                    ..DescribeInstancesRequest::default()
                };
                let result = self
                    .client
                    .describe_instances_page(&request, chunk, None)
                    .await
                    .map(|page| page.instances.items);
                record_call(&self.calls, "DescribeInstances", &result);
                (chunk, result)
            })
            .collect::<Vec<_>>();
        // Answers are handed out as each call returns, so each response is dropped before
        // later ones arrive.
        let mut results = futures::stream::iter(calls).buffer_unordered(CALLS_AT_ONCE);
        while let Some((chunk, result)) = results.next().await {
            match result {
                Ok(instances) => {
                    let mut found: HashMap<String, Instance> = instances
                        .into_iter()
                        .map(|i| (i.instance_id.clone(), i))
                        .collect();
                    let now = self.clock.now();
                    let mut state = self.lock();
                    for id in chunk {
                        let instance = found.remove(id);
                        let flight = state.in_flight.remove(id).unwrap_or_default();
                        let callers = waiters.remove(id).unwrap_or_default();
                        let answer = if callers.is_empty() && flight.riders.is_empty() {
                            Answer::Unread(instance.map(Box::new))
                        } else {
                            for tx in callers.into_iter().chain(flight.riders) {
                                let _ = tx.send(Ok(instance.clone()));
                            }
                            Answer::Read
                        };
                        if !flight.stale {
                            state.answers.insert(id.clone(), (now, answer));
                        }
                    }
                }
                Err(error) => {
                    let error = Arc::new(error);
                    let mut state = self.lock();
                    for id in chunk {
                        let flight = state.in_flight.remove(id).unwrap_or_default();
                        let callers = waiters.remove(id).unwrap_or_default();
                        for tx in callers.into_iter().chain(flight.riders) {
                            let _ = tx.send(Err(Arc::clone(&error)));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};
    use alibaba_sdk::credentials::Credentials;

    /// A mock holding `count` running instances in cn-beijing, and a batcher over a client of it
    /// that gathers calls for `window` and trusts answers for `freshness`.
    async fn batcher_over(
        count: usize,
        window: Duration,
        freshness: Duration,
    ) -> (MockServer, Vec<String>, Arc<Batcher>) {
        let mock = MockServer::start(
            MockConfig::new("ak", "sk-batcher").with_transition_delay(Duration::ZERO),
        )
        .await
        .unwrap();
        let spec = LaunchSpec {
            region_id: "cn-beijing".into(),
            image_id: "aliyun_3_x64_20G_alibase_20240528.vhd".into(),
            instance_type: "ecs.g6.large".into(),
            vswitch_id: alibaba_mock::defaults::first_vswitch_id("cn-beijing"),
            security_group_ids: vec![alibaba_mock::defaults::security_group_id("cn-beijing")],
            ..LaunchSpec::default()
        };
        let ids = mock
            .create_instances(DEFAULT_ACCOUNT_ID, &spec, count)
            .unwrap();
        let client = EcsClient::builder("cn-beijing")
            .credentials(Credentials::new("ak", "sk-batcher"))
            .endpoint(mock.endpoint())
            .build()
            .unwrap();
        let calls = ferroplane_runtime::Metrics::new().external_calls("ECSInstance");
        let batcher = Arc::new(Batcher::new(client, window, freshness, calls));
        (mock, ids, batcher)
    }

    /// [`batcher_over`] on a clock the test moves; returns the clock too.
    async fn batcher_on_a_manual_clock(
        count: usize,
        window: Duration,
        freshness: Duration,
    ) -> (MockServer, Vec<String>, Arc<Batcher>, Arc<Mutex<Instant>>) {
        let (mock, ids, batcher) = batcher_over(count, window, freshness).await;
        let mut batcher = Arc::into_inner(batcher).expect("not shared yet");
        let clock = Arc::new(Mutex::new(Instant::now()));
        batcher.clock = Clock::Manual(Arc::clone(&clock));
        (mock, ids, Arc::new(batcher), clock)
    }

    #[tokio::test]
    async fn concurrent_observations_share_calls_of_100() {
        const FRESHNESS: Duration = Duration::from_secs(2);
        let (mock, ids, batcher, clock) =
            batcher_on_a_manual_clock(150, Duration::from_millis(20), FRESHNESS).await;
        let before = mock.stats().calls_of("DescribeInstances");
        let mut asked: Vec<String> = ids.clone();
        asked.push(ids[0].clone());
        asked.push("i-does-not-exist".into());
        let results = futures::future::join_all(asked.iter().map(|id| {
            let b = Arc::clone(&batcher);
            let id = id.clone();
            async move { (id.clone(), b.describe(&id).await) }
        }))
        .await;
        assert_eq!(mock.stats().calls_of("DescribeInstances") - before, 2);
        for (id, result) in results {
            let found = result.unwrap();
            if id == "i-does-not-exist" {
                assert!(found.is_none());
            } else {
                assert_eq!(found.unwrap().instance_id, id);
            }
        }
        // An answer is handed out once: asked again, the instance costs a call. Past half the
        // freshness bound that call sweeps every known ID along (ceil(151/100) = 2 calls) ...
        *clock.lock().unwrap() += FRESHNESS / 2 + Duration::from_millis(100);
        let before = mock.stats().calls_of("DescribeInstances");
        assert!(batcher.describe(&ids[7]).await.unwrap().is_some());
        assert_eq!(mock.stats().calls_of("DescribeInstances"), before + 2);
        // ... so the others are answered from the sweep, without a call ...
        assert!(batcher.describe(&ids[8]).await.unwrap().is_some());
        assert_eq!(mock.stats().calls_of("DescribeInstances"), before + 2);
        // ... unless they changed meanwhile.
        batcher.invalidate(&ids[9]);
        assert!(batcher.describe(&ids[9]).await.unwrap().is_some());
        assert_eq!(mock.stats().calls_of("DescribeInstances"), before + 3);
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn expected_instances_are_swept_once_listed() {
        let (mock, ids, batcher) =
            batcher_over(30, Duration::from_millis(5), Duration::from_secs(60)).await;
        let now = Instant::now();
        // 29 are listed already; the last one only in an hour.
        for id in &ids[..29] {
            batcher.expect(id, now);
        }
        batcher.expect(&ids[29], now + Duration::from_secs(3600));
        let stats = mock.stats();
        // One look: one call, naming every instance listed by now.
        assert!(batcher.describe(&ids[0]).await.unwrap().is_some());
        let after = mock.stats();
        assert_eq!(
            after.calls_of("DescribeInstances") - stats.calls_of("DescribeInstances"),
            1
        );
        assert_eq!(
            after.instance_ids_described - stats.instance_ids_described,
            29
        );
        // The other first looks are answered from it.
        for id in &ids[1..29] {
            assert_eq!(
                batcher.describe(id).await.unwrap().unwrap().instance_id,
                *id
            );
        }
        assert_eq!(
            mock.stats().calls_of("DescribeInstances"),
            after.calls_of("DescribeInstances")
        );
        mock.shutdown().await;
    }
}
