//! The membership client, the planner and the member configuration files against real etcd
//! processes (the release pinned in testenv/versions.yaml, built by ferroplane-testenv when
//! missing) on 127.0.0.1: bootstrap, growth through a learner, shrink, shrink then grow again
//! with the volumes kept, and the rejoin of a member whose data was lost.
//!
//! A "pod" is an etcd process and its "PVC" is a data directory, which, as a StatefulSet's
//! claim, outlives the pod: scaling down stops processes and keeps their directories; only
//! what the controller asks for ([`scaling::Applied::delete_volumes`], `restart_empty`) deletes
//! one.
//!
//! Every test owns its processes; a Drop guard kills them, also when the test fails.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferroplane_testkit::eventually;
use provider_etcd::membership::auth::{AUTH_FAILED, INVALID_AUTH_TOKEN, USER_EMPTY};
use provider_etcd::membership::{
    AuthStatus, GatewayClient, GatewayConfig, Membership, MembershipError, Password,
    PromoteOutcome, RootCredentials,
};
use provider_etcd::names::Topology;
use provider_etcd::planner::{self, Step};
use provider_etcd::render::bootstrap::{Bootstrap, Listen, MemberConfig};
use provider_etcd::scaling;

const MAX_MEMBERS: u32 = 5;

fn etcd_binary() -> PathBuf {
    ferroplane_testkit::etcd::etcd_binary()
}

/// `n` distinct free ports: all listeners are held until every port is chosen, so the OS
/// cannot hand out the same port twice.
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("bound address").port())
        .collect()
}

/// Members `m<i>` on 127.0.0.1 ports chosen at the start of the test.
struct LocalTopology {
    ports: Vec<(u16, u16)>,
}

impl LocalTopology {
    fn new() -> Self {
        let ports = free_ports(2 * MAX_MEMBERS as usize);
        Self {
            ports: ports.chunks(2).map(|p| (p[0], p[1])).collect(),
        }
    }
}

impl Topology for LocalTopology {
    fn member_name(&self, ordinal: u32) -> String {
        format!("m{ordinal}")
    }
    fn peer_url(&self, ordinal: u32) -> String {
        format!("http://127.0.0.1:{}", self.ports[ordinal as usize].0)
    }
    fn client_url(&self, ordinal: u32) -> String {
        format!("http://127.0.0.1:{}", self.ports[ordinal as usize].1)
    }
    fn ordinal_of_peer_url(&self, url: &str) -> Option<u32> {
        (0..MAX_MEMBERS).find(|&o| self.peer_url(o) == url)
    }
}

/// The "pods": one etcd process per ordinal, each with its data directory under one temp dir.
struct LocalCluster {
    dir: tempfile::TempDir,
    topology: LocalTopology,
    processes: Vec<Option<Child>>,
    replicas: u32,
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for child in self.processes.iter_mut().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl LocalCluster {
    fn new() -> Self {
        etcd_binary();
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
            topology: LocalTopology::new(),
            processes: (0..MAX_MEMBERS).map(|_| None).collect(),
            replicas: 0,
        }
    }

    /// A new cluster of `size` members, bootstrapped together, once all of them are healthy
    /// voters.
    async fn bootstrapped(size: u32) -> Self {
        let mut cluster = Self::new();
        cluster.scale(size, &Bootstrap::New { size });
        let timeout = Duration::from_secs(15 + 5 * u64::from(size));
        wait_voters(&cluster, size as usize, timeout).await;
        cluster
    }

    fn data_dir(&self, ordinal: u32) -> PathBuf {
        self.dir.path().join(format!("m{ordinal}.etcd"))
    }

    /// Starts member `ordinal` from a configuration file rendered exactly as for a pod, except
    /// for the listen addresses.
    fn start(&mut self, ordinal: u32, bootstrap: &Bootstrap) {
        let data_dir = self.data_dir(ordinal);
        let config = MemberConfig::new(
            &self.topology,
            ordinal,
            bootstrap,
            "test-token",
            &data_dir.to_string_lossy(),
            Listen::Advertised,
        );
        let config_path = self.dir.path().join(format!("m{ordinal}.json"));
        std::fs::write(&config_path, config.to_file()).expect("write config");
        // Appended to, so that the log of a member keeps what its earlier "pods" said.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("m{ordinal}.log")))
            .expect("log file");
        let child = Command::new(etcd_binary())
            .arg(format!("--config-file={}", config_path.display()))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start etcd");
        if let Some(mut old) = self.processes[ordinal as usize].replace(child) {
            let _ = old.kill();
            let _ = old.wait();
        }
    }

