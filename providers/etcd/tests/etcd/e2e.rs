//! End to end: the EtcdCluster controller runs in-process against the sandbox API server (whose
//! workload simulator marks StatefulSets ready) and kubectl drives it.
//!
//! The sandbox runs no pods, so there is no etcd to ask: one test uses the production gateway
//! client and checks the graceful fallback (status from the StatefulSet, membership Unknown,
//! no size change); another injects an in-memory etcd whose members start once the
//! StatefulSet has a pod for them, to drive scaling through the membership API.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_apis::deploy::Provider;
use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_sandbox_etcd::AuthStore;
use ferroplane_testkit::wait::Wait;
use ferroplane_testkit::{self as testkit, Rbac, SandboxConfig, TestCluster, samples};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResourceExt;
use kube::api::Api;
use provider_etcd::membership::{
    AuthStatus, GatewayConfig, GatewayFactory, Member, MemberStatus, Membership, MembershipError,
    MembershipFactory, Password, PromoteOutcome, RootCredentials,
};
use provider_etcd::names::{ClusterNames, Topology};

const EVENTUALLY_TIMEOUT: Duration = Duration::from_secs(40);

/// A wait of this suite: re-checked every 100 ms for at most [`EVENTUALLY_TIMEOUT`].
fn eventually(what: &str) -> Wait {
    testkit::eventually(what)
        .within(EVENTUALLY_TIMEOUT)
        .every(Duration::from_millis(100))
}

/// A sandbox with the EtcdCluster CRD and the controller, whose membership clients `factory`
/// builds (it gets the controller's kube client).
async fn start_env<F: MembershipFactory>(factory: impl FnOnce(kube::Client) -> F) -> TestCluster {
    let mut env = TestCluster::start_with(SandboxConfig {
        workload_delay: Duration::from_millis(100),
        ..SandboxConfig::default()
    })
    .await;
    env.install_crds([EtcdCluster::crd()]).await;
    env.spawn_controllers(|runtime, shutdown| {
        let factory = factory(runtime.client().clone());
        async move {
            provider_etcd::controller(&runtime, factory)
                .run(shutdown.cancelled_owned())
                .await;
            Ok(())
        }
    });
    env
}

fn image(s: &StatefulSet) -> Option<String> {
    s.spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .first()?
        .image
        .clone()
}

fn replicas(s: &StatefulSet) -> Option<i32> {
    s.spec.as_ref()?.replicas
}

