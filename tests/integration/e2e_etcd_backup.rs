//! EtcdBackup with kubectl, on both servers: snapshots of the EtcdCluster sample stored in the
//! ECS mock's OSS (on the real control plane taken from real etcd members, on the sandbox from
//! its simulation), one per generation, the newest `keep` kept, a schedule, the conditions of a
//! bad schedule, a missing bucket and an endpoint the controller does not allow, and deletion
//! with each `deletionPolicy`.

use std::collections::BTreeSet;
use std::time::Duration;

use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::oss::{Addressing, OssClient};
use ferroplane::controllers::Kind;
use ferroplane_testkit::{eventually, samples};

use crate::support::{ACCESS_KEY_ID, ACCESS_KEY_SECRET, E2e};

pub const BUCKET: &str = "etcd-backups";
const OBJECT: &str = "etcdbackups.etcd.ferroplane.io/demo-backup";
/// Snapshots of real members and uploads on a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(120);

pub fn oss_client(e2e: &E2e) -> OssClient {
    OssClient::new(
        reqwest::Client::new(),
        url::Url::parse(&e2e.mock().endpoint()).expect("the mock's endpoint is a URL"),
        Addressing::Path,
        Credentials::new(ACCESS_KEY_ID, ACCESS_KEY_SECRET),
    )
}

/// A client of the mock's OSS, with [`BUCKET`] created.
pub async fn oss_with_bucket(e2e: &E2e) -> OssClient {
    let oss = oss_client(e2e);
    oss.put_bucket(BUCKET).await.expect("the bucket is created");
    oss
}

pub fn backup_yaml(e2e: &E2e, name: &str, cluster: &str, bucket: &str, extra: &str) -> String {
    format!(
        r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdBackup
metadata:
  name: {name}
spec:
  clusterRef:
    name: {cluster}
  destination:
    oss:
      bucket: {bucket}
      prefix: etcd/
      endpoint: {endpoint}
      providerConfigRef:
        name: default
  keep: 2
{extra}
"#,
        endpoint = e2e.mock().endpoint()
    )
}

/// The object keys in the bucket under `prefix`.
pub async fn stored_keys(oss: &OssClient, prefix: &str) -> BTreeSet<String> {
    oss.list_objects(BUCKET, prefix, None)
        .await
        .expect("the bucket lists")
        .objects
        .into_iter()
        .map(|o| o.key)
        .collect()
}

/// The keys and generations of the backup's snapshots, oldest first, from one read.
async fn snapshots(e2e: &E2e) -> (Vec<String>, Vec<String>) {
    e2e.jsonpath(
        OBJECT,
        "{range .status.snapshots[*]}{.key}={.generation}{\"\\n\"}{end}",
    )
    .await
    .lines()
    .filter_map(|line| line.split_once('='))
    .map(|(k, g)| (k.to_owned(), g.to_owned()))
    .unzip()
}

/// Waits until the backup lists `count` snapshots whose newest was taken for `generation`;
/// returns the keys listed, oldest first. On timeout, says what the object shows.
async fn wait_snapshots(e2e: &E2e, count: usize, generation: &str) -> Vec<String> {
    let waited = eventually(format!(
        "{count} snapshots, the newest of generation {generation}"
    ))
    .within(WAIT)
    .every(Duration::from_millis(200))
    .try_until_async(|| async {
        let (keys, generations) = snapshots(e2e).await;
        if keys.len() == count && generations.last().map(String::as_str) == Some(generation) {
            Ok(keys)
        } else {
            Err(format!("keys {keys:?}, generations {generations:?}"))
        }
    })
    .await;
    match waited {
        Ok(keys) => keys,
        Err(timed_out) => panic!("{timed_out}\n{}", e2e.k(&["describe", OBJECT]).await),
    }
}

/// Waits until `object` is Synced=False with a message that starts with `reason` (the
/// framework's `ReconcileError` condition carries the cause's reason first); returns it.
async fn synced_failure(e2e: &E2e, object: &str, reason: &str) -> String {
    let prefix = format!("{reason}: ");
    e2e.eventually(&format!("{object} fails with {reason}"), WAIT, || async {
        let status = e2e
            .jsonpath(object, "{.status.conditions[?(@.type=='Synced')].status}")
            .await;
        let message = e2e
            .jsonpath(object, "{.status.conditions[?(@.type=='Synced')].message}")
            .await;
        (status == "False" && message.starts_with(&prefix)).then_some(message)
    })
    .await
}

