//! The EtcdCluster controller against the sandbox with the sandbox's simulated membership
//! (`ferroplane_sandbox_etcd`), as `ferroplane sandbox` runs it: the members follow the
//! StatefulSet's ready ordinals and their data claims. Assertions read the simulation's journal
//! (what happened, in order), never samples of the member list.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::etcd::{EtcdCluster, MemberRole};
use ferroplane_sandbox_etcd::{DataDir, Event, SimulatedFactory};
use ferroplane_testkit::wait::Wait;
use ferroplane_testkit::{self as testkit, SandboxConfig, TestCluster, samples};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use provider_etcd::names::ClusterNames;

fn eventually(what: &str) -> Wait {
    testkit::eventually(what)
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(100))
}

async fn start() -> (TestCluster, SimulatedFactory) {
    start_with_crd(EtcdCluster::crd()).await
}

/// The EtcdCluster CRD without the admission rules of `spec.options`, as an API server holds it
/// for objects stored before the rules existed: what gets past it is the reconcile's to refuse.
fn crd_without_option_rules() -> CustomResourceDefinition {
    let mut crd = EtcdCluster::crd();
    let options = crd.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|s| s.open_api_v3_schema.as_mut())
        .and_then(|s| s.properties.as_mut()?.get_mut("spec")?.properties.as_mut())
        .and_then(|p| p.get_mut("options"))
        .expect("spec.options in the schema");
    options.x_kubernetes_validations = None;
    crd
}

async fn start_with_crd(crd: CustomResourceDefinition) -> (TestCluster, SimulatedFactory) {
    let mut env = TestCluster::start_with(SandboxConfig {
        workload_delay: Duration::from_millis(100),
        ..SandboxConfig::default()
    })
    .await;
    env.install_crds([crd]).await;
    let built = Arc::new(Mutex::new(None));
    let keep = built.clone();
    env.spawn_controllers(move |runtime, shutdown| {
        let factory = SimulatedFactory::new(runtime.client().clone());
        *keep.lock().unwrap_or_else(|p| p.into_inner()) = Some(factory.clone());
        async move {
            provider_etcd::controller(&runtime, factory)
                .run(shutdown.cancelled_owned())
                .await;
            Ok(())
        }
    });
    let factory = built
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .expect("the controller was built");
    (env, factory)
}

/// Waits until the cluster is Ready for its current generation with `size` healthy voters.
async fn ready_with(env: &TestCluster, size: usize) {
    let clusters = env.api::<EtcdCluster>();
    eventually(&format!("Ready with {size} healthy voters"))
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            let status = c.status.as_ref()?;
            let ready = status
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == ConditionStatus::True);
            let voters = status
                .members
                .iter()
                .filter(|m| m.role == MemberRole::Voter && m.healthy)
                .count();
            (ready
                && voters == size
                && status.members.len() == size
                && status.observed_generation == c.metadata.generation)
                .then_some(())
        })
        .await;
}

