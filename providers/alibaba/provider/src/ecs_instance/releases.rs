//! Batched releases: every ECSInstance of one client (credentials version, endpoint and region)
//! that releases its instance within one collection window shares a `DeleteInstances` call of
//! up to 100 IDs, so a fleet replacing N instances costs a few dozen release calls per thousand
//! (25 IDs a call in the fleet bench) instead of N.
//!
//! ECS answers `DeleteInstances` for the whole list: it releases every instance or none, and an
//! error does not say which instance it is about. So:
//! - a batch of one is a plain `DeleteInstance`, whose error is that instance's own;
//! - a batch refused for something about one of its instances (not found, wrong state, deletion
//!   protection, billing method) is sent again one `DeleteInstance` per instance, so that one
//!   instance never holds the others back and each caller gets its own answer;
//! - any other error (throttling or a server error the client already retried, bad credentials,
//!   a RAM denial) is every caller's: it is the same for each instance, and repeating the call
//!   per instance would only multiply it.
//!
//! Each call carries its own ClientToken (a retry of the same call reuses it); instances are
//! grouped by `Force`, which `DeleteInstances` takes once per call.
//!
//! An instance whose release ECS accepted is remembered for [`ACCEPTED_FOR`]: asked again (its
//! object reconciled on an answer read before the release, which still listed it), it is
//! answered at once without a call. Sent again it would be `NotFound`, refusing the whole
//! batch it went out in.
//!
//! The delete step does not wait for the call ([`Releases::start_release`]): it reports the
//! release in progress, as it would after ECS accepted it, and its next reconcile, which looks
//! whether the instance is gone anyway, gets ECS's refusal if there was one. A reconcile waiting
//! for the shared call would hold one of the few reconciles that run at once, so no call could
//! carry more releases than that (16 by default) however long the window.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alibaba_sdk::Error;
use alibaba_sdk::ecs::{EcsClient, MAX_INSTANCE_IDS_PER_CALL};
use ferroplane_runtime::ExternalCalls;
use tokio::sync::oneshot;

use crate::call_metrics::record_call;

/// What one caller gets: released (ECS accepted the release), or the error about its instance.
pub type Released = Result<(), Arc<Error>>;

/// How long releases are collected before the call. Far longer than the observation batcher's
/// window: nothing waits on the call (the next look at a released instance comes after the
/// runtime's transition interval, seconds later), and a fleet's replacements arrive spread over
/// the reconciles that run at once.
pub const RELEASE_WINDOW: Duration = Duration::from_millis(250);

/// How long an accepted release answers for its instance without a call.
pub const ACCEPTED_FOR: Duration = Duration::from_secs(600);

struct Request {
    instance_id: String,
    force: bool,
    tx: oneshot::Sender<Released>,
}

/// The callers waiting for each instance's release, in ID order.
type Callers = BTreeMap<String, Vec<oneshot::Sender<Released>>>;

#[derive(Default)]
struct State {
    waiting: Vec<Request>,
    flush_scheduled: bool,
    /// Instances whose release ECS accepted, and when.
    accepted: HashMap<String, Instant>,
    /// Releases started without a caller waiting, until ECS answers.
    started: HashSet<String>,
    /// ECS's refusals of started releases, and when, until their objects' next delete step.
    refused: HashMap<String, (Instant, Arc<Error>)>,
}

/// Coalesces instance releases for one client.
pub struct Releases {
    client: EcsClient,
    window: Duration,
    calls: ExternalCalls,
    state: Mutex<State>,
}

