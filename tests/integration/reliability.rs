//! Reliability suite: cloud faults, SIGKILLed controllers, and no secret anywhere a user or a log
//! collector can see. `ferroplane run` runs as a separate process against an in-process sandbox
//! and ECS mock (see `support::daemon`).
//!
//! CI runs the short form. `FERROPLANE_RELIABILITY_FULL=1` runs the full sizes
//! (300 instances under faults; 200 instances and more kills in the crash storms).
//! `FERROPLANE_STORM_SEED=<n>` repeats a crash storm's random choices (each run prints its seed).

use std::time::Duration;

use crate::support::daemon::{self, Daemon};
use alibaba_mock::MockStats;
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::{DeletionPolicy, LocalSecretKeySelector};
use ferroplane_testkit::eventually;
use k8s_openapi::api::core::v1::{Event, Secret};
use kube::api::{Api, ListParams, PostParams};
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

const PASSWORD: &str = "Pa55-word-never-logged!";
/// How long a storm waits for the cloud to move before it kills the controller anyway.
const STORM_PATIENCE: Duration = Duration::from_secs(20);

fn full() -> bool {
    std::env::var_os("FERROPLANE_RELIABILITY_FULL").is_some()
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:04}")).collect()
}

pub(crate) async fn throttling_and_server_errors_neither_duplicate_nor_leak() {
    let n = if full() { 300 } else { 60 };
    let mut daemon = Daemon::start(Duration::from_millis(200)).await;
    // Both kinds of fault on a create (retried with its ClientToken) and on a read.
    daemon.inject_faults(&[
        ("ServiceUnavailable", "RunInstances", 3),
        ("Throttling.User", "RunInstances", 2),
        ("ServiceUnavailable", "DescribeInstances", 2),
    ]);
    daemon.spawn_controller();
    let api = daemon.api();

    // One instance logs in with a password from a Secret: it must not leak either.
    create_password_secret(daemon.client()).await;
    let mut with_password = daemon::instance("pw-0000", DeletionPolicy::Delete);
    with_password.spec.for_provider.password_secret_ref = Some(LocalSecretKeySelector {
        name: "vm-password".into(),
        key: "password".into(),
    });
    api.create(&PostParams::default(), &with_password)
        .await
        .expect("created");
    daemon::create_many(&api, &names("vm", n - 1)).await;

    daemon::wait_all_ready(&api, n, Duration::from_secs(if full() { 600 } else { 180 })).await;
    let statuses_at_ready = statuses_json(&api).await;
    let stats = daemon.env.mock().stats();
    assert_eq!(
        stats.instances_created, n as u64,
        "no duplicate under faults: {stats:?}"
    );
    let throttled = stats.errors.get("Throttling.User").copied().unwrap_or(0);
    let unavailable = stats.errors.get("ServiceUnavailable").copied().unwrap_or(0);
    assert!(
        throttled >= 2 && unavailable >= 5,
        "every scripted fault was answered: {stats:?}"
    );

    let mut all = names("vm", n - 1);
    all.push("pw-0000".into());
    daemon::delete_many(&api, &all).await;
    daemon::wait_all_gone(&api, Duration::from_secs(if full() { 600 } else { 180 })).await;
    let stats = daemon.env.mock().stats();
    assert_eq!(stats.instances_created, n as u64, "{stats:?}");
    assert_eq!(stats.instances_live, 0, "no leak: {stats:?}");
    println!(
        "faults: {n} instances, {throttled} throttled and {unavailable} unavailable answers, 0 duplicates, 0 leaks"
    );

    assert_no_secret_anywhere(&daemon, &statuses_at_ready).await;
    daemon.finish().await;
}

pub(crate) async fn sigkill_during_create_and_delete_storms_converges() {
    let n = if full() { 200 } else { 40 };
    let kills_per_storm = if full() { 10 } else { 5 };
    let mut daemon = Daemon::start(Duration::from_millis(300)).await;
    let api = daemon.api();
    let all = names("storm", n);
    let mut rng = storm_rng();

    // Create storm: objects arrive while the controller is killed again and again.
    daemon::create_many(&api, &all).await;
    let created_at_kills = storm(&mut daemon, &mut rng, (kills_per_storm, n as u64), |s| {
        s.instances_created
    })
    .await;
    assert!(
        created_at_kills.iter().any(|&c| 0 < c && c < n as u64),
        "no kill landed while the instances were being created (instances created at each \
         kill: {created_at_kills:?})"
    );
    daemon.spawn_controller();
    daemon::wait_all_ready(&api, n, Duration::from_secs(240)).await;
    let statuses_at_ready = statuses_json(&api).await;
    let stats = daemon.env.mock().stats();
    assert_eq!(
        stats.instances_created, n as u64,
        "no duplicate after SIGKILLs: {stats:?}"
    );
    assert_eq!(stats.instances_live, n as u64);
    let objects = api.list(&ListParams::default()).await.expect("list").items;
    let mut ids: Vec<String> = objects.iter().filter_map(external_name).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "every object has its own instance");
    daemon.kill_controller().await;

    // Delete storm.
    daemon::delete_many(&api, &all).await;
    let deleted_at_kills = storm(&mut daemon, &mut rng, (kills_per_storm, n as u64), |s| {
        s.instances_created - s.instances_live
    })
    .await;
    assert!(
        deleted_at_kills.iter().any(|&d| 0 < d && d < n as u64),
        "no kill landed while the instances were being released (instances released at each \
         kill: {deleted_at_kills:?})"
    );
    daemon.spawn_controller();
    daemon::wait_all_gone(&api, Duration::from_secs(240)).await;
    let stats = daemon.env.mock().stats();
    assert_eq!(stats.instances_created, n as u64, "{stats:?}");
    assert_eq!(stats.instances_live, 0, "no leak after SIGKILLs: {stats:?}");
    println!(
        "crashes: {n} instances, {} SIGKILLs (instances created at each kill of the create storm \
         {created_at_kills:?}, released at each of the delete storm {deleted_at_kills:?}), 0 \
         duplicates, 0 leaks",
        2 * kills_per_storm
    );
    assert_no_secret_anywhere(&daemon, &statuses_at_ready).await;
    daemon.finish().await;
}

