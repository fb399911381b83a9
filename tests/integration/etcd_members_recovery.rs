//! Lost volumes on real etcd members. One of three, while quorum holds: the member is replaced
//! automatically (no `spec.replaceFailedMembers`) by a new member on a fresh claim that copies
//! every key from the leader. Two of three: the survivor keeps running, the new pods on
//! empty claims never rejoin it, `spec.recovery.policy: Manual` reports the loss and waits, and
//! once the policy says `FromLatestBackup` the cluster is restored from its newest EtcdBackup
//! under the same Services, the writes after the snapshot lost and said so. Two members cut off
//! with their volumes kept, for longer than the grace period, restore nothing.
//!
//! What real etcd does (3.5.35, seen on these members and by hand with three processes): a pod
//! on a new, empty claim whose configuration file lists its peers (`initial-cluster-state:
//! existing`) takes the member ID the others list for it and rejoins with no data; with the
//! survivor up, the cluster came back on the survivor's data alone, without any restore and
//! without telling anyone (an amnesiac rejoin, unsafe in Raft). The files of started members
//! now name no peer (`render/bootstrap.rs`), so such a pod exits; this test is where that is
//! shown on real members.

use std::time::Duration;

use ferroplane::controllers::Kind;
use ferroplane_testenv::Builder;
use serde_json::json;

use crate::etcd_members::{
    WAIT, b64, ensure_releases, etcd_member_ids, etcd_post, key_values, members_failed, versions,
    wait_ready_with_voters,
};
use crate::support::E2e;

const NAME: &str = "dr";
const OBJECT: &str = "etcdclusters.etcd.ferroplane.io/dr";
const BACKUP: &str = "dr-backup";
/// The shortest the API admits.
const GRACE_SECONDS: u64 = 10;

fn cluster_yaml(version: &str) -> String {
    format!(
        r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdCluster
metadata:
  name: {NAME}
spec:
  deletionPolicy: Delete
  size: 3
  version: "{version}"
  storage:
    size: 1Gi
  recovery:
    policy: Manual
    gracePeriodSeconds: {GRACE_SECONDS}
"#
    )
}

async fn put(e2e: &E2e, key: &str) {
    etcd_post(
        e2e,
        NAME,
        "/v3/kv/put",
        json!({"key": b64(key), "value": b64(&format!("value of {key}"))}),
    )
    .await
    .unwrap_or_else(|e| panic!("etcd takes {key}: {e}"));
}

/// Every `app/` key the cluster's client Service answers, in order.
async fn app_keys(e2e: &E2e) -> Result<Vec<String>, String> {
    let range = json!({"key": b64("app/"), "range_end": b64("app0")});
    let answer = etcd_post(e2e, NAME, "/v3/kv/range", range).await?;
    if answer.get("error").is_some() {
        return Err(answer.to_string());
    }
    Ok(key_values(&answer).into_iter().map(|(k, _)| k).collect())
}

fn keys(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("app/{prefix}-{i:02}")).collect()
}

/// `name=uid` of every claim of the namespace (the test's cluster's only).
async fn claims(e2e: &E2e) -> String {
    e2e.k(&[
        "get",
        "pvc",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}",
    ])
    .await
}

async fn events_of(e2e: &E2e, reason: &str) -> usize {
    e2e.k(&[
        "get",
        "events",
        "--field-selector",
        &format!("reason={reason}"),
        "-o",
        "name",
    ])
    .await
    .lines()
    .count()
}

