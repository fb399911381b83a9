//! The CA Secret `<name>-tls-ca` of a cluster with generated certificates: the whole rotation
//! state ([`CaState`]) in one object, so that one write moves it and a restarted controller
//! reads it back. `tls.crt`/`tls.key`: the signing CA; `next.crt`/`next.key`: the CA being
//! brought in; `ca.crt`: the trust bundle; annotations: names, expiries, phase, generation.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::certs;
use super::rotation::{Ca, CaState, Phase, ROTATION_ANNOTATION, TRUST_GENERATION_ANNOTATION};
use super::secret_data::{CA, CERT, KEY, NOT_AFTER_ANNOTATION, not_after, text};

/// Annotation of the CA Secret: the signing CA's name (its leaves' issuer name).
pub const CA_NAME_ANNOTATION: &str = "etcd.ferroplane.io/ca-name";
/// Annotations of the CA Secret while a new CA is brought in: its name and expiry.
pub const NEXT_CA_NAME_ANNOTATION: &str = "etcd.ferroplane.io/next-ca-name";
pub const NEXT_NOT_AFTER_ANNOTATION: &str = "etcd.ferroplane.io/next-not-after";

const NEXT_CERT: &str = "next.crt";
const NEXT_KEY: &str = "next.key";

/// The data and annotations of the CA Secret holding `state` (read back by [`read`]).
pub fn contents(state: &CaState) -> (Vec<(&'static str, String)>, BTreeMap<String, String>) {
    let mut annotations = BTreeMap::from([
        (
            NOT_AFTER_ANNOTATION.to_owned(),
            state.current.not_after.to_string(),
        ),
        (CA_NAME_ANNOTATION.to_owned(), state.current.name.clone()),
        (
            TRUST_GENERATION_ANNOTATION.to_owned(),
            state.generation.to_string(),
        ),
    ]);
    if state.phase != Phase::Steady {
        annotations.insert(
            ROTATION_ANNOTATION.to_owned(),
            state.phase.as_str().to_owned(),
        );
    }
    let mut data = vec![
        (CERT, state.current.cert_pem.clone()),
        (KEY, state.current.key_pem.clone()),
        (CA, state.bundle.clone()),
    ];
    if let Some(next) = &state.next {
        annotations.insert(NEXT_CA_NAME_ANNOTATION.to_owned(), next.name.clone());
        annotations.insert(
            NEXT_NOT_AFTER_ANNOTATION.to_owned(),
            next.not_after.to_string(),
        );
        data.push((NEXT_CERT, next.cert_pem.clone()));
        data.push((NEXT_KEY, next.key_pem.clone()));
    }
    (data, annotations)
}

/// What the CA Secret `secret` holds; `None` without a CA certificate and key. A CA made
/// before rotation existed has no annotations: its name was `legacy_name`, its expiry
/// [`LEGACY_CA_DAYS`](certs::LEGACY_CA_DAYS) after the day its Secret was made, and it is
/// trusted alone.
pub fn read(secret: &Secret, legacy_name: &str) -> Option<CaState> {
    let annotations = secret.annotations();
    let legacy_not_after = || {
        let created = secret.metadata.creation_timestamp.as_ref()?.0;
        let day = created.to_zoned(jiff::tz::TimeZone::UTC).date();
        let until = day
            .checked_add(jiff::ToSpan::days(certs::LEGACY_CA_DAYS))
            .ok()?;
        until
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp())
    };
    let current = Ca {
        name: annotations
            .get(CA_NAME_ANNOTATION)
            .cloned()
            .unwrap_or_else(|| legacy_name.to_owned()),
        cert_pem: text(secret, CERT)?,
        key_pem: text(secret, KEY)?,
        not_after: not_after(secret)
            .or_else(legacy_not_after)
            .unwrap_or_else(Timestamp::now),
    };
    let next = match (
        text(secret, NEXT_CERT),
        text(secret, NEXT_KEY),
        annotations.get(NEXT_CA_NAME_ANNOTATION),
        annotations
            .get(NEXT_NOT_AFTER_ANNOTATION)
            .and_then(|t| t.parse().ok()),
    ) {
        (Some(cert_pem), Some(key_pem), Some(name), Some(not_after)) => Some(Ca {
            name: name.clone(),
            cert_pem,
            key_pem,
            not_after,
        }),
        _ => None,
    };
    let phase = annotations
        .get(ROTATION_ANNOTATION)
        .and_then(|p| Phase::parse(p))
        .unwrap_or(Phase::Steady);
    Some(CaState {
        bundle: text(secret, CA).unwrap_or_else(|| current.cert_pem.clone()),
        current,
        next,
        phase,
        generation: annotations
            .get(TRUST_GENERATION_ANNOTATION)
            .and_then(|g| g.parse().ok())
            .unwrap_or(0),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use kube::api::ObjectMeta;

    /// A CA whose fields are made of its name (for the Secrets' tests).
    pub(crate) fn ca(name: &str) -> Ca {
        Ca {
            name: name.to_owned(),
            cert_pem: name.to_owned(),
            key_pem: format!("key of {name}"),
            not_after: "2036-01-01T00:00:00Z".parse().expect("ts"),
        }
    }

    fn secret_of(state: &CaState) -> Secret {
        let (data, annotations) = contents(state);
        Secret {
            metadata: ObjectMeta {
                annotations: Some(annotations),
                ..ObjectMeta::default()
            },
            data: Some(
                data.into_iter()
                    .map(|(k, v)| (k.to_owned(), ByteString(v.into_bytes())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn every_rotation_phase_is_read_back_from_the_ca_secret() {
        let steady = CaState::new(ca("old"));
        let trust = steady.trust_both(ca("new"));
        for state in [
            steady.clone(),
            trust.clone(),
            trust.reissue(),
            trust.reissue().drop_old(),
            trust.reissue().drop_old().finish(),
        ] {
            assert_eq!(read(&secret_of(&state), "legacy"), Some(state));
        }
    }

    #[test]
    fn a_recovered_ca_secret_without_the_old_key_is_read_back() {
        let (state, _) = crate::tls::recovery::recover(
            Some(("e-tls-peer".to_owned(), "old".to_owned())),
            ca("new"),
            Some(2),
            "2026-11-29T10:00:00Z".parse().expect("ts"),
        );
        let back = read(&secret_of(&state), "legacy").expect("a CA");
        assert!(back.signing_key_lost());
        assert_eq!(back, state);
    }

    #[test]
    fn a_ca_secret_from_before_rotation_reads_as_a_steady_ten_year_ca() {
        let secret = Secret {
            metadata: ObjectMeta {
                creation_timestamp: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    "2026-11-26T09:00:00Z".parse().expect("ts"),
                )),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([
                (CERT.to_owned(), ByteString(b"C".to_vec())),
                (KEY.to_owned(), ByteString(b"K".to_vec())),
                (CA.to_owned(), ByteString(b"C".to_vec())),
            ])),
            ..Secret::default()
        };
        let state = read(&secret, "e.ns etcd CA").expect("a CA");
        assert_eq!(state.current.name, "e.ns etcd CA");
        assert_eq!(state.current.not_after.to_string(), "2036-11-23T00:00:00Z");
        assert_eq!((state.phase, state.generation), (Phase::Steady, 0));
        assert_eq!(state.bundle, "C");
        let mut keyless = secret;
        keyless.data.get_or_insert_default().remove(KEY);
        assert_eq!(read(&keyless, "e.ns etcd CA"), None);
    }
}