    fn stop(&mut self, ordinal: u32) {
        if let Some(mut child) = self.processes[ordinal as usize].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wipe(&self, ordinal: u32) {
        let dir = self.data_dir(ordinal);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).expect("wipe data dir");
        }
    }

    /// Whether the process of `ordinal` has exited (a crash, like a pod in CrashLoopBackOff).
    fn exited(&mut self, ordinal: u32) -> bool {
        match self.processes[ordinal as usize].as_mut() {
            Some(child) => child.try_wait().ok().flatten().is_some(),
            None => false,
        }
    }

    fn log(&self, ordinal: u32) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("m{ordinal}.log"))).unwrap_or_default()
    }

    fn client(&self) -> GatewayClient {
        let endpoints = (0..MAX_MEMBERS)
            .map(|o| self.topology.client_url(o))
            .collect();
        GatewayClient::new(endpoints, &GatewayConfig::default()).expect("client")
    }

    /// StatefulSet semantics: pods below `replicas` run, the others stop; their volumes (data
    /// directories) stay, as a StatefulSet's claims do, until deleted.
    fn scale(&mut self, replicas: u32, bootstrap: &Bootstrap) {
        for o in 0..MAX_MEMBERS {
            let running = self.processes[o as usize].is_some();
            if o < replicas && !running {
                self.start(o, bootstrap);
            } else if o >= replicas && running {
                self.stop(o);
            }
        }
        self.replicas = replicas;
    }

    /// Deletes the volume of `ordinal`, which must have no pod (a PVC in use is only deleted once
    /// its pod is gone).
    fn delete_volume(&mut self, ordinal: u32) {
        assert!(
            self.processes[ordinal as usize].is_none(),
            "the controller deleted the volume of running member {ordinal}"
        );
        self.wipe(ordinal);
    }
}

/// Waits until `n` voters answer their status with a leader.
async fn wait_voters(cluster: &LocalCluster, n: usize, timeout: Duration) {
    let client = cluster.client();
    eventually(format!("{n} healthy voters"))
        .within(timeout)
        .every(Duration::from_millis(200))
        .until_async(|| async { healthy_voters(&client, &cluster.topology).await >= n })
        .await;
}

async fn healthy_voters(client: &GatewayClient, topology: &LocalTopology) -> usize {
    match scaling::observe(client, topology, |_| false).await {
        Ok(observed) => observed
            .members
            .iter()
            .filter(|m| !m.member.is_learner && m.health == planner::Health::Healthy)
            .count(),
        // Not answering yet (a member is still starting): no healthy voter counted.
        Err(_) => 0,
    }
}

async fn put(client_url: &str, key: &str, value: &str) {
    let body = serde_json::json!({"key": STANDARD.encode(key), "value": STANDARD.encode(value)});
    let response = reqwest::Client::new()
        .post(format!("{client_url}/v3/kv/put"))
        .json(&body)
        .send()
        .await
        .expect("put");
    assert!(
        response.status().is_success(),
        "put failed: {}",
        response.text().await.unwrap_or_default()
    );
}

async fn get(client_url: &str, key: &str) -> Option<String> {
    let body = serde_json::json!({"key": STANDARD.encode(key), "serializable": true});
    let response = reqwest::Client::new()
        .post(format!("{client_url}/v3/kv/range"))
        .json(&body)
        .send()
        .await
        .ok()?;
    let value: serde_json::Value = response.json().await.ok()?;
    let encoded = value["kvs"][0]["value"].as_str()?;
    String::from_utf8(STANDARD.decode(encoded).ok()?).ok()
}

/// How [`converge_with`] plays the controller.
#[derive(Clone, Copy)]
struct Controller {
    /// `spec.replaceFailedMembers`.
    replace_failed: bool,
    /// Whether volume deletions the controller asks for happen; `false` models a claim that
    /// outlived its member anyway (deleted by hand and restored, a controller that crashed
    /// between the steps, a cluster without the retention policy).
    volumes_deleted: bool,
}

const CONTROLLER: Controller = Controller {
    replace_failed: false,
    volumes_deleted: true,
};

