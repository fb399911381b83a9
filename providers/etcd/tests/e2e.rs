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

use ferroplane_apis::etcd::EtcdCluster;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResourceExt;
use kube::api::Api;
use provider_etcd::controller::{GatewayFactory, MembershipFactory};
use provider_etcd::membership::{
    GatewayConfig, Member, MemberStatus, Membership, MembershipError, PromoteOutcome,
};
use provider_etcd::names::{ClusterNames, Topology};

#[path = "../../test-support/in_cluster_env.rs"]
mod in_cluster_env;

use in_cluster_env::{Env, eventually};

const EVENTUALLY_TIMEOUT: Duration = Duration::from_secs(40);

async fn start_env<F: MembershipFactory>(factory: impl FnOnce(kube::Client) -> F) -> Env {
    Env::start(EtcdCluster::crd(), move |runtime, stopped| {
        let client = runtime.client().clone();
        provider_etcd::controller(&runtime, factory(client)).run(stopped)
    })
    .await
}

fn sample() -> String {
    in_cluster_env::sample("etcdcluster.yaml")
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
    env.kubectl(&["apply", "-f", &sample()]);

    let sets = env.api::<StatefulSet>();
    let sts = eventually("the StatefulSet", || async {
        sets.get_opt("etcd-demo").await.ok().flatten()
    })
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
    let pdb = env
        .api::<PodDisruptionBudget>()
        .get("etcd-demo")
        .await
        .expect("PDB");
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

    env.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "--timeout=40s",
    ]);
    let clusters = env.api::<EtcdCluster>();
    let c = clusters.get("etcd-demo").await.expect("cluster");
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
    env.kubectl(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":5}}"#,
    ]);
    eventually("Progressing to say the resize waits", || async {
        let c = clusters.get("etcd-demo").await.ok()?;
        condition(&c, "Progressing").filter(|(s, _, m)| s == "True" && m.contains("waits"))
    })
    .await;
    assert_eq!(
        replicas(&sets.get("etcd-demo").await.expect("sts")),
        Some(3)
    );
    env.kubectl(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":3}}"#,
    ]);

    // Hand edits are reverted.
    env.kubectl(&[
        "patch",
        "statefulset",
        "etcd-demo",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil:1"}]"#,
    ]);
    eventually("the image edit to be reverted", || async {
        sets.get("etcd-demo")
            .await
            .ok()
            .filter(|s| image(s).as_deref() == Some("gcr.io/etcd-development/etcd:v3.5.17"))
    })
    .await;

    // Skipping a minor version is refused; the cluster keeps its version.
    env.kubectl(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        r#"{"spec":{"version":"3.7.0"}}"#,
    ]);
    eventually("Synced=False with UnsupportedUpgrade", || async {
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

    env.kubectl(&[
        "delete",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--wait=true",
        "--timeout=40s",
    ]);
    eventually("the children to go", || async {
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
    env.stop().await;
}

/// An in-memory etcd: a member starts (gets its name, answers status) once the StatefulSet has
/// a pod for its ordinal; a learner is in sync as soon as it has started.
#[derive(Clone)]
struct SimulatedEtcd {
    kube: kube::Client,
    names: ClusterNames,
    members: Arc<Mutex<Vec<Member>>>,
    next_id: Arc<Mutex<u64>>,
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
        Ok(member)
    }

    async fn promote(&self, id: u64) -> Result<PromoteOutcome, MembershipError> {
        let mut members = self.locked();
        match members.iter_mut().find(|m| m.id == id) {
            Some(m) if m.name.is_empty() => Ok(PromoteOutcome::NotCaughtUp),
            Some(m) => {
                m.is_learner = false;
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
        self.locked().retain(|m| m.id != id);
        Ok(())
    }

    async fn status(&self, client_url: &str) -> Result<MemberStatus, MembershipError> {
        let members = self.locked();
        let member = members
            .iter()
            .find(|m| m.client_urls.iter().any(|u| u == client_url) && !m.name.is_empty());
        let leader = members
            .iter()
            .find(|m| !m.is_learner)
            .map(|m| m.id)
            .unwrap_or(0);
        member
            .map(|m| MemberStatus {
                member_id: m.id,
                leader,
                version: "3.5.17".into(),
                raft_index: 1,
                is_learner: m.is_learner,
                errors: vec![],
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
    fn for_cluster(&self, _names: &ClusterNames) -> SimulatedEtcd {
        self.0.clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_goes_through_the_membership_api_one_member_at_a_time() {
    let sim = Arc::new(Mutex::new(None::<SimulatedEtcd>));
    let sim_for_factory = sim.clone();
    let env = start_env(move |kube| {
        let etcd = SimulatedEtcd {
            kube,
            names: ClusterNames::new("etcd-demo", "default"),
            members: Arc::default(),
            next_id: Arc::new(Mutex::new(1000)),
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
    env.kubectl(&["apply", "-f", &sample()]);
    env.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "--timeout=40s",
    ]);
    let clusters = env.api::<EtcdCluster>();
    let c = clusters.get("etcd-demo").await.expect("cluster");
    assert_eq!(c.status.as_ref().map(|s| s.members.len()), Some(3));
    assert!(c.status.as_ref().and_then(|s| s.leader.clone()).is_some());

    env.kubectl(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":5}}"#,
    ]);
    let sets = env.api::<StatefulSet>();
    let mut seen_learners = 0;
    eventually("5 voters and 5 pods", || {
        let etcd = etcd.clone();
        let sets = sets.clone();
        let learners = etcd.locked().iter().filter(|m| m.is_learner).count();
        assert!(learners <= 1, "one learner at a time");
        seen_learners = seen_learners.max(learners);
        async move {
            let voters = etcd.locked().iter().filter(|m| !m.is_learner).count();
            let r = sets.get("etcd-demo").await.ok().as_ref().and_then(replicas);
            (voters == 5 && r == Some(5)).then_some(())
        }
    })
    .await;
    assert_eq!(seen_learners, 1, "members joined as learners");
    env.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "--timeout=40s",
    ]);

    env.kubectl(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":3}}"#,
    ]);
    eventually("3 members and 3 pods", || {
        let etcd = etcd.clone();
        let sets = sets.clone();
        async move {
            let members = etcd.locked().len();
            let r = sets.get("etcd-demo").await.ok().as_ref().and_then(replicas);
            assert!(
                r.is_some_and(|r| r as usize >= members),
                "pods go only after their members"
            );
            (members == 3 && r == Some(3)).then_some(())
        }
    })
    .await;
    let names: Vec<String> = etcd.locked().iter().map(|m| m.name.clone()).collect();
    assert_eq!(names, ["etcd-demo-0", "etcd-demo-1", "etcd-demo-2"]);
    eventually("status to list 3 members", || async {
        let c = clusters.get("etcd-demo").await.ok()?;
        (c.status?.members.len() == 3).then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_policy_leaves_the_cluster_running() {
    let env =
        start_env(|_| GatewayFactory::new(&GatewayConfig::default()).expect("http client")).await;
    let manifest = env.dir.path().join("orphan.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: keep\n  namespace: default\nspec:\n  size: 1\n  deletionPolicy: Orphan\n",
    )
    .expect("write manifest");
    env.kubectl(&["apply", "-f", &manifest.to_string_lossy()]);
    env.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "etcdclusters.etcd.ferroplane.io/keep",
        "--timeout=40s",
    ]);
    env.kubectl(&[
        "delete",
        "etcdclusters.etcd.ferroplane.io",
        "keep",
        "--wait=true",
        "--timeout=40s",
    ]);
    tokio::time::sleep(Duration::from_millis(500)).await;
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
    env.stop().await;
}
