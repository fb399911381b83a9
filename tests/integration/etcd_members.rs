//! EtcdCluster with the real StatefulSet controller, the real garbage collector and real etcd
//! members (`support::etcd_members`): creation to three voters, scaling 3 → 1 → 3, the rolling
//! upgrade along etcd's path (the sample's 3.5.17, refused straight to 3.6, then the latest 3.5,
//! then the pinned 3.6), and deletion with each deletionPolicy. What
//! etcd itself says (its member list and versions, asked through its JSON gateway) is checked
//! beside what the EtcdCluster reports.

use std::time::Duration;

use ferroplane::controllers::Kind;
use ferroplane_testenv::{Builder, Versions};
use serde_json::Value;

use crate::support::E2e;

/// Real members start, elect and change membership in seconds; a rolling upgrade of three
/// takes longer on a shared 2-core machine.
pub(crate) const WAIT: Duration = Duration::from_secs(240);

pub(crate) fn versions() -> (String, String) {
    let pinned = Versions::pinned();
    let bare = |v: &str| v.trim_start_matches('v').to_owned();
    (bare(&pinned.etcd_upgrade_from), bare(&pinned.etcd))
}

/// Builds the member releases before the cluster exists (about a minute each, once per
/// machine), so that no wait below includes a build.
pub(crate) async fn ensure_releases(versions: &[&str]) {
    let versions: Vec<String> = versions.iter().map(|v| format!("v{v}")).collect();
    tokio::task::spawn_blocking(move || {
        let builder = Builder::new(None);
        for v in versions {
            builder
                .ensure_etcd(&v)
                .unwrap_or_else(|e| panic!("etcd {v} builds: {e}"));
        }
    })
    .await
    .expect("the build does not panic");
}

pub(crate) fn cluster_yaml(name: &str, size: u32, version: &str, policy: &str) -> String {
    format!(
        r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdCluster
metadata:
  name: {name}
spec:
  deletionPolicy: {policy}
  size: {size}
  version: "{version}"
  storage:
    size: 1Gi
"#
    )
}

/// What etcd answers to `POST <path>` at its client Service, through the members' resolver.
async fn etcd_call(e2e: &E2e, name: &str, path: &str) -> Result<Value, String> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .dns_resolver(e2e.etcd_members().addresses())
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!("http://{name}-client.{}.svc:2379{path}", e2e.namespace);
    let response = http
        .post(&url)
        .body("{}")
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    response.json().await.map_err(|e| format!("{url}: {e}"))
}

/// (name, is learner) of every member etcd lists.
async fn etcd_members(e2e: &E2e, name: &str) -> Result<Vec<(String, bool)>, String> {
    let list = etcd_call(e2e, name, "/v3/cluster/member/list").await?;
    let mut members: Vec<(String, bool)> = list["members"]
        .as_array()
        .ok_or_else(|| format!("no members in {list}"))?
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap_or_default().to_owned(),
                m["isLearner"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    members.sort();
    Ok(members)
}

/// name → member ID, as etcd lists its members.
pub(crate) async fn etcd_member_ids(
    e2e: &E2e,
    name: &str,
) -> Result<Vec<(String, String)>, String> {
    let list = etcd_call(e2e, name, "/v3/cluster/member/list").await?;
    let mut ids: Vec<(String, String)> = list["members"]
        .as_array()
        .ok_or_else(|| format!("no members in {list}"))?
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap_or_default().to_owned(),
                m["ID"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    ids.sort();
    Ok(ids)
}

fn voters(name: &str, n: u32) -> Vec<(String, bool)> {
    (0..n).map(|i| (format!("{name}-{i}"), false)).collect()
}

/// Waits until the EtcdCluster is Ready with `n` ready members, etcd lists exactly the `n`
/// voters `<name>-0..n-1`, and a real etcd process of `version` runs for each.
pub(crate) async fn wait_ready_with_voters(e2e: &E2e, name: &str, n: u32, version: &str) {
    let object = format!("etcdclusters.etcd.ferroplane.io/{name}");
    let wanted = voters(name, n);
    let waited = ferroplane_testkit::eventually(format!(
        "{object} Ready with {n} voters of etcd {version}"
    ))
    .within(WAIT)
    .every(Duration::from_millis(500))
    .try_until_async(|| async {
        let ready = e2e
            .jsonpath(&object, "{.status.conditions[?(@.type=='Ready')].status}")
            .await;
        let ready_members = e2e.jsonpath(&object, "{.status.readyMembers}").await;
        let listed = etcd_members(e2e, name).await;
        let processes: Vec<(String, String)> = e2e
            .etcd_members()
            .members()
            .into_iter()
            .filter(|m| m.pod.starts_with(&format!("{name}-")))
            .map(|m| (m.pod, m.version))
            .collect();
        let all_of_version = processes.len() == n as usize
            && processes.iter().all(|(_, v)| v == &format!("v{version}"));
        if ready == "True"
            && ready_members == n.to_string()
            && listed.as_ref() == Ok(&wanted)
            && all_of_version
        {
            Ok(())
        } else {
            Err(format!(
                "Ready={ready} readyMembers={ready_members} etcd lists {listed:?} processes {processes:?}"
            ))
        }
    })
    .await;
    if let Err(timed_out) = waited {
        members_failed(e2e, &object, timed_out.to_string()).await;
    }
}

pub(crate) async fn three_real_members_become_ready_as_voters() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&cluster_yaml("trio", 3, &current, "Delete"))
        .await;
    wait_ready_with_voters(&e2e, "trio", 3, &current).await;
    // Each member has its own bound claim, made by the real StatefulSet controller.
    for i in 0..3 {
        assert_eq!(
            e2e.jsonpath(&format!("pvc/data-trio-{i}"), "{.status.phase}")
                .await,
            "Bound"
        );
    }
    let version = etcd_call(&e2e, "trio", "/v3/maintenance/status")
        .await
        .expect("etcd answers its status");
    assert_eq!(version["version"], current.as_str(), "{version}");
    e2e.finish().await;
}

// The real StatefulSet controller replaces a deleted pod; its member starts again on the data of
// the claim it keeps, under the same member ID (a member that lost its data could not).
pub(crate) async fn a_deleted_member_pod_comes_back_on_its_kept_volume() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&cluster_yaml("kept", 3, &current, "Delete"))
        .await;
    wait_ready_with_voters(&e2e, "kept", 3, &current).await;
    let ids = etcd_member_ids(&e2e, "kept")
        .await
        .expect("etcd lists its members");
    assert!(
        ids.len() == 3 && ids.iter().all(|(_, id)| !id.is_empty()),
        "{ids:?}"
    );
    let old_uid = e2e.jsonpath("pod/kept-1", "{.metadata.uid}").await;
    let volume = e2e.jsonpath("pvc/data-kept-1", "{.spec.volumeName}").await;

    e2e.k(&["delete", "pod", "kept-1", "--wait=false"]).await;
    e2e.eventually(
        "kept-1 replaced and its member running again",
        WAIT,
        || async {
            let member = e2e
                .etcd_members()
                .members()
                .into_iter()
                .find(|m| m.pod == "kept-1")?;
            (member.pod_uid != old_uid).then_some(())
        },
    )
    .await;
    wait_ready_with_voters(&e2e, "kept", 3, &current).await;
    assert_eq!(
        etcd_member_ids(&e2e, "kept").await,
        Ok(ids),
        "the same three members, kept-1 with its old ID"
    );
    assert_eq!(
        e2e.jsonpath("pvc/data-kept-1", "{.spec.volumeName}").await,
        volume,
        "the same volume"
    );
    e2e.finish().await;
}

