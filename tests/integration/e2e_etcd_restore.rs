//! `spec.restore` on the sandbox, where no kubelet runs Jobs: the test plays the Job controller
//! (it writes the Jobs' status), so the controller's side of a restore is checked step by step:
//! the claims and Jobs made before any member, the signed URL only in the owned Secret, members
//! held back while a Job runs, a failed Job reported and run again once deleted, and the
//! StatefulSet created, the Jobs and Secret removed once every volume is restored. The restore
//! itself, with real Jobs and real etcd, is `etcd_members::a_backup_in_oss_restores_into_a_new_cluster_with_its_keys`.

use std::time::Duration;

use ferroplane::controllers::Kind;

use crate::e2e_etcd_backup::{BUCKET, oss_with_bucket};
use crate::support::E2e;

const WAIT: Duration = Duration::from_secs(120);
const CLUSTER: &str = "etcdclusters.etcd.ferroplane.io/restored";
const KEY: &str = "kept/restored-from.db";

fn cluster_yaml(e2e: &E2e) -> String {
    format!(
        r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdCluster
metadata:
  name: restored
spec:
  size: 3
  storage:
    size: 1Gi
  restore:
    from:
      oss:
        bucket: {BUCKET}
        key: {KEY}
        endpoint: {endpoint}
        providerConfigRef:
          name: default
"#,
        endpoint = e2e.mock().endpoint()
    )
}

/// Writes the status the Job controller writes when the Job's pod ended.
pub(crate) async fn finish_job(e2e: &E2e, job: &str, succeeded: bool) {
    let now = jiff::Timestamp::now().to_string();
    let status = if succeeded {
        serde_json::json!({"status": {
        "startTime": now, "completionTime": now, "succeeded": 1, "active": 0,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "lastTransitionTime": now, "lastProbeTime": now},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached", "lastTransitionTime": now, "lastProbeTime": now},
        ]}})
    } else {
        serde_json::json!({"status": {
        "startTime": now, "failed": 5, "active": 0,
        "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastTransitionTime": now, "lastProbeTime": now},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastTransitionTime": now, "lastProbeTime": now},
        ]}})
    };
    e2e.k(&[
        "patch",
        &format!("jobs/{job}"),
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ])
    .await;
}

/// Waits (up to `within`) until the restore Jobs and the snapshot Secret of `cluster` are gone.
/// Writes the status the Job controller writes while the Job's pod runs and is Ready (a
/// server).
pub(crate) async fn mark_job_ready(e2e: &E2e, job: &str) {
    let now = jiff::Timestamp::now().to_string();
    let status = serde_json::json!({"status": {"startTime": now, "active": 1, "ready": 1}});
    e2e.k(&[
        "patch",
        &format!("job/{job}"),
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ])
    .await;
}

pub async fn wait_restore_removed(e2e: &E2e, cluster: &str, within: Duration) {
    let selector = format!("etcd.ferroplane.io/restore-of={cluster}");
    e2e.eventually(
        "the restore's Jobs, Secret and snapshot server are removed",
        within,
        || async {
            let left = e2e
                .k(&[
                    "get",
                    "jobs,secrets,services",
                    "-l",
                    &selector,
                    "-o",
                    "name",
                ])
                .await;
            left.trim().is_empty().then_some(())
        },
    )
    .await;
}

async fn synced_message(e2e: &E2e) -> String {
    e2e.jsonpath(CLUSTER, "{.status.conditions[?(@.type=='Synced')].message}")
        .await
}