fn condition(c: &EtcdCluster, type_: &str) -> Option<(String, String, String)> {
    let cond = c
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|x| x.type_ == type_)?;
    Some((
        format!("{:?}", cond.status),
        cond.reason.clone(),
        cond.message.clone(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_cluster_without_reachable_etcd() {
    let env =
        start_env(|_| GatewayFactory::new(&GatewayConfig::default()).expect("http client")).await;
    env.kubectl()
        .ok(&["apply", "-f", &samples::path("etcdcluster.yaml")])
        .await;

    let sets = env.api::<StatefulSet>();
    let sts = eventually("the StatefulSet")
        .until_async(|| async { sets.get_opt("etcd-demo").await.ok().flatten() })
        .await;
    assert_eq!(replicas(&sts), Some(3));
    assert_eq!(
        image(&sts).as_deref(),
        Some("gcr.io/etcd-development/etcd:v3.5.17")
    );
    let spec = sts.spec.as_ref().expect("spec");
    assert_eq!(spec.pod_management_policy.as_deref(), Some("Parallel"));
    assert!(
        spec.volume_claim_templates.is_some(),
        "the sample asks for storage"
    );
    let headless = env
        .api::<Service>()
        .get("etcd-demo")
        .await
        .expect("peer Service")
        .spec
        .expect("spec");
    assert_eq!(
        (
            headless.cluster_ip.as_deref(),
            headless.publish_not_ready_addresses
        ),
        (Some("None"), Some(true))
    );
    env.api::<Service>()
        .get("etcd-demo-client")
        .await
        .expect("client Service");
    // The controller applies the PodDisruptionBudget after the StatefulSet.
    let pdbs = env.api::<PodDisruptionBudget>();
    let pdb = eventually("the PDB")
        .until_async(|| async { pdbs.get_opt("etcd-demo").await.ok().flatten() })
        .await;
    assert_eq!(
        pdb.spec.and_then(|s| s.max_unavailable),
        Some(IntOrString::Int(1))
    );
    let cm = env
        .api::<ConfigMap>()
        .get("etcd-demo-bootstrap")
        .await
        .expect("bootstrap ConfigMap");
    let data: BTreeMap<String, String> = cm.data.expect("data");
    assert_eq!(data.len(), 3);
    assert!(data["etcd-demo-2.json"].contains("\"initial-cluster-state\": \"new\""));

    // All three pods are ready, but without etcd nobody knows whether they form a cluster.
    let clusters = env.api::<EtcdCluster>();
    let c = eventually("Ready=False while membership is unknown, with the pods ready")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            let ready_pods = c.status.as_ref()?.ready_members == 3;
            let (status, _, message) = condition(&c, "Ready")?;
            (ready_pods && status == "False" && message.contains("membership is unknown"))
                .then_some(c)
        })
        .await;
    let status = c.status.clone().expect("status");
    assert_eq!(status.ready_members, 3);
    assert_eq!(
        status.client_endpoint.as_deref(),
        Some("http://etcd-demo-client.default.svc:2379")
    );
    assert!(
        status.members.is_empty(),
        "membership is unknown without etcd"
    );
    let (degraded, reason, _) = condition(&c, "Degraded").expect("Degraded condition");
    assert_eq!(
        (degraded.as_str(), reason.as_str()),
        ("Unknown", "MembershipUnknown")
    );

    // Without the membership API the size does not change.
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":5}}"#,
        ])
        .await;
    eventually("Progressing to say the resize waits")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            condition(&c, "Progressing").filter(|(s, _, m)| s == "True" && m.contains("waits"))
        })
        .await;
    assert_eq!(
        replicas(&sets.get("etcd-demo").await.expect("sts")),
        Some(3)
    );
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":3}}"#,
        ])
        .await;

    // The bootstrap ConfigMap comes back when deleted, with the same files, also while etcd
    // cannot be asked for its members.
    env.kubectl()
        .ok(&["delete", "configmap", "etcd-demo-bootstrap"])
        .await;
    let configs = env.api::<ConfigMap>();
    let restored = eventually("the bootstrap ConfigMap to come back")
        .until_async(|| async { configs.get_opt("etcd-demo-bootstrap").await.ok().flatten() })
        .await;
    assert_eq!(restored.data.expect("data"), data);

    // The replicas are ferroplane's: a hand scale is reverted, and the PDB follows the spec.
    env.kubectl()
        .ok(&["scale", "statefulset", "etcd-demo", "--replicas=5"])
        .await;
    eventually("the hand scale to be reverted")
        .until_async(|| async {
            let s = sets.get("etcd-demo").await.ok()?;
            (replicas(&s) == Some(3) && s.metadata.generation.unwrap_or(0) > 1).then_some(())
        })
        .await;
    assert_eq!(
        pdbs.get("etcd-demo")
            .await
            .expect("PDB")
            .spec
            .and_then(|s| s.max_unavailable),
        Some(IntOrString::Int(1))
    );

    // Hand edits are reverted.
    env.kubectl().ok(&[
        "patch",
        "statefulset",
        "etcd-demo",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil:1"}]"#,
    ])
    .await;
    eventually("the image edit to be reverted")
        .until_async(|| async {
            sets.get("etcd-demo")
                .await
                .ok()
                .filter(|s| image(s).as_deref() == Some("gcr.io/etcd-development/etcd:v3.5.17"))
        })
        .await;

    // Skipping a minor version is refused; the cluster keeps its version.
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"version":"3.7.0"}}"#,
        ])
        .await;
    eventually("Synced=False with UnsupportedUpgrade")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            condition(&c, "Synced")
                .filter(|(s, _, m)| s == "False" && m.contains("3.5.17") && m.contains("3.7.0"))
        })
        .await;
    assert_eq!(
        image(&sets.get("etcd-demo").await.expect("sts")).as_deref(),
        Some("gcr.io/etcd-development/etcd:v3.5.17")
    );
    // Deletion is not held up by the refused spec.

    env.kubectl()
        .ok(&[
            "delete",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--wait=true",
            "--timeout=40s",
        ])
        .await;
    eventually("the children to go")
        .until_async(|| async {
            let s = sets.get_opt("etcd-demo").await.ok()?;
            let svc = env
                .api::<Service>()
                .get_opt("etcd-demo-client")
                .await
                .ok()?;
            let pdb = env
                .api::<PodDisruptionBudget>()
                .get_opt("etcd-demo")
                .await
                .ok()?;
            (s.is_none() && svc.is_none() && pdb.is_none()).then_some(())
        })
        .await;
    env.shutdown().await;
}