/// 3 → 1 → 3 on real members: etcd's own membership follows the size each time (three voters,
/// one, three again), Ready only once it does. Scaling up again starts the re-added members on
/// the claims kept from before; they join only if the controller does not reuse the old
/// member's data (etcd would refuse it with "rejected Raft message to mismatch member").
pub(crate) async fn scaling_three_to_one_to_three_changes_the_real_membership() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&cluster_yaml("scaled", 3, &current, "Delete"))
        .await;
    wait_ready_with_voters(&e2e, "scaled", 3, &current).await;

    e2e.k(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "scaled",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":1}}"#,
    ])
    .await;
    wait_ready_with_voters(&e2e, "scaled", 1, &current).await;
    assert_eq!(
        e2e.jsonpath("statefulset/scaled", "{.spec.replicas}").await,
        "1"
    );

    e2e.k(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "scaled",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":3}}"#,
    ])
    .await;
    wait_ready_with_voters(&e2e, "scaled", 3, &current).await;
    e2e.finish().await;
}

/// The version of `deploy/samples/etcdcluster.yaml`, which the harness builds for every
/// EtcdCluster test (`support::etcd_members::ensure_sample_release`).
fn sample_version() -> String {
    let sample: Value =
        serde_saphyr::from_str(&ferroplane_testkit::samples::read("etcdcluster.yaml"))
            .expect("the EtcdCluster sample is YAML");
    sample["spec"]["version"]
        .as_str()
        .expect("the sample names its version")
        .trim_start_matches('v')
        .to_owned()
}

/// (minor, patch) of a 3.x version.
fn minor_patch(version: &str) -> (u32, u32) {
    let parts: Vec<u32> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    match parts.as_slice() {
        [3, minor, patch] => (*minor, *patch),
        _ => panic!("{version} is not a 3.x.y version"),
    }
}

/// Patches `spec.version` of EtcdCluster `name`.
async fn set_version(e2e: &E2e, name: &str, version: &str) {
    e2e.k(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        name,
        "--type=merge",
        "-p",
        &format!(r#"{{"spec":{{"version":"{version}"}}}}"#),
    ])
    .await;
}

/// Every `app/` key of cluster `name`, as etcd answers a range read.
async fn app_keys(e2e: &E2e, name: &str) -> Vec<(String, String)> {
    let range = serde_json::json!({"key": b64("app/"), "range_end": b64("app0")});
    let answer = etcd_post(e2e, name, "/v3/kv/range", range)
        .await
        .expect("etcd answers a range read");
    key_values(&answer)
}

/// etcd's published path from a 3.5 below 3.5.26 (the sample's 3.5.17) to 3.6, on three real
/// members: the direct move is refused with the path in the message and nothing rolls; the
/// step to the pinned `etcd_upgrade_from` (3.5.26 or later) rolls the members in place; then
/// the pinned 3.6. The same three members (etcd's IDs) and every key written at the start
/// are there after each step.
pub(crate) async fn a_rolling_upgrade_from_3_5_to_3_6_runs_on_real_binaries() {
    let oldest = sample_version();
    let (fixed, current) = versions();
    assert!(
        minor_patch(&oldest) < (5, 26),
        "the sample's {oldest} is below etcd's 3.5.26 floor"
    );
    assert!(
        minor_patch(&fixed) >= (5, 26) && minor_patch(&fixed).0 == 5,
        "versions.yaml pins etcd_upgrade_from {fixed}: it must be 3.5.26 or later"
    );
    assert_eq!(minor_patch(&current).0, 6, "the pinned etcd is a 3.6");
    ensure_releases(&[&oldest, &fixed, &current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&cluster_yaml("upgraded", 3, &oldest, "Delete"))
        .await;
    wait_ready_with_voters(&e2e, "upgraded", 3, &oldest).await;
    let ids = etcd_member_ids(&e2e, "upgraded")
        .await
        .expect("etcd lists its members");
    for i in 0..20 {
        etcd_post(
            &e2e,
            "upgraded",
            "/v3/kv/put",
            serde_json::json!({"key": b64(&format!("app/key-{i:02}")), "value": b64(&format!("value {i}"))}),
        )
        .await
        .expect("etcd takes the key");
    }
    let written: Vec<(String, String)> = (0..20)
        .map(|i| (format!("app/key-{i:02}"), format!("value {i}")))
        .collect();
    assert_eq!(app_keys(&e2e, "upgraded").await, written);

    // Straight to 3.6: refused with the path, the StatefulSet keeps the running version.
    let object = "etcdclusters.etcd.ferroplane.io/upgraded";
    set_version(&e2e, "upgraded", &current).await;
    let message = ferroplane_testkit::eventually("the direct move to 3.6 refused")
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            let synced = e2e
                .jsonpath(object, "{.status.conditions[?(@.type=='Synced')].status}")
                .await;
            let message = e2e
                .jsonpath(object, "{.status.conditions[?(@.type=='Synced')].message}")
                .await;
            if synced == "False"
                && message.contains("UnsupportedUpgrade")
                && message.contains(&current)
            {
                Ok(message)
            } else {
                Err(format!("Synced={synced}: {message}"))
            }
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        message.contains(&oldest)
            && message.contains(
                "upgrade to 3.5.26 or later first, wait for every member to be healthy, then to 3.6"
            ),
        "names what the members run and etcd's path: {message}"
    );
    assert_eq!(
        e2e.jsonpath(
            "statefulset/upgraded",
            "{.metadata.annotations.etcd\\.ferroplane\\.io/version}"
        )
        .await,
        oldest,
        "nothing rolled"
    );

    // The path: the fixed 3.5 first, every member healthy on it, then 3.6.
    set_version(&e2e, "upgraded", &fixed).await;
    wait_ready_with_voters(&e2e, "upgraded", 3, &fixed).await;
    assert_eq!(app_keys(&e2e, "upgraded").await, written, "after {fixed}");
    set_version(&e2e, "upgraded", &current).await;
    wait_ready_with_voters(&e2e, "upgraded", 3, &current).await;
    let status = etcd_call(&e2e, "upgraded", "/v3/maintenance/status")
        .await
        .expect("etcd answers its status");
    assert_eq!(status["version"], current.as_str(), "{status}");
    assert_eq!(app_keys(&e2e, "upgraded").await, written, "after {current}");
    assert_eq!(
        etcd_member_ids(&e2e, "upgraded").await,
        Ok(ids),
        "the same three members, upgraded in place"
    );
    e2e.finish().await;
}

