//! A TLS cluster's CA Secret deleted by hand on real members, while a client keeps writing with
//! the client Secret's certificate and bundle (re-read when a call fails, as the README asks of
//! clients): the controller rebuilds the CA Secret with the old CA's certificate (from the
//! leaf Secrets' bundle) trusted beside a new CA (`CASecretRecovered`), reissues every
//! certificate from the new CA and drops the old one (`CARotating` twice, `CARotated`), the
//! members restarting one at a time after each step. Then a client with the Secret's bundle is
//! answered at the first attempt, every Secret trusts the new CA alone, the old client
//! certificate is refused by the members, and every key written before, during and after is
//! there.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferroplane::controllers::Kind;

use crate::etcd_members::{
    Failures, WAIT, assert_keys_kept, assert_refused_in_handshake, client_tls, ensure_releases,
    members_failed, put_until_acknowledged, secret_text, tls_cluster_ready, versions,
    wait_healthy_voters,
};
use crate::support::E2e;

const NAME: &str = "phoenix";

/// The reasons of the cluster's events, one a line.
async fn event_reasons(e2e: &E2e) -> String {
    e2e.k(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={NAME}"),
        "-o",
        "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
    ])
    .await
}

pub(crate) async fn a_deleted_ca_secret_is_rebuilt_without_locking_clients_out() {
    let (_, current) = versions();
    ensure_releases(&[&current]).await;
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let object = tls_cluster_ready(&e2e, NAME, &current).await;
    let ca_secret = format!("{NAME}-tls-ca");
    let old_ca = secret_text(&e2e, &ca_secret, "tls.crt").await;
    let old_client = client_tls(&e2e, NAME).await;
    let stop = AtomicBool::new(false);
    let mut tls = old_client.clone();
    for i in 0..5 {
        put_until_acknowledged(&e2e, NAME, &mut tls, &format!("before-{i}"), &stop)
            .await
            .expect("written");
    }
    let pods_before: Vec<String> = e2e
        .etcd_members()
        .members()
        .into_iter()
        .map(|m| m.pod_uid)
        .collect();

    e2e.k(&["delete", "secret", &ca_secret]).await;
    let writer = async {
        let mut tls = tls.clone();
        let (mut written, mut failed) = (Vec::new(), Failures::default());
        while !stop.load(Ordering::SeqCst) {
            let key = format!("during-{}", written.len());
            match put_until_acknowledged(&e2e, NAME, &mut tls, &key, &stop).await {
                Some(f) => {
                    failed.stale_trust += f.stale_trust;
                    failed.other += f.other;
                    written.push(key);
                }
                None => break,
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        (written, failed)
    };
    let rotated = async {
        let waited = ferroplane_testkit::eventually("a CARotated event after the recovery")
            .within(WAIT * 3)
            .every(Duration::from_millis(500))
            .try_until_async(|| async {
                let events = event_reasons(&e2e).await;
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
    let ((during, failed), rotated) = futures::join!(writer, rotated);
    let events = match rotated {
        Ok(events) => events,
        Err(e) => members_failed(&e2e, &object, e.to_string()).await,
    };
    println!(
        "recovery: {} keys written during it; failed attempts: {failed:?}; events:\n{events}",
        during.len()
    );
    let mut steps: Vec<&str> = events.lines().filter(|r| r.starts_with("CA")).collect();
    steps.sort_unstable();
    assert_eq!(
        steps,
        ["CARotated", "CARotating", "CARotating", "CASecretRecovered"],
        "rebuilt with overlap (not replaced cold), then reissued and the old CA dropped"
    );
    assert!(!during.is_empty(), "the writer wrote during the recovery");
    // The same bounds as a rotation's (three rolls of three members; seen: 90 writes, one
    // stale trust and one timeout).
    assert!(
        failed.stale_trust + failed.other <= 12,
        "too many failed writes during the recovery: {failed:?}"
    );

    wait_healthy_voters(&e2e, &object, "phoenix Ready again after the recovery").await;
    // After the rotation: a client with the Secret's bundle and certificate is answered at
    // once, every time.
    let new_client = client_tls(&e2e, NAME).await;
    let mut tls = new_client.clone();
    for i in 0..5 {
        let failures = put_until_acknowledged(&e2e, NAME, &mut tls, &format!("after-{i}"), &stop)
            .await
            .expect("written");
        assert_eq!(
            (failures.stale_trust, failures.other),
            (0, 0),
            "no failed request after the rotation completed"
        );
    }
    // Every Secret trusts the new CA alone, which has its key again.
    let new_ca = secret_text(&e2e, &ca_secret, "tls.crt").await;
    assert_ne!(new_ca, old_ca, "a new CA");
    assert!(
        !secret_text(&e2e, &ca_secret, "tls.key").await.is_empty(),
        "the new CA's key is kept"
    );
    for secret in ["ca", "peer", "server", "client"] {
        let secret = format!("{NAME}-tls-{secret}");
        assert_eq!(
            secret_text(&e2e, &secret, "ca.crt").await,
            new_ca,
            "{secret} trusts the new CA alone"
        );
    }
    // Every member restarted on it: none trusts the old CA any more.
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
    let stale = provider_etcd::tls::ClientTls {
        ca_pem: new_ca.clone(),
        ..old_client
    };
    assert_refused_in_handshake(&e2e, &stale, NAME).await;
    // Nothing written before, during or after is lost.
    assert_keys_kept(&e2e, &new_client, NAME, &during).await;
    e2e.finish().await;
}