pub(crate) async fn a_restore_waits_for_its_jobs_and_reports_a_failed_one() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let oss = oss_with_bucket(&e2e).await;
    oss.put_object(BUCKET, KEY, b"a snapshot the Jobs would fetch".to_vec())
        .await
        .expect("the object is stored");
    e2e.apply(&cluster_yaml(&e2e)).await;

    // Claims, Jobs and the URL's Secret; no member yet.
    for job in [
        "restored-restore-0",
        "restored-restore-1",
        "restored-restore-2",
    ] {
        e2e.wait_jsonpath(&format!("jobs/{job}"), "{.metadata.name}", job)
            .await;
    }
    for claim in ["data-restored-0", "data-restored-1", "data-restored-2"] {
        e2e.wait_jsonpath(
            &format!("persistentvolumeclaims/{claim}"),
            "{.metadata.annotations.etcd\\.ferroplane\\.io/restore-state}",
            "pending",
        )
        .await;
    }
    let url = e2e
        .jsonpath("secrets/restored-restore-source", "{.data.url}")
        .await;
    assert!(!url.is_empty(), "the Secret holds the signed URL");
    let everything = e2e
        .k(&["get", "etcdcluster", "restored", "-o", "yaml"])
        .await;
    assert!(
        !everything.contains("Signature"),
        "the signed URL is in the Secret only"
    );
    let job = e2e
        .k(&["get", "jobs/restored-restore-1", "-o", "json"])
        .await;
    let job: serde_json::Value = serde_json::from_str(&job).expect("a Job");
    let init = &job["spec"]["template"]["spec"]["initContainers"];
    assert_eq!(init[0]["command"][2], "fetch");
    assert_eq!(init[1]["command"][0], "etcdutl");
    let statefulsets = e2e.k(&["get", "statefulsets", "-o", "name"]).await;
    assert!(
        statefulsets.trim().is_empty(),
        "members wait: {statefulsets}"
    );
    e2e.eventually("the wait is reported", WAIT, || async {
        synced_message(&e2e)
            .await
            .contains("waiting for Jobs")
            .then_some(())
    })
    .await;

    // Two succeed, one fails: reported with what to do.
    finish_job(&e2e, "restored-restore-0", true).await;
    finish_job(&e2e, "restored-restore-1", true).await;
    finish_job(&e2e, "restored-restore-2", false).await;
    let message = e2e
        .eventually("the failed Job is reported", WAIT, || async {
            let message = synced_message(&e2e).await;
            message
                .contains("restored-restore-2 failed")
                .then_some(message)
        })
        .await;
    assert!(message.contains("delete the Job to try again"), "{message}");
    for claim in ["data-restored-0", "data-restored-1"] {
        e2e.wait_jsonpath(
            &format!("persistentvolumeclaims/{claim}"),
            "{.metadata.annotations.etcd\\.ferroplane\\.io/restore-state}",
            "done",
        )
        .await;
    }
    let statefulsets = e2e.k(&["get", "statefulsets", "-o", "name"]).await;
    assert!(
        statefulsets.trim().is_empty(),
        "members still wait: {statefulsets}"
    );

    // Deleted, the Job is run again; once it succeeds the members start.
    let first_uid = e2e
        .jsonpath("jobs/restored-restore-2", "{.metadata.uid}")
        .await;
    e2e.k(&["delete", "jobs/restored-restore-2", "--wait=true"])
        .await;
    let second_uid = e2e
        .eventually("the Job is made again", WAIT, || async {
            let uid = e2e
                .kubectl(
                    &[
                        "get",
                        "jobs/restored-restore-2",
                        "-o",
                        "jsonpath={.metadata.uid}",
                    ],
                    None,
                )
                .await;
            (uid.success() && !uid.stdout.is_empty() && uid.stdout != first_uid)
                .then_some(uid.stdout)
        })
        .await;
    assert_ne!(second_uid, first_uid);
    finish_job(&e2e, "restored-restore-2", true).await;
    e2e.wait_jsonpath(
        CLUSTER,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    assert_eq!(
        e2e.jsonpath(CLUSTER, "{.status.restore.done}").await,
        "true"
    );
    assert_eq!(
        e2e.jsonpath(CLUSTER, "{.status.restore.snapshot}").await,
        format!("oss://{BUCKET}/{KEY}")
    );
    wait_restore_removed(&e2e, "restored", WAIT).await;

    // Set at creation only.
    let refused = e2e
        .kubectl(
            &[
                "patch",
                CLUSTER,
                "--type=merge",
                "-p",
                r#"{"spec":{"restore":{"from":{"oss":{"bucket":"other","key":"k"}}}}}"#,
            ],
            None,
        )
        .await;
    assert!(!refused.success());
    assert!(
        refused
            .stderr
            .contains("restore cannot be added, changed or removed"),
        "{}",
        refused.stderr
    );
    e2e.finish().await;
}