pub(crate) async fn deletion_removes_the_members_or_orphans_them_running() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&cluster_yaml("deleted", 1, &current, "Delete"))
        .await;
    e2e.apply(&cluster_yaml("orphaned", 1, &current, "Orphan"))
        .await;
    wait_ready_with_voters(&e2e, "deleted", 1, &current).await;
    wait_ready_with_voters(&e2e, "orphaned", 1, &current).await;

    e2e.k(&[
        "delete",
        "etcdclusters.etcd.ferroplane.io",
        "deleted",
        "orphaned",
        "--timeout=120s",
    ])
    .await;
    // Delete: the StatefulSet goes, the real garbage collector deletes its pod and the member
    // stops; the claim stays (as a StatefulSet keeps its claims).
    e2e.eventually("the Delete cluster's member to stop", WAIT, || async {
        let left = e2e
            .kubectl(
                &[
                    "get",
                    "statefulset,pod",
                    "-l",
                    "app.kubernetes.io/instance=deleted",
                    "-o",
                    "name",
                ],
                None,
            )
            .await;
        let gone = left.stdout.trim().is_empty()
            && !e2e
                .etcd_members()
                .members()
                .iter()
                .any(|m| m.pod == "deleted-0");
        gone.then_some(())
    })
    .await;
    assert_eq!(
        e2e.jsonpath("pvc/data-deleted-0", "{.status.phase}").await,
        "Bound"
    );
    // Orphan: everything stays and etcd still answers.
    assert_eq!(
        e2e.jsonpath("statefulset/orphaned", "{.spec.replicas}")
            .await,
        "1"
    );
    assert_eq!(
        etcd_members(&e2e, "orphaned").await,
        Ok(voters("orphaned", 1)),
        "the orphaned member still runs"
    );
    e2e.finish().await;
}

/// Value of the sample `metric` (no labels) in the Prometheus text a real member serves on its
/// metrics port.
async fn member_metric(e2e: &E2e, pod: &str, metric: &str) -> Result<f64, String> {
    let member = e2e
        .etcd_members()
        .members()
        .into_iter()
        .find(|m| m.pod == pod)
        .ok_or_else(|| format!("no etcd runs for {pod}"))?;
    let url = format!("http://{}:2381/metrics", member.address);
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let text = http
        .get(&url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .text()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{metric} ")))
        .ok_or_else(|| format!("{url} has no {metric}"))?
        .trim()
        .parse()
        .map_err(|e| format!("{metric}: {e}"))
}

/// Waits until the member of `pod` reports the space quota `bytes`.
async fn wait_quota(e2e: &E2e, pod: &str, bytes: f64) {
    let waited = ferroplane_testkit::eventually(format!("{pod} runs with a quota of {bytes}"))
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            match member_metric(e2e, pod, "etcd_server_quota_backend_bytes").await {
                Ok(q) if q == bytes => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
    if let Err(e) = waited {
        panic!("{e}");
    }
}

// `spec.options` reach the real members (etcd reports the quota it runs with on the metrics
// port ferroplane opens), a change of them restarts the members with the new value, and
// `kubectl scale` on the EtcdCluster (its `/scale` subresource) grows the real membership.
pub(crate) async fn options_metrics_and_kubectl_scale_on_real_members() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let yaml = |quota: u64| {
        format!(
            "{}  options:\n    quota-backend-bytes: {quota}\n",
            cluster_yaml("opts", 1, &current, "Delete")
        )
    };
    e2e.apply(&yaml(104_857_600)).await;
    wait_ready_with_voters(&e2e, "opts", 1, &current).await;
    wait_quota(&e2e, "opts-0", 104_857_600.0).await;

    e2e.apply(&yaml(209_715_200)).await;
    wait_quota(&e2e, "opts-0", 209_715_200.0).await;
    wait_ready_with_voters(&e2e, "opts", 1, &current).await;

    e2e.k(&[
        "scale",
        "etcdclusters.etcd.ferroplane.io/opts",
        "--replicas=3",
    ])
    .await;
    assert_eq!(
        e2e.jsonpath("etcdclusters.etcd.ferroplane.io/opts", "{.spec.size}")
            .await,
        "3"
    );
    wait_ready_with_voters(&e2e, "opts", 3, &current).await;
    let scale = e2e
        .k(&[
            "get",
            "etcdclusters.etcd.ferroplane.io/opts",
            "--subresource=scale",
            "-o",
            "jsonpath={.spec.replicas}/{.status.replicas}/{.status.selector}",
        ])
        .await;
    assert_eq!(
        scale,
        "3/3/app.kubernetes.io/instance=opts,app.kubernetes.io/name=etcd"
    );
    e2e.finish().await;
}

/// PEM of `key` in Secret `name`.
pub(crate) async fn secret_text(e2e: &E2e, name: &str, key: &str) -> String {
    use base64::Engine as _;
    let encoded = e2e
        .jsonpath(
            &format!("secret/{name}"),
            &format!("{{.data.{}}}", key.replace('.', "\\.")),
        )
        .await;
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .expect("base64"),
    )
    .expect("PEM text")
}

// `tls: {}` on real members: they bootstrap over TLS peer links with the certificates
// ferroplane made, the controller lists them through the gateway with its client certificate
// (Ready with three healthy voters), a client with that certificate is answered, and plain HTTP
// to the client port is not.
pub(crate) async fn a_tls_cluster_runs_on_real_members_with_generated_certificates() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&format!(
        "{}  tls: {{}}\n",
        cluster_yaml("sealed", 3, &current, "Delete")
    ))
    .await;
    let object = "etcdclusters.etcd.ferroplane.io/sealed";
    let healthy_voters = || async {
        e2e.jsonpath(
            object,
            "{range .status.members[?(@.role=='Voter')]}{.healthy}{\"\\n\"}{end}",
        )
        .await
        .lines()
        .filter(|h| *h == "true")
        .count()
    };
    let waited = ferroplane_testkit::eventually("sealed Ready with three healthy voters over TLS")
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            let ready = e2e
                .jsonpath(object, "{.status.conditions[?(@.type=='Ready')].status}")
                .await;
            let voters = healthy_voters().await;
            if ready == "True" && voters == 3 {
                Ok(())
            } else {
                Err(format!("Ready={ready}, healthy voters {voters}"))
            }
        })
        .await;
    if let Err(e) = waited {
        members_failed(&e2e, object, e.to_string()).await;
    }
    let tls = provider_etcd::tls::ClientTls {
        ca_pem: secret_text(&e2e, "sealed-tls-client", "ca.crt").await,
        cert_pem: secret_text(&e2e, "sealed-tls-client", "tls.crt").await,
        key_pem: secret_text(&e2e, "sealed-tls-client", "tls.key").await,
    };
    let http = provider_etcd::membership::http_with_tls(
        reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .dns_resolver(e2e.etcd_members().addresses()),
        &tls,
    )
    .expect("a TLS client");
    let url = format!(
        "https://sealed-client.{}.svc:2379/v3/cluster/member/list",
        e2e.namespace
    );
    let list: Value = http
        .post(&url)
        .body("{}")
        .send()
        .await
        .expect("etcd answers the client certificate")
        .json()
        .await
        .expect("JSON");
    let mut names: Vec<&str> = list["members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["sealed-0", "sealed-1", "sealed-2"]);
    let plain = etcd_call(&e2e, "sealed", "/v3/cluster/member/list").await;
    assert!(plain.is_err(), "plain HTTP is not served: {plain:?}");
    e2e.finish().await;
}

