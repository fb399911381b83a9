//! The search for an instance by its owner's `ferroplane.io/uid` tag, shared by every
//! ECSInstance of one client (credentials version, endpoint and region).
//!
//! An object without an external name asks, before it creates anything, whether an earlier
//! attempt already made its instance (a crash between `RunInstances` and recording the name, or
//! an answer lost on the way). Asking ECS once per object made a fleet rollout cost two calls per
//! instance. Here one listing answers every object:
//!
//! - **The listing.** `DescribeInstances` filtered by the tag key alone (any value), every page
//!   through `NextToken`, kept as UID → oldest instance ID. ECS considers at most 1,000 tagged
//!   instances for a tag filter, so a listing that reaches that many is taken again unfiltered
//!   (the tag is then read from each instance).
//! - **When a listing may answer.** An instance this process does not know about was made by an
//!   earlier process, or by a create of this process whose outcome is unknown. A listing started
//!   after this search was made covers the first; a create of unknown outcome (transport failure,
//!   5xx, no ID in the answer) makes its object wait for a listing started after it. Instances this
//!   process created are answered from memory (`created`). A listing also answers only for
//!   [`LISTING_LIFETIME`], so that whatever this reasoning misses (another writer of the tag)
//!   is seen within minutes.
//! - **What stays.** The `ClientToken` remains the guard against a second instance (a listing
//!   taken in the moment before ECS lists a new instance misses it; the retried create with the
//!   same token gets the same instance back). The first search of a credentials version is still
//!   a call with those credentials: wrong ones fail there, before the finalizer goes on.

use crate::call_metrics::record_call;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alibaba_sdk::Error;
use alibaba_sdk::ecs::{
    DescribeInstancesRequest, EcsClient, Instance, MAX_INSTANCE_IDS_PER_CALL,
    MAX_TAG_FILTERED_INSTANCES,
};
use ferroplane_runtime::{ExternalCalls, UID_TAG};
use jiff::Timestamp;
use tokio::sync::oneshot;

use super::recent_creations::GRACE;

/// What one caller gets: the ID of the instance tagged with its UID (the oldest if several),
/// `None`, or the error of the shared listing.
pub type Found = Result<Option<String>, Arc<Error>>;

/// How long a listing answers for objects that ask later.
pub const LISTING_LIFETIME: Duration = Duration::from_secs(300);

struct Waiter {
    uid: String,
    /// The listing that answers must have started at or after this.
    need: Instant,
    tx: oneshot::Sender<Found>,
}

struct Listing {
    started: Instant,
    owners: HashMap<Box<str>, Owned>,
}

struct Owned {
    id: Box<str>,
    created: Option<Timestamp>,
}

#[derive(Default)]
struct State {
    listing: Option<Listing>,
    waiters: Vec<Waiter>,
    sweeping: bool,
    /// Instances this process created, by owner UID, and when.
    created: HashMap<String, (String, Instant)>,
    /// Owner UIDs whose last create has an unknown outcome, and when it was sent.
    uncertain: HashMap<String, Instant>,
}

impl State {
    /// Drops what no answer needs any more: a listing past its lifetime, creations every
    /// acceptable listing already holds, unknown outcomes every acceptable listing started after.
    fn prune(&mut self, now: Instant) {
        let Some(horizon) = now.checked_sub(LISTING_LIFETIME) else {
            return;
        };
        if self.listing.as_ref().is_some_and(|l| l.started < horizon) {
            self.listing = None;
        }
        // A listing started after horizon lists what was created a visibility lag before it.
        let covered = horizon.checked_sub(GRACE).unwrap_or(horizon);
        self.created.retain(|_, (_, at)| *at >= covered);
        self.uncertain.retain(|_, at| *at >= horizon);
    }
}

/// The shared owner search of one client.
pub struct OwnerSearch {
    client: EcsClient,
    window: Duration,
    calls: ExternalCalls,
    /// Anything made before this by another process is in every listing started after it.
    born: Instant,
    state: Mutex<State>,
}

