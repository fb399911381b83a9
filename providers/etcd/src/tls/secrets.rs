//! Keeping a TLS cluster's Secrets right, and reading the client certificate.
//!
//! Generated certificates: the CA Secret `<name>-tls-ca` is made once and kept; each leaf
//! Secret is (re)issued when it is missing, was signed by another CA, names other hosts than
//! the cluster's, or expires within [`RENEW_BEFORE_DAYS`](super::certs::RENEW_BEFORE_DAYS)
//! days. The reasons are what `observe` reports as drift; `ensure` (from create and update)
//! writes them. A Secret of such a name that is not this cluster's is never touched.
//!
//! User Secrets are only read: they must exist with `tls.crt`, `tls.key` and `ca.crt`.

use std::collections::BTreeMap;
use std::fmt;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::UID_TAG;
use ferroplane_runtime::children::{self, Child, Children, Holder};
use jiff::Timestamp;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta};
use kube::{Client, Resource, ResourceExt};

use super::SecretNames;
use super::certs::{self, Issued, Leaf};
use crate::error::Error;
use crate::names::ClusterNames;

/// Annotation of a generated leaf Secret: when its certificate expires (RFC 3339).
pub const NOT_AFTER_ANNOTATION: &str = "etcd.ferroplane.io/not-after";
/// Annotation of a generated leaf Secret: the host names its certificate is valid for.
pub const HOSTS_ANNOTATION: &str = "etcd.ferroplane.io/hosts";

const CERT: &str = "tls.crt";
const KEY: &str = "tls.key";
const CA: &str = "ca.crt";

/// What the controller presents to etcd, and the CA it trusts etcd's certificate by. The key
/// never appears in `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientTls {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

fn text(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()?
        .get(key)
        .and_then(|b| String::from_utf8(b.0.clone()).ok())
}

/// The host names of a leaf of `names`.
pub fn hosts(names: &ClusterNames, leaf: Leaf) -> Vec<String> {
    match leaf {
        Leaf::Peer => names.member_dns_names(),
        Leaf::Server => {
            let mut hosts = names.client_dns_names();
            hosts.extend(names.member_dns_names());
            hosts.push("localhost".to_owned());
            hosts
        }
        Leaf::Client => Vec::new(),
    }
}

/// Reads TLS Secrets and writes the generated ones of one cluster.
pub struct TlsSecrets<'a> {
    pub api: Api<Secret>,
    pub children: &'a Children,
    pub names: &'a ClusterNames,
    pub secrets: &'a SecretNames,
}