/// Cuts the members of `pods` off and deletes their claims and pods (the real StatefulSet
/// controller makes new ones, on new empty claims). Cutting them off first stands in for a
/// kubelet: kwok removes a deleted pod at once, before the runner stops its etcd, where a
/// kubelet keeps the pod until its container is gone.
async fn lose_volumes(e2e: &E2e, pods: &[&str]) {
    for pod in pods {
        e2e.etcd_members()
            .partition(pod)
            .unwrap_or_else(|e| panic!("{pod} cut off: {e}"));
    }
    let mut claims = vec!["delete", "pvc"];
    let names: Vec<String> = pods.iter().map(|p| format!("data-{p}")).collect();
    claims.extend(names.iter().map(String::as_str));
    claims.push("--wait=false");
    e2e.k(&claims).await;
    let mut delete_pods = vec!["delete", "pod"];
    delete_pods.extend(pods.iter().copied());
    delete_pods.push("--wait=false");
    e2e.k(&delete_pods).await;
}

/// `pods` and `claims` with what decides whether a claim can go and a pod can start: the pod's
/// node and phase, the claim it mounts, and when each began to be deleted.
async fn pods_and_claims(e2e: &E2e) -> String {
    let columns = "custom-columns=NAME:.metadata.name,UID:.metadata.uid,\
        DELETED:.metadata.deletionTimestamp,NODE:.spec.nodeName,PHASE:.status.phase,\
        CLAIM:.spec.volumes[0].persistentVolumeClaim.claimName";
    e2e.k(&["get", "pods,pvc", "-o", columns]).await
}

/// Write keys; lose member 2's claim and pod while members 0 and 1 run: without
/// `spec.replaceFailedMembers` it is removed (`MemberDataLost`) and comes back under a new member
/// ID on a fresh claim, with every key; the cluster is Ready with three voters, the old ID is
/// never listed again and no quorum loss is reported.
pub(crate) async fn one_lost_volume_is_replaced_by_a_new_member_with_every_key() {
    let (old, _) = versions();
    ensure_releases(&[&old]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&cluster_yaml(&old)).await;
    wait_ready_with_voters(&e2e, NAME, 3, &old).await;
    let before = keys("before", 10);
    for key in &before {
        put(&e2e, key).await;
    }
    let ids_before = etcd_member_ids(&e2e, NAME)
        .await
        .unwrap_or_else(|e| panic!("member list: {e}"));
    let old_id = ids_before
        .iter()
        .find(|(name, _)| name == "dr-2")
        .map(|(_, id)| id.clone())
        .unwrap_or_else(|| panic!("dr-2 listed: {ids_before:?}"));
    let lost_claim = e2e.jsonpath("pvc/data-dr-2", "{.metadata.uid}").await;
    let started = jiff::Timestamp::now();

    lose_volumes(&e2e, &["dr-2"]).await;

    // What the controller waited for on the way, in order (printed: how Kubernetes brought the
    // pod and its claim back is the point of the test).
    let seen = std::sync::Mutex::new(Vec::<String>::new());
    let waited = ferroplane_testkit::eventually("dr-2 back under a new member ID")
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            let progress = e2e
                .jsonpath(
                    OBJECT,
                    "{.status.conditions[?(@.type=='Progressing')].message}",
                )
                .await;
            {
                let mut seen = seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if seen.last() != Some(&progress) {
                    seen.push(progress);
                }
            }
            let ids = etcd_member_ids(&e2e, NAME).await?;
            let new = ids.iter().any(|(name, id)| name == "dr-2" && *id != old_id);
            if new && ids.len() == 3 {
                Ok(())
            } else {
                Err(format!(
                    "{ids:?}, before {ids_before:?}; {}\n{}",
                    e2e.jsonpath(OBJECT, "{.status.conditions}").await,
                    pods_and_claims(&e2e).await
                ))
            }
        })
        .await;
    if let Err(timed_out) = waited {
        members_failed(&e2e, OBJECT, timed_out.to_string()).await;
    }
    wait_ready_with_voters(&e2e, NAME, 3, &old).await;
    let took = jiff::Timestamp::now().duration_since(started);
    println!("dr-2 replaced and the cluster Ready again in {took:#}; the controller's progress:");
    for step in seen
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        println!("  {step}");
    }
    let restarts = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "reason=MemberRestartedEmpty",
            "-o",
            "jsonpath={.items[*].message}",
        ])
        .await;
    println!("MemberRestartedEmpty: {restarts}");
    let ids = etcd_member_ids(&e2e, NAME).await;
    assert!(
        ids.as_ref()
            .is_ok_and(|ids| ids.iter().all(|(_, id)| *id != old_id)),
        "the old member ID {old_id} never comes back: {ids:?}"
    );
    assert_eq!(app_keys(&e2e).await, Ok(before.clone()), "every key kept");
    let new_claim = e2e.jsonpath("pvc/data-dr-2", "{.metadata.uid}").await;
    assert!(
        !new_claim.is_empty() && new_claim != lost_claim,
        "dr-2 on a fresh claim, not {lost_claim}: {new_claim}"
    );
    let replaced = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "reason=MemberDataLost",
            "-o",
            "jsonpath={.items[*].message}",
        ])
        .await;
    assert!(
        replaced.contains("dr-2"),
        "the replacement is told: {replaced}"
    );
    for reason in ["QuorumLost", "QuorumRecoveryStarted"] {
        assert_eq!(
            events_of(&e2e, reason).await,
            0,
            "one lost volume is not a lost quorum ({reason})"
        );
    }
    e2e.finish().await;
}

