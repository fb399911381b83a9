//! A TLS cluster on the user's own Secrets (`spec.tls.*SecretRef`), on real members: the
//! members trust the bundles of `<name>-tls-trust`, which follows the user's `ca.crt`. The user
//! changes CA the way the README says: a new CA beside the old one in `ca.crt` (the members roll
//! on both: `UserCARolling`, then `UserCARolled`), certificates from the new CA (no restart:
//! etcd reads them at each connection), then the old CA dropped from `ca.crt` (another roll).
//! A client with the new certificate is answered, one with the old certificate refused, and
//! every key written is there.

use std::time::Duration;

use ferroplane::controllers::Kind;
use provider_etcd::names::ClusterNames;
use provider_etcd::tls::ClientTls;
use provider_etcd::tls::certs::{self, Issued, Leaf};
use provider_etcd::tls::secrets::hosts;

use crate::etcd_members::{
    WAIT, assert_refused_in_handshake, b64, cluster_yaml, ensure_releases, etcd_tls_post,
    members_failed, unb64, versions,
};
use crate::support::E2e;

const NAME: &str = "own";
/// How long a read of a kept key may take to answer, asked again after each timeout.
const READ_WITHIN: Duration = Duration::from_secs(60);

/// A CA and the three leaves of cluster `names`, signed by it.
fn issue_all(names: &ClusterNames, ca_name: &str) -> (Issued, Vec<(Leaf, Issued)>) {
    let now = jiff::Timestamp::now();
    let ca = certs::new_ca(ca_name, now).expect("a CA");
    let leaves = Leaf::ALL
        .into_iter()
        .map(|leaf| {
            let issued =
                certs::issue(ca_name, &ca.key_pem, leaf, &hosts(names, leaf), now).expect("a leaf");
            (leaf, issued)
        })
        .collect();
    (ca, leaves)
}

/// Writes the user's three Secrets: `leaves` trusting `bundle`.
async fn write_secrets(e2e: &E2e, leaves: &[(Leaf, Issued)], bundle: &str) {
    for (leaf, issued) in leaves {
        let secret = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": format!("my-{}", leaf.suffix())},
            "type": "kubernetes.io/tls",
            "stringData": {
                "tls.crt": issued.cert_pem,
                "tls.key": issued.key_pem,
                "ca.crt": bundle,
            },
        });
        e2e.apply(&secret.to_string()).await;
    }
}

fn client(leaves: &[(Leaf, Issued)], bundle: &str) -> ClientTls {
    let (_, issued) = leaves
        .iter()
        .find(|(l, _)| *l == Leaf::Client)
        .expect("a client leaf");
    ClientTls {
        ca_pem: bundle.to_owned(),
        cert_pem: issued.cert_pem.clone(),
        key_pem: issued.key_pem.clone(),
    }
}

/// How many events of `reason` the cluster has (each once, however often it was repeated).
async fn events_of(e2e: &E2e, reason: &str) -> usize {
    e2e.k(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={NAME},reason={reason}"),
        "-o",
        "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
    ])
    .await
    .lines()
    .count()
}

/// Waits until the trust Secret settled on the user's bundles alone at a generation above
/// `previous` (each Secret written is a change: several in a row make several overlap steps)
/// and the members run it (the StatefulSet's template carries it, its rollout complete, every
/// replica ready); that generation.
async fn settled_after(e2e: &E2e, object: &str, previous: u64) -> u64 {
    let trust = format!("secret/{NAME}-tls-trust");
    let sts = format!("statefulset/{NAME}");
    let waited = ferroplane_testkit::eventually("the members settled on the user's new ca.crt")
        .within(WAIT * 2)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            let held = e2e
                .jsonpath(
                    &trust,
                    "{.metadata.annotations.etcd\\.ferroplane\\.io/trust-generation} \
                     overlap={.metadata.annotations.etcd\\.ferroplane\\.io/user-ca-overlap}",
                )
                .await;
            let running = e2e
                .jsonpath(
                    &sts,
                    "{.spec.template.metadata.annotations.etcd\\.ferroplane\\.io/trust-generation} \
                     {.status.currentRevision} {.status.updateRevision} {.status.updatedReplicas} \
                     {.status.readyReplicas}",
                )
                .await;
            let held_fields: Vec<&str> = held.split_whitespace().collect();
            let Some(generation) = held_fields
                .first()
                .and_then(|g| g.parse::<u64>().ok())
                .filter(|g| *g > previous && held_fields.get(1) == Some(&"overlap="))
            else {
                return Err(format!("trust Secret: {held}"));
            };
            match running.split_whitespace().collect::<Vec<_>>().as_slice() {
                [g, current, update, "3", "3"]
                    if *g == generation.to_string() && current == update =>
                {
                    Ok(generation)
                }
                _ => Err(format!("trust Secret: {held}; StatefulSet: {running}")),
            }
        })
        .await;
    match waited {
        Ok(generation) => generation,
        Err(e) => members_failed(e2e, object, e.to_string()).await,
    }
}

async fn member_pods(e2e: &E2e) -> Vec<String> {
    e2e.etcd_members()
        .members()
        .into_iter()
        .map(|m| m.pod_uid)
        .collect()
}

