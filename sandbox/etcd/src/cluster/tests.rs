//! Tests of etcd's rules as the simulated cluster follows them.

use super::*;
use crate::world::StartConfig;

/// The second the tests' membership calls are asked in.
const SECOND: i64 = 1_800_000_000;

fn names() -> ClusterNames {
    ClusterNames::new("e", "ns")
}

fn pod(ordinal: u32, uid: &str, state: InitialState, peers: u32) -> ReadyPod {
    let names = names();
    ReadyPod {
        ordinal,
        data: DataDir::Claim {
            name: names.data_volume(ordinal),
            uid: uid.to_owned(),
        },
        config: StartConfig {
            name: names.member(ordinal),
            state,
            token: "t".into(),
            initial_cluster: (0..peers).map(|o| names.peer_url(o)).collect(),
        },
    }
}

fn world(pods: Vec<ReadyPod>) -> World {
    World {
        pods,
        template_version: Some("3.5.17".into()),
        rolled_out: true,
    }
}

fn three() -> (SimulatedCluster, Vec<ReadyPod>) {
    let mut cluster = SimulatedCluster::new(names());
    let pods: Vec<ReadyPod> = ["a", "b", "c"]
        .iter()
        .zip(0..)
        .map(|(uid, o)| pod(o, uid, InitialState::New, 3))
        .collect();
    cluster.sync(&world(pods.clone()));
    (cluster, pods)
}

fn id_of(cluster: &SimulatedCluster, ordinal: u32) -> u64 {
    let url = names().peer_url(ordinal);
    cluster
        .list()
        .expect("list")
        .iter()
        .find(|m| m.peer_urls.contains(&url))
        .expect("member")
        .id
}

fn code(result: Result<impl std::fmt::Debug, MembershipError>) -> (i32, String) {
    match result {
        Err(MembershipError::Api { code, message, .. }) => (code, message),
        other => panic!("expected an etcd error, got {other:?}"),
    }
}

#[test]
fn pods_of_a_new_cluster_form_it_and_report_the_image_version() {
    let (cluster, _) = three();
    let members = cluster.list().expect("list");
    assert_eq!(members.len(), 3);
    assert!(members.iter().all(|m| m.started() && !m.is_learner));
    let status = cluster
        .status(&names().member_client_url(1))
        .expect("member 1 answers");
    assert_eq!(status.version, "3.5.17");
    assert_eq!(Some(status.leader), cluster.leader());
    assert!(
        matches!(cluster.journal()[0], Event::Bootstrapped { ref members } if members.len() == 3)
    );
}

#[test]
fn a_kept_claim_of_a_removed_member_refuses_to_start_and_a_new_claim_joins() {
    let (mut cluster, pods) = three();
    let removed = id_of(&cluster, 2);
    cluster.remove(removed).expect("quorum holds without it");
    cluster.sync(&world(pods[..2].to_vec()));
    let learner = cluster
        .add_learner(&names().peer_url(2), SECOND)
        .expect("a learner is added");
    assert!(learner.is_learner && !learner.started());

    // The StatefulSet kept `data-e-2` (uid c): etcd exits on the removed member's data.
    cluster.sync(&world(pods.clone()));
    assert!(cluster.journal().iter().any(|e| matches!(e,
        Event::Refused { ordinal: 2, reason, data: DataDir::Claim { uid, .. } }
            if uid == "c" && reason == PERMANENTLY_REMOVED)));
    let (code, message) = code(cluster.promote(learner.id));
    assert_eq!(code, grpc::FAILED_PRECONDITION);
    assert!(message.contains("in sync"), "{message}");

    // A new claim is an empty data dir: the pod joins as the learner and is promoted.
    let mut fresh = pods[..2].to_vec();
    fresh.push(pod(2, "c2", InitialState::Existing, 3));
    cluster.sync(&world(fresh));
    assert_eq!(
        cluster.promote(learner.id).expect("promotes"),
        PromoteOutcome::Promoted
    );
    assert!(cluster.journal().iter().any(|e| matches!(e,
        Event::Started { ordinal: 2, id, fresh: true, .. } if *id == learner.id)));
    let members = cluster.list().expect("list");
    assert_eq!(members.iter().filter(|m| !m.is_learner).count(), 3);
}

#[test]
fn a_started_member_on_an_empty_claim_rejoins_without_data_unless_its_file_is_sealed() {
    let (mut cluster, pods) = three();
    let id = id_of(&cluster, 2);
    // Its volume is lost: a new claim (empty), and a file that names its peers.
    let mut lost = pods[..2].to_vec();
    lost.push(pod(2, "c2", InitialState::Existing, 3));
    cluster.sync(&world(pods[..2].to_vec()));
    cluster.sync(&world(lost));
    assert!(
        cluster.journal().iter().any(|e| matches!(e,
            Event::RejoinedWithoutData { ordinal: 2, id: rejoined } if *rejoined == id)),
        "{:?}",
        cluster.journal()
    );

    // The same with the file a started member gets (no peer but itself): etcd exits.
    let (mut cluster, pods) = three();
    let mut sealed = pod(2, "c2", InitialState::Existing, 0);
    sealed.config.initial_cluster = vec![names().peer_url(2)];
    let mut lost = pods[..2].to_vec();
    lost.push(sealed);
    cluster.sync(&world(pods[..2].to_vec()));
    cluster.sync(&world(lost));
    let journal = cluster.journal();
    assert!(
        !journal
            .iter()
            .any(|e| matches!(e, Event::RejoinedWithoutData { .. })),
        "{journal:?}"
    );
    assert!(
        journal.iter().any(|e| matches!(e,
            Event::Refused { ordinal: 2, reason, .. } if reason.contains("could not retrieve cluster information"))),
        "{journal:?}"
    );
}