impl fmt::Debug for OwnerSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerSearch")
            .field("endpoint", &self.client.endpoint().as_str())
            .field("region", &self.client.region())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl OwnerSearch {
    /// A search that collects askers for `window` before listing.
    pub fn new(client: EcsClient, window: Duration, calls: ExternalCalls) -> Self {
        Self {
            client,
            window,
            calls,
            born: Instant::now(),
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The instance tagged with `uid`, from memory, from a listing recent enough, or from the
    /// next listing.
    pub async fn find(self: &Arc<Self>, uid: &str) -> Found {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut state = self.lock();
            let now = Instant::now();
            state.prune(now);
            if let Some((id, _)) = state.created.get(uid) {
                return Ok(Some(id.clone()));
            }
            let mut need = self
                .born
                .max(now.checked_sub(LISTING_LIFETIME).unwrap_or(now));
            if let Some(at) = state.uncertain.get(uid) {
                need = need.max(*at);
            }
            if let Some(listing) = state.listing.as_ref().filter(|l| l.started >= need) {
                return Ok(listing.owners.get(uid).map(|o| o.id.to_string()));
            }
            state.waiters.push(Waiter {
                uid: uid.to_owned(),
                need,
                tx,
            });
            !std::mem::replace(&mut state.sweeping, true)
        };
        if start {
            let this = Arc::clone(self);
            tokio::spawn(async move {
                tokio::time::sleep(this.window).await;
                this.sweep().await;
            });
        }
        rx.await.unwrap_or_else(|_| {
            Err(Arc::new(Error::InvalidRequest {
                action: "DescribeInstances".into(),
                reason: "the shared search was abandoned (the process is shutting down)".into(),
            }))
        })
    }

    /// `RunInstances` answered with this instance for `uid`.
    pub fn created(&self, uid: &str, instance_id: &str) {
        let mut state = self.lock();
        state.uncertain.remove(uid);
        state
            .created
            .insert(uid.to_owned(), (instance_id.to_owned(), Instant::now()));
    }

    /// A `RunInstances` for `uid` was sent and its outcome is unknown: the next answer for
    /// `uid` must come from a listing started after now.
    pub fn outcome_unknown(&self, uid: &str) {
        self.lock().uncertain.insert(uid.to_owned(), Instant::now());
    }

    /// Lists until no asker waits for a newer listing.
    async fn sweep(&self) {
        loop {
            let started = Instant::now();
            let result = self.list().await;
            let mut state = self.lock();
            match result {
                Ok(owners) => {
                    let waiters = std::mem::take(&mut state.waiters);
                    let listing = Listing { started, owners };
                    for waiter in waiters {
                        if waiter.need <= started {
                            let found = listing.owners.get(waiter.uid.as_str());
                            let _ = waiter.tx.send(Ok(found.map(|o| o.id.to_string())));
                        } else {
                            state.waiters.push(waiter);
                        }
                    }
                    state.uncertain.retain(|_, at| *at > started);
                    state.listing = Some(listing);
                    if state.waiters.is_empty() {
                        state.sweeping = false;
                        return;
                    }
                    // Someone asked for a listing newer than this one: take it now.
                }
                Err(error) => {
                    // Everyone waiting hears the failure and retries with its own backoff.
                    let error = Arc::new(error);
                    for waiter in std::mem::take(&mut state.waiters) {
                        let _ = waiter.tx.send(Err(Arc::clone(&error)));
                    }
                    state.sweeping = false;
                    return;
                }
            }
        }
    }

    /// Every tagged instance: by the tag filter, or unfiltered when the filter may have been cut
    /// at ECS's limit.
    async fn list(&self) -> Result<HashMap<Box<str>, Owned>, Error> {
        let mut owners = HashMap::new();
        let by_tag = DescribeInstancesRequest {
            tag_keys: vec![UID_TAG.to_owned()],
            max_results: Some(MAX_INSTANCE_IDS_PER_CALL as u32),
            ..DescribeInstancesRequest::default()
        };
        if self.pages(&by_tag, &mut owners).await? < MAX_TAG_FILTERED_INSTANCES {
            return Ok(owners);
        }
        owners.clear();
        let all = DescribeInstancesRequest {
            max_results: Some(MAX_INSTANCE_IDS_PER_CALL as u32),
            ..DescribeInstancesRequest::default()
        };
        self.pages(&all, &mut owners).await?;
        Ok(owners)
    }

    /// Reads every page of `request` into `owners`; returns how many instances were listed.
    async fn pages(
        &self,
        request: &DescribeInstancesRequest,
        owners: &mut HashMap<Box<str>, Owned>,
    ) -> Result<usize, Error> {
        let mut listed = 0;
        let mut token: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let result = self
                .client
                .describe_instances_page(request, &[], token.as_deref())
                .await;
            record_call(&self.calls, "DescribeInstances", &result);
            let page = result?;
            listed += page.instances.items.len();
            for instance in page.instances.items {
                remember_owner(owners, instance);
            }
            match page.next_token.filter(|t| !t.is_empty()) {
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Error::InvalidResponse {
                        action: "DescribeInstances".into(),
                        http_status: 200,
                        request_id: Some(page.request_id),
                        detail: format!("NextToken `{next}` repeated; the listing would never end"),
                    });
                }
                Some(next) => token = Some(next),
                None => return Ok(listed),
            }
        }
    }
}