/// An in-memory etcd: a member starts (gets its name, answers status) once the StatefulSet has
/// a pod for its ordinal; a learner is in sync as soon as it has started. It journals every
/// membership change it makes, so that a test checks the order of changes from the record
/// rather than from samples of the member list (a quick add-and-promote falls between samples).
#[derive(Clone)]
struct SimulatedEtcd {
    kube: kube::Client,
    names: ClusterNames,
    members: Arc<Mutex<Vec<Member>>>,
    next_id: Arc<Mutex<u64>>,
    journal: Arc<Mutex<Vec<MembershipChange>>>,
    /// The etcd version every member reports.
    version: Arc<Mutex<String>>,
    /// Names of the members that do not answer their status (down, partitioned).
    silent: Arc<Mutex<Vec<String>>>,
    /// Users, roles and tokens (authentication stays off unless a test enables it).
    auth: Arc<Mutex<AuthStore>>,
    credentials: RootCredentials,
}

impl SimulatedEtcd {
    /// `call` on the auth store with a token of the first password it accepts (none while
    /// authentication is off).
    fn on_auth<T>(
        &self,
        call: impl FnOnce(&mut AuthStore, Option<&str>) -> Result<T, MembershipError>,
    ) -> Result<T, MembershipError> {
        let mut auth = self.auth.lock().unwrap_or_else(|p| p.into_inner());
        let now = std::time::Instant::now();
        let token = if auth.enabled() {
            let token = self
                .credentials
                .passwords
                .iter()
                .find_map(|p| auth.authenticate("root", p.expose(), now).ok())
                .ok_or(MembershipError::AuthFailed {
                    tried: self.credentials.passwords.len(),
                })?;
            Some(token)
        } else {
            None
        };
        call(&mut auth, token.as_deref())
    }
}

/// One change of the member list, as the controller made it.
#[derive(Clone, Debug, PartialEq)]
enum MembershipChange {
    Added {
        id: u64,
        is_learner: bool,
    },
    Promoted {
        id: u64,
    },
    /// `pods`: the StatefulSet's replicas when the member was removed.
    Removed {
        id: u64,
        ordinal: u32,
        pods: u32,
    },
}

/// The most learners the cluster had at once, replaying `journal` from a cluster without any.
fn most_learners_at_once(journal: &[MembershipChange]) -> usize {
    let mut learners = std::collections::BTreeSet::new();
    let mut most = 0;
    for change in journal {
        match change {
            MembershipChange::Added { id, is_learner } => {
                if *is_learner {
                    learners.insert(*id);
                }
            }
            MembershipChange::Promoted { id } | MembershipChange::Removed { id, .. } => {
                learners.remove(id);
            }
        }
        most = most.max(learners.len());
    }
    most
}

