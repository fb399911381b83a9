//! Tests of `secrets`.

use super::*;
use crate::tls::ca_secret::tests::ca;
use k8s_openapi::ByteString;
use kube::api::ObjectMeta;

fn leaf(ca: &str, hosts: &str, not_after: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            annotations: Some(BTreeMap::from([
                (NOT_AFTER_ANNOTATION.to_owned(), not_after.to_owned()),
                (HOSTS_ANNOTATION.to_owned(), hosts.to_owned()),
            ])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            (CERT.to_owned(), ByteString(b"cert".to_vec())),
            (KEY.to_owned(), ByteString(b"key".to_vec())),
            (CA.to_owned(), ByteString(ca.as_bytes().to_vec())),
        ])),
        ..Secret::default()
    }
}

/// `secret` as the leaf of `state` it is after [`TlsSecrets::apply_leaf`].
fn issued(mut secret: Secret, state: &CaState) -> Secret {
    secret.annotations_mut().insert(
        ISSUER_ANNOTATION.to_owned(),
        certs::fingerprint(&state.current.cert_pem),
    );
    secret
        .data
        .get_or_insert_default()
        .insert(CA.to_owned(), ByteString(state.bundle.clone().into_bytes()));
    secret
}

#[test]
fn a_client_certificate_of_an_older_release_is_issued_again_without_a_common_name() {
    let now: Timestamp = "2026-11-26T00:00:00Z".parse().expect("ts");
    let state = CaState::new(ca("CA"));
    let older = issued(leaf("CA", "", "2027-11-26T00:00:00Z"), &state);
    assert!(matches!(
        leaf_fix(Leaf::Client, Some(&older), Some(&state), &[], now),
        LeafFix::Reissue(why) if why.contains("Common Name")
    ));
    assert_eq!(
        leaf_fix(Leaf::Peer, Some(&older), Some(&state), &[], now),
        LeafFix::Good,
        "only the client certificate is concerned"
    );
    let mut current = older;
    current
        .annotations_mut()
        .insert(SUBJECT_ANNOTATION.to_owned(), CLIENT_SUBJECT.to_owned());
    assert_eq!(
        leaf_fix(Leaf::Client, Some(&current), Some(&state), &[], now),
        LeafFix::Good
    );
}

#[test]
fn leaves_are_reissued_for_a_new_ca_other_hosts_or_near_expiry() {
    let now: Timestamp = "2026-11-26T00:00:00Z".parse().expect("ts");
    let hosts = vec!["a".to_owned(), "b".to_owned()];
    let state = CaState::new(ca("CA"));
    let good = issued(leaf("CA", "a,b", "2027-11-26T00:00:00Z"), &state);
    let reissue = |why: &str| LeafFix::Reissue(why.to_owned());
    assert_eq!(
        leaf_problem(Some(&good), Some(&state), &hosts, now),
        LeafFix::Good
    );
    assert_eq!(
        leaf_problem(None, Some(&state), &hosts, now),
        reissue("missing")
    );
    assert_eq!(
        leaf_problem(Some(&good), Some(&CaState::new(ca("CA2"))), &hosts, now),
        reissue("signed by another CA")
    );
    assert_eq!(
        leaf_problem(
            Some(&issued(leaf("CA", "a", "2027-11-26T00:00:00Z"), &state)),
            Some(&state),
            &hosts,
            now
        ),
        reissue("valid for other host names")
    );
    let soon = issued(leaf("CA", "a,b", "2026-12-20T00:00:00Z"), &state);
    assert!(matches!(
        leaf_problem(Some(&soon), Some(&state), &hosts, now),
        LeafFix::Reissue(why) if why.starts_with("expires at")
    ));
}

#[test]
fn during_a_rotation_leaves_keep_their_certificate_until_the_new_ca_signs() {
    let now: Timestamp = "2026-11-26T00:00:00Z".parse().expect("ts");
    let hosts = vec!["a".to_owned()];
    let steady = CaState::new(ca("old"));
    let before = issued(leaf("old", "a", "2027-11-26T00:00:00Z"), &steady);
    // Phase 1: the old CA's leaf stays, with the bundle of both CAs.
    let trust = steady.trust_both(ca("new"));
    assert_eq!(
        leaf_problem(Some(&before), Some(&trust), &hosts, now),
        LeafFix::Trust
    );
    let trusting = issued(before.clone(), &trust);
    assert_eq!(
        leaf_problem(Some(&trusting), Some(&trust), &hosts, now),
        LeafFix::Good
    );
    assert!(leaves_from(&[Some(trusting.clone())], &trust.current));
    // Phase 2: reissued from the new CA.
    let reissue = trust.reissue();
    assert_eq!(
        leaf_problem(Some(&trusting), Some(&reissue), &hosts, now),
        LeafFix::Reissue("signed by another CA".to_owned())
    );
    assert!(!leaves_from(
        &[Some(trusting), Some(issued(before.clone(), &reissue))],
        &reissue.current
    ));
    // Phase 3: only the bundle changes.
    let dropped = reissue.drop_old();
    let new_leaf = issued(leaf("new", "a", "2027-11-26T00:00:00Z"), &reissue);
    assert_eq!(
        leaf_problem(Some(&new_leaf), Some(&dropped), &hosts, now),
        LeafFix::Trust
    );
}

