//! EtcdCluster's quorum-loss detection on the sandbox, with `spec.recovery.policy: Manual`: two
//! of three members lose their data volumes (the claims deleted, so their members cannot run),
//! and the cluster says so and waits for the annotation, touching nothing; one member losing its
//! volume is replaced by a new member. Sandbox only: the volumes are destroyed by taking the
//! pvc-protection finalizer off claims that the members' running pods hold (the real-etcd tests
//! delete claim and pod together instead).

use std::time::Duration;

use crate::support::E2e;
use ferroplane::controllers::Kind;

const WAIT: Duration = Duration::from_secs(90);
const OBJECT: &str = "etcdclusters.etcd.ferroplane.io/etcd-lost";
/// `kubectl get pods,pvc` columns that show where a pod stands with its claim.
const COLUMNS: &str = "custom-columns=NAME:.metadata.name,UID:.metadata.uid,\
    DELETED:.metadata.deletionTimestamp,NODE:.spec.nodeName,PHASE:.status.phase,\
    CLAIM:.spec.volumes[?(@.name=='data')].persistentVolumeClaim.claimName";

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

/// Destroys the claims of `ordinals` of `cluster` together, as one incident: reconciliation is
/// paused meanwhile (the runtime's `ferroplane.io/paused`, acknowledged in `Synced`), so the
/// controller cannot replace the first lost member while quorum still holds before the second
/// goes. A claim gone stops the simulated member of the pod still placed on it (its volume is
/// gone); the pod keeps its place until the controller deletes it.
async fn lose_together(e2e: &E2e, cluster: &str, ordinals: &[u32]) {
    let object = format!("etcdclusters.etcd.ferroplane.io/{cluster}");
    e2e.k(&["annotate", &object, "ferroplane.io/paused=true"])
        .await;
    e2e.wait_jsonpath(
        &object,
        "{.status.conditions[?(@.type=='Synced')].reason}",
        "ReconcilePaused",
    )
    .await;
    for ordinal in ordinals {
        let name = format!("data-{cluster}-{ordinal}");
        let before = claim_uid(e2e, &name).await;
        destroy_claim(e2e, &name).await;
        e2e.eventually(&format!("claim {name} to go"), WAIT, || async {
            (claim_uid(e2e, &name).await != before).then_some(())
        })
        .await;
    }
    e2e.k(&["annotate", &object, "ferroplane.io/paused-"]).await;
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

    lose_together(&e2e, "etcd-lost", &[1, 2]).await;

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

const RECOVERED: &str = "etcdclusters.etcd.ferroplane.io/etcd-rec";

/// `name` with policy FromLatestBackup, and a paused EtcdBackup of it into a claim whose status
/// (written by the test) lists two snapshots.
fn recovering_cluster() -> &'static str {
    r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdCluster
metadata:
  name: etcd-rec
spec:
  size: 3
  storage:
    size: 1Gi
  recovery:
    policy: FromLatestBackup
    gracePeriodSeconds: 10
---
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdBackup
metadata:
  name: nightly
  annotations:
    ferroplane.io/paused: "true"
spec:
  clusterRef:
    name: etcd-rec
  destination:
    pvc:
      claimName: backups
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: backups
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
"#
}

const OLDER: &str = "etcd/ns/nightly/u/20261129T010000.000Z.db";
const NEWER: &str = "etcd/ns/nightly/u/20261129T020000.000Z.db";
const NEWER_AT: &str = "2026-11-29T02:00:00Z";

async fn annotation_of(e2e: &E2e, what: &str, key: &str) -> String {
    let path = format!("{{.metadata.annotations.{}}}", key.replace('.', "\\."));
    e2e.jsonpath(what, &path).await
}