impl SimulatedEtcd {
    async fn sts_replicas(&self) -> u32 {
        let api: Api<StatefulSet> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let sts = api.get_opt(&self.names.statefulset()).await.ok().flatten();
        sts.as_ref()
            .and_then(replicas)
            .and_then(|r| u32::try_from(r).ok())
            .unwrap_or(0)
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, Vec<Member>> {
        self.members.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, change: MembershipChange) {
        self.journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(change);
    }

    fn journal(&self) -> Vec<MembershipChange> {
        self.journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Membership for SimulatedEtcd {
    async fn list(&self) -> Result<Vec<Member>, MembershipError> {
        let replicas = self.sts_replicas().await;
        let mut members = self.locked();
        if members.is_empty() && replicas > 0 {
            // The bootstrap: the StatefulSet's pods formed the cluster.
            for o in 0..replicas {
                members.push(Member {
                    id: 100 + u64::from(o),
                    name: String::new(),
                    peer_urls: vec![self.names.peer_url(o)],
                    client_urls: vec![],
                    is_learner: false,
                });
            }
        }
        for m in members.iter_mut() {
            let ordinal = m
                .peer_urls
                .iter()
                .find_map(|u| self.names.ordinal_of_peer_url(u));
            if let Some(o) = ordinal.filter(|o| *o < replicas) {
                m.name = self.names.member(o);
                m.client_urls = vec![self.names.member_client_url(o)];
            }
        }
        if members.is_empty() {
            return Err(MembershipError::NoEndpoints);
        }
        Ok(members.clone())
    }

    async fn add_learner(&self, peer_url: &str) -> Result<Member, MembershipError> {
        let id = {
            let mut next = self.next_id.lock().unwrap_or_else(|p| p.into_inner());
            *next += 1;
            *next
        };
        let member = Member {
            id,
            name: String::new(),
            peer_urls: vec![peer_url.to_owned()],
            client_urls: vec![],
            is_learner: true,
        };
        self.locked().push(member.clone());
        self.record(MembershipChange::Added {
            id,
            is_learner: member.is_learner,
        });
        Ok(member)
    }

    async fn promote(&self, id: u64) -> Result<PromoteOutcome, MembershipError> {
        let mut members = self.locked();
        match members.iter_mut().find(|m| m.id == id) {
            Some(m) if m.name.is_empty() => Ok(PromoteOutcome::NotCaughtUp),
            Some(m) => {
                m.is_learner = false;
                self.record(MembershipChange::Promoted { id });
                Ok(PromoteOutcome::Promoted)
            }
            None => Err(MembershipError::Api {
                action: "member promote",
                code: 5,
                message: "member not found".into(),
            }),
        }
    }

    async fn remove(&self, id: u64) -> Result<(), MembershipError> {
        let pods = self.sts_replicas().await;
        let mut members = self.locked();
        let ordinal = members
            .iter()
            .find(|m| m.id == id)
            .and_then(|m| {
                m.peer_urls
                    .iter()
                    .find_map(|u| self.names.ordinal_of_peer_url(u))
            })
            .unwrap_or(u32::MAX);
        members.retain(|m| m.id != id);
        drop(members);
        self.record(MembershipChange::Removed { id, ordinal, pods });
        Ok(())
    }

    async fn defragment(&self, client_url: &str) -> Result<(), MembershipError> {
        self.status(client_url).await.map(|_| ())
    }

    fn set_credentials(&mut self, credentials: RootCredentials) {
        self.credentials = credentials;
    }

    async fn auth_status(&self) -> Result<AuthStatus, MembershipError> {
        let mut auth = self.auth.lock().unwrap_or_else(|p| p.into_inner());
        if !auth.enabled() {
            return Ok(AuthStatus::Disabled);
        }
        let now = std::time::Instant::now();
        self.credentials
            .passwords
            .iter()
            .position(|p| auth.authenticate("root", p.expose(), now).is_ok())
            .map(|password| AuthStatus::Enabled { password })
            .ok_or(MembershipError::AuthFailed {
                tried: self.credentials.passwords.len(),
            })
    }

    async fn enable_auth(&self, password: &Password) -> Result<(), MembershipError> {
        let now = std::time::Instant::now();
        self.on_auth(|auth, token| {
            use provider_etcd::membership::auth::{
                ROLE_ALREADY_EXISTS, USER_ALREADY_EXISTS, already_exists,
            };
            match auth.user_add(token, "root", password.expose(), now) {
                Err(e) if already_exists(&e, USER_ALREADY_EXISTS) => {
                    auth.change_password(token, "root", password.expose(), now)?
                }
                other => other?,
            }
            match auth.role_add(token, "root", now) {
                Err(e) if already_exists(&e, ROLE_ALREADY_EXISTS) => {}
                other => other?,
            }
            auth.grant(token, "root", "root", now)?;
            auth.enable()
        })
    }

    async fn disable_auth(&self) -> Result<(), MembershipError> {
        let now = std::time::Instant::now();
        self.on_auth(|auth, token| auth.disable(token, now))
    }

    async fn change_root_password(&self, password: &Password) -> Result<(), MembershipError> {
        let now = std::time::Instant::now();
        self.on_auth(|auth, token| auth.change_password(token, "root", password.expose(), now))
    }

    async fn status(&self, client_url: &str) -> Result<MemberStatus, MembershipError> {
        let members = self.locked();
        let silent = self
            .silent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let member = members.iter().find(|m| {
            m.client_urls.iter().any(|u| u == client_url)
                && !m.name.is_empty()
                && !silent.contains(&m.name)
        });
        let leader = members
            .iter()
            .find(|m| !m.is_learner)
            .map(|m| m.id)
            .unwrap_or(0);
        member
            .map(|m| MemberStatus {
                member_id: m.id,
                leader,
                version: self
                    .version
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
                raft_index: 1,
                is_learner: m.is_learner,
                errors: vec![],
                db_size: 0,
                db_size_in_use: 0,
            })
            .ok_or(MembershipError::Api {
                action: "status",
                code: 14,
                message: "not started".into(),
            })
    }
}

struct SimulatedFactory(SimulatedEtcd);

impl MembershipFactory for SimulatedFactory {
    type Client = SimulatedEtcd;
    fn for_cluster(
        &self,
        _names: &ClusterNames,
        _tls: Option<&provider_etcd::tls::ClientTls>,
    ) -> Result<SimulatedEtcd, provider_etcd::membership::MembershipError> {
        Ok(self.0.clone())
    }
}

/// A sandbox whose EtcdCluster `etcd-demo` in `default` talks to a [`SimulatedEtcd`] whose
/// members report `version`.
async fn start_simulated(version: &str) -> (TestCluster, SimulatedEtcd) {
    let sim = Arc::new(Mutex::new(None::<SimulatedEtcd>));
    let sim_for_factory = sim.clone();
    let version = version.to_owned();
    let env = start_env(move |kube| {
        let etcd = SimulatedEtcd {
            kube,
            names: ClusterNames::new("etcd-demo", "default"),
            members: Arc::default(),
            next_id: Arc::new(Mutex::new(1000)),
            journal: Arc::default(),
            version: Arc::new(Mutex::new(version)),
            silent: Arc::default(),
            auth: Arc::default(),
            credentials: RootCredentials::default(),
        };
        *sim_for_factory.lock().unwrap_or_else(|p| p.into_inner()) = Some(etcd.clone());
        SimulatedFactory(etcd)
    })
    .await;
    let etcd = sim
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .expect("factory built");
    (env, etcd)
}

// The StatefulSet says 3.5.26 (the spec was changed to it), but the members still run 3.5.17
// (the rollout has not reached them): moving on to 3.6 is judged by what they run, and
// refused with the version to go through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_is_judged_by_the_version_the_members_run() {
    let (env, _etcd) = start_simulated("3.5.17").await;
    let sample = std::fs::read_to_string(samples::path("etcdcluster.yaml")).expect("the sample");
    env.kubectl()
        .apply(&sample.replace("\"3.5.17\"", "\"3.5.26\""))
        .await;
    let sets = env.api::<StatefulSet>();
    eventually("the StatefulSet at 3.5.26")
        .until_async(|| async {
            sets.get_opt("etcd-demo")
                .await
                .ok()
                .flatten()
                .filter(|s| image(s).is_some_and(|i| i.ends_with(":v3.5.26")))
        })
        .await;
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"version":"3.6.0"}}"#,
        ])
        .await;
    let clusters = env.api::<EtcdCluster>();
    let (_, _, message) = eventually("Synced=False naming the intermediate version")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            condition(&c, "Synced").filter(|(s, _, m)| s == "False" && m.contains("3.6.0"))
        })
        .await;
    assert!(
        message.contains("3.5.17")
            && message.contains(
                "upgrade to 3.5.26 or later first, wait for every member to be healthy, then to 3.6"
            ),
        "names what the members run and the path: {message}"
    );
    assert!(
        image(&sets.get("etcd-demo").await.expect("sts")).is_some_and(|i| i.ends_with(":v3.5.26")),
        "nothing rolled to 3.6"
    );
    env.shutdown().await;
}