/// Runs the planner against the real cluster until it is steady at `desired` members, the way
/// the controller does (one step per round, observing in between). Returns the steps taken.
async fn converge(cluster: &mut LocalCluster, desired: u32) -> Vec<Step> {
    converge_with(cluster, desired, CONTROLLER).await
}

async fn converge_with(
    cluster: &mut LocalCluster,
    desired: u32,
    controller: Controller,
) -> Vec<Step> {
    let client = cluster.client();
    let mut steps = Vec::new();
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "no convergence to {desired} members; steps so far: {steps:?}"
        );
        let exited: BTreeSet<u32> = (0..MAX_MEMBERS).filter(|&o| cluster.exited(o)).collect();
        let observed =
            match scaling::observe(&client, &cluster.topology, |o| exited.contains(&o)).await {
                Ok(o) => o,
                Err(e) if e.is_unreachable() => {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    continue;
                }
                Err(e) => panic!("observe failed: {e}"),
            };
        let view = observed
            .planner_view(desired, cluster.replicas)
            .replacing_failed(controller.replace_failed);
        let step = planner::plan(&view);
        match &step {
            Step::Steady => return steps,
            Step::Blocked(why) => panic!("planner blocked: {why}"),
            Step::Flapping { .. } => {
                steps.push(step);
                return steps;
            }
            Step::Wait(_) => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
            _ => {}
        }
        let applied =
            match scaling::apply(&step, &client, &cluster.topology, cluster.replicas).await {
                Ok(applied) => applied,
                Err(e) if e.is_transient() => {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    continue;
                }
                Err(e) => panic!("{step:?} failed: {e}"),
            };
        let observed = scaling::observe(&client, &cluster.topology, |_| false).await;
        let bootstrap = Bootstrap::Existing {
            members: observed.as_ref().map(|o| o.ordinals()).unwrap_or_default(),
            sealed: observed
                .as_ref()
                .map(|o| o.sealed_ordinals(cluster.replicas, true))
                .unwrap_or_default(),
        };
        if let Some(replicas) = applied.scale_to {
            cluster.scale(replicas, &bootstrap);
        }
        if controller.volumes_deleted {
            for &ordinal in &applied.delete_volumes {
                cluster.delete_volume(ordinal);
            }
        }
        if let Some(ordinal) = applied.restart_empty {
            cluster.stop(ordinal);
            cluster.wipe(ordinal);
            cluster.start(ordinal, &bootstrap);
        }
        if steps.last() != Some(&step) {
            steps.push(step);
        }
    }
}

#[tokio::test]
async fn bootstrap_a_three_member_cluster_from_rendered_configs() {
    let cluster = LocalCluster::bootstrapped(3).await;
    let client = cluster.client();
    let members = client.list().await.expect("list");
    let names: BTreeSet<String> = members.iter().map(|m| m.name.clone()).collect();
    assert_eq!(
        names,
        BTreeSet::from(["m0".into(), "m1".into(), "m2".into()])
    );
    assert!(members.iter().all(|m| !m.is_learner));
    let observed = scaling::observe(&client, &cluster.topology, |_| false)
        .await
        .expect("observe");
    assert!(observed.leader_name().is_some(), "a leader was elected");
    assert_eq!(planner::plan(&observed.planner_view(3, 3)), Step::Steady);
}

#[tokio::test]
async fn membership_calls_are_idempotent() {
    let cluster = LocalCluster::bootstrapped(1).await;
    let client = cluster.client();

    let peer = cluster.topology.peer_url(1);
    let first = client.add_learner(&peer).await.expect("add learner");
    assert!(first.is_learner && !first.started());
    let again = client
        .add_learner(&peer)
        .await
        .expect("adding the same peer again returns the member");
    assert_eq!(again.id, first.id);
    assert_eq!(
        client.promote(first.id).await.expect("promote"),
        PromoteOutcome::NotCaughtUp,
        "a learner that never started is not in sync"
    );
    client.remove(first.id).await.expect("remove");
    client
        .remove(first.id)
        .await
        .expect("removing a removed member succeeds");
    assert_eq!(client.list().await.expect("list").len(), 1);
}