/// The client certificate of TLS cluster `name`, as its Secret holds it now.
pub(crate) async fn client_tls(e2e: &E2e, name: &str) -> provider_etcd::tls::ClientTls {
    let secret = format!("{name}-tls-client");
    provider_etcd::tls::ClientTls {
        ca_pem: secret_text(e2e, &secret, "ca.crt").await,
        cert_pem: secret_text(e2e, &secret, "tls.crt").await,
        key_pem: secret_text(e2e, &secret, "tls.key").await,
    }
}

/// `POST <path>` with `body` at TLS cluster `name`'s client Service, presenting `tls` and
/// trusting its `ca.crt` alone.
pub(crate) async fn etcd_tls_post(
    e2e: &E2e,
    tls: &provider_etcd::tls::ClientTls,
    name: &str,
    path: &str,
    body: Value,
) -> Result<Value, String> {
    let http = provider_etcd::membership::http_with_tls(
        reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .dns_resolver(e2e.etcd_members().addresses()),
        tls,
    )
    .map_err(|e| e.to_string())?;
    let url = format!("https://{name}-client.{}.svc:2379{path}", e2e.namespace);
    let response = http
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{url}: {e:?}"))?;
    response.json().await.map_err(|e| format!("{url}: {e}"))
}

/// Failed attempts of [`put_until_acknowledged`]: refused because the client trusted a CA
/// that no longer signs the members' certificates (its copy of `ca.crt` was older than the
/// Secret's), or anything else (a member restarting, no leader).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Failures {
    pub(crate) stale_trust: u32,
    pub(crate) other: u32,
}

/// Writes `key` = `key` into TLS cluster `name` as a client that re-reads its certificate
/// Secret when a call fails would, until etcd acknowledges it; the failed attempts. Gives up
/// (`None`) only once `stop` is set.
pub(crate) async fn put_until_acknowledged(
    e2e: &E2e,
    name: &str,
    tls: &mut provider_etcd::tls::ClientTls,
    key: &str,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<Failures> {
    let mut failed = Failures::default();
    loop {
        let body = serde_json::json!({"key": b64(key), "value": b64(key)});
        match etcd_tls_post(e2e, tls, name, "/v3/kv/put", body).await {
            Ok(answer) if answer.get("header").is_some() => return Some(failed),
            outcome => {
                if format!("{outcome:?}").contains("UnknownIssuer") {
                    failed.stale_trust += 1;
                } else {
                    failed.other += 1;
                }
                println!("put {key} failed ({failed:?}): {outcome:?}");
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                *tls = client_tls(e2e, name).await;
            }
        }
    }
}

/// Panics with `e` and what the cluster, its events, the member runner and the end of each
/// member's log say (the logs' directory goes with the test).
pub(crate) async fn members_failed(e2e: &E2e, object: &str, e: String) -> ! {
    let mut logs = String::new();
    if let Ok(entries) = std::fs::read_dir(e2e.etcd_members().log_dir()) {
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(15)..].join("\n");
            logs.push_str(&format!("\n--- {} ---\n{tail}", path.display()));
        }
    }
    panic!(
        "{e}\n{}\n{}\nmember runner: {:?}\nmember logs:{logs}",
        e2e.k(&["describe", object]).await,
        e2e.k(&["get", "events", "--sort-by=.lastTimestamp"]).await,
        e2e.etcd_members().problems(),
    )
}

/// Applies a three-member cluster `name` of etcd `version` with generated certificates and waits
/// until it is Ready with three healthy voters; its object's name for kubectl.
pub(crate) async fn tls_cluster_ready(e2e: &E2e, name: &str, version: &str) -> String {
    e2e.apply(&format!(
        "{}  tls: {{}}\n",
        cluster_yaml(name, 3, version, "Delete")
    ))
    .await;
    let object = format!("etcdclusters.etcd.ferroplane.io/{name}");
    wait_healthy_voters(
        e2e,
        &object,
        &format!("{name} Ready with three healthy voters"),
    )
    .await;
    object
}

/// Waits until `object` is Ready with three healthy voters (`what` names the wait).
pub(crate) async fn wait_healthy_voters(e2e: &E2e, object: &str, what: &str) {
    let healthy_voters = || async {
        let ready = e2e
            .jsonpath(object, "{.status.conditions[?(@.type=='Ready')].status}")
            .await;
        let voters = e2e
            .jsonpath(
                object,
                "{range .status.members[?(@.role=='Voter')]}{.healthy}{\"\\n\"}{end}",
            )
            .await
            .lines()
            .filter(|h| *h == "true")
            .count();
        if ready == "True" && voters == 3 {
            Ok(())
        } else {
            Err(format!("Ready={ready}, healthy voters {voters}"))
        }
    };
    if let Err(e) = ferroplane_testkit::eventually(what)
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(healthy_voters)
        .await
    {
        members_failed(e2e, object, e.to_string()).await;
    }
}