/// Write keys, take an EtcdBackup, write more, lose the volumes of members 1 and 2 with member 0
/// running: `Manual` reports the loss and waits two grace periods; set to `FromLatestBackup`, the
/// cluster is Ready again under the same client Service with exactly the snapshot's keys (not
/// member 0's), and `status.lastRecovery` names the snapshot and the window of writes lost.
/// Then members 1 and 2 are cut off, volumes kept, for three grace periods: quorum is gone, yet
/// nothing is restored, and once they are back every key is still there.
#[allow(clippy::too_many_lines)]
pub(crate) async fn a_lost_quorum_comes_back_from_the_latest_backup_and_a_partition_does_not_restore()
 {
    let (old, _) = versions();
    ensure_releases(&[&old]).await;
    let tag = format!("v{old}");
    tokio::task::spawn_blocking(move || Builder::new(None).ensure_etcdutl(&tag))
        .await
        .expect("the build does not panic")
        .unwrap_or_else(|e| panic!("etcdutl builds: {e}"));
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    crate::e2e_etcd_backup::oss_with_bucket(&e2e).await;
    e2e.apply(&cluster_yaml(&old)).await;
    wait_ready_with_voters(&e2e, NAME, 3, &old).await;
    let service = e2e
        .jsonpath(&format!("service/{NAME}-client"), "{.metadata.uid}")
        .await;

    let before = keys("before", 10);
    for key in &before {
        put(&e2e, key).await;
    }

    e2e.apply(&crate::e2e_etcd_backup::backup_yaml(
        &e2e,
        BACKUP,
        NAME,
        crate::e2e_etcd_backup::BUCKET,
        "",
    ))
    .await;
    let backup = format!("etcdbackups.etcd.ferroplane.io/{BACKUP}");
    e2e.wait_jsonpath(
        &backup,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    let snapshot_key = e2e.jsonpath(&backup, "{.status.snapshots[0].key}").await;
    let taken_at = e2e
        .jsonpath(&backup, "{.status.snapshots[0].takenAt}")
        .await;
    let after = keys("after", 5);
    for key in &after {
        put(&e2e, key).await;
    }
    let mut all = before.clone();
    all.extend(after.iter().cloned());
    all.sort();
    assert_eq!(app_keys(&e2e).await, Ok(all), "every key written");

    // The volumes of members 1 and 2 are lost; member 0 keeps running. The new pods on empty
    // claims must not rejoin it (their files name no peer): the cluster would come back on
    // member 0's data, the 5 later keys included, with no restore.
    let lost = ["dr-1", "dr-2"];
    let old_claims = claims(&e2e).await;
    lose_volumes(&e2e, &lost).await;

    // `Manual`: the loss is reported as permanent, and nothing is restored until a person says
    // so; here for two more grace periods.
    let permanent = ferroplane_testkit::eventually("the loss reported as permanent")
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            let ready = e2e
                .jsonpath(
                    OBJECT,
                    "{.status.conditions[?(@.type=='Ready')].reason} {.status.conditions[?(@.type=='Ready')].message}",
                )
                .await;
            if ready.starts_with("QuorumLost ") && ready.contains("policy is Manual: waiting") {
                Ok(ready)
            } else {
                let columns = "custom-columns=NAME:.metadata.name,UID:.metadata.uid,\
                    DELETED:.metadata.deletionTimestamp,PHASE:.status.phase,CLAIM:.spec.volumes[0].persistentVolumeClaim.claimName";
                Err(format!(
                    "{ready}; before {old_claims}; volumes {}; ids {:?}\n{}",
                    e2e.jsonpath(OBJECT, "{.status.memberVolumes}").await,
                    etcd_member_ids(&e2e, NAME).await,
                    e2e.k(&["get", "pods,pvc", "-o", columns]).await
                ))
            }
        })
        .await;
    let permanent = match permanent {
        Ok(permanent) => permanent,
        Err(timed_out) => {
            let mut logs = String::new();
            for member in lost {
                let path = e2e
                    .etcd_members()
                    .log_dir()
                    .join(format!("{}.{member}.log", e2e.namespace));
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(40).collect();
                logs.push_str(&format!(
                    "\n--- {member} ---\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                ));
            }
            let files = e2e
                .jsonpath(&format!("configmap/{NAME}-bootstrap"), "{.data}")
                .await;
            members_failed(&e2e, OBJECT, format!("{timed_out}\nfiles {files}{logs}")).await
        }
    };
    for member in lost {
        assert!(permanent.contains(member), "{member} named: {permanent}");
    }
    let until = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2 * GRACE_SECONDS as i64);
    e2e.eventually("two grace periods of waiting", WAIT, || async {
        assert_eq!(
            events_of(&e2e, "QuorumRecoveryStarted").await,
            0,
            "Manual restores nothing by itself"
        );
        assert_eq!(
            e2e.jsonpath(OBJECT, "{.status.quorumLoss.recovery}").await,
            "",
            "no recovery decided"
        );
        (jiff::Timestamp::now() >= until).then_some(())
    })
    .await;
    // The person's decision: the newest backup.
    e2e.k(&[
        "patch",
        OBJECT,
        "--type=merge",
        "-p",
        r#"{"spec":{"recovery":{"policy":"FromLatestBackup"}}}"#,
    ])
    .await;

    // The controller notices the loss, waits out the grace period, then restores.
    let waited = ferroplane_testkit::eventually("the recovery to complete")
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            let window = e2e
                .jsonpath(OBJECT, "{.status.lastRecovery.lostWindow}")
                .await;
            if window.is_empty() {
                let columns = "custom-columns=NAME:.metadata.name,UID:.metadata.uid,\
                    DELETED:.metadata.deletionTimestamp,PHASE:.status.phase";
                Err(format!(
                    "{}\n{}",
                    e2e.jsonpath(OBJECT, "{.status}").await,
                    e2e.k(&["get", "pods,pvc", "-o", columns]).await
                ))
            } else {
                Ok(window)
            }
        })
        .await;
    let recovered = match waited {
        Ok(window) => window,
        Err(timed_out) => members_failed(&e2e, OBJECT, timed_out.to_string()).await,
    };
    wait_ready_with_voters(&e2e, NAME, 3, &old).await;
    let keys_now = app_keys(&e2e).await;
    assert_eq!(
        keys_now,
        Ok(before.clone()),
        "every key of the snapshot, none written after it (the lost window)"
    );
    assert_eq!(
        e2e.jsonpath(&format!("service/{NAME}-client"), "{.metadata.uid}")
            .await,
        service,
        "the same client Service"
    );
    assert_eq!(
        e2e.jsonpath(OBJECT, "{.status.lastRecovery.backup}").await,
        BACKUP
    );
    assert_eq!(
        e2e.jsonpath(OBJECT, "{.status.lastRecovery.key}").await,
        snapshot_key
    );
    assert_eq!(
        e2e.jsonpath(OBJECT, "{.status.lastRecovery.snapshotTakenAt}")
            .await,
        taken_at
    );
    let (from, to) = recovered
        .split_once(" → ")
        .unwrap_or_else(|| panic!("a window <snapshot> → <loss>: {recovered}"));
    assert_eq!(from, taken_at, "the window starts at the snapshot");
    let (from, to) = (
        from.parse::<jiff::Timestamp>().expect("a time"),
        to.parse::<jiff::Timestamp>().expect("a time"),
    );
    assert!(from < to, "the loss comes after the snapshot: {recovered}");
    assert_eq!(e2e.jsonpath(OBJECT, "{.status.quorumLoss}").await, "");
    let started = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "reason=QuorumRecoveryStarted",
            "-o",
            "jsonpath={.items[*].message}",
        ])
        .await;
    for member in lost {
        assert!(started.contains(member), "{member} named: {started}");
    }
    let new_claims = claims(&e2e).await;
    for claim in old_claims.split_whitespace() {
        assert!(
            !new_claims.contains(claim),
            "every member on a restored volume, the survivor's too: {claim} is still there ({new_claims})"
        );
    }

    // Two members cut off with their volumes kept: quorum is gone, and it is not a loss.
    let recoveries = events_of(&e2e, "QuorumRecoveryStarted").await;
    let losses = events_of(&e2e, "QuorumLost").await;
    let volumes = claims(&e2e).await;
    for member in lost {
        e2e.etcd_members()
            .partition(member)
            .unwrap_or_else(|e| panic!("{member} cut off: {e}"));
    }
    let unready = e2e
        .eventually("the cluster is not Ready", WAIT, || async {
            let at = e2e
                .jsonpath(
                    OBJECT,
                    "{.status.conditions[?(@.type=='Ready')].lastTransitionTime}",
                )
                .await;
            let ready = e2e
                .jsonpath(OBJECT, "{.status.conditions[?(@.type=='Ready')].status}")
                .await;
            (ready == "False").then_some(at)
        })
        .await;
    let unready: jiff::Timestamp = unready.parse().expect("a transition time");
    // The partition lasts three grace periods past the controller's first look; every look of
    // the test meanwhile finds nothing begun.
    let until = unready + jiff::SignedDuration::from_secs(3 * GRACE_SECONDS as i64);
    e2e.eventually(
        "the partition to outlast the grace period",
        WAIT,
        || async {
            let loss = e2e.jsonpath(OBJECT, "{.status.quorumLoss}").await;
            assert_eq!(loss, "", "a partition with volumes kept is not a loss");
            assert_eq!(claims(&e2e).await, volumes, "no volume replaced");
            (jiff::Timestamp::now() >= until).then_some(())
        },
    )
    .await;
    assert_eq!(
        events_of(&e2e, "QuorumRecoveryStarted").await,
        recoveries,
        "no recovery started"
    );
    assert_eq!(
        events_of(&e2e, "QuorumLost").await,
        losses,
        "no loss reported"
    );
    for member in lost {
        e2e.etcd_members()
            .reconnect(member)
            .unwrap_or_else(|e| panic!("{member} back: {e}"));
    }
    wait_ready_with_voters(&e2e, NAME, 3, &old).await;
    if app_keys(&e2e).await != Ok(before.clone()) {
        members_failed(&e2e, OBJECT, "the keys are not all back".into()).await;
    }
    assert_eq!(
        e2e.jsonpath(OBJECT, "{.status.lastRecovery.lostWindow}")
            .await,
        recovered,
        "the last recovery is still the one before"
    );
    e2e.finish().await;
}