// The members run 3.5.26, etcd's floor for 3.6, but one does not answer: the move to 3.6 waits
// for it (nothing rolls, the message names it) and starts by itself once it answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_to_3_6_waits_until_every_member_is_healthy() {
    let (env, etcd) = start_simulated("3.5.26").await;
    let sample = std::fs::read_to_string(samples::path("etcdcluster.yaml")).expect("the sample");
    env.kubectl()
        .apply(&sample.replace("\"3.5.17\"", "\"3.5.26\""))
        .await;
    env.kubectl()
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "etcdclusters.etcd.ferroplane.io/etcd-demo",
            "--timeout=40s",
        ])
        .await;
    etcd.silent
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push("etcd-demo-1".to_owned());
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"version":"3.6.0"}}"#,
        ])
        .await;
    let clusters = env.api::<EtcdCluster>();
    let (_, _, message) = eventually("Synced=False: the rollout waits for etcd-demo-1")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            condition(&c, "Synced").filter(|(s, _, m)| {
                s == "False" && m.contains("UpgradeWaitsForMembers") && m.contains("3.6.0")
            })
        })
        .await;
    assert!(
        message.contains("on 3.5.26 or later") && message.contains("etcd-demo-1 does not answer"),
        "{message}"
    );
    let sets = env.api::<StatefulSet>();
    assert!(
        image(&sets.get("etcd-demo").await.expect("sts")).is_some_and(|i| i.ends_with(":v3.5.26")),
        "nothing rolled to 3.6 while a member does not answer"
    );
    etcd.silent
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
    eventually("the rollout to 3.6 once every member answers")
        .until_async(|| async {
            sets.get_opt("etcd-demo")
                .await
                .ok()
                .flatten()
                .filter(|s| image(s).is_some_and(|i| i.ends_with(":v3.6.0")))
        })
        .await;
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_goes_through_the_membership_api_one_member_at_a_time() {
    let (env, etcd) = start_simulated("3.5.17").await;
    env.kubectl()
        .ok(&["apply", "-f", &samples::path("etcdcluster.yaml")])
        .await;
    env.kubectl()
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "etcdclusters.etcd.ferroplane.io/etcd-demo",
            "--timeout=40s",
        ])
        .await;
    let clusters = env.api::<EtcdCluster>();
    let c = clusters.get("etcd-demo").await.expect("cluster");
    assert_eq!(c.status.as_ref().map(|s| s.members.len()), Some(3));
    assert!(c.status.as_ref().and_then(|s| s.leader.clone()).is_some());

    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":5}}"#,
        ])
        .await;
    let sets = env.api::<StatefulSet>();
    eventually("5 voters and 5 pods")
        .until_async(|| {
            let etcd = etcd.clone();
            let sets = sets.clone();
            async move {
                let voters = etcd.locked().iter().filter(|m| !m.is_learner).count();
                let r = sets.get("etcd-demo").await.ok().as_ref().and_then(replicas);
                (voters == 5 && r == Some(5)).then_some(())
            }
        })
        .await;
    let most_learners = most_learners_at_once(&etcd.journal());
    assert!(most_learners <= 1, "one learner at a time");
    assert_eq!(most_learners, 1, "members joined as learners");
    env.kubectl()
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "etcdclusters.etcd.ferroplane.io/etcd-demo",
            "--timeout=40s",
        ])
        .await;

    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":3}}"#,
        ])
        .await;
    eventually("3 members and 3 pods")
        .until_async(|| {
            let etcd = etcd.clone();
            let sets = sets.clone();
            async move {
                let members = etcd.locked().len();
                let r = sets.get("etcd-demo").await.ok().as_ref().and_then(replicas);
                (members == 3 && r == Some(3)).then_some(())
            }
        })
        .await;
    let removals: Vec<(u32, u32)> = etcd
        .journal()
        .iter()
        .filter_map(|c| match c {
            MembershipChange::Removed { ordinal, pods, .. } => Some((*ordinal, *pods)),
            _ => None,
        })
        .collect();
    assert_eq!(
        removals.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
        [4, 3],
        "the highest member first"
    );
    assert!(
        removals.iter().all(|(ordinal, pods)| ordinal < pods),
        "each member went while its pod still ran (pods go only after their members): {removals:?}"
    );
    let names: Vec<String> = etcd.locked().iter().map(|m| m.name.clone()).collect();
    assert_eq!(names, ["etcd-demo-0", "etcd-demo-1", "etcd-demo-2"]);
    eventually("status to list 3 members")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            (c.status?.members.len() == 3).then_some(())
        })
        .await;
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_policy_leaves_the_cluster_running() {
    let env =
        start_env(|_| GatewayFactory::new(&GatewayConfig::default()).expect("http client")).await;
    env.kubectl()
        .apply("apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: keep\n  namespace: default\nspec:\n  size: 1\n")
        .await;
    let configs = env.api::<ConfigMap>();
    eventually("the children, owned by the cluster")
        .until_async(|| async {
            let pdb = env
                .api::<PodDisruptionBudget>()
                .get_opt("keep")
                .await
                .ok()??;
            let cm = configs.get_opt("keep-bootstrap").await.ok()??;
            (!pdb.metadata.owner_references.unwrap_or_default().is_empty()
                && !cm.metadata.owner_references.unwrap_or_default().is_empty())
            .then_some(())
        })
        .await;
    // Switching to Orphan takes the owner reference off every child, the ConfigMap included,
    // also while etcd is unreachable; otherwise the garbage collector would take it.
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "keep",
            "--type=merge",
            "-p",
            r#"{"spec":{"deletionPolicy":"Orphan"}}"#,
        ])
        .await;
    eventually("no child to keep an owner reference")
        .until_async(|| async {
            let sts = env.api::<StatefulSet>().get_opt("keep").await.ok()??;
            let pdb = env
                .api::<PodDisruptionBudget>()
                .get_opt("keep")
                .await
                .ok()??;
            let cm = configs.get_opt("keep-bootstrap").await.ok()??;
            let svc = env.api::<Service>().get_opt("keep-client").await.ok()??;
            [
                sts.metadata.owner_references,
                pdb.metadata.owner_references,
                cm.metadata.owner_references,
                svc.metadata.owner_references,
            ]
            .into_iter()
            .all(|refs| refs.unwrap_or_default().is_empty())
            .then_some(())
        })
        .await;
    // A dependent the garbage collector must take: once it is gone, the collector has dealt
    // with the cluster's deletion, and what it left stays.
    let uid = env
        .api::<EtcdCluster>()
        .get("keep")
        .await
        .expect("cluster")
        .metadata
        .uid
        .expect("uid");
    env.kubectl()
        .apply(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep-sentinel\n  namespace: default\n  ownerReferences:\n  - apiVersion: etcd.ferroplane.io/v1alpha1\n    kind: EtcdCluster\n    name: keep\n    uid: {uid}\n"
        ))
        .await;
    env.kubectl()
        .ok(&[
            "delete",
            "etcdclusters.etcd.ferroplane.io",
            "keep",
            "--wait=true",
            "--timeout=40s",
        ])
        .await;
    eventually("the garbage collector to take the owned sentinel")
        .until_async(|| async {
            configs
                .get_opt("keep-sentinel")
                .await
                .ok()
                .filter(Option::is_none)
        })
        .await;
    let sts = env
        .api::<StatefulSet>()
        .get("keep")
        .await
        .expect("the StatefulSet is left running");
    assert!(sts.metadata.owner_references.unwrap_or_default().is_empty());
    env.api::<Service>()
        .get("keep-client")
        .await
        .expect("the client Service is left");
    env.api::<PodDisruptionBudget>()
        .get("keep")
        .await
        .expect("the PDB is left");
    configs
        .get("keep-bootstrap")
        .await
        .expect("the bootstrap ConfigMap is left, or restarted pods could not start");
    env.shutdown().await;
}