/// A CA near its end on real members (as if eight of its ten years had passed: the CA
/// Secret's expiry annotation, which the controller schedules by, is moved forward; etcd
/// itself checks the real validity): the controller trusts a new CA beside it, reissues every
/// certificate from the new one and drops the old one, the members restarting one at a time
/// after each step. Keys written before, during (a client that keeps writing) and after are
/// all there, with few failed writes and no long gap between acknowledged ones (bounds below);
/// the controller reaches the members throughout (each step waits until it sees
/// every member healthy); at the end every Secret trusts the new CA alone, a client trusting
/// only the new CA is answered, and the old CA's client certificate is refused in the TLS
/// handshake.
pub(crate) async fn a_tls_cluster_rotates_its_ca_without_stopping() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let name = "rotor";
    let object = tls_cluster_ready(&e2e, name, &current).await;
    let old_ca = secret_text(&e2e, &format!("{name}-tls-ca"), "tls.crt").await;
    let old_client = client_tls(&e2e, name).await;
    let stop = AtomicBool::new(false);
    let mut tls = old_client.clone();
    for i in 0..5 {
        put_until_acknowledged(&e2e, name, &mut tls, &format!("before-{i}"), &stop)
            .await
            .expect("written");
    }
    let pods_before: Vec<String> = e2e
        .etcd_members()
        .members()
        .into_iter()
        .map(|m| m.pod_uid)
        .collect();

    let due = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_hours(24 * 30))
        .expect("a date");
    e2e.k(&[
        "annotate",
        "--overwrite",
        &format!("secret/{name}-tls-ca"),
        &format!("etcd.ferroplane.io/not-after={due}"),
    ])
    .await;
    let writer = async {
        let mut tls = tls.clone();
        let (mut written, mut failed) = (Vec::new(), Failures::default());
        let mut acknowledged = std::time::Instant::now();
        let mut longest_gap = Duration::ZERO;
        while !stop.load(Ordering::SeqCst) {
            let key = format!("during-{}", written.len());
            match put_until_acknowledged(&e2e, name, &mut tls, &key, &stop).await {
                Some(f) => {
                    failed.stale_trust += f.stale_trust;
                    failed.other += f.other;
                    written.push(key);
                    longest_gap = longest_gap.max(acknowledged.elapsed());
                    acknowledged = std::time::Instant::now();
                }
                None => break,
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        (written, failed, longest_gap)
    };
    let rotated = async {
        let waited = ferroplane_testkit::eventually("a CARotated event")
            .within(WAIT * 3)
            .every(Duration::from_millis(500))
            .try_until_async(|| async {
                let events = e2e
                    .k(&[
                        "get",
                        "events",
                        "--field-selector",
                        &format!("involvedObject.name={name}"),
                        "-o",
                        "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
                    ])
                    .await;
                if events.lines().any(|r| r == "CARotated") {
                    Ok(events)
                } else {
                    Err(events)
                }
            })
            .await;
        stop.store(true, Ordering::SeqCst);
        waited
    };
    let ((during, failed, longest_gap), rotated) = futures::join!(writer, rotated);
    let events = match rotated {
        Ok(events) => events,
        Err(e) => members_failed(&e2e, &object, e.to_string()).await,
    };
    println!(
        "rotation: {} keys written during it; failed attempts: {failed:?}; longest gap between \
         acknowledged writes {longest_gap:?}; events:\n{events}",
        during.len()
    );
    let mut steps: Vec<&str> = events
        .lines()
        .filter(|r| r.starts_with("CARotat"))
        .collect();
    steps.sort_unstable();
    assert_eq!(
        steps,
        ["CARotated", "CARotating", "CARotating", "CARotating"],
        "three phases, then done"
    );
    assert!(!during.is_empty(), "the writer wrote during the rotation");
    // Without stopping: three phases each restart the three members one at a time; a write
    // that meets a restarting member (a 5 s timeout) or a trust one step behind fails and is
    // retried elsewhere. Seen on 2 loaded cores: 80 writes, 3 failed attempts, longest gap 7.3 s.
    // The bounds: one failed attempt per member restart and one stale trust per phase, and no
    // more than three timed-out attempts in a row between two acknowledged writes.
    assert!(
        failed.stale_trust + failed.other <= 12,
        "too many failed writes during the rotation: {failed:?}"
    );
    assert!(
        longest_gap < Duration::from_secs(20),
        "the cluster took no writes for {longest_gap:?} during the rotation"
    );

    // The controller still reaches every member.
    wait_healthy_voters(&e2e, &object, "rotor Ready again after the rotation").await;
    // Every Secret trusts the new CA alone; every leaf is the new CA's.
    let new_ca = secret_text(&e2e, &format!("{name}-tls-ca"), "tls.crt").await;
    assert_ne!(new_ca, old_ca, "a new CA");
    let issuer = provider_etcd::tls::certs::fingerprint(&new_ca);
    for secret in ["ca", "peer", "server", "client"] {
        let secret = format!("{name}-tls-{secret}");
        assert_eq!(
            secret_text(&e2e, &secret, "ca.crt").await,
            new_ca,
            "{secret} trusts the new CA alone"
        );
        if !secret.ends_with("-ca") {
            assert_eq!(
                e2e.jsonpath(
                    &format!("secret/{secret}"),
                    "{.metadata.annotations.etcd\\.ferroplane\\.io/issuer}"
                )
                .await,
                issuer,
                "{secret} is the new CA's"
            );
        }
    }
    assert_eq!(
        e2e.jsonpath(&format!("secret/{name}-tls-ca"), "{.data.next\\.crt}")
            .await,
        "",
        "no CA waiting"
    );
    // The members restarted (on the new trust), each one.
    let pods_after: Vec<String> = e2e
        .etcd_members()
        .members()
        .into_iter()
        .map(|m| m.pod_uid)
        .collect();
    assert_eq!(pods_after.len(), 3);
    assert!(
        pods_after.iter().all(|uid| !pods_before.contains(uid)),
        "every member pod was replaced: {pods_before:?} → {pods_after:?}"
    );
    // A client trusting only the new CA is answered (the server certificate is the new CA's);
    // the old CA's client certificate is refused (no member trusts the old CA any more).
    let new_client = client_tls(&e2e, name).await;
    assert_eq!(new_client.ca_pem, new_ca);
    let mut tls = new_client.clone();
    for i in 0..5 {
        put_until_acknowledged(&e2e, name, &mut tls, &format!("after-{i}"), &stop)
            .await
            .expect("written");
    }
    // The old certificate beside the new one, the same call, trust and endpoint: only the
    // client certificate differs. The members refuse it in the TLS handshake: the client reads
    // the alert (UnknownCA), or, under TLS 1.3 where the alert comes after the client's own
    // finish, sees the connection closed first (hyper words that ChannelClosed or "connection
    // closed", depending on when it notices).
    let stale = provider_etcd::tls::ClientTls {
        ca_pem: new_ca.clone(),
        ..old_client
    };
    let member_list = |tls: provider_etcd::tls::ClientTls| {
        let e2e = &e2e;
        async move {
            etcd_tls_post(
                e2e,
                &tls,
                name,
                "/v3/cluster/member/list",
                serde_json::json!({}),
            )
            .await
        }
    };
    let answered = member_list(new_client.clone()).await;
    assert!(
        answered.is_ok(),
        "the new client certificate is answered: {answered:?}"
    );
    assert_refused_in_handshake(&e2e, &stale, name).await;
    assert_keys_kept(&e2e, &new_client, name, &during).await;
    e2e.finish().await;
}

/// The old CA's client certificate is refused in the TLS handshake, not for another reason. An
/// attempt that fails otherwise (a timeout on a loaded machine), or that a member still answers,
/// is made again until `WAIT`: the StatefulSet may report every pod updated and ready a moment
/// before the last member's process restarted on the new bundle (a CI run at load 12 was
/// answered once right after the roll); a member that never refuses fails the test.
pub(crate) async fn assert_refused_in_handshake(
    e2e: &E2e,
    stale: &provider_etcd::tls::ClientTls,
    name: &str,
) {
    e2e.eventually(
        "the old CA's client certificate refused in the TLS handshake",
        WAIT,
        || async {
            match etcd_tls_post(
                e2e,
                stale,
                name,
                "/v3/cluster/member/list",
                serde_json::json!({}),
            )
            .await
            {
                Ok(answer) => Err(format!(
                    "the old CA's client certificate was answered: {answer}"
                )),
                Err(refusal) if refused_in_handshake(&refusal) => Ok(()),
                Err(other) => Err(other),
            }
        },
    )
    .await;
}

fn refused_in_handshake(error: &str) -> bool {
    error.contains("fatal alert: UnknownCA")
        || error.contains("fatal alert: BadCertificate")
        || error.contains("ChannelClosed")
        || error.contains("connection closed")
}

/// Nothing written before (`before-0..4`), during (`during`) or after (`after-0..4`) a rotation
/// is lost: each key reads back as its own value through `client`.
pub(crate) async fn assert_keys_kept(
    e2e: &E2e,
    client: &provider_etcd::tls::ClientTls,
    name: &str,
    during: &[String],
) {
    let keys: Vec<String> = (0..5)
        .map(|i| format!("before-{i}"))
        .chain(during.iter().cloned())
        .chain((0..5).map(|i| format!("after-{i}")))
        .collect();
    for key in &keys {
        let got = etcd_tls_post(
            e2e,
            client,
            name,
            "/v3/kv/range",
            serde_json::json!({"key": b64(key)}),
        )
        .await
        .unwrap_or_else(|e| panic!("reading {key}: {e}"));
        assert_eq!(unb64(&got["kvs"][0]["value"]), *key, "{key} kept: {got}");
    }
}

/// `POST <path>` with a JSON body at the cluster's client Service, through the members'
/// resolver; etcd's answer.
pub(crate) async fn etcd_post(
    e2e: &E2e,
    name: &str,
    path: &str,
    body: Value,
) -> Result<Value, String> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .dns_resolver(e2e.etcd_members().addresses())
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!("http://{name}-client.{}.svc:2379{path}", e2e.namespace);
    let response = http
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    response.json().await.map_err(|e| format!("{url}: {e}"))
}