/// etcd derives an added member's ID from its peer URL and the second it is added in, and
/// refuses an ID a removed member had ("member not found"): a peer URL added, removed and added
/// again within one second is refused until the next second. The client says so, as a
/// transient error, and the next second adds it.
#[tokio::test]
async fn a_peer_url_added_again_in_its_removed_members_second_waits_for_the_next() {
    let cluster = LocalCluster::bootstrapped(1).await;
    let client = cluster.client();
    let peer = cluster.topology.peer_url(1);

    // The three calls must land within one wall-clock second for the path this test is named
    // for; started at the top of a second they usually do. An attempt that crossed a second is
    // undone and tried again, a bounded number of times.
    const ATTEMPTS: usize = 5;
    let mut first = None;
    for _ in 0..ATTEMPTS {
        let into_second = jiff::Timestamp::now().subsec_nanosecond().unsigned_abs();
        tokio::time::sleep(Duration::from_nanos(u64::from(1_000_000_000 - into_second))).await;
        let started = jiff::Timestamp::now().as_second();
        let added = client.add_learner(&peer).await.expect("add learner");
        client.remove(added.id).await.expect("remove");
        let again = client.add_learner(&peer).await;
        let ended = jiff::Timestamp::now().as_second();
        match again {
            Err(refused @ MembershipError::MemberIdTaken { .. }) => {
                assert!(refused.is_transient(), "{refused}");
                assert!(refused.to_string().contains(&peer), "{refused}");
                first = Some(added);
                break;
            }
            Ok(member) => {
                assert_ne!(
                    started, ended,
                    "within one second etcd gives the removed member's ID, which it refuses"
                );
                assert_ne!(member.id, added.id);
                client.remove(member.id).await.expect("undo the attempt");
            }
            Err(other) => panic!("expected the ID to be taken for this second: {other}"),
        }
    }
    let first = first.unwrap_or_else(|| {
        panic!("in {ATTEMPTS} attempts the three calls never landed within one second")
    });
    let member = eventually("the peer URL to be added in a later second")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(100))
        .try_until_async(|| async {
            match client.add_learner(&peer).await {
                Ok(member) => Ok(member),
                Err(e) if e.is_transient() => Err(e.to_string()),
                Err(e) => panic!("{e}"),
            }
        })
        .await
        .unwrap_or_else(|timed_out| panic!("{timed_out}"));
    assert_ne!(member.id, first.id);
    assert!(member.is_learner);
}

#[tokio::test]
async fn grow_one_to_three_through_learners_then_shrink_to_one() {
    let mut cluster = LocalCluster::bootstrapped(1).await;
    let client = cluster.client();
    put(&cluster.topology.client_url(0), "greeting", "hello").await;

    let steps = converge(&mut cluster, 3).await;
    assert_eq!(
        steps
            .iter()
            .filter(|s| matches!(s, Step::AddLearner { .. }))
            .count(),
        2,
        "each member is added as a learner: {steps:?}"
    );
    assert!(
        matches!(steps[0], Step::AddLearner { ordinal: 1 }),
        "membership before pods: {steps:?}"
    );
    assert!(
        matches!(steps[1], Step::ScaleStatefulSet { replicas: 2 }),
        "{steps:?}"
    );
    let members = client.list().await.expect("list");
    assert_eq!(members.len(), 3);
    assert!(
        members.iter().all(|m| !m.is_learner && m.started()),
        "{members:?}"
    );
    assert_eq!(
        get(&cluster.topology.client_url(2), "greeting")
            .await
            .as_deref(),
        Some("hello"),
        "the new member has the data"
    );

    let steps = converge(&mut cluster, 1).await;
    assert_eq!(
        steps,
        [
            Step::Remove {
                id: steps_id(&steps, 0),
                ordinal: 2,
                why: planner::Removal::ScaleDown
            },
            Step::Remove {
                id: steps_id(&steps, 1),
                ordinal: 1,
                why: planner::Removal::ScaleDown
            },
            Step::ScaleStatefulSet { replicas: 1 },
        ]
    );
    let members = client.list().await.expect("list");
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].name, "m0");
    put(&cluster.topology.client_url(0), "after", "shrink").await;
}

fn steps_id(steps: &[Step], index: usize) -> u64 {
    match steps.get(index) {
        Some(Step::Remove { id, .. }) => *id,
        other => panic!("step {index} is not a removal: {other:?}"),
    }
}

/// Voters of the cluster that answer, by name.
async fn voter_names(client: &GatewayClient) -> BTreeSet<String> {
    client
        .list()
        .await
        .expect("list")
        .into_iter()
        .filter(|m| !m.is_learner && m.started())
        .map(|m| m.name)
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|n| (*n).to_owned()).collect()
}