// A ConfigMap someone made under the name of the bootstrap ConfigMap is never taken over: the
// cluster says which object is in the way and renders nothing else until it is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_named_object_made_by_hand_is_not_adopted() {
    let env =
        start_env(|_| GatewayFactory::new(&GatewayConfig::default()).expect("http client")).await;
    env.kubectl()
        .apply("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: etcd-demo-bootstrap\n  namespace: default\ndata:\n  mine: \"yes\"\n")
        .await;
    env.kubectl()
        .ok(&["apply", "-f", &samples::path("etcdcluster.yaml")])
        .await;
    let clusters = env.api::<EtcdCluster>();
    let (_, reason, message) = eventually("Synced=False naming the ConfigMap")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            condition(&c, "Synced").filter(|(s, _, _)| s == "False")
        })
        .await;
    assert!(
        message.contains("ConfigMap/etcd-demo-bootstrap"),
        "{reason}: {message}"
    );
    let cm = env
        .api::<ConfigMap>()
        .get("etcd-demo-bootstrap")
        .await
        .expect("the hand-made ConfigMap");
    assert_eq!(
        cm.data.expect("data"),
        BTreeMap::from([("mine".to_owned(), "yes".to_owned())]),
        "unchanged"
    );
    assert!(cm.metadata.owner_references.is_none());
    assert!(
        env.api::<StatefulSet>()
            .get_opt("etcd-demo")
            .await
            .expect("get")
            .is_none(),
        "nothing else was rendered"
    );

    // Deleting the cluster leaves the ConfigMap it never had.
    env.kubectl()
        .ok(&[
            "delete",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--wait=true",
            "--timeout=40s",
        ])
        .await;
    env.api::<ConfigMap>()
        .get("etcd-demo-bootstrap")
        .await
        .expect("the hand-made ConfigMap is left");
    env.shutdown().await;
}