pub(crate) fn b64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

pub(crate) fn unb64(value: &Value) -> String {
    use base64::Engine as _;
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(value.as_str().unwrap_or_default())
            .unwrap_or_default(),
    )
    .unwrap_or_default()
}

/// Write keys, back up through the EtcdBackup controller into the mock's OSS, destroy the
/// cluster, restore the newest snapshot into a new three-member cluster with `spec.restore`
/// (claims and a Job per member, run for real: ferroplane's fetch and commit steps and
/// etcdutl), read every key back from it. A cluster re-created under the old name finds the
/// old cluster's kept volumes and waits instead of restoring over them.
#[allow(clippy::too_many_lines)]
pub(crate) async fn a_backup_in_oss_restores_into_a_new_cluster_with_its_keys() {
    let (old, _) = versions();
    ensure_releases(&[&old]).await;
    let tag = format!("v{old}");
    tokio::task::spawn_blocking(move || Builder::new(None).ensure_etcdutl(&tag))
        .await
        .expect("the build does not panic")
        .unwrap_or_else(|e| panic!("etcdutl builds: {e}"));
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    crate::e2e_etcd_backup::oss_with_bucket(&e2e).await;
    e2e.apply(&cluster_yaml("src", 1, &old, "Delete")).await;
    wait_ready_with_voters(&e2e, "src", 1, &old).await;
    for i in 0..20 {
        etcd_post(
            &e2e,
            "src",
            "/v3/kv/put",
            serde_json::json!({"key": b64(&format!("app/key-{i:02}")), "value": b64(&format!("value {i}"))}),
        )
        .await
        .expect("etcd takes the key");
    }
    e2e.apply(&crate::e2e_etcd_backup::backup_yaml(
        &e2e,
        "src-backup",
        "src",
        crate::e2e_etcd_backup::BUCKET,
        "",
    ))
    .await;
    let object = "etcdbackups.etcd.ferroplane.io/src-backup";
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    let key = e2e.jsonpath(object, "{.status.snapshots[0].key}").await;
    let sha256 = e2e.jsonpath(object, "{.status.snapshots[0].sha256}").await;

    // Destroy the cluster: nothing of it runs any more; its volume is kept (whenDeleted: Retain).
    destroy(&e2e, "src").await;

    // A new cluster of three restored from the backup's newest snapshot.
    let restored = format!(
        "{}  restore:\n    from:\n      backupRef:\n        name: src-backup\n",
        cluster_yaml("restored", 3, &old, "Delete")
    );
    e2e.apply(&restored).await;
    wait_ready_with_voters(&e2e, "restored", 3, &old).await;
    let cluster = "etcdclusters.etcd.ferroplane.io/restored";
    assert_eq!(
        e2e.jsonpath(cluster, "{.status.restore.snapshot}").await,
        format!("oss://{}/{key}", crate::e2e_etcd_backup::BUCKET)
    );
    assert_eq!(
        e2e.jsonpath(cluster, "{.status.restore.done}").await,
        "true"
    );
    assert_eq!(
        e2e.jsonpath(cluster, "{.status.restore.restoredMembers}")
            .await,
        "3"
    );
    for ordinal in 0..3 {
        let claim = format!("persistentvolumeclaims/data-restored-{ordinal}");
        assert_eq!(
            e2e.jsonpath(
                &claim,
                "{.metadata.annotations.etcd\\.ferroplane\\.io/restore-state}"
            )
            .await,
            "done",
            "{claim} holds the snapshot"
        );
    }
    let range = serde_json::json!({"key": b64("app/"), "range_end": b64("app0")});
    let answer = etcd_post(&e2e, "restored", "/v3/kv/range", range)
        .await
        .expect("the restored cluster answers");
    let kvs = key_values(&answer);
    let wanted: Vec<(String, String)> = (0..20)
        .map(|i| (format!("app/key-{i:02}"), format!("value {i}")))
        .collect();
    assert_eq!(kvs, wanted, "every key written before the backup is back");
    // The Jobs and the Secret holding the signed URL go once the members run.
    crate::e2e_etcd_restore::wait_restore_removed(&e2e, "restored", WAIT).await;
    let events = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "reason=MemberRestored",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(
        events.lines().count(),
        3,
        "one MemberRestored event per member: {events}"
    );
    assert!(!sha256.is_empty());

    // Under the old name, the kept volume of `src` stands where member 0's would go.
    let again = format!(
        "{}  restore:\n    from:\n      backupRef:\n        name: src-backup\n",
        cluster_yaml("src", 1, &old, "Delete")
    );
    e2e.apply(&again).await;
    let message = e2e
        .eventually("the restore waits for the old volume", WAIT, || async {
            let message = e2e
                .jsonpath(
                    "etcdclusters.etcd.ferroplane.io/src",
                    "{.status.conditions[?(@.type=='Synced')].message}",
                )
                .await;
            message
                .contains("was not made for this restore")
                .then_some(message)
        })
        .await;
    assert!(message.contains("data-src-0"), "{message}");
    let jobs = e2e
        .k(&[
            "get",
            "jobs",
            "-l",
            "etcd.ferroplane.io/restore-of=src",
            "-o",
            "name",
        ])
        .await;
    assert!(
        jobs.trim().is_empty(),
        "nothing runs next to the old volume: {jobs}"
    );
    e2e.finish().await;
}

