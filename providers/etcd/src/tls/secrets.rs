//! Keeping a TLS cluster's Secrets right, and reading the client certificate.
//!
//! Generated certificates: the CA Secret `<name>-tls-ca` is made once and rotated before it
//! expires ([`super::rotation`]; it holds the whole rotation state: the signing CA in
//! `tls.crt`/`tls.key`, the incoming one in `next.crt`/`next.key`, the trust bundle in
//! `ca.crt`, the phase and generation in annotations). Each leaf Secret is (re)issued when it is
//! missing, was signed by another CA than the signing one, names other hosts than the
//! cluster's, or expires within [`RENEW_BEFORE_DAYS`](super::certs::RENEW_BEFORE_DAYS) days;
//! its `ca.crt` is the trust bundle. The reasons are what `observe` reports as drift; `ensure`
//! (from create and update) writes them. A Secret of such a name that is not this cluster's is
//! never touched.
//!
//! A CA Secret missing while leaves survive is rebuilt with an overlap ([`super::recovery`]).
//!
//! User Secrets are only read: they must exist with `tls.crt`, `tls.key` and `ca.crt`; what the
//! members trust follows their `ca.crt` through a Secret of ferroplane's ([`user`]).

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::{self, Children, Holder};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::{Client, ResourceExt};

use super::ca_secret;
use super::certs::{self, CaPolicy, Issued, Leaf};
use super::client_tls::ClientTls;
use super::recovery::{self, Recovered};
use super::rotation::{
    self, Ca, CaState, Next, Phase, Progress, ROTATION_ANNOTATION, TRUST_GENERATION_ANNOTATION,
};
use super::secret_data::{
    CA, CERT, HOSTS_ANNOTATION, ISSUER_ANNOTATION, KEY, NOT_AFTER_ANNOTATION, SUBJECT_ANNOTATION,
    not_after, text,
};
use super::secret_refs::SecretNames;
use super::user_trust;
use crate::error::Error;
use crate::names::ClusterNames;
use crate::owned_secret::OwnedSecret;