#[tokio::test]
async fn shrink_then_grow_again_with_the_volumes_kept() {
    let mut cluster = LocalCluster::bootstrapped(3).await;
    let client = cluster.client();
    put(&cluster.topology.client_url(0), "k", "v").await;

    let down = converge(&mut cluster, 1).await;
    assert_eq!(
        down.last(),
        Some(&Step::ScaleStatefulSet { replicas: 1 }),
        "{down:?}"
    );
    assert!(
        !cluster.data_dir(1).exists() && !cluster.data_dir(2).exists(),
        "the removed members' volumes are deleted once their pods are gone"
    );
    assert!(cluster.data_dir(0).exists());

    let up = converge(&mut cluster, 3).await;
    assert!(
        !up.iter().any(|s| matches!(s, Step::RestartEmpty { .. })),
        "no member had to recover from stale data: {up:?}"
    );
    assert_eq!(
        voter_names(&client).await,
        names(&["m0", "m1", "m2"]),
        "{up:?}"
    );
    wait_voters(&cluster, 3, Duration::from_secs(30)).await;
    assert_eq!(
        get(&cluster.topology.client_url(2), "k").await.as_deref(),
        Some("v")
    );
}

#[tokio::test]
async fn a_learner_stuck_on_a_removed_member_s_volume_restarts_empty() {
    let kept = Controller {
        volumes_deleted: false,
        ..CONTROLLER
    };
    let mut cluster = LocalCluster::bootstrapped(3).await;
    let client = cluster.client();
    converge_with(&mut cluster, 2, kept).await;
    assert!(
        cluster.data_dir(2).exists(),
        "m2's volume outlived its member"
    );

    // m2's new pod starts on the removed member's data, which etcd refuses; the learner added
    // for it never starts until its volume is emptied.
    let up = converge_with(&mut cluster, 3, kept).await;
    assert!(
        up.contains(&Step::RestartEmpty { ordinal: 2 }),
        "{up:?}\nm2 log:\n{}",
        cluster.log(2)
    );
    assert!(
        cluster.log(2).contains("permanently removed"),
        "m2 first failed on the old data:\n{}",
        cluster.log(2)
    );
    assert_eq!(voter_names(&client).await, names(&["m0", "m1", "m2"]));
}