// FromLatestBackup, the controller's side (the sandbox runs no Jobs: the test writes their
// status, as `e2e_etcd_restore` does): the lost cluster's StatefulSet and every claim go, the
// survivor's too; a claim and a restore Job per member from the newest snapshot, with the
// revision bumped; the StatefulSet back on the restored claims under the same Services; the
// status and events state the window of writes lost.
pub(crate) async fn from_latest_backup_replaces_every_members_data_and_states_the_window() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(recovering_cluster()).await;
    let snapshots = serde_json::json!({"status": {"snapshots": [
        {"key": OLDER, "size": 1024, "sha256": "aa", "revision": 5, "takenAt": "2026-11-29T01:00:00Z"},
        {"key": NEWER, "size": 2048, "sha256": "bb", "revision": 9, "takenAt": NEWER_AT},
    ]}});
    e2e.k(&[
        "patch",
        "etcdbackups.etcd.ferroplane.io/nightly",
        "--subresource=status",
        "--type=merge",
        "-p",
        &snapshots.to_string(),
    ])
    .await;
    e2e.wait_jsonpath(RECOVERED, &ready("status"), "True").await;
    e2e.eventually("three recorded member volumes", WAIT, || async {
        let recorded = e2e
            .jsonpath(
                RECOVERED,
                "{range .status.memberVolumes.*}{@}{\"\\n\"}{end}",
            )
            .await;
        (recorded.lines().filter(|l| !l.is_empty()).count() == 3).then_some(())
    })
    .await;
    let service = e2e
        .jsonpath("service/etcd-rec-client", "{.metadata.uid}")
        .await;
    let survivor = claim_uid(&e2e, "data-etcd-rec-0").await;
    lose_together(&e2e, "etcd-rec", &[1, 2]).await;

    // Decided once permanent: the newest snapshot, and the window from it to the loss.
    let since = e2e
        .eventually("the recovery to be decided", WAIT, || async {
            let key = e2e
                .jsonpath(RECOVERED, "{.status.quorumLoss.recovery.key}")
                .await;
            (key == NEWER).then_some(())?;
            Some(e2e.jsonpath(RECOVERED, "{.status.quorumLoss.since}").await)
        })
        .await;
    let window = format!("{NEWER_AT} → {since}");
    assert_eq!(
        e2e.jsonpath(RECOVERED, "{.status.quorumLoss.recovery.lostWindow}")
            .await,
        window
    );
    // Every member's data replaced: new claims made by the recovery, the survivor's too.
    for ordinal in 0..3 {
        let name = format!("data-etcd-rec-{ordinal}");
        e2e.eventually(&format!("{name} made by the recovery"), WAIT, || async {
            let mark = annotation_of(
                &e2e,
                &format!("pvc/{name}"),
                "etcd.ferroplane.io/recovery-of",
            )
            .await;
            (mark == since).then_some(())
        })
        .await;
    }
    assert_ne!(claim_uid(&e2e, "data-etcd-rec-0").await, survivor);
    // The snapshots lie in a ReadWriteOnce volume: a Job serves the snapshot, and the members'
    // Jobs start once it is ready (not one after another on the volume).
    let server = "etcd-rec-restore-source";
    e2e.eventually(
        "the wait for the snapshot server to be said",
        WAIT,
        || async {
            let said = e2e
                .jsonpath(RECOVERED, "{.status.conditions[*].message}")
                .await;
            said.contains(&format!("snapshot server Job {server} to be ready"))
                .then_some(())
        },
    )
    .await;
    let restore_jobs = || async {
        e2e.k(&[
            "get",
            "jobs",
            "-l",
            "etcd.ferroplane.io/restore-of=etcd-rec",
            "-o",
            "name",
        ])
        .await
    };
    assert_eq!(
        restore_jobs().await.trim(),
        format!("job.batch/{server}"),
        "no member's Job before the server is ready"
    );
    let served = e2e
        .k(&[
            "get",
            "job",
            server,
            "-o",
            "jsonpath={.spec.template.spec.containers[0].command}",
        ])
        .await;
    assert!(
        served.contains(r#""serve""#) && served.contains(NEWER),
        "the server serves the newest snapshot: {served}"
    );
    assert_eq!(
        e2e.k(&["get", "service", server, "-o", "name"])
            .await
            .trim(),
        format!("service/{server}"),
        "the server's name comes from its headless Service"
    );
    crate::e2e_etcd_restore::mark_job_ready(&e2e, server).await;
    for ordinal in 0..3 {
        let job = format!("etcd-rec-restore-{ordinal}");
        let args = e2e
            .eventually(&format!("Job {job}"), WAIT, || async {
                let args = e2e
                    .k(&[
                        "get",
                        "job",
                        "--ignore-not-found",
                        &job,
                        "-o",
                        "jsonpath={.spec.template.spec.initContainers[*].command}",
                    ])
                    .await;
                (!args.is_empty()).then_some(args)
            })
            .await;
        assert!(
            args.contains(r#""--bump-revision","1000000000","--mark-compacted""#),
            "the restore moves the revision past the lost cluster's: {args}"
        );
        assert!(
            args.contains("--ca-file") && !args.contains(NEWER),
            "fetches from the server, with its CA, without mounting the volume: {args}"
        );
    }
    assert_eq!(
        e2e.k(&["get", "statefulset", "--ignore-not-found", "-o", "name"])
            .await
            .trim(),
        "",
        "no member runs while the volumes are restored"
    );
    for ordinal in 0..3 {
        crate::e2e_etcd_restore::finish_job(&e2e, &format!("etcd-rec-restore-{ordinal}"), true)
            .await;
    }
    e2e.wait_jsonpath("statefulset/etcd-rec", "{.spec.replicas}", "3")
        .await;
    crate::e2e_etcd_restore::wait_restore_removed(&e2e, "etcd-rec", WAIT).await;
    e2e.eventually("the recovery to complete", WAIT, || async {
        let last = e2e
            .jsonpath(RECOVERED, "{.status.lastRecovery.lostWindow}")
            .await;
        let loss = e2e.jsonpath(RECOVERED, "{.status.quorumLoss}").await;
        (last == window && loss.is_empty()).then_some(())
    })
    .await;
    assert_eq!(
        e2e.jsonpath("service/etcd-rec-client", "{.metadata.uid}")
            .await,
        service,
        "the same client Service"
    );
    let events = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=etcd-rec",
            "-o",
            "jsonpath={range .items[*]}{.reason}={.type}={.message}{\"\\n\"}{end}",
        ])
        .await;
    for (reason, kind) in [
        ("QuorumRecoveryStarted", "Warning"),
        ("QuorumRecovered", "Normal"),
    ] {
        assert!(
            events
                .lines()
                .any(|l| l.starts_with(&format!("{reason}={kind}=")) && l.contains(&window)),
            "a {kind} {reason} event states the window {window}: {events}"
        );
    }
    e2e.finish().await;
}