/// The client certificate's subject: an organization, no Common Name (see [`certs::issue`]).
const CLIENT_SUBJECT: &str = "O=ferroplane";

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
    /// Lifetime and rotation of the generated CA.
    pub policy: CaPolicy,
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
            policy: CaPolicy::default(),
        }
    }

    /// The same, with `policy` for the generated CA.
    pub fn with_policy(self, policy: CaPolicy) -> Self {
        Self { policy, ..self }
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

    /// The CA Secret (refused when it is not this cluster's) and what it holds (`None` when
    /// it is missing or incomplete).
    async fn read_ca(&self, uid: &str) -> Result<(Option<Secret>, Option<CaState>), Error> {
        let live = self.get(&self.names.tls_secret("ca")).await?;
        if let Some(live) = &live {
            self.ours(live, uid)?;
        }
        let state = live
            .as_ref()
            .and_then(|s| ca_secret::read(s, &self.legacy_ca_name()));
        Ok((live, state))
    }

    /// The leaf Secrets, in [`Leaf::ALL`] order (each refused when it is not this cluster's).
    async fn read_leaves(&self, uid: &str) -> Result<Vec<Option<Secret>>, Error> {
        let mut out = Vec::new();
        for leaf in Leaf::ALL {
            let live = self.get(&self.names.tls_secret(leaf.suffix())).await?;
            if let Some(live) = &live {
                self.ours(live, uid)?;
            }
            out.push(live);
        }
        Ok(out)
    }

    /// The name of a CA made before CA names were recorded.
    fn legacy_ca_name(&self) -> String {
        format!("{}.{} etcd CA", self.names.name, self.names.namespace)
    }

    fn new_ca(&self, now: Timestamp) -> Result<Ca, Error> {
        let name = format!(
            "{} {}",
            self.legacy_ca_name(),
            now.strftime("%Y%m%dT%H%M%SZ")
        );
        let issued = certs::new_ca_for(&name, now, self.policy.validity_days)?;
        Ok(Ca {
            name,
            cert_pem: issued.cert_pem,
            key_pem: issued.key_pem,
            not_after: issued.not_after,
        })
    }

    /// How often the trust bundle or the issuing CA changed (0 before the first rotation, or
    /// before the user's CA first changed: the member pods' template carries it), and the
    /// rotation phase; `None` while the Secret holding them (the CA Secret, or with the user's
    /// Secrets the trust Secret) is missing: the members keep what they run until
    /// [`ensure`](Self::ensure) writes it.
    pub async fn trust(&self) -> Result<Option<(u64, Phase)>, Error> {
        let holder = match &self.secrets.trust {
            Some(trust) => trust.clone(),
            None => self.names.tls_secret("ca"),
        };
        let Some(live) = self.get(&holder).await? else {
            return Ok(None);
        };
        let annotation = |key: &str| live.annotations().get(key).cloned().unwrap_or_default();
        Ok(Some((
            annotation(TRUST_GENERATION_ANNOTATION).parse().unwrap_or(0),
            Phase::parse(&annotation(ROTATION_ANNOTATION)).unwrap_or(Phase::Steady),
        )))
    }

    /// Why the Secrets are not as they should be (empty when they are), including a rotation
    /// phase that can begin now that the members are `rolled_out` ([`rotation::Progress`]).
    /// For user Secrets, a missing Secret or key is an error.
    pub async fn check(
        &self,
        mr: &EtcdCluster,
        now: Timestamp,
        rolled_out: bool,
    ) -> Result<Vec<String>, Error> {
        if !self.secrets.generated {
            self.check_user().await?;
            return self.user_drift(mr, rolled_out).await;
        }
        let uid = mr.uid().unwrap_or_default();
        let owned = children::owned(mr);
        let (live_ca, state) = self.read_ca(&uid).await?;
        let leaves = self.read_leaves(&uid).await?;
        let mut reasons = Vec::new();
        match (&live_ca, &state) {
            (None, _) => reasons.push(format!("Secret {} is missing", self.names.tls_secret("ca"))),
            (Some(_), None) => reasons.push(format!(
                "Secret {} has no CA certificate or key",
                self.names.tls_secret("ca")
            )),
            (Some(live), Some(state)) => {
                if owner_mismatch(live, &uid, owned) {
                    reasons.push(format!(
                        "Secret {}: owner reference differs",
                        self.names.tls_secret("ca")
                    ));
                }
                let progress = Progress {
                    rolled_out,
                    leaves_from_current: leaves_from(&leaves, &state.current),
                };
                let next = rotation::decide(state, progress, now, &self.policy);
                if next != Next::Stay {
                    reasons.push(format!("CA rotation: {next:?} is due"));
                }
            }
        }
        for (leaf, live) in Leaf::ALL.into_iter().zip(&leaves) {
            let name = self.names.tls_secret(leaf.suffix());
            match leaf_fix(
                leaf,
                live.as_ref(),
                state.as_ref(),
                &hosts(self.names, leaf),
                now,
            ) {
                LeafFix::Reissue(why) => reasons.push(format!("Secret {name}: {why}")),
                LeafFix::Trust => reasons.push(format!("Secret {name}: trusts other CAs")),
                LeafFix::Good => {
                    if live
                        .as_ref()
                        .is_some_and(|l| owner_mismatch(l, &uid, owned))
                    {
                        reasons.push(format!("Secret {name}: owner reference differs"));
                    }
                }
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

    /// Makes or renews what [`check`](Self::check) finds wrong (generated certificates only)
    /// and takes the next rotation step when one is due; returns that step, or how a missing
    /// CA Secret was rebuilt. `running`: the trust generation of the members' pod template
    /// (`None` without members yet).
    pub async fn ensure(
        &self,
        mr: &EtcdCluster,
        now: Timestamp,
        rolled_out: bool,
        running: Option<u64>,
    ) -> Result<Ensured, Error> {
        if !self.secrets.generated {
            self.check_user().await?;
            return Ok(Ensured {
                user_trust: self.ensure_user(mr, rolled_out).await?,
                ..Ensured::default()
            });
        }
        let uid = mr.uid().unwrap_or_default();
        let owned = children::owned(mr);
        let (live_ca, state) = self.read_ca(&uid).await?;
        let leaves = self.read_leaves(&uid).await?;
        let mut recovered = None;
        let (mut state, mut write_ca) = match state {
            Some(state) => {
                let mismatch = live_ca
                    .as_ref()
                    .is_some_and(|l| owner_mismatch(l, &uid, owned));
                (state, mismatch)
            }
            None => {
                let (state, how) =
                    recovery::recover(self.surviving(&leaves), self.new_ca(now)?, running, now);
                recovered = Some(how);
                (state, true)
            }
        };
        let progress = Progress {
            rolled_out,
            leaves_from_current: leaves_from(&leaves, &state.current),
        };
        // A rebuilt CA Secret is this reconcile's step: the members have not seen it yet.
        let next = match recovered {
            Some(_) => Next::Stay,
            None => rotation::decide(&state, progress, now, &self.policy),
        };
        let mut step = None;
        if next != Next::Stay {
            let after = match next {
                Next::Start => state.trust_both(self.new_ca(now)?),
                Next::Reissue => state.reissue(),
                Next::DropOld => state.drop_old(),
                Next::Finish | Next::Stay => state.finish(),
            };
            step = Some(Rotation {
                next,
                message: rotation::describe(next, &state, &after),
            });
            state = after;
            write_ca = true;
        }
        if write_ca {
            // The whole rotation state in one write: a crash after it resumes from it.
            self.apply_ca(mr, &state).await?;
        }
        for (leaf, live) in Leaf::ALL.into_iter().zip(&leaves) {
            let name = self.names.tls_secret(leaf.suffix());
            let hosts = hosts(self.names, leaf);
            let kept = |live: &Secret| Issued {
                cert_pem: text(live, CERT).unwrap_or_default(),
                key_pem: text(live, KEY).unwrap_or_default(),
                not_after: not_after(live).unwrap_or(now),
            };
            let signer = state.signer();
            // A kept certificate keeps its issuer (while the old CA's key is lost, the CA
            // Secret's certificate is the surviving bundle, not the leaf's issuer).
            let issuer = |live: &Secret| {
                live.annotations()
                    .get(ISSUER_ANNOTATION)
                    .filter(|_| state.signing_key_lost())
                    .cloned()
                    .unwrap_or_else(|| certs::fingerprint(&state.current.cert_pem))
            };
            let (issued, issuer) = match (
                leaf_fix(leaf, live.as_ref(), Some(&state), &hosts, now),
                live,
            ) {
                (LeafFix::Reissue(_), _) | (_, None) => (
                    certs::issue(&signer.name, &signer.key_pem, leaf, &hosts, now)?,
                    certs::fingerprint(&signer.cert_pem),
                ),
                // Same certificate, the trust bundle of this phase.
                (LeafFix::Trust, Some(live)) => (kept(live), issuer(live)),
                // Same certificate, the deletion policy's owner reference.
                (LeafFix::Good, Some(live)) if owner_mismatch(live, &uid, owned) => {
                    (kept(live), issuer(live))
                }
                (LeafFix::Good, Some(_)) => continue,
            };
            self.apply_leaf(mr, &name, &issued, &issuer, &state.bundle, &hosts, leaf)
                .await?;
        }
        Ok(Ensured {
            rotation: step,
            recovered,
            user_trust: None,
        })
    }

    /// The trust bundle that survives in the leaf Secrets' `ca.crt` (the CA Secret being
    /// missing), and the first Secret holding one.
    fn surviving(&self, leaves: &[Option<Secret>]) -> Option<(String, String)> {
        let bundles: Vec<(Leaf, String)> = Leaf::ALL
            .into_iter()
            .zip(leaves)
            .filter_map(|(leaf, live)| Some((leaf, text(live.as_ref()?, CA)?)))
            .collect();
        let bundle = recovery::surviving_bundle(bundles.iter().map(|(_, b)| b.as_str()))?;
        let (found_in, _) = bundles.first()?;
        Some((self.names.tls_secret(found_in.suffix()), bundle))
    }

    async fn apply_ca(&self, mr: &EtcdCluster, state: &CaState) -> Result<(), Error> {
        let (data, annotations) = ca_secret::contents(state);
        let data: Vec<(&str, &str)> = data.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.apply(mr, &self.names.tls_secret("ca"), &data, annotations)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn apply_leaf(
        &self,
        mr: &EtcdCluster,
        name: &str,
        issued: &Issued,
        issuer: &str,
        bundle: &str,
        hosts: &[String],
        leaf: Leaf,
    ) -> Result<(), Error> {
        let mut annotations = BTreeMap::from([
            (
                NOT_AFTER_ANNOTATION.to_owned(),
                issued.not_after.to_string(),
            ),
            (HOSTS_ANNOTATION.to_owned(), hosts.join(",")),
            (ISSUER_ANNOTATION.to_owned(), issuer.to_owned()),
        ]);
        if leaf == Leaf::Client {
            annotations.insert(SUBJECT_ANNOTATION.to_owned(), CLIENT_SUBJECT.to_owned());
        }
        let data = [
            (CERT, issued.cert_pem.as_str()),
            (KEY, issued.key_pem.as_str()),
            (CA, bundle),
        ];
        self.apply(mr, name, &data, annotations).await
    }

    async fn apply(
        &self,
        mr: &EtcdCluster,
        name: &str,
        data: &[(&str, &str)],
        annotations: BTreeMap<String, String>,
    ) -> Result<(), Error> {
        OwnedSecret {
            name,
            type_: "kubernetes.io/tls",
            data,
            annotations: Some(annotations),
        }
        .apply(self.children, mr, self.names)
        .await
    }
}

/// What [`TlsSecrets::ensure`] did beyond keeping the Secrets right, for the events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ensured {
    /// The rotation step taken.
    pub rotation: Option<Rotation>,
    /// How the missing CA Secret was rebuilt.
    pub recovered: Option<Recovered>,
    /// The step the trust of the user's Secrets took ([`super::user_trust`]).
    pub user_trust: Option<user_trust::Step>,
}

/// A rotation step [`TlsSecrets::ensure`] took, for an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rotation {
    pub next: Next,
    /// What happened, in words (names and dates only).
    pub message: String,
}

/// Whether the leaf Secret `live` holds a certificate of `ca`: its issuer annotation, or (a
/// leaf written before the annotation existed, when one CA signed and was trusted alone) its
/// `ca.crt` being that CA.
fn issued_by(live: &Secret, ca: &Ca) -> bool {
    match live.annotations().get(ISSUER_ANNOTATION) {
        Some(issuer) => *issuer == certs::fingerprint(&ca.cert_pem),
        None => text(live, CA).as_deref() == Some(ca.cert_pem.as_str()),
    }
}

fn leaves_from(leaves: &[Option<Secret>], ca: &Ca) -> bool {
    leaves
        .iter()
        .all(|l| l.as_ref().is_some_and(|l| issued_by(l, ca)))
}

/// Whether the Secret's owner references disagree with the deletion policy (`owned`: it goes
/// with the cluster).
fn owner_mismatch(live: &Secret, uid: &str, owned: bool) -> bool {
    let refers = live.owner_references().iter().any(|r| r.uid == uid);
    refers != owned
}

/// What a generated leaf Secret needs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LeafFix {
    Good,
    /// Its certificate is good; its `ca.crt` is not this phase's trust bundle.
    Trust,
    /// A new certificate, and why.
    Reissue(String),
}

/// What the leaf Secret `live` needs, against the CA Secret's `state`.
/// [`leaf_problem`], and for the client certificate its subject: one issued with a Common Name
/// (before ferroplane left it out) is issued again, since etcd's gateway refuses such a
/// certificate once authentication is on. Same CA, so nothing else changes.
fn leaf_fix(
    leaf: Leaf,
    live: Option<&Secret>,
    state: Option<&CaState>,
    hosts: &[String],
    now: Timestamp,
) -> LeafFix {
    match leaf_problem(live, state, hosts, now) {
        LeafFix::Good | LeafFix::Trust
            if leaf == Leaf::Client
                && !state.is_some_and(CaState::signing_key_lost)
                && live.is_some_and(|l| {
                    l.annotations().get(SUBJECT_ANNOTATION).map(String::as_str)
                        != Some(CLIENT_SUBJECT)
                }) =>
        {
            LeafFix::Reissue(
                "has a Common Name, which etcd's gateway refuses once authentication is on"
                    .to_owned(),
            )
        }
        fix => fix,
    }
}

fn leaf_problem(
    live: Option<&Secret>,
    state: Option<&CaState>,
    hosts: &[String],
    now: Timestamp,
) -> LeafFix {
    let Some(live) = live else {
        return LeafFix::Reissue("missing".to_owned());
    };
    if text(live, CERT).is_none() || text(live, KEY).is_none() {
        return LeafFix::Reissue("has no certificate or key".to_owned());
    }
    if let Some(state) = state.filter(|s| s.signing_key_lost()) {
        // Kept until the new CA signs ([`super::recovery`]): only the bundle changes.
        return if text(live, CA).as_deref() == Some(state.bundle.as_str()) {
            LeafFix::Good
        } else {
            LeafFix::Trust
        };
    }
    let Some(state) = state.filter(|s| issued_by(live, &s.current)) else {
        return LeafFix::Reissue("signed by another CA".to_owned());
    };
    if live.annotations().get(HOSTS_ANNOTATION).map(String::as_str) != Some(&hosts.join(",")) {
        return LeafFix::Reissue("valid for other host names".to_owned());
    }
    match not_after(live) {
        None => return LeafFix::Reissue("has no expiry annotation".to_owned()),
        Some(t) if certs::needs_renewal(t, now) => {
            return LeafFix::Reissue(format!("expires at {t}"));
        }
        Some(_) => {}
    }
    if text(live, CA).as_deref() != Some(state.bundle.as_str())
        || live.annotations().get(ISSUER_ANNOTATION).is_none()
    {
        return LeafFix::Trust;
    }
    LeafFix::Good
}

#[cfg(test)]
mod tests;
mod user;