pub(crate) async fn etcdbackup_to_oss_keeps_n_follows_a_schedule_and_deletes() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let oss = oss_with_bucket(&e2e).await;
    e2e.apply(&samples::without_namespace("etcdcluster.yaml"))
        .await;
    e2e.apply(&backup_yaml(
        &e2e,
        "demo-backup",
        "etcd-demo",
        BUCKET,
        "  deletionPolicy: Delete",
    ))
    .await;

    // One snapshot for generation 1, described in the status and stored with its checksum.
    let first = wait_snapshots(&e2e, 1, "1").await;
    e2e.wait_jsonpath(
        OBJECT,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    let uid = e2e.jsonpath(OBJECT, "{.metadata.uid}").await;
    let folder = format!("etcd/{}/demo-backup/{uid}/", e2e.namespace);
    assert!(first[0].starts_with(&folder), "{first:?} in {folder}");
    assert_eq!(
        e2e.jsonpath(
            OBJECT,
            "{.metadata.annotations.ferroplane\\.io/external-name}"
        )
        .await,
        format!("oss://{BUCKET}/{folder}")
    );
    let head = oss
        .head_object(BUCKET, &first[0])
        .await
        .expect("the snapshot is stored");
    let sha256 = e2e.jsonpath(OBJECT, "{.status.snapshots[0].sha256}").await;
    assert_eq!(
        head.meta.get("etcd-sha256"),
        Some(&sha256),
        "the status says the stored checksum"
    );
    assert_eq!(
        e2e.jsonpath(OBJECT, "{.status.snapshots[0].size}").await,
        head.size.to_string()
    );
    let bytes = oss.get_object(BUCKET, &first[0]).await.expect("readable");
    let (db, trailer) = bytes.split_at(bytes.len() - 32);
    assert_eq!(
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(db)),
        sha256
    );
    assert_eq!(hex::encode(trailer), sha256, "etcd's snapshot layout");
    assert!(
        !e2e.jsonpath(OBJECT, "{.status.lastSuccessTime}")
            .await
            .is_empty()
    );

    // Each new generation takes one more; beyond keep: 2 the oldest goes, from the bucket too.
    e2e.k(&[
        "patch",
        OBJECT,
        "--type=merge",
        "-p",
        r#"{"spec":{"trigger":"2"}}"#,
    ])
    .await;
    let two = wait_snapshots(&e2e, 2, "2").await;
    assert_eq!(two[0], first[0]);
    e2e.k(&[
        "patch",
        OBJECT,
        "--type=merge",
        "-p",
        r#"{"spec":{"trigger":"3"}}"#,
    ])
    .await;
    let three = wait_snapshots(&e2e, 2, "3").await;
    assert_eq!(three[0], two[1], "the oldest was pruned");
    let stored = e2e
        .eventually("the bucket holds the two kept", WAIT, || async {
            let stored = stored_keys(&oss, &folder).await;
            (stored.len() == 2).then_some(stored)
        })
        .await;
    assert_eq!(stored, three.iter().cloned().collect::<BTreeSet<_>>());

    // A schedule takes snapshots without a new generation (every second here), keeping two.
    e2e.k(&[
        "patch",
        OBJECT,
        "--type=merge",
        "-p",
        r#"{"spec":{"schedule":"* * * * * *"}}"#,
    ])
    .await;
    let generation = e2e.jsonpath(OBJECT, "{.metadata.generation}").await;
    let scheduled = e2e
        .eventually("two scheduled snapshots", WAIT, || async {
            let (keys, generations) = snapshots(&e2e).await;
            let all_scheduled = generations.iter().filter(|g| **g == generation).count() == 2;
            (keys.len() == 2 && all_scheduled).then_some(keys)
        })
        .await;
    assert!(three.iter().all(|k| !scheduled.contains(k)));
    assert!(
        !e2e.jsonpath(OBJECT, "{.status.nextScheduleTime}")
            .await
            .is_empty()
    );

    // A schedule that is not cron is reported, not guessed at.
    e2e.k(&[
        "patch",
        OBJECT,
        "--type=merge",
        "-p",
        r#"{"spec":{"schedule":"every night"}}"#,
    ])
    .await;
    let message = synced_failure(&e2e, OBJECT, "InvalidSchedule").await;
    assert!(
        message.contains("every night") && message.contains("0 3 * * *"),
        "{message}"
    );

    // A missing bucket: OSS's code first in the message, and what to do.
    e2e.apply(&backup_yaml(
        &e2e,
        "no-bucket",
        "etcd-demo",
        "missing-bucket",
        "",
    ))
    .await;
    let message = synced_failure(
        &e2e,
        "etcdbackups.etcd.ferroplane.io/no-bucket",
        "NoSuchBucket",
    )
    .await;
    assert!(
        message.contains("create bucket missing-bucket"),
        "{message}"
    );
    assert!(!message.contains(ACCESS_KEY_SECRET));

    // The tenant chooses the endpoint the credentials sign for: only allowed ones are used.
    e2e.apply(
        &backup_yaml(&e2e, "elsewhere", "etcd-demo", BUCKET, "")
            .replace(&e2e.mock().endpoint(), "https://oss.attacker.example.com"),
    )
    .await;
    let message = synced_failure(
        &e2e,
        "etcdbackups.etcd.ferroplane.io/elsewhere",
        "EndpointNotAllowed",
    )
    .await;
    assert!(message.contains("oss.attacker.example.com"), "{message}");

    // clusterRef is immutable.
    let refused = e2e
        .kubectl(
            &[
                "patch",
                OBJECT,
                "--type=merge",
                "-p",
                r#"{"spec":{"clusterRef":{"name":"other"}}}"#,
            ],
            None,
        )
        .await;
    assert!(
        refused.code != 0 && refused.stderr.contains("clusterRef is immutable"),
        "{}",
        refused.stderr
    );

    // The default deletionPolicy, Orphan, keeps the snapshots when the backup goes.
    let kept = "etcdbackups.etcd.ferroplane.io/kept";
    e2e.apply(&backup_yaml(&e2e, "kept", "etcd-demo", BUCKET, ""))
        .await;
    e2e.wait_jsonpath(kept, "{.status.snapshotCount}", "1")
        .await;
    let kept_folder = format!(
        "etcd/{}/kept/{}/",
        e2e.namespace,
        e2e.jsonpath(kept, "{.metadata.uid}").await
    );
    e2e.k(&["delete", kept, "--wait=true"]).await;
    assert_eq!(
        stored_keys(&oss, &kept_folder).await.len(),
        1,
        "Orphan keeps the snapshot"
    );

    // Deleting with deletionPolicy Delete deletes the snapshots, then the object goes.
    e2e.k(&["delete", OBJECT, "--wait=true"]).await;
    assert!(stored_keys(&oss, &folder).await.is_empty());
    e2e.finish().await;
}