#[test]
fn membership_changes_need_a_quorum_of_running_voters() {
    let (mut cluster, pods) = three();
    cluster.sync(&world(pods[..1].to_vec()));
    assert_eq!(cluster.leader(), None);
    assert_eq!(
        code(cluster.add_learner("http://x:2380", SECOND)).0,
        grpc::UNAVAILABLE
    );
    cluster.sync(&world(pods[..2].to_vec()));
    // Two of three run: removing a running voter would leave one of two.
    let (code_remove, message) = code(cluster.remove(id_of(&cluster, 1)));
    assert_eq!(code_remove, grpc::FAILED_PRECONDITION);
    assert!(message.contains("not enough started members"), "{message}");
    // Removing the stopped one leaves two of two.
    cluster
        .remove(id_of(&cluster, 2))
        .expect("removes the stopped member");
}

#[test]
fn one_learner_at_a_time_and_peer_urls_are_unique() {
    let (mut cluster, _) = three();
    cluster
        .add_learner(&names().peer_url(3), SECOND)
        .expect("first learner");
    let (c, m) = code(cluster.add_learner(&names().peer_url(3), SECOND));
    assert_eq!(
        (c, m.as_str()),
        (
            grpc::FAILED_PRECONDITION,
            "etcdserver: member ID already exist"
        ),
        "the same peer URL in the same second is the same ID"
    );
    let (c, m) = code(cluster.add_learner(&names().peer_url(3), SECOND + 1));
    assert_eq!(
        (c, m.as_str()),
        (
            grpc::FAILED_PRECONDITION,
            "etcdserver: Peer URLs already exists"
        )
    );
    let (c, m) = code(cluster.add_learner(&names().peer_url(4), SECOND));
    assert_eq!(c, grpc::FAILED_PRECONDITION);
    assert!(m.contains("too many learner members"), "{m}");
    assert_eq!(
        code(cluster.promote(id_of(&cluster, 0))).1,
        "etcdserver: can only promote a learner member"
    );
    assert_eq!(code(cluster.remove(42)).0, grpc::NOT_FOUND);
}

#[test]
fn a_peer_url_added_again_in_the_second_its_removed_member_was_added_is_refused() {
    let (mut cluster, _) = three();
    let peer = names().peer_url(3);
    let learner = cluster.add_learner(&peer, SECOND).expect("added");
    cluster.remove(learner.id).expect("removed");
    assert_eq!(
        code(cluster.add_learner(&peer, SECOND)),
        (grpc::NOT_FOUND, "etcdserver: member not found".to_owned()),
        "the ID of this second is the removed member's"
    );
    let again = cluster
        .add_learner(&peer, SECOND + 1)
        .expect("the next second gives another ID");
    assert_ne!(again.id, learner.id);
}

#[test]
fn a_cluster_created_again_under_the_same_name_forms_anew_on_new_claims() {
    let (mut cluster, pods) = three();
    let old = id_of(&cluster, 0);
    cluster.sync(&world(vec![]));
    let mut again: Vec<ReadyPod> = ["x", "y", "z"]
        .iter()
        .zip(0..)
        .map(|(uid, o)| pod(o, uid, InitialState::New, 3))
        .collect();
    for pod in &mut again {
        pod.config.token = "t2".into();
    }
    cluster.sync(&world(again));
    let members = cluster.list().expect("list");
    assert_eq!(members.iter().filter(|m| m.started()).count(), 3);
    assert!(members.iter().all(|m| m.id != old));
    // A pod on an old claim holds a member of the old cluster.
    let mut stale = pods[0].clone();
    stale.ordinal = 3;
    cluster.sync(&world(vec![stale]));
    assert!(matches!(cluster.journal().last(),
        Some(Event::Refused { ordinal: 3, reason, .. }) if reason.contains("another cluster")));
}

#[test]
fn members_report_the_new_version_once_the_rollout_completes() {
    let (mut cluster, pods) = three();
    let mut rolling = world(pods.clone());
    rolling.template_version = Some("3.5.24".into());
    rolling.rolled_out = false;
    cluster.sync(&rolling);
    let url = names().member_client_url(0);
    assert_eq!(cluster.status(&url).expect("status").version, "3.5.17");
    rolling.rolled_out = true;
    cluster.sync(&rolling);
    assert_eq!(cluster.status(&url).expect("status").version, "3.5.24");
}

#[test]
fn a_pod_that_goes_stops_its_member_which_keeps_its_name() {
    let (mut cluster, pods) = three();
    cluster.sync(&world(pods[..2].to_vec()));
    assert!(cluster.status(&names().member_client_url(2)).is_err());
    assert!(cluster.list().expect("list").iter().all(Member::started));
    assert!(matches!(
        cluster.journal().last(),
        Some(Event::Stopped { ordinal: 2, .. })
    ));
    cluster.sync(&world(vec![]));
    assert!(cluster.list().is_err_and(|e| e.is_unreachable()));
}