async fn resize(env: &TestCluster, size: u32) {
    env.kubectl()
        .ok(&[
            "patch",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--type=merge",
            "-p",
            &format!(r#"{{"spec":{{"size":{size}}}}}"#),
        ])
        .await;
}

fn claim_uid(data: &DataDir) -> Option<&str> {
    match data {
        DataDir::Claim { uid, .. } => Some(uid),
        DataDir::Ephemeral { .. } => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_to_one_to_three_rejoins_on_new_claims_one_learner_at_a_time() {
    let (env, factory) = start().await;
    let names = ClusterNames::new("etcd-demo", "default");
    env.kubectl()
        .ok(&["apply", "-f", &samples::path("etcdcluster.yaml")])
        .await;
    ready_with(&env, 3).await;
    resize(&env, 1).await;
    ready_with(&env, 1).await;
    resize(&env, 3).await;
    ready_with(&env, 3).await;

    let journal = factory.journal(&names);
    let bootstrap: Vec<&Event> = journal
        .iter()
        .filter(|e| matches!(e, Event::Bootstrapped { .. }))
        .collect();
    assert!(
        matches!(bootstrap.as_slice(), [Event::Bootstrapped { members }] if members.len() == 3),
        "the cluster formed once, of three members: {journal:#?}"
    );
    let removed: Vec<Option<u32>> = journal
        .iter()
        .filter_map(|e| match e {
            Event::Removed { ordinal, .. } => Some(*ordinal),
            _ => None,
        })
        .collect();
    assert_eq!(removed, [Some(2), Some(1)], "the highest member first");
    let added: Vec<&str> = journal
        .iter()
        .filter_map(|e| match e {
            Event::Added {
                peer_url,
                is_learner: true,
                ..
            } => Some(peer_url.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(added, [names.peer_url(1), names.peer_url(2)]);
    // One learner at a time: every learner is promoted before the next is added.
    let mut learners = 0_i32;
    for event in &journal {
        match event {
            Event::Added { .. } => learners += 1,
            Event::Promoted { .. } => learners -= 1,
            _ => {}
        }
        assert!(learners <= 1, "two learners at once: {journal:#?}");
    }
    assert_eq!(learners, 0, "every learner was promoted");
    // A removed member's etcd exits ("permanently removed") until its pod goes; no pod of a
    // member added back ever mounts that data.
    for (at, event) in journal.iter().enumerate() {
        if let Event::Refused {
            ordinal, reason, ..
        } = event
        {
            assert!(reason.contains("permanently removed"), "{reason}");
            let added_back = journal.iter().position(|e| {
                matches!(e, Event::Added { peer_url, .. } if *peer_url == names.peer_url(*ordinal))
            });
            assert!(
                added_back.is_some_and(|added| at < added),
                "ordinal {ordinal} refused to start after its member was added back: {journal:#?}"
            );
        }
    }
    for ordinal in [1, 2] {
        let starts: Vec<(&DataDir, bool)> = journal
            .iter()
            .filter_map(|e| match e {
                Event::Started {
                    ordinal: o,
                    data,
                    fresh,
                    ..
                } if *o == ordinal => Some((data, *fresh)),
                _ => None,
            })
            .collect();
        assert_eq!(
            starts.len(),
            2,
            "ordinal {ordinal} started twice: {journal:#?}"
        );
        assert!(starts.iter().all(|(_, fresh)| *fresh), "on empty data dirs");
        assert_ne!(
            claim_uid(starts[0].0),
            claim_uid(starts[1].0),
            "ordinal {ordinal} came back on a new claim"
        );
    }
    env.shutdown().await;
}

// The StatefulSet keeps its claims when deleted (`whenDeleted: Retain`): the same cluster
// created again finds its members' data and they come back as the same members, as etcd
// restarts from a data dir whatever its configuration file says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_again_on_retained_claims_the_old_members_come_back() {
    let (env, factory) = start().await;
    let names = ClusterNames::new("etcd-demo", "default");
    let sample = samples::path("etcdcluster.yaml");
    env.kubectl().ok(&["apply", "-f", &sample]).await;
    ready_with(&env, 3).await;
    env.kubectl()
        .ok(&[
            "delete",
            "etcdclusters.etcd.ferroplane.io",
            "etcd-demo",
            "--timeout=60s",
        ])
        .await;
    let sets = env.api::<k8s_openapi::api::apps::v1::StatefulSet>();
    eventually("the StatefulSet to go")
        .until_async(|| async {
            sets.get_opt("etcd-demo")
                .await
                .ok()
                .and_then(|s| s.is_none().then_some(()))
        })
        .await;
    env.kubectl().ok(&["apply", "-f", &sample]).await;
    ready_with(&env, 3).await;

    let journal = factory.journal(&names);
    let starts: Vec<(u32, u64, bool)> = journal
        .iter()
        .filter_map(|e| match e {
            Event::Started {
                ordinal, id, fresh, ..
            } => Some((*ordinal, *id, *fresh)),
            _ => None,
        })
        .collect();
    assert_eq!(starts.len(), 6, "each ordinal started twice: {journal:#?}");
    for ordinal in 0..3 {
        let of: Vec<&(u32, u64, bool)> = starts.iter().filter(|s| s.0 == ordinal).collect();
        assert!(
            of[0].2 && !of[1].2,
            "first on empty data, then on its claim"
        );
        assert_eq!(
            of[0].1, of[1].1,
            "ordinal {ordinal} came back as the same member"
        );
    }
    assert_eq!(
        journal
            .iter()
            .filter(|e| matches!(e, Event::Bootstrapped { .. }))
            .count(),
        1,
        "no second cluster formed"
    );
    env.shutdown().await;
}

/// With `spec.auth`, the controller enables authentication on the simulated cluster, and its
/// membership changes (which etcd refuses without a token of root's) still go through: 3 → 1 →
/// 3. A new password in the Secret becomes root's and the old one stops working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auth_the_membership_still_changes_and_the_password_follows_the_secret() {
    use provider_etcd::membership::auth::{AUTH_FAILED, ROOT};
    let (env, factory) = start().await;
    let names = ClusterNames::new("etcd-demo", "default");
    let secret = |password: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: etcd-root\nstringData:\n  password: {password}\n"
        )
    };
    env.kubectl().apply(&secret("first-pw")).await;
    env.kubectl()
        .apply(
            "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: etcd-demo\n  annotations:\n    ferroplane.io/poll-interval: 1s\nspec:\n  size: 3\n  auth:\n    rootSecretRef:\n      name: etcd-root\n",
        )
        .await;
    ready_with(&env, 3).await;
    let clusters = env.api::<EtcdCluster>();
    eventually("status.auth Enabled")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            (c.status?.auth == Some(ferroplane_apis::etcd::EtcdAuthState::Enabled)).then_some(())
        })
        .await;
    assert!(factory.auth_enabled(&names));
    resize(&env, 1).await;
    ready_with(&env, 1).await;
    resize(&env, 3).await;
    ready_with(&env, 3).await;
    let removed = factory
        .journal(&names)
        .iter()
        .filter(|e| matches!(e, Event::Removed { .. }))
        .count();
    assert_eq!(removed, 2, "both removals went through with auth on");

    env.kubectl().apply(&secret("second-pw")).await;
    eventually("root's password to be the Secret's new one")
        .until_async(|| async { factory.authenticate(&names, ROOT, "second-pw").ok() })
        .await;
    let old = factory.authenticate(&names, ROOT, "first-pw");
    assert!(
        matches!(&old, Err(provider_etcd::membership::MembershipError::Api { message, .. }) if message == AUTH_FAILED),
        "{old:?}"
    );
}