async fn put(e2e: &E2e, tls: &ClientTls, key: &str) {
    let body = serde_json::json!({"key": b64(key), "value": b64(key)});
    let outcome = ferroplane_testkit::eventually(format!("{key} written"))
        .within(WAIT)
        .every(Duration::from_millis(500))
        .try_until_async(|| async {
            match etcd_tls_post(e2e, tls, NAME, "/v3/kv/put", body.clone()).await {
                Ok(answer) if answer.get("header").is_some() => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
}

pub(crate) async fn the_users_ca_change_rolls_the_members_trusting_both() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let names = ClusterNames::new(NAME, e2e.namespace.clone()).with_tls(true);
    let (old_ca, old_leaves) = issue_all(&names, "own CA 1");
    write_secrets(&e2e, &old_leaves, &old_ca.cert_pem).await;
    e2e.apply(&format!(
        "{}  tls:\n    peerSecretRef: {{name: my-peer}}\n    serverSecretRef: {{name: my-server}}\n    \
         clientSecretRef: {{name: my-client}}\n",
        cluster_yaml(NAME, 3, &current, "Delete")
    ))
    .await;
    let object = format!("etcdclusters.etcd.ferroplane.io/{NAME}");
    let ready_then = |what: &'static str| {
        let (e2e, object) = (&e2e, object.clone());
        async move {
            let waited = ferroplane_testkit::eventually(what)
                .within(WAIT)
                .every(Duration::from_millis(500))
                .try_until_async(|| async {
                    let voters = e2e
                        .jsonpath(
                            &object,
                            "{range .status.members[?(@.role=='Voter')]}{.healthy}{\"\\n\"}{end}",
                        )
                        .await
                        .lines()
                        .filter(|h| *h == "true")
                        .count();
                    if voters == 3 {
                        Ok(())
                    } else {
                        Err(format!("healthy voters {voters}"))
                    }
                })
                .await;
            if let Err(e) = waited {
                members_failed(e2e, &object, e.to_string()).await;
            }
        }
    };
    ready_then("own: three healthy voters on the user's certificates").await;
    let trust_secret = format!("{NAME}-tls-trust");
    assert_eq!(
        e2e.jsonpath(
            &format!("secret/{trust_secret}"),
            "{.metadata.annotations.etcd\\.ferroplane\\.io/trust-generation}"
        )
        .await,
        "0",
        "recorded without a restart"
    );
    let old_client = client(&old_leaves, &old_ca.cert_pem);
    put(&e2e, &old_client, "before").await;

    // 1. The new CA beside the old one in every ca.crt: both trusted, members roll.
    let (new_ca, new_leaves) = issue_all(&names, "own CA 2");
    let both = format!("{}{}", old_ca.cert_pem, new_ca.cert_pem);
    let pods = member_pods(&e2e).await;
    write_secrets(&e2e, &old_leaves, &both).await;
    // Overlap steps, then the user's bundle alone once every member rolled on them.
    let first = settled_after(&e2e, &object, 0).await;
    assert!(events_of(&e2e, "UserCARolling").await >= 1);
    assert!(events_of(&e2e, "UserCARolled").await >= 1);
    let after_first = member_pods(&e2e).await;
    assert!(
        after_first.iter().all(|uid| !pods.contains(uid)),
        "every member restarted: {pods:?} → {after_first:?}"
    );
    ready_then("own healthy after the first roll").await;
    put(&e2e, &old_client, "trusting-both").await;

    // 2. Certificates from the new CA, both still trusted: no restart needed.
    write_secrets(&e2e, &new_leaves, &both).await;
    let new_client = client(&new_leaves, &both);
    put(&e2e, &new_client, "new-certificates").await;

    // 3. The old CA dropped: another roll, then the old client certificate is refused.
    write_secrets(&e2e, &new_leaves, &new_ca.cert_pem).await;
    settled_after(&e2e, &object, first).await;
    ready_then("own healthy on the new CA alone").await;
    let new_only = client(&new_leaves, &new_ca.cert_pem);
    put(&e2e, &new_only, "after").await;
    assert_eq!(
        e2e.jsonpath(&format!("secret/{trust_secret}"), "{.data.peer-ca\\.crt}")
            .await,
        b64(&new_ca.cert_pem),
        "the members trust the new CA alone"
    );
    let stale = ClientTls {
        ca_pem: new_ca.cert_pem.clone(),
        ..old_client
    };
    assert_refused_in_handshake(&e2e, &stale, NAME).await;
    for key in ["before", "trusting-both", "new-certificates", "after"] {
        // A read that times out on a loaded machine (a CI run saw one at a load of 15) is asked
        // again; what it returns is judged once it answers.
        let got = e2e
            .eventually(&format!("a read of {key}"), READ_WITHIN, || {
                etcd_tls_post(
                    &e2e,
                    &new_only,
                    NAME,
                    "/v3/kv/range",
                    serde_json::json!({"key": b64(key)}),
                )
            })
            .await;
        assert_eq!(unb64(&got["kvs"][0]["value"]), key, "{key} kept: {got}");
    }
    e2e.finish().await;
}