impl fmt::Debug for Releases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Releases")
            .field("endpoint", &self.client.endpoint().as_str())
            .field("region", &self.client.region())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Releases {
    /// Releases collected for `window` before each call.
    pub fn new(client: EcsClient, window: Duration, calls: ExternalCalls) -> Self {
        Self {
            client,
            window,
            calls,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Releases one pay-as-you-go instance (`force`: also when it is running) as part of the
    /// next shared call.
    pub async fn release(self: &Arc<Self>, instance_id: &str, force: bool) -> Released {
        let (tx, rx) = oneshot::channel();
        let schedule = {
            let mut state = self.lock();
            if state
                .accepted
                .get(instance_id)
                .is_some_and(|at| at.elapsed() < ACCEPTED_FOR)
            {
                return Ok(());
            }
            state.waiting.push(Request {
                instance_id: instance_id.to_owned(),
                force,
                tx,
            });
            !std::mem::replace(&mut state.flush_scheduled, true)
        };
        if schedule {
            let this = Arc::clone(self);
            tokio::spawn(async move {
                tokio::time::sleep(this.window).await;
                this.flush().await;
            });
        }
        rx.await.unwrap_or_else(|_| {
            Err(Arc::new(Error::InvalidRequest {
                action: "DeleteInstances".into(),
                reason: "the shared release was abandoned (the process is shutting down)".into(),
            }))
        })
    }

    /// Starts the release of one pay-as-you-go instance in the next shared call, without
    /// waiting for ECS: `Ok` when it is started (or accepted already), or ECS's refusal of the
    /// release started by an earlier call (handed out once; the next call starts it again).
    pub fn start_release(self: &Arc<Self>, instance_id: &str, force: bool) -> Released {
        {
            let mut state = self.lock();
            if let Some((_, error)) = state.refused.remove(instance_id) {
                return Err(error);
            }
            let accepted = state
                .accepted
                .get(instance_id)
                .is_some_and(|at| at.elapsed() < ACCEPTED_FOR);
            if accepted || !state.started.insert(instance_id.to_owned()) {
                return Ok(());
            }
        }
        let this = Arc::clone(self);
        let id = instance_id.to_owned();
        tokio::spawn(async move {
            let result = this.release(&id, force).await;
            let mut state = this.lock();
            state.started.remove(&id);
            if let Err(error) = result {
                state.refused.insert(id, (Instant::now(), error));
            }
        });
        Ok(())
    }

    async fn flush(&self) {
        let waiting = {
            let mut state = self.lock();
            state.flush_scheduled = false;
            state.accepted.retain(|_, at| at.elapsed() < ACCEPTED_FOR);
            // A refusal no delete step came back for (its object was removed another way).
            state
                .refused
                .retain(|_, (at, _)| at.elapsed() < ACCEPTED_FOR);
            std::mem::take(&mut state.waiting)
        };
        let mut groups: [Callers; 2] = Default::default();
        for request in waiting {
            // Two callers naming one instance (a reconcile retried while its release waited)
            // share one place in the call.
            groups[usize::from(request.force)]
                .entry(request.instance_id)
                .or_default()
                .push(request.tx);
        }
        for (force, mut group) in [false, true].into_iter().zip(groups) {
            while !group.is_empty() {
                let rest = match group.keys().nth(MAX_INSTANCE_IDS_PER_CALL).cloned() {
                    Some(first_of_next) => group.split_off(&first_of_next),
                    None => Callers::new(),
                };
                let batch = std::mem::replace(&mut group, rest);
                self.send(batch, force).await;
            }
        }
    }

    async fn send(&self, batch: Callers, force: bool) {
        if batch.len() == 1 {
            return self.release_each(batch, force).await;
        }
        let ids: Vec<String> = batch.keys().cloned().collect();
        let result = self.client.delete_instances(&ids, force, None).await;
        record_call(&self.calls, "DeleteInstances", &result);
        match result {
            Ok(_) => {
                self.accepted(batch.keys());
                for tx in batch.into_values().flatten() {
                    let _ = tx.send(Ok(()));
                }
            }
            Err(error) if names_an_instance(&error) => {
                tracing::debug!(
                    instances = ids.len(),
                    code = error.code().unwrap_or_default(),
                    "a shared release was refused for one of its instances; releasing each alone"
                );
                self.release_each(batch, force).await;
            }
            Err(error) => {
                let error = Arc::new(error);
                for tx in batch.into_values().flatten() {
                    let _ = tx.send(Err(Arc::clone(&error)));
                }
            }
        }
    }

    fn accepted<'a>(&self, ids: impl IntoIterator<Item = &'a String>) {
        let now = Instant::now();
        let mut state = self.lock();
        for id in ids {
            state.accepted.insert(id.clone(), now);
        }
    }

    /// One `DeleteInstance` per instance, each answer to that instance's callers.
    async fn release_each(&self, batch: Callers, force: bool) {
        for (id, callers) in batch {
            let result = self.client.delete_instance(&id, force).await;
            record_call(&self.calls, "DeleteInstance", &result);
            let result: Released = result.map(drop).map_err(Arc::new);
            if result.is_ok() {
                self.accepted(std::iter::once(&id));
            }
            for tx in callers {
                let _ = tx.send(result.clone());
            }
        }
    }
}

/// Whether a refused `DeleteInstances` may be about one instance of the list only.
fn names_an_instance(error: &Error) -> bool {
    error.is_not_found()
        || error.is_wrong_state()
        || error.is_deletion_protection()
        || error.is_charge_type_violation()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};
    use alibaba_sdk::credentials::Credentials;
    use alibaba_sdk::ecs::ModifyInstanceAttributeRequest;

    const SECRET: &str = "sk-releases";

    /// A mock holding `count` running instances in cn-beijing, and a client of it signing with
    /// `secret`.
    async fn mock_with(count: usize, secret: &str) -> (MockServer, Vec<String>, EcsClient) {
        let mock =
            MockServer::start(MockConfig::new("ak", SECRET).with_transition_delay(Duration::ZERO))
                .await
                .unwrap();
        let ids = mock_with_more(&mock, count);
        let client = EcsClient::builder("cn-beijing")
            .credentials(Credentials::new("ak", secret))
            .endpoint(mock.endpoint())
            .build()
            .unwrap();
        (mock, ids, client)
    }

    /// `count` more running instances in the mock of [`mock_with`].
    fn mock_with_more(mock: &MockServer, count: usize) -> Vec<String> {
        mock.create_instances(DEFAULT_ACCOUNT_ID, &launch_spec(), count)
            .unwrap()
    }

    fn launch_spec() -> LaunchSpec {
        LaunchSpec {
            region_id: "cn-beijing".into(),
            image_id: "aliyun_3_x64_20G_alibase_20240528.vhd".into(),
            instance_type: "ecs.g6.large".into(),
            vswitch_id: alibaba_mock::defaults::first_vswitch_id("cn-beijing"),
            security_group_ids: vec![alibaba_mock::defaults::security_group_id("cn-beijing")],
            ..LaunchSpec::default()
        }
    }

    /// Turns deletion protection on, so that ECS refuses to release the instance.
    async fn protect(client: &EcsClient, id: &str) {
        let request = ModifyInstanceAttributeRequest {
            instance_id: id.to_owned(),
            deletion_protection: Some(true),
            ..ModifyInstanceAttributeRequest::default()
        };
        client.modify_instance_attribute(&request).await.unwrap();
    }

    fn releases_of(client: EcsClient) -> Arc<Releases> {
        let calls = ferroplane_runtime::Metrics::new().external_calls("ECSInstance");
        Arc::new(Releases::new(client, Duration::from_millis(20), calls))
    }

    /// Releases every `(id, force)` at once; the answers in the same order.
    async fn release_all(releases: &Arc<Releases>, asked: &[(String, bool)]) -> Vec<Released> {
        futures::future::join_all(asked.iter().map(|(id, force)| {
            let releases = Arc::clone(releases);
            async move { releases.release(id, *force).await }
        }))
        .await
    }

    fn live(mock: &MockServer, ids: &[String]) -> usize {
        ids.iter()
            .filter(|id| mock.instance_status(id).is_some())
            .count()
    }

    #[tokio::test]
    async fn releases_of_one_window_share_calls_of_100() {
        let (mock, ids, client) = mock_with(150, SECRET).await;
        let releases = releases_of(client);
        let mut asked: Vec<(String, bool)> = ids.iter().map(|id| (id.clone(), true)).collect();
        // A second caller for one instance shares its place.
        asked.push((ids[3].clone(), true));
        let answers = release_all(&releases, &asked).await;
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        let stats = mock.stats();
        assert_eq!(stats.calls_of("DeleteInstances"), 2);
        assert_eq!(stats.calls_of("DeleteInstance"), 0);
        assert_eq!(live(&mock, &ids), 0);
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn an_accepted_release_asked_again_costs_no_call() {
        let (mock, ids, client) = mock_with(3, SECRET).await;
        let releases = releases_of(client);
        let asked: Vec<(String, bool)> = ids.iter().map(|id| (id.clone(), true)).collect();
        let answers = release_all(&releases, &asked).await;
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        // Reconciles that read an answer from before the release ask again, together with a
        // release never asked for before: one call, for that one.
        let fresh = mock_with_more(&mock, 1);
        let mut again = asked.clone();
        again.push((fresh[0].clone(), true));
        let answers = release_all(&releases, &again).await;
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        let stats = mock.stats();
        assert_eq!(stats.calls_of("DeleteInstances"), 1);
        assert_eq!(stats.calls_of("DeleteInstance"), 1);
        assert_eq!(live(&mock, &fresh), 0);
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn one_refused_instance_holds_no_other_back() {
        let (mock, ids, client) = mock_with(4, SECRET).await;
        protect(&client, &ids[0]).await;
        let releases = releases_of(client);
        let unknown = "i-2zeunknown0000000000".to_owned();
        let mut asked: Vec<(String, bool)> = ids.iter().map(|id| (id.clone(), true)).collect();
        asked.push((unknown, true));
        let answers = release_all(&releases, &asked).await;
        // The shared call is refused as a whole; each instance then gets its own answer.
        let protected = answers[0].as_ref().unwrap_err();
        assert!(protected.is_deletion_protection(), "{protected}");
        assert!(answers[1..4].iter().all(Result::is_ok), "{answers:?}");
        let gone = answers[4].as_ref().unwrap_err();
        assert!(gone.is_instance_not_found(), "{gone}");
        let stats = mock.stats();
        assert_eq!(stats.calls_of("DeleteInstances"), 1);
        assert_eq!(stats.calls_of("DeleteInstance"), 5);
        assert_eq!(live(&mock, &ids), 1, "only the protected instance is left");
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn a_refusal_of_the_caller_is_every_caller_answer_from_one_call() {
        let (mock, ids, client) = mock_with(5, "sk-wrong").await;
        let releases = releases_of(client);
        let asked: Vec<(String, bool)> = ids.iter().map(|id| (id.clone(), true)).collect();
        let answers = release_all(&releases, &asked).await;
        for answer in &answers {
            let error = answer.as_ref().unwrap_err();
            assert!(error.is_bad_credentials(), "{error}");
        }
        let stats = mock.stats();
        assert_eq!(stats.calls_of("DeleteInstances"), 1);
        assert_eq!(stats.calls_of("DeleteInstance"), 0);
        assert_eq!(live(&mock, &ids), 5);
        mock.shutdown().await;
    }

    /// Waits until no started release waits for ECS's answer.
    async fn settled(releases: &Arc<Releases>) {
        while !releases.lock().started.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn started_releases_share_a_call_and_a_refusal_comes_back_at_the_next_start() {
        let (mock, ids, client) = mock_with(30, SECRET).await;
        protect(&client, &ids[0]).await;
        let releases = releases_of(client);
        // Nothing waits for ECS: every start answers at once, before any call is made.
        for id in &ids {
            assert!(releases.start_release(id, true).is_ok());
        }
        assert_eq!(mock.stats().calls_of("DeleteInstances"), 0);
        // Started again while it waits: still one place in the call.
        assert!(releases.start_release(&ids[1], true).is_ok());
        settled(&releases).await;
        let stats = mock.stats();
        assert_eq!(stats.calls_of("DeleteInstances"), 1, "one call for all 30");
        assert_eq!(
            stats.calls_of("DeleteInstance"),
            30,
            "then each alone: one is protected"
        );
        assert_eq!(live(&mock, &ids), 1);
        // The protected instance's next delete step gets ECS's answer, once.
        let refused = releases.start_release(&ids[0], true).unwrap_err();
        assert!(refused.is_deletion_protection(), "{refused}");
        // Its step after that starts it again; the others were accepted: asked again, no call.
        assert!(releases.start_release(&ids[0], true).is_ok());
        assert!(releases.start_release(&ids[5], true).is_ok());
        settled(&releases).await;
        assert_eq!(
            mock.stats().calls_of("DeleteInstance"),
            31,
            "only ids[0] again"
        );
        assert_eq!(mock.stats().calls_of("DeleteInstances"), 1);
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn forced_and_unforced_releases_go_in_calls_of_their_own() {
        let (mock, ids, client) = mock_with(4, SECRET).await;
        for id in &ids[..2] {
            client.stop_instance(id, false, None).await.unwrap();
        }
        let releases = releases_of(client);
        let asked: Vec<(String, bool)> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| (id.clone(), n >= 2))
            .collect();
        let answers = release_all(&releases, &asked).await;
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        let stats = mock.stats();
        assert_eq!(stats.calls_of("DeleteInstances"), 2);
        assert_eq!(stats.calls_of("DeleteInstance"), 0);
        assert_eq!(live(&mock, &ids), 0);
        mock.shutdown().await;
    }
}