/// Deletes EtcdCluster `name` and waits until none of its members runs.
async fn destroy(e2e: &E2e, name: &str) {
    e2e.k(&[
        "delete",
        &format!("etcdclusters.etcd.ferroplane.io/{name}"),
        "--wait=true",
    ])
    .await;
    let prefix = format!("{name}-");
    e2e.eventually("the members are gone", WAIT, || async {
        e2e.etcd_members()
            .members()
            .iter()
            .all(|m| !m.pod.starts_with(&prefix))
            .then_some(())
    })
    .await;
}

/// The (key, value) pairs of a `/v3/kv/range` answer.
pub(crate) fn key_values(answer: &Value) -> Vec<(String, String)> {
    answer["kvs"]
        .as_array()
        .map(|kvs| {
            kvs.iter()
                .map(|kv| (unb64(&kv["key"]), unb64(&kv["value"])))
                .collect()
        })
        .unwrap_or_default()
}

/// Where a claim's volume is on this machine (the provisioner's hostPath).
async fn volume_dir(e2e: &E2e, claim: &str) -> std::path::PathBuf {
    let pv = e2e
        .eventually("the claim is bound", WAIT, || async {
            let pv = e2e
                .jsonpath(
                    &format!("persistentvolumeclaims/{claim}"),
                    "{.spec.volumeName}",
                )
                .await;
            (!pv.is_empty()).then_some(pv)
        })
        .await;
    std::path::PathBuf::from(
        e2e.jsonpath(&format!("persistentvolumes/{pv}"), "{.spec.hostPath.path}")
            .await,
    )
}

/// An EtcdBackup into a volume, of a TLS cluster: each snapshot is a Job (ferroplane's
/// `etcd-snapshot save`, run for real with the client certificate) that writes the file, its
/// metadata, prunes beyond `keep` and reports; the status lists what the volume holds, whose
/// file's trailer is the SHA-256 the status names. The cluster has root auth too, so the Job
/// authenticates as the controller does. The cluster destroyed, a new TLS cluster of three
/// restored from the backup (its Jobs mount the backup's claim; root's password comes with the
/// snapshot) has every key.
#[allow(clippy::too_many_lines)]
pub(crate) async fn a_backup_into_a_volume_is_taken_by_a_job_and_pruned() {
    let (old, _) = versions();
    ensure_releases(&[&old]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let password = "vault root password";
    e2e.apply(&root_secret("vault", password)).await;
    let auth = "  tls: {}\n  auth:\n    rootSecretRef:\n      name: vault-root\n";
    e2e.apply(&format!(
        "{}{auth}",
        cluster_yaml("vault", 1, &old, "Delete")
    ))
    .await;
    e2e.apply(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: backups\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n",
    )
    .await;
    let cluster = "etcdclusters.etcd.ferroplane.io/vault";
    e2e.wait_jsonpath(
        cluster,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    e2e.wait_jsonpath(cluster, "{.status.auth}", "Enabled")
        .await;
    let port = ClientPort::of(&e2e, "vault", true).await;
    let token = port.root_token(password).await.expect("root's token");
    for i in 0..10 {
        port.post(
            "/v3/kv/put",
            serde_json::json!({"key": b64(&format!("app/key-{i:02}")), "value": b64(&format!("value {i}"))}),
            Some(&token),
        )
        .await
        .expect("etcd takes the key");
    }
    let backup_yaml = |trigger: &str| {
        format!(
            "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdBackup\nmetadata:\n  name: to-volume\nspec:\n  clusterRef:\n    name: vault\n  destination:\n    pvc:\n      claimName: backups\n      prefix: etcd/\n  keep: 1\n  trigger: \"{trigger}\"\n"
        )
    };
    e2e.apply(&backup_yaml("first")).await;
    let object = "etcdbackups.etcd.ferroplane.io/to-volume";
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    let first = e2e.jsonpath(object, "{.status.snapshots[0].key}").await;
    let sha256 = e2e.jsonpath(object, "{.status.snapshots[0].sha256}").await;
    let size: u64 = e2e
        .jsonpath(object, "{.status.snapshots[0].size}")
        .await
        .parse()
        .expect("a size");
    assert!(first.starts_with("etcd/"), "{first}");
    let dir = volume_dir(&e2e, "backups").await;
    let bytes = std::fs::read(dir.join(&first)).expect("the snapshot is in the volume");
    assert_eq!(bytes.len() as u64, size);
    assert_eq!(hex::encode(&bytes[bytes.len() - 32..]), sha256);
    let sidecar = std::fs::read_to_string(dir.join(format!("{first}.json"))).expect("metadata");
    assert!(sidecar.contains(&sha256), "{sidecar}");
    let folder = first.rsplit_once('/').map(|(f, _)| f).unwrap_or_default();
    assert_eq!(
        e2e.jsonpath(
            object,
            "{.metadata.annotations.ferroplane\\.io/external-name}"
        )
        .await,
        format!("pvc://backups/{folder}/")
    );

    // Another on demand: keep 1 leaves only the new one, in the status and on the volume.
    e2e.apply(&backup_yaml("second")).await;
    let second = e2e
        .eventually("the second snapshot replaces the first", WAIT, || async {
            let keys = e2e
                .jsonpath(object, "{range .status.snapshots[*]}{.key}{\"\\n\"}{end}")
                .await;
            let keys: Vec<&str> = keys.lines().collect();
            (keys.len() == 1 && keys[0] != first).then(|| keys[0].to_owned())
        })
        .await;
    assert!(dir.join(&second).is_file());
    assert!(!dir.join(&first).exists(), "the first was pruned");
    e2e.eventually("the recorded Jobs are removed", WAIT, || async {
        let left = e2e.k(&["get", "jobs", "-o", "name"]).await;
        (!left.contains("to-volume-snap")).then_some(())
    })
    .await;
    let pruned = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "reason=SnapshotPruned",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(pruned.lines().count(), 1, "{pruned}");

    // Destroyed, then restored from the volume into a new TLS cluster of three.
    destroy(&e2e, "vault").await;
    e2e.apply(&format!(
        "{}{auth}  restore:\n    from:\n      backupRef:\n        name: to-volume\n",
        cluster_yaml("copy", 3, &old, "Delete")
    ))
    .await;
    let copy = "etcdclusters.etcd.ferroplane.io/copy";
    e2e.eventually("copy Ready with three members", WAIT, || async {
        let ready = e2e
            .jsonpath(copy, "{.status.conditions[?(@.type=='Ready')].status}")
            .await;
        let members = e2e.jsonpath(copy, "{.status.readyMembers}").await;
        (ready == "True" && members == "3").then_some(())
    })
    .await;
    assert_eq!(
        e2e.jsonpath(copy, "{.status.restore.snapshot}").await,
        format!("pvc://backups/{second}")
    );
    // `backups` is ReadWriteOnce: one pod served the snapshot, every member's Job fetched it
    // from that pod over HTTPS (a request each in the server's log), and the server went with
    // the Jobs.
    let started = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "reason=SnapshotServerStarted",
            "-o",
            "jsonpath={.items[*].message}",
        ])
        .await;
    assert!(started.contains("copy-restore-source"), "{started}");
    let served: usize = std::fs::read_dir(e2e.etcd_members().log_dir())
        .expect("the runner's logs")
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with("copy-restore-source-") && name.ends_with(".serve.log")
        })
        .map(|entry| {
            std::fs::read_to_string(entry.path())
                .unwrap_or_default()
                .matches("serving the snapshot")
                .count()
        })
        .sum();
    assert!(
        served >= 3,
        "a fetch per member through the server: {served}"
    );
    crate::e2e_etcd_restore::wait_restore_removed(&e2e, "copy", WAIT).await;
    assert_eq!(e2e.jsonpath(copy, "{.status.auth}").await, "Enabled");
    let port = ClientPort::of(&e2e, "copy", true).await;
    let token = port
        .root_token(password)
        .await
        .expect("root's password came with the snapshot");
    let range = serde_json::json!({"key": b64("app/"), "range_end": b64("app0")});
    let answer = port
        .post("/v3/kv/range", range, Some(&token))
        .await
        .expect("the restored cluster answers over TLS");
    let kvs = key_values(&answer);
    let wanted: Vec<(String, String)> = (0..10)
        .map(|i| (format!("app/key-{i:02}"), format!("value {i}")))
        .collect();
    assert_eq!(kvs, wanted, "every key is back");
    e2e.finish().await;
}