/// The storms' randomness: seeded by `FERROPLANE_STORM_SEED` when set, else at random; the
/// seed is printed, so a failed storm can be run again as it was.
fn storm_rng() -> StdRng {
    let seed = std::env::var("FERROPLANE_STORM_SEED")
        .ok()
        .map(|s| s.parse().expect("FERROPLANE_STORM_SEED is a number"))
        .unwrap_or_else(rand::random);
    println!("storm seed {seed} (FERROPLANE_STORM_SEED={seed} repeats the storms' choices)");
    StdRng::seed_from_u64(seed)
}

/// Starts the controller and kills it `kills` times, each time right after the cloud made a
/// random 1 to 3 more changes of the storm's kind (`progress` counts them in the mock's stats),
/// so that kills land between a cloud call and the object writes that follow it; after
/// [`STORM_PATIENCE`] without a change it kills anyway. Returns `progress` at each
/// kill; the controller is left stopped. Once all `total` changes are made, the remaining kills
/// come without waiting.
async fn storm(
    daemon: &mut Daemon,
    rng: &mut StdRng,
    (kills, total): (usize, u64),
    progress: impl Fn(&MockStats) -> u64,
) -> Vec<u64> {
    let mut at_kills = Vec::with_capacity(kills);
    for _ in 0..kills {
        daemon.spawn_controller();
        let target = (progress(&daemon.env.mock().stats()) + rng.random_range(1..=3)).min(total);
        // A start takes seconds on a real control plane (its caches sync first): the storm
        // waits for the cloud to move, not for a fixed time.
        // Either outcome is a kill: a crash needs no reason.
        let _ = eventually("the cloud to make the storm's next changes")
            .within(STORM_PATIENCE)
            .every(Duration::from_millis(2))
            .try_until_async(|| std::future::ready(progress(&daemon.env.mock().stats()) >= target))
            .await;
        at_kills.push(progress(&daemon.env.mock().stats()));
        daemon.kill_controller().await;
    }
    at_kills
}

fn external_name(object: &ECSInstance) -> Option<String> {
    object
        .metadata
        .annotations
        .as_ref()?
        .get("ferroplane.io/external-name")
        .cloned()
}

async fn create_password_secret(client: &kube::Client) {
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("vm-password".into()),
            ..Default::default()
        },
        string_data: Some([("password".to_owned(), PASSWORD.to_owned())].into()),
        ..Default::default()
    };
    Api::<Secret>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &secret)
        .await
        .expect("password Secret created");
}

async fn statuses_json(api: &Api<ECSInstance>) -> String {
    let objects = api
        .list(&ListParams::default())
        .await
        .expect("objects")
        .items;
    let statuses: Vec<_> = objects.into_iter().map(|o| o.status).collect();
    serde_json::to_string(&statuses).expect("json")
}

/// The access key secret and the password appear in no controller log line (debug level), no
/// event and no status (`statuses`: every object's status while all were Ready).
async fn assert_no_secret_anywhere(daemon: &Daemon, statuses: &str) {
    let credentials = Api::<Secret>::namespaced(daemon.client().clone(), "default")
        .get(ferroplane::environment::CREDENTIALS_SECRET)
        .await
        .expect("credentials Secret");
    let access_key_secret =
        String::from_utf8(credentials.data.expect("data")["accessKeySecret"].0.clone())
            .expect("utf-8");
    let secrets = [access_key_secret.as_str(), PASSWORD];

    let logs = std::fs::read_to_string(daemon.log_path()).expect("controller log");
    assert!(
        logs.lines().count() > 10,
        "the controller logged at debug level"
    );
    let events = Api::<Event>::all(daemon.client().clone())
        .list(&ListParams::default())
        .await
        .expect("events");
    let events = serde_json::to_string(&events.items).expect("json");
    let statuses = statuses.to_owned();
    for secret in secrets {
        for (what, text) in [
            ("controller logs", &logs),
            ("events", &events),
            ("statuses", &statuses),
        ] {
            assert!(!text.contains(secret), "a secret appears in the {what}");
        }
    }
}