/// m2's member is removed (its data was lost) and a learner added for its replacement while
/// m2's old pod still runs on the volume about to be deleted. Restarting there (a crash loop)
/// with the file rendered after the removal, it must not join as that learner: its log would go
/// with the volume, and the learner, restarted empty under the same ID, could never catch up.
/// The file of a pod that is no member is sealed; with its peers listed, etcd joins.
#[tokio::test]
async fn a_removed_member_s_pod_restarting_after_the_learner_was_added_cannot_join_as_it() {
    let mut cluster = LocalCluster::bootstrapped(3).await;
    let client = cluster.client();
    let old = client.list().await.expect("list");
    let m2 = old.iter().find(|m| m.name == "m2").expect("m2").id;
    cluster.stop(2);
    cluster.wipe(2);
    client.remove(m2).await.expect("remove m2");
    let observed = scaling::observe(&client, &cluster.topology, |_| false)
        .await
        .expect("observe");
    let sealed = observed.sealed_ordinals(cluster.replicas, true);
    assert_eq!(sealed, BTreeSet::from([0, 1, 2]));
    let after_removal = Bootstrap::Existing {
        members: observed.ordinals(),
        sealed,
    };
    // etcd refuses a member add for a moment after a removal ("unhealthy cluster").
    let learner = eventually("the learner added")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(300))
        .try_until_async(|| async {
            match client.add_learner(&cluster.topology.peer_url(2)).await {
                Ok(learner) => Ok(learner),
                Err(e) if e.is_transient() => Err(e.to_string()),
                Err(e) => panic!("member add: {e}"),
            }
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let learner_name = || async {
        let members = client.list().await.expect("list");
        members
            .iter()
            .find(|m| m.id == learner.id)
            .map(|m| m.name.clone())
            .expect("the learner is listed")
    };

    cluster.start(2, &after_removal);
    eventually("m2's old pod exits on its sealed file")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .until(|| cluster.exited(2))
        .await;
    assert_eq!(
        learner_name().await,
        "",
        "the learner never started:\n{}",
        cluster.log(2)
    );

    // What sealing prevents: the same restart with its peers listed joins as the learner.
    cluster.wipe(2);
    cluster.start(
        2,
        &Bootstrap::Existing {
            members: BTreeSet::from([0, 1]),
            sealed: BTreeSet::from([0, 1]),
        },
    );
    eventually("m2 joins as the learner with its peers listed")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .until_async(|| async { learner_name().await == "m2" })
        .await;
}

/// Loses m2's disk and restarts it on the configuration the controller renders for a started
/// member (sealed: no peer to join from), the crash loop a pod would show. With the peers listed
/// etcd would join under the old identity with an empty log (and usually stop at the leader's
/// first heartbeat, committing beyond it, or catch up quietly when an append reaches it first).
async fn lose_the_disk_of_m2(cluster: &mut LocalCluster) {
    for _ in 0..5 {
        cluster.stop(2);
        cluster.wipe(2);
        cluster.start(
            2,
            &Bootstrap::Existing {
                members: BTreeSet::from([0, 1, 2]),
                sealed: BTreeSet::from([0, 1, 2]),
            },
        );
        let start = Instant::now();
        while !cluster.exited(2) && start.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if cluster.exited(2) {
            return;
        }
    }
    panic!(
        "m2 kept running on an empty data directory, 5 times:\n{}",
        cluster.log(2)
    );
}

#[tokio::test]
async fn a_failing_member_is_reported_and_kept_unless_replacement_is_allowed() {
    let mut cluster = LocalCluster::bootstrapped(3).await;
    let client = cluster.client();
    let before = client.list().await.expect("list");
    lose_the_disk_of_m2(&mut cluster).await;

    let steps = converge(&mut cluster, 3).await;
    assert!(
        matches!(steps.as_slice(), [Step::Flapping { ordinal: 2, .. }]),
        "{steps:?}"
    );
    assert_eq!(
        client.list().await.expect("list"),
        before,
        "no member was removed"
    );
}

#[tokio::test]
async fn a_member_whose_data_was_lost_is_replaced_and_rejoins_when_allowed() {
    let mut cluster = LocalCluster::bootstrapped(3).await;
    let client = cluster.client();
    put(&cluster.topology.client_url(0), "k", "v").await;
    let before = client.list().await.expect("list");
    let old_id = before.iter().find(|m| m.name == "m2").expect("m2").id;
    lose_the_disk_of_m2(&mut cluster).await;

    let steps = converge_with(
        &mut cluster,
        3,
        Controller {
            replace_failed: true,
            ..CONTROLLER
        },
    )
    .await;
    assert!(
        matches!(steps[0], Step::Replace { ordinal: 2, .. }),
        "{steps:?}\nm2 log:\n{}",
        cluster.log(2)
    );
    let after = client.list().await.expect("list");
    assert_eq!(after.len(), 3);
    let m2 = after.iter().find(|m| m.name == "m2").expect("m2 is back");
    assert_ne!(m2.id, old_id, "m2 rejoined as a new member");
    assert!(!m2.is_learner);
    assert_eq!(
        get(&cluster.topology.client_url(2), "k").await.as_deref(),
        Some("v")
    );
}

/// `POST <path>` with `body` and, when given, a token; etcd's JSON answer.
async fn post_as(
    client_url: &str,
    path: &str,
    body: serde_json::Value,
    token: Option<&str>,
) -> serde_json::Value {
    let mut request = reqwest::Client::new()
        .post(format!("{client_url}{path}"))
        .json(&body);
    if let Some(token) = token {
        request = request.header("Authorization", token);
    }
    request
        .send()
        .await
        .expect("etcd answers")
        .json()
        .await
        .expect("JSON")
}

/// What etcd says to reading key `k` with `token`: its error message, or "" when it reads.
async fn read_refusal(client_url: &str, token: Option<&str>) -> String {
    let body = serde_json::json!({"key": STANDARD.encode("k")});
    let answer = post_as(client_url, "/v3/kv/range", body, token).await;
    answer
        .get("error")
        .or_else(|| answer.get("message"))
        .and_then(|m| m.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// A token for root with `password`, or etcd's refusal.
async fn root_token(client_url: &str, password: &str) -> Result<String, String> {
    let body = serde_json::json!({"name": "root", "password": password});
    let answer = post_as(client_url, "/v3/auth/authenticate", body, None).await;
    answer["token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| answer.to_string())
}

fn status_of(result: Result<AuthStatus, MembershipError>) -> AuthStatus {
    result.unwrap_or_else(|e| panic!("auth status: {e}"))
}

/// Enabling root authentication on a running member, then every controller call with it
/// (membership changes, status, defragmentation, a snapshot), a password change after which
/// the client's dead token is replaced, and disabling.
#[tokio::test]
async fn root_authentication_is_enabled_rotated_and_disabled_through_the_gateway() {
    let cluster = LocalCluster::bootstrapped(1).await;
    let url = cluster.topology.client_url(0);
    let first = Password::new("first-Pa55");
    let second = Password::new("second-Pa55");
    let mut client = cluster.client();
    client.set_credentials(RootCredentials::new([first.clone()]));
    assert_eq!(status_of(client.auth_status().await), AuthStatus::Disabled);
    assert_eq!(
        read_refusal(&url, None).await,
        "",
        "no auth yet: anyone reads"
    );

    client.enable_auth(&first).await.expect("enable auth");
    client
        .enable_auth(&first)
        .await
        .expect("enabling again (a retry) succeeds");
    assert!(read_refusal(&url, None).await.contains(USER_EMPTY));
    assert_eq!(
        status_of(client.auth_status().await),
        AuthStatus::Enabled { password: 0 }
    );
    let token = root_token(&url, first.expose())
        .await
        .expect("root's token");
    assert_eq!(read_refusal(&url, Some(&token)).await, "", "root reads");

    // The controller's calls authenticate.
    let peer = cluster.topology.peer_url(1);
    let learner = client
        .add_learner(&peer)
        .await
        .expect("member add with auth");
    client
        .remove(learner.id)
        .await
        .expect("member remove with auth");
    client.status(&url).await.expect("status with auth");
    client.defragment(&url).await.expect("defragment with auth");
    let (info, _) = client
        .save_snapshot(&mut Vec::new())
        .await
        .expect("snapshot with auth");
    assert!(info.size > 32);
    let mut anonymous = cluster.client();
    anonymous.set_credentials(RootCredentials::default());
    let refused = anonymous.add_learner(&peer).await;
    assert!(
        matches!(&refused, Err(MembershipError::Api { message, .. }) if message.contains(USER_EMPTY)),
        "{refused:?}"
    );
    let mut wrong = cluster.client();
    wrong.set_credentials(RootCredentials::new([Password::new("not-it")]));
    assert!(matches!(
        wrong.auth_status().await,
        Err(MembershipError::AuthFailed { tried: 1 })
    ));

    // Rotation: the client knows the old password and the new one.
    client.set_credentials(RootCredentials::new([first.clone(), second.clone()]));
    assert_eq!(
        status_of(client.auth_status().await),
        AuthStatus::Enabled { password: 0 }
    );
    client
        .change_root_password(&second)
        .await
        .expect("change root's password");
    assert!(
        read_refusal(&url, Some(&token))
            .await
            .contains(INVALID_AUTH_TOKEN)
    );
    assert!(
        root_token(&url, first.expose())
            .await
            .is_err_and(|e| e.contains(AUTH_FAILED))
    );
    let token = root_token(&url, second.expose())
        .await
        .expect("the new password");
    assert_eq!(read_refusal(&url, Some(&token)).await, "");
    // The client's token died with the change: it authenticates again (the old password
    // first, refused, then the new one). Only what etcd may refuse for a while (a loaded
    // machine's timeout, an unhealthy-cluster check) is asked again; an auth error fails.
    let learner = eventually("the client to add a learner with the new password")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .try_until_async(|| async {
            match client.add_learner(&peer).await {
                Ok(member) => Ok(Ok(member)),
                Err(e) if e.is_transient() => Err(e.to_string()),
                Err(e) => Ok(Err(e)),
            }
        })
        .await
        .unwrap_or_else(|timed_out| panic!("{timed_out}"))
        .unwrap_or_else(|e| panic!("the client authenticates again with the new password: {e}"));
    client.remove(learner.id).await.expect("remove");
    assert_eq!(
        status_of(client.auth_status().await),
        AuthStatus::Enabled { password: 1 }
    );

    client.disable_auth().await.expect("disable auth");
    assert_eq!(read_refusal(&url, None).await, "", "auth is off again");
    assert_eq!(status_of(client.auth_status().await), AuthStatus::Disabled);
}