// The namespaced install: with `--namespace team-a` and only deploy/namespaced/'s Roles there,
// the controller renders team-a's cluster (every watch stays in team-a, or RBAC would refuse it
// and `shutdown` would fail the test) and never sees team-b's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_install_reconciles_its_namespace_only() {
    let mut env = TestCluster::start_with_rbac(
        SandboxConfig {
            workload_delay: Duration::from_millis(100),
            ..SandboxConfig::default()
        },
        Rbac::Namespaced {
            namespace: "team-a".into(),
            providers: vec![Provider::Etcd],
        },
    )
    .await;
    env.install_crds([EtcdCluster::crd()]).await;
    env.kubectl().ok(&["create", "namespace", "team-b"]).await;
    env.spawn_controllers(|runtime, shutdown| {
        let factory = GatewayFactory::new(&GatewayConfig::default()).expect("http client");
        async move {
            provider_etcd::controller_in(&runtime, factory, Some("team-a"))
                .run(shutdown.cancelled_owned())
                .await;
            Ok(())
        }
    });
    let sample = std::fs::read_to_string(samples::path("etcdcluster.yaml")).expect("the sample");
    for namespace in ["team-a", "team-b"] {
        env.kubectl()
            .ok_with_input(
                &["apply", "-n", namespace, "-f", "-"],
                &sample.replace("namespace: default", &format!("namespace: {namespace}")),
            )
            .await;
    }
    let team_a: Api<StatefulSet> = Api::namespaced(env.client(), "team-a");
    eventually("team-a's StatefulSet")
        .until_async(|| async { team_a.get_opt("etcd-demo").await.ok().flatten() })
        .await;
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(env.client(), "team-a");
    eventually("team-a's PDB")
        .until_async(|| async { pdbs.get_opt("etcd-demo").await.ok().flatten() })
        .await;
    let team_b: Api<StatefulSet> = Api::namespaced(env.client(), "team-b");
    assert!(team_b.get_opt("etcd-demo").await.expect("get").is_none());
    let untouched: Api<EtcdCluster> = Api::namespaced(env.client(), "team-b");
    let untouched = untouched.get("etcd-demo").await.expect("team-b's cluster");
    assert!(untouched.metadata.finalizers.is_none());
    env.shutdown().await;
}