/// One member's volume lost while quorum holds: its pod on the new, empty claim does not rejoin
/// under the old member ID (its configuration file is sealed); without
/// `spec.replaceFailedMembers` the member is removed and comes back as a new member
/// (`MemberDataLost`), under a new ID on a fresh claim, and the cluster is Ready again with three
/// voters; the old ID is never listed again, and no quorum loss is reported. The simulated
/// members keep no keys: that every key survives is shown on real members
/// (`etcd_members_recovery`).
pub(crate) async fn one_lost_volume_comes_back_as_a_new_member() {
    const ONE: &str = "etcdclusters.etcd.ferroplane.io/etcd-one";
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&CLUSTER.replace("name: etcd-lost", "name: etcd-one"))
        .await;
    e2e.wait_jsonpath(ONE, &ready("status"), "True").await;
    e2e.eventually("three recorded member volumes", WAIT, || async {
        let recorded = e2e
            .jsonpath(ONE, "{range .status.memberVolumes.*}{@}{\"\\n\"}{end}")
            .await;
        (recorded.lines().filter(|l| !l.is_empty()).count() == 3).then_some(())
    })
    .await;
    let member = "{.status.members[?(@.name=='etcd-one-2')]['id','healthy']}";
    let before = e2e.jsonpath(ONE, member).await;
    assert!(
        before.ends_with(" true"),
        "etcd-one-2 a healthy member: {before}"
    );
    let old_id = before
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();

    lose_together(&e2e, "etcd-one", &[2]).await;
    let lost_claim = claim_uid(&e2e, "data-etcd-one-2").await;

    e2e.eventually("the lost volume replaced", WAIT, || async {
        let events = e2e
            .k(&[
                "get",
                "events",
                "--field-selector",
                "reason=MemberDataLost",
                "-o",
                "jsonpath={.items[*].message}",
            ])
            .await;
        events.contains("etcd-one-2").then_some(())
    })
    .await;
    let ids = "{range .status.members[*]}{.name}={.id}={.role}={.healthy} {end}";
    let back = e2e
        .eventually("etcd-one-2 back as a new, healthy voter", WAIT, || async {
            let now = e2e.jsonpath(ONE, ids).await;
            let members: Vec<&str> = now.split_whitespace().collect();
            let new = members.iter().find_map(|m| {
                let rest = m.strip_prefix("etcd-one-2=")?;
                let (id, state) = rest.split_once('=')?;
                (id != old_id && state == "Voter=true").then(|| id.to_owned())
            });
            let all_voters =
                members.len() == 3 && members.iter().all(|m| m.ends_with("=Voter=true"));
            match new.filter(|_| all_voters) {
                Some(id) => Ok(id),
                None => Err(format!(
                    "{now}\n{}\n{}",
                    e2e.jsonpath(ONE, "{.status.conditions}").await,
                    e2e.k(&["get", "pods,pvc", "-o", COLUMNS]).await
                )),
            }
        })
        .await;
    e2e.wait_jsonpath(ONE, &ready("status"), "True").await;
    let listed = e2e.jsonpath(ONE, ids).await;
    assert!(
        !listed.contains(&old_id),
        "the old member ID {old_id} never comes back: {listed}"
    );
    assert!(listed.contains(&back), "{listed}");
    let claim = claim_uid(&e2e, "data-etcd-one-2").await;
    assert!(
        !claim.is_empty() && claim != lost_claim,
        "the new member runs on a fresh claim, not the one it was refused on ({lost_claim}): {claim}"
    );
    assert_eq!(e2e.jsonpath(ONE, "{.status.quorumLoss}").await, "");
    assert_eq!(e2e.jsonpath(ONE, "{.status.lastRecovery}").await, "");
    e2e.finish().await;
}