impl TlsSecrets<'_> {
    pub fn new<'a>(
        kube: &Client,
        children: &'a Children,
        names: &'a ClusterNames,
        secrets: &'a SecretNames,
    ) -> TlsSecrets<'a> {
        TlsSecrets {
            api: Api::namespaced(kube.clone(), &names.namespace),
            children,
            names,
            secrets,
        }
    }

    async fn get(&self, name: &str) -> Result<Option<Secret>, Error> {
        self.api
            .get_opt(name)
            .await
            .map_err(|e| Error::kube(format!("reading Secret {name}"), e))
    }

    /// The client certificate, when its Secret exists and is complete.
    pub async fn client(&self) -> Result<Option<ClientTls>, Error> {
        let Some(secret) = self.get(&self.secrets.client).await? else {
            return Ok(None);
        };
        Ok(
            match (text(&secret, CA), text(&secret, CERT), text(&secret, KEY)) {
                (Some(ca_pem), Some(cert_pem), Some(key_pem)) => Some(ClientTls {
                    ca_pem,
                    cert_pem,
                    key_pem,
                }),
                _ => None,
            },
        )
    }

    /// Why the Secrets are not as they should be (empty when they are). For user Secrets, a
    /// missing Secret or key is an error: nothing ferroplane writes can fix it.
    pub async fn check(&self, mr: &EtcdCluster, now: Timestamp) -> Result<Vec<String>, Error> {
        if !self.secrets.generated {
            for name in [
                &self.secrets.peer,
                &self.secrets.server,
                &self.secrets.client,
            ] {
                let secret = self.get(name).await?;
                let missing: Vec<&str> = [CERT, KEY, CA]
                    .into_iter()
                    .filter(|k| secret.as_ref().and_then(|s| text(s, k)).is_none())
                    .collect();
                if secret.is_none() || !missing.is_empty() {
                    return Err(Error::TlsSecret {
                        name: name.clone(),
                        missing: if secret.is_none() {
                            "the Secret".to_owned()
                        } else {
                            missing.join(", ")
                        },
                    });
                }
            }
            return Ok(Vec::new());
        }
        let uid = mr.uid().unwrap_or_default();
        let owned = children::owned(mr);
        let ca = self.get(&self.names.tls_secret("ca")).await?;
        let mut reasons = Vec::new();
        let ca_pem = match &ca {
            Some(ca) => {
                self.ours(ca, &uid)?;
                text(ca, CERT)
            }
            None => {
                reasons.push(format!("Secret {} is missing", self.names.tls_secret("ca")));
                None
            }
        };
        for leaf in Leaf::ALL {
            let name = self.names.tls_secret(leaf.suffix());
            let live = self.get(&name).await?;
            if let Some(live) = &live {
                self.ours(live, &uid)?;
            }
            if let Some(why) = leaf_problem(
                live.as_ref(),
                ca_pem.as_deref(),
                &hosts(self.names, leaf),
                now,
            ) {
                reasons.push(format!("Secret {name}: {why}"));
            } else if live
                .as_ref()
                .is_some_and(|l| owner_mismatch(l, &uid, owned))
            {
                reasons.push(format!("Secret {name}: owner reference differs"));
            }
        }
        Ok(reasons)
    }

    fn ours(&self, live: &Secret, uid: &str) -> Result<(), Error> {
        let value = serde_json::to_value(live).map_err(|source| Error::Serialize {
            what: "Secret",
            source,
        })?;
        let holder = children::holder(&value, uid);
        match children::refusal_message(&format!("Secret/{}", live.name_any()), &holder, uid) {
            Some(message) if holder != Holder::Us => Err(Error::NotOurs(message)),
            _ => Ok(()),
        }
    }

    /// Makes or renews what [`check`](Self::check) finds wrong (generated certificates only).
    pub async fn ensure(&self, mr: &EtcdCluster, now: Timestamp) -> Result<(), Error> {
        if !self.secrets.generated {
            return self.check(mr, now).await.map(|_| ());
        }
        let uid = mr.uid().unwrap_or_default();
        let owned = children::owned(mr);
        let ca_name = self.names.tls_secret("ca");
        let ca_common_name = format!("{}.{} etcd CA", self.names.name, self.names.namespace);
        let live_ca = self.get(&ca_name).await?;
        let ca = match live_ca
            .as_ref()
            .map(|ca| (ca, text(ca, CERT), text(ca, KEY)))
        {
            Some((live, Some(cert_pem), Some(key_pem))) => {
                self.ours(live, &uid)?;
                let ca = Issued {
                    cert_pem,
                    key_pem,
                    not_after: now,
                };
                if owner_mismatch(live, &uid, owned) {
                    self.apply(mr, &ca_name, &ca, &ca.cert_pem, None).await?;
                }
                ca
            }
            other => {
                if let Some((live, _, _)) = other {
                    self.ours(live, &uid)?;
                }
                let ca = certs::new_ca(&ca_common_name, now)?;
                self.apply(mr, &ca_name, &ca, &ca.cert_pem, None).await?;
                ca
            }
        };
        for leaf in Leaf::ALL {
            let name = self.names.tls_secret(leaf.suffix());
            let live = self.get(&name).await?;
            if let Some(live) = &live {
                self.ours(live, &uid)?;
            }
            let hosts = hosts(self.names, leaf);
            match leaf_problem(live.as_ref(), Some(&ca.cert_pem), &hosts, now) {
                Some(_) => {
                    let issued = certs::issue(&ca_common_name, &ca.key_pem, leaf, &hosts, now)?;
                    self.apply(mr, &name, &issued, &ca.cert_pem, Some(&hosts))
                        .await?;
                }
                None => {
                    if let Some(live) = live.as_ref().filter(|l| owner_mismatch(l, &uid, owned)) {
                        // Same certificate, the deletion policy's owner reference.
                        let kept = Issued {
                            cert_pem: text(live, CERT).unwrap_or_default(),
                            key_pem: text(live, KEY).unwrap_or_default(),
                            not_after: not_after(live).unwrap_or(now),
                        };
                        self.apply(mr, &name, &kept, &ca.cert_pem, Some(&hosts))
                            .await?;
                    }
                }
            }
        }
        Ok(())
    }

    async fn apply(
        &self,
        mr: &EtcdCluster,
        name: &str,
        issued: &Issued,
        ca_pem: &str,
        hosts: Option<&[String]>,
    ) -> Result<(), Error> {
        let mut labels = self.names.labels();
        labels.insert(UID_TAG.to_owned(), mr.uid().unwrap_or_default());
        let annotations = hosts.map(|hosts| {
            BTreeMap::from([
                (
                    NOT_AFTER_ANNOTATION.to_owned(),
                    issued.not_after.to_string(),
                ),
                (HOSTS_ANNOTATION.to_owned(), hosts.join(",")),
            ])
        });
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(self.names.namespace.clone()),
                labels: Some(labels),
                annotations,
                owner_references: children::owned(mr)
                    .then(|| mr.controller_owner_ref(&()))
                    .flatten()
                    .map(|r| vec![r]),
                ..ObjectMeta::default()
            },
            type_: Some("kubernetes.io/tls".to_owned()),
            data: Some(BTreeMap::from([
                (
                    CERT.to_owned(),
                    ByteString(issued.cert_pem.clone().into_bytes()),
                ),
                (
                    KEY.to_owned(),
                    ByteString(issued.key_pem.clone().into_bytes()),
                ),
                (CA.to_owned(), ByteString(ca_pem.as_bytes().to_vec())),
            ])),
            ..Secret::default()
        };
        let child = Child::from_typed(&secret).map_err(|source| Error::Serialize {
            what: "Secret",
            source,
        })?;
        // The key is in the body only; errors name the Secret, never its data.
        self.children
            .apply(&child)
            .await
            .map_err(|e| Error::kube(format!("writing Secret {name}"), e))
    }
}