#[test]
fn a_leaf_from_before_issuer_annotations_counts_as_its_ca_s() {
    let now: Timestamp = "2026-11-26T00:00:00Z".parse().expect("ts");
    let state = CaState::new(ca("CA"));
    let legacy = leaf("CA", "a", "2027-11-26T00:00:00Z");
    assert!(issued_by(&legacy, &state.current));
    // Rewritten once (same certificate) to carry the annotation.
    assert_eq!(
        leaf_problem(Some(&legacy), Some(&state), &["a".to_owned()], now),
        LeafFix::Trust
    );
    assert!(!issued_by(&legacy, &ca("other")));
}

#[test]
fn server_certificates_cover_the_client_service_and_every_member() {
    let names = ClusterNames::new("e", "ns").with_tls(true);
    let server = hosts(&names, Leaf::Server);
    for host in ["e-client.ns.svc", "*.e.ns.svc", "localhost"] {
        assert!(server.iter().any(|h| h == host), "{host} in {server:?}");
    }
    assert_eq!(hosts(&names, Leaf::Peer), names.member_dns_names());
}

#[test]
fn the_client_key_is_never_printed() {
    let tls = ClientTls {
        ca_pem: "ca".into(),
        cert_pem: "cert".into(),
        key_pem: "SECRET-KEY".into(),
    };
    assert!(!format!("{tls:?}").contains("SECRET-KEY"));
}

#[test]
fn while_the_old_ca_key_is_lost_leaves_keep_their_certificate_and_missing_ones_come_from_the_new_ca()
 {
    let now: Timestamp = "2026-11-26T00:00:00Z".parse().expect("ts");
    let hosts = vec!["a".to_owned()];
    let steady = CaState::new(ca("old"));
    let before = issued(leaf("old", "a", "2027-11-26T00:00:00Z"), &steady);
    let (recovered, _) = recovery::recover(
        Some(("e-tls-peer".to_owned(), "old".to_owned())),
        ca("new"),
        Some(0),
        now,
    );
    assert!(recovered.signing_key_lost());
    // The old CA's leaf stays (it cannot be renewed by a lost key), with both CAs trusted.
    assert_eq!(
        leaf_fix(Leaf::Peer, Some(&before), Some(&recovered), &hosts, now),
        LeafFix::Trust
    );
    let trusting = issued(before.clone(), &recovered);
    assert_eq!(
        leaf_fix(Leaf::Peer, Some(&trusting), Some(&recovered), &hosts, now),
        LeafFix::Good
    );
    // Near expiry or other hosts: still kept until the new CA signs.
    let soon = issued(leaf("old", "b", "2026-12-01T00:00:00Z"), &recovered);
    assert_eq!(
        leaf_fix(Leaf::Server, Some(&soon), Some(&recovered), &hosts, now),
        LeafFix::Good
    );
    // An older client certificate too (its Common Name waits for the reissue).
    assert_eq!(
        leaf_fix(Leaf::Client, Some(&trusting), Some(&recovered), &[], now),
        LeafFix::Good
    );
    // A missing leaf cannot wait: the new CA signs it.
    assert_eq!(
        leaf_fix(Leaf::Peer, None, Some(&recovered), &hosts, now),
        LeafFix::Reissue("missing".to_owned())
    );
    assert_eq!(recovered.signer().name, "new");
    // Reissue: the new CA has its key; old leaves are reissued, the new CA's kept.
    let reissue = recovered.reissue();
    assert_eq!(
        leaf_fix(Leaf::Peer, Some(&trusting), Some(&reissue), &hosts, now),
        LeafFix::Reissue("signed by another CA".to_owned())
    );
    let from_new = issued(leaf("new", "a", "2027-11-26T00:00:00Z"), &reissue);
    assert!(leaves_from(&[Some(from_new)], &reissue.current));
}
