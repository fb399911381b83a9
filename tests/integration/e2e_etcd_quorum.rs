//! EtcdCluster's quorum-loss detection on the sandbox, with `spec.recovery.policy: Manual`: two
//! of three members lose their data volumes (the claims deleted, so their members cannot run),
//! and the cluster says so and waits for the annotation, touching nothing. Sandbox only:
//! the volumes are destroyed by taking the pvc-protection finalizer off claims that the sandbox's
//! StatefulSet (which runs no pods) always counts as in use.

use std::time::Duration;

use crate::support::E2e;
use ferroplane::controllers::Kind;

const WAIT: Duration = Duration::from_secs(90);
const OBJECT: &str = "etcdclusters.etcd.ferroplane.io/etcd-lost";

const CLUSTER: &str = r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdCluster
metadata:
  name: etcd-lost
spec:
  size: 3
  storage:
    size: 1Gi
  recovery:
    gracePeriodSeconds: 10
"#;

fn ready(what: &str) -> String {
    format!("{{.status.conditions[?(@.type=='Ready')].{what}}}")
}

/// Deletes a claim for good: its data is gone, whatever still mounts it.
async fn destroy_claim(e2e: &E2e, name: &str) {
    e2e.k(&["delete", "pvc", name, "--wait=false"]).await;
    e2e.k(&[
        "patch",
        "pvc",
        name,
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await;
}

/// `name=uid` of a claim, empty while it does not exist.
async fn claim_uid(e2e: &E2e, name: &str) -> String {
    e2e.k(&[
        "get",
        "pvc",
        "--ignore-not-found",
        name,
        "-o",
        "jsonpath={.metadata.uid}",
    ])
    .await
}

pub(crate) async fn a_lost_quorum_is_reported_and_manual_recovery_waits() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(CLUSTER).await;
    e2e.wait_jsonpath(OBJECT, &ready("status"), "True").await;
    // The controller records the volume each healthy voter runs on.
    e2e.eventually("three recorded member volumes", WAIT, || async {
        let recorded = e2e
            .jsonpath(OBJECT, "{range .status.memberVolumes.*}{@}{\"\\n\"}{end}")
            .await;
        (recorded.lines().filter(|l| !l.is_empty()).count() == 3).then_some(())
    })
    .await;
    let survivor = claim_uid(&e2e, "data-etcd-lost-0").await;
    assert!(!survivor.is_empty(), "ordinal 0 has a claim");
    let generation = e2e
        .jsonpath("statefulset/etcd-lost", "{.metadata.generation}")
        .await;

    for ordinal in [1, 2] {
        let name = format!("data-etcd-lost-{ordinal}");
        let before = claim_uid(&e2e, &name).await;
        destroy_claim(&e2e, &name).await;
        // Gone (its pod then stays Pending, as on a real cluster whose volume is lost).
        e2e.eventually(&format!("claim {name} to go"), WAIT, || async {
            (claim_uid(&e2e, &name).await != before).then_some(())
        })
        .await;
    }

    // First within the grace period, then permanent: both say who and since when.
    e2e.wait_jsonpath(OBJECT, &ready("reason"), "QuorumLost")
        .await;
    let members = e2e
        .jsonpath(OBJECT, "{.status.quorumLoss.members[*]}")
        .await;
    assert_eq!(members, "etcd-lost-1 etcd-lost-2");
    let since = e2e.jsonpath(OBJECT, "{.status.quorumLoss.since}").await;
    assert!(
        since.parse::<jiff::Timestamp>().is_ok(),
        "since is a time: {since:?}"
    );
    e2e.eventually("the loss to be permanent", WAIT, || async {
        let message = e2e.jsonpath(OBJECT, &ready("message")).await;
        message
            .contains("permanent. spec.recovery.policy is Manual")
            .then_some(message)
    })
    .await;
    let message = e2e.jsonpath(OBJECT, &ready("message")).await;
    assert!(
        message.contains("etcd-lost-1, etcd-lost-2")
            && message.contains(&format!("since {since}"))
            && message.contains("etcd.ferroplane.io/recover-from="),
        "the message names the members, the time and the trigger: {message}"
    );
    assert_eq!(
        e2e.jsonpath(OBJECT, "{.status.quorumLoss.since}").await,
        since,
        "the loss keeps the time it was first seen"
    );
    e2e.eventually("a QuorumLost Warning event", WAIT, || async {
        let events = e2e
            .k(&[
                "get",
                "events",
                "--field-selector",
                "involvedObject.name=etcd-lost",
                "-o",
                "jsonpath={range .items[*]}{.reason}={.type}{\"\\n\"}{end}",
            ])
            .await;
        events
            .lines()
            .any(|l| l == "QuorumLost=Warning")
            .then_some(())
    })
    .await;
    // Manual: nothing was restored over the survivor, nothing changed.
    assert_eq!(claim_uid(&e2e, "data-etcd-lost-0").await, survivor);
    assert_eq!(
        e2e.jsonpath("statefulset/etcd-lost", "{.metadata.generation}")
            .await,
        generation
    );
    e2e.finish().await;
}