/// Keeps the instance under its owner's UID unless an older one is there: if two ever existed,
/// the first is the one to keep.
fn remember_owner(owners: &mut HashMap<Box<str>, Owned>, instance: Instance) {
    let Some(uid) = instance
        .tags
        .items
        .iter()
        .find(|t| t.key == UID_TAG)
        .map(|t| t.value.as_str())
    else {
        return;
    };
    let older = |have: &Owned| match (have.created, instance.creation_time) {
        (Some(have), Some(new)) => have <= new,
        _ => true,
    };
    if owners.get(uid).is_some_and(older) {
        return;
    }
    owners.insert(
        uid.into(),
        Owned {
            id: instance.instance_id.into_boxed_str(),
            created: instance.creation_time,
        },
    );
}

/// Whether a failed `RunInstances` may still have made an instance: the answer was lost or
/// the server failed midway. An answer with a 4xx code (throttling included) refused the
/// request; a request never sent made nothing.
pub fn outcome_unknown(error: &Error) -> bool {
    match error {
        Error::Api(api) => api.http_status >= 500,
        Error::Timeout { .. } | Error::Transport { .. } => true,
        Error::InvalidResponse { http_status, .. } => *http_status < 400 || *http_status >= 500,
        Error::Connect { .. }
        | Error::Credentials(_)
        | Error::Endpoint(_)
        | Error::InvalidRequest { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};
    use alibaba_sdk::credentials::Credentials;

    fn spec(uid: &str) -> LaunchSpec {
        LaunchSpec {
            region_id: "cn-beijing".into(),
            image_id: "aliyun_3_x64_20G_alibase_20240528.vhd".into(),
            instance_type: "ecs.g6.large".into(),
            vswitch_id: alibaba_mock::defaults::first_vswitch_id("cn-beijing"),
            security_group_ids: vec![alibaba_mock::defaults::security_group_id("cn-beijing")],
            tags: vec![(UID_TAG.into(), uid.into())],
            ..LaunchSpec::default()
        }
    }

    async fn setup() -> (MockServer, Arc<OwnerSearch>) {
        let mock = MockServer::start(
            MockConfig::new("ak", "sk-owner-search").with_transition_delay(Duration::ZERO),
        )
        .await
        .unwrap();
        let client = EcsClient::builder("cn-beijing")
            .credentials(Credentials::new("ak", "sk-owner-search"))
            .endpoint(mock.endpoint())
            .build()
            .unwrap();
        let calls = ferroplane_runtime::Metrics::new().external_calls("ECSInstance");
        let search = Arc::new(OwnerSearch::new(client, Duration::from_millis(20), calls));
        (mock, search)
    }

    fn describe_calls(mock: &MockServer) -> u64 {
        mock.stats().calls_of("DescribeInstances")
    }

    #[tokio::test]
    async fn one_listing_answers_every_asker_until_an_outcome_is_unknown() {
        let (mock, search) = setup().await;
        let mut owned = HashMap::new();
        for n in 0..150 {
            let uid = format!("uid-{n}");
            let ids = mock
                .create_instances(DEFAULT_ACCOUNT_ID, &spec(&uid), 1)
                .unwrap();
            owned.insert(uid, ids[0].clone());
        }
        // The oldest of two instances of one owner is the one found.
        mock.create_instances(DEFAULT_ACCOUNT_ID, &spec("uid-7"), 1)
            .unwrap();
        let asked: Vec<String> = (0..60).map(|n| format!("uid-{}", n * 3)).collect();
        let found = futures::future::join_all(asked.iter().map(|uid| {
            let search = Arc::clone(&search);
            async move { search.find(uid).await.unwrap() }
        }))
        .await;
        // 151 tagged instances: two pages of 100, for all 60 askers.
        assert_eq!(describe_calls(&mock), 2);
        for (uid, found) in asked.iter().zip(found) {
            assert_eq!(found.as_ref(), owned.get(uid), "{uid}");
        }
        assert_eq!(
            search.find("uid-7").await.unwrap().as_ref(),
            owned.get("uid-7")
        );
        // Later askers are answered from that listing, new objects included.
        assert_eq!(search.find("uid-new").await.unwrap(), None);
        assert_eq!(describe_calls(&mock), 2);
        // A create of this process is answered from memory ...
        search.created("uid-new", "i-made-here");
        assert_eq!(
            search.find("uid-new").await.unwrap().as_deref(),
            Some("i-made-here")
        );
        // ... and one whose outcome is unknown waits for a listing started after it.
        let lost = mock
            .create_instances(DEFAULT_ACCOUNT_ID, &spec("uid-lost"), 1)
            .unwrap();
        assert_eq!(search.find("uid-lost").await.unwrap(), None);
        search.outcome_unknown("uid-lost");
        assert_eq!(
            search.find("uid-lost").await.unwrap(),
            Some(lost[0].clone())
        );
        assert_eq!(describe_calls(&mock), 4);
        assert_eq!(
            search.find("uid-lost").await.unwrap(),
            Some(lost[0].clone())
        );
        assert_eq!(describe_calls(&mock), 4);
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn past_the_tag_filter_limit_the_listing_is_taken_unfiltered() {
        let (mock, search) = setup().await;
        mock.create_instances(
            DEFAULT_ACCOUNT_ID,
            &spec("bulk"),
            MAX_TAG_FILTERED_INSTANCES,
        )
        .unwrap();
        let late = mock
            .create_instances(DEFAULT_ACCOUNT_ID, &spec("late"), 1)
            .unwrap();
        // ECS lists 1,000 of the 1,001 tagged instances by the tag; all of them unfiltered.
        assert_eq!(search.find("late").await.unwrap(), Some(late[0].clone()));
        assert_eq!(describe_calls(&mock), 10 + 11);
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn a_failed_listing_reaches_every_asker_and_is_not_kept() {
        let (mock, search) = setup().await;
        mock.set_access_key_enabled("ak", false);
        let results = futures::future::join_all((0..5).map(|n| {
            let search = Arc::clone(&search);
            async move { search.find(&format!("uid-{n}")).await }
        }))
        .await;
        assert_eq!(describe_calls(&mock), 1);
        for result in results {
            assert!(result.unwrap_err().is_bad_credentials());
        }
        mock.set_access_key_enabled("ak", true);
        assert_eq!(search.find("uid-0").await.unwrap(), None);
        assert_eq!(describe_calls(&mock), 2);
        mock.shutdown().await;
    }

    #[test]
    fn which_create_failures_may_have_made_an_instance() {
        let api = |status: u16, code: &str| {
            Error::from(alibaba_sdk::ApiError {
                action: "RunInstances".into(),
                code: code.into(),
                message: String::new(),
                request_id: None,
                http_status: status,
                recommend: None,
                retry_after: None,
            })
        };
        assert!(outcome_unknown(&api(503, "ServiceUnavailable")));
        assert!(!outcome_unknown(&api(400, "Throttling.User")));
        assert!(!outcome_unknown(&api(403, "QuotaExceed.ElasticQuota")));
        assert!(outcome_unknown(&Error::Transport {
            action: "RunInstances".into(),
            endpoint: "http://127.0.0.1".into(),
            detail: "connection reset".into(),
        }));
        assert!(!outcome_unknown(&Error::Connect {
            action: "RunInstances".into(),
            endpoint: "http://127.0.0.1".into(),
            detail: "refused".into(),
        }));
    }
}