/// An option value etcd's configuration file cannot hold (`quota-backend-bytes: "lots"`, which
/// real etcd refuses to start on) is refused before anything rolls: `Synced=False` with
/// `InvalidEtcdOption` naming the option, the value given and what etcd accepts, while the
/// configuration files and the StatefulSet stay as they were, no member restarts and the cluster
/// stays Ready. Admission refuses the value too (the integration suite checks it); the CRD here
/// lacks that rule, as for an object stored before it existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_option_value_etcd_cannot_read_is_refused_and_nothing_rolls() {
    use k8s_openapi::api::apps::v1::StatefulSet;
    use k8s_openapi::api::core::v1::ConfigMap;
    let (env, factory) = start_with_crd(crd_without_option_rules()).await;
    let names = ClusterNames::new("etcd-demo", "default");
    env.kubectl()
        .ok(&["apply", "-f", &samples::path("etcdcluster.yaml")])
        .await;
    ready_with(&env, 3).await;
    let sets = env.api::<StatefulSet>();
    let configs = env.api::<ConfigMap>();
    let sts_before = sets.get("etcd-demo").await.expect("the StatefulSet");
    // The entries options set in each member's file (the bootstrap entries around them settle
    // on their own once the cluster has formed).
    let option_entries = |config: ConfigMap| -> Vec<(String, serde_json::Value)> {
        let mut entries = Vec::new();
        for (file, text) in config.data.unwrap_or_default() {
            let parsed: serde_json::Value = serde_json::from_str(&text).expect("a JSON file");
            for key in [
                "quota-backend-bytes",
                "auto-compaction-mode",
                "auto-compaction-retention",
            ] {
                entries.push((format!("{file} {key}"), parsed[key].clone()));
            }
        }
        entries
    };
    let files_before = option_entries(
        configs
            .get(&names.bootstrap_config())
            .await
            .expect("the configuration files"),
    );
    assert_eq!(files_before.len(), 9, "three files: {files_before:?}");
    let starts = |journal: &[Event]| {
        journal
            .iter()
            .filter(|e| matches!(e, Event::Started { .. }))
            .count()
    };
    let started_before = starts(&factory.journal(&names));

    let clusters = env.api::<EtcdCluster>();
    let mut bad = clusters.get("etcd-demo").await.expect("the cluster");
    bad.spec.options.insert(
        "quota-backend-bytes".to_owned(),
        serde_json::Value::String("lots".to_owned()),
    );
    bad.metadata.managed_fields = None;
    clusters
        .replace("etcd-demo", &Default::default(), &bad)
        .await
        .expect("stored: this CRD has no rule for option values");
    let message = eventually("Synced=False with InvalidEtcdOption")
        .until_async(|| async {
            let c = clusters.get("etcd-demo").await.ok()?;
            let synced = c
                .status?
                .conditions
                .into_iter()
                .find(|c| c.type_ == "Synced")?;
            // The runtime's Synced reason is ReconcileError; the provider's reason leads the
            // message (and is the Warning event's reason).
            (synced.status == ConditionStatus::False
                && synced.message.starts_with("InvalidEtcdOption:"))
            .then_some(synced.message)
        })
        .await;
    for needle in ["quota-backend-bytes", "\"lots\"", "whole number"] {
        assert!(message.contains(needle), "{needle} in {message}");
    }
    let sts_after = sets.get("etcd-demo").await.expect("the StatefulSet");
    assert_eq!(
        sts_after.spec, sts_before.spec,
        "the StatefulSet did not roll"
    );
    let files_after = configs
        .get(&names.bootstrap_config())
        .await
        .expect("the configuration files");
    assert!(
        !format!("{:?}", files_after.data).contains("lots"),
        "no file got the value"
    );
    assert_eq!(
        option_entries(files_after),
        files_before,
        "the files keep the options the members run with"
    );
    let c = clusters.get("etcd-demo").await.expect("the cluster");
    let ready = c
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"))
        .map(|c| c.status);
    assert_eq!(ready, Some(ConditionStatus::True), "still Ready: {c:?}");
    assert_eq!(
        starts(&factory.journal(&names)),
        started_before,
        "no member restarted"
    );
    env.shutdown().await;
}