/// How the tests reach a cluster's client Service: plain HTTP, or HTTPS with the client
/// certificate ferroplane made (`tls: {}`).
struct ClientPort {
    http: reqwest::Client,
    base: String,
}

impl ClientPort {
    async fn of(e2e: &E2e, name: &str, tls: bool) -> Self {
        let builder = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .dns_resolver(e2e.etcd_members().addresses());
        let host = format!("{name}-client.{}.svc:2379", e2e.namespace);
        if !tls {
            return Self {
                http: builder.build().expect("an HTTP client"),
                base: format!("http://{host}"),
            };
        }
        let secret = format!("{name}-tls-client");
        let tls = provider_etcd::tls::ClientTls {
            ca_pem: secret_text(e2e, &secret, "ca.crt").await,
            cert_pem: secret_text(e2e, &secret, "tls.crt").await,
            key_pem: secret_text(e2e, &secret, "tls.key").await,
        };
        Self {
            http: provider_etcd::membership::http_with_tls(builder, &tls).expect("a TLS client"),
            base: format!("https://{host}"),
        }
    }

    /// `POST <path>` with `token` in the `Authorization` header (etcd's gateway takes it
    /// without a scheme); etcd's answer.
    async fn post(&self, path: &str, body: Value, token: Option<&str>) -> Result<Value, String> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.post(&url).json(&body);
        if let Some(token) = token {
            request = request.header("Authorization", token);
        }
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        response.json().await.map_err(|e| format!("{url}: {e}"))
    }

    /// A token for root with `password`, or etcd's answer.
    async fn root_token(&self, password: &str) -> Result<String, String> {
        let body = serde_json::json!({"name": "root", "password": password});
        let answer = self.post("/v3/auth/authenticate", body, None).await?;
        answer["token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| answer.to_string())
    }

    /// etcd's refusal of reading key `k` with `token`; "" when it reads.
    async fn read_refusal(&self, token: Option<&str>) -> String {
        let body = serde_json::json!({"key": b64("k")});
        match self.post("/v3/kv/range", body, token).await {
            Ok(answer) => answer
                .get("error")
                .or_else(|| answer.get("message"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            Err(e) => e,
        }
    }
}

fn root_secret(name: &str, password: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}-root\ndata:\n  password: {}\n",
        b64(password)
    )
}

// `spec.auth` on a real member: the controller enables authentication once etcd answers
// (Ready, `status.auth: Enabled`); etcd refuses a read without a token and serves root's; a
// new password in the Secret becomes root's (the old one is refused) while the controller,
// authenticating, stays Synced.
pub(crate) async fn root_auth_on_real_members_refuses_anonymous_reads_and_follows_the_secret() {
    root_auth_on_a_real_member("guarded", false).await;
}

// The same with `tls: {}`: the client certificate alone does not make a request root's (etcd's
// gateway never takes the user from a certificate), the token does.
pub(crate) async fn root_auth_with_tls_on_real_members() {
    root_auth_on_a_real_member("guarded-tls", true).await;
}

async fn root_auth_on_a_real_member(name: &str, tls: bool) {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let first = "first-Pa55-wd";
    let second = "second-Pa55-wd";
    e2e.apply(&root_secret(name, first)).await;
    let tls_line = if tls { "  tls: {}\n" } else { "" };
    e2e.apply(&format!(
        "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: {name}\n  annotations:\n    ferroplane.io/poll-interval: 2s\nspec:\n  size: 1\n  version: \"{current}\"\n  auth:\n    rootSecretRef:\n      name: {name}-root\n{tls_line}"
    ))
    .await;
    let object = format!("etcdclusters.etcd.ferroplane.io/{name}");
    let object = object.as_str();
    let ready = |what: &'static str| {
        ferroplane_testkit::eventually(what)
            .within(WAIT)
            .every(Duration::from_millis(500))
    };
    let waited = ready("Ready with authentication enabled")
        .try_until_async(|| async {
            let ready = e2e
                .jsonpath(object, "{.status.conditions[?(@.type=='Ready')].status}")
                .await;
            let auth = e2e.jsonpath(object, "{.status.auth}").await;
            if ready == "True" && auth == "Enabled" {
                Ok(())
            } else {
                Err(format!("Ready={ready} auth={auth}"))
            }
        })
        .await;
    if let Err(e) = waited {
        members_failed(&e2e, object, e.to_string()).await;
    }
    let port = ClientPort::of(&e2e, name, tls).await;
    let anonymous = port.read_refusal(None).await;
    assert!(
        anonymous.contains("user name is empty"),
        "etcd refuses a read without a token: {anonymous:?}"
    );
    let token = port
        .root_token(first)
        .await
        .expect("root authenticates with the Secret's password");
    assert_eq!(port.read_refusal(Some(&token)).await, "", "root reads");

    e2e.apply(&root_secret(name, second)).await;
    let rotated = ready("root's password to become the new one")
        .try_until_async(|| async { port.root_token(second).await.map(|_| ()) })
        .await;
    if let Err(e) = rotated {
        panic!("{e}\n{}", e2e.k(&["describe", object]).await);
    }
    let old = port.root_token(first).await;
    assert!(
        old.as_ref()
            .is_err_and(|e| e.contains("authentication failed")),
        "the old password is refused: {old:?}"
    );
    let token = port.root_token(second).await.expect("new password");
    assert_eq!(port.read_refusal(Some(&token)).await, "");
    // The controller authenticates with the new password from now on: its next reconciles
    // (every 2 s) list, ask status and find nothing to do.
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Synced')].reason}",
        "ReconcileSuccess",
    )
    .await;
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    let described = e2e.k(&["describe", object]).await;
    assert!(described.contains("RootPasswordChanged"), "{described}");
    for password in [first, second] {
        assert!(!described.contains(password), "{described}");
    }
    e2e.finish().await;
}