fn not_after(secret: &Secret) -> Option<Timestamp> {
    secret
        .annotations()
        .get(NOT_AFTER_ANNOTATION)
        .and_then(|t| t.parse().ok())
}

/// Whether the Secret's owner references disagree with the deletion policy (`owned`: it goes
/// with the cluster).
fn owner_mismatch(live: &Secret, uid: &str, owned: bool) -> bool {
    let refers = live.owner_references().iter().any(|r| r.uid == uid);
    refers != owned
}

/// Why a generated leaf Secret must be (re)issued, `None` when it is good.
fn leaf_problem(
    live: Option<&Secret>,
    ca_pem: Option<&str>,
    hosts: &[String],
    now: Timestamp,
) -> Option<String> {
    let Some(live) = live else {
        return Some("missing".to_owned());
    };
    if text(live, CERT).is_none() || text(live, KEY).is_none() {
        return Some("has no certificate or key".to_owned());
    }
    if ca_pem.is_none() || text(live, CA).as_deref() != ca_pem {
        return Some("signed by another CA".to_owned());
    }
    if live.annotations().get(HOSTS_ANNOTATION).map(String::as_str) != Some(&hosts.join(",")) {
        return Some("valid for other host names".to_owned());
    }
    match not_after(live) {
        None => Some("has no expiry annotation".to_owned()),
        Some(t) if certs::needs_renewal(t, now) => Some(format!("expires at {t}")),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn leaves_are_reissued_for_a_new_ca_other_hosts_or_near_expiry() {
        let now: Timestamp = "2026-11-26T00:00:00Z".parse().expect("ts");
        let hosts = vec!["a".to_owned(), "b".to_owned()];
        let good = leaf("CA", "a,b", "2027-11-26T00:00:00Z");
        assert_eq!(leaf_problem(Some(&good), Some("CA"), &hosts, now), None);
        assert_eq!(
            leaf_problem(None, Some("CA"), &hosts, now).as_deref(),
            Some("missing")
        );
        assert_eq!(
            leaf_problem(Some(&good), Some("CA2"), &hosts, now).as_deref(),
            Some("signed by another CA")
        );
        assert_eq!(
            leaf_problem(
                Some(&leaf("CA", "a", "2027-11-26T00:00:00Z")),
                Some("CA"),
                &hosts,
                now
            )
            .as_deref(),
            Some("valid for other host names")
        );
        let soon = leaf("CA", "a,b", "2026-12-20T00:00:00Z");
        assert!(
            leaf_problem(Some(&soon), Some("CA"), &hosts, now)
                .is_some_and(|why| why.starts_with("expires at"))
        );
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
}
