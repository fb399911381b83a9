//! The user's TLS Secrets: checked to be complete, their expiry read ([`expiry`]), and the
//! trust Secret kept beside them ([`user_trust`]): read, compared with the user's `ca.crt`,
//! written one step at a time.

use super::*;
use crate::tls::expiry::{self, ExpiresSoon};
use crate::tls::user_trust::{UserBundles, UserTrust};

impl TlsSecrets<'_> {
    /// The user Secrets' problem: a missing Secret or key, which nothing ferroplane writes can
    /// fix.
    pub(super) async fn check_user(&self) -> Result<(), Error> {
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
        Ok(())
    }

    /// The user certificate that ends first, when it ends within
    /// [`EXPIRY_WARNING_DAYS`](super::expiry::EXPIRY_WARNING_DAYS) of `now` ([`super::expiry`]);
    /// `None` for generated certificates, which ferroplane renews itself.
    pub async fn user_expiry(&self, now: Timestamp) -> Result<Option<ExpiresSoon>, Error> {
        if self.secrets.generated {
            return Ok(None);
        }
        let mut certs = Vec::new();
        for name in [
            &self.secrets.peer,
            &self.secrets.server,
            &self.secrets.client,
        ] {
            if let Some(cert) = self.get(name).await?.and_then(|s| text(&s, CERT)) {
                certs.push((name.as_str(), cert));
            }
        }
        Ok(expiry::expires_soon(
            certs.iter().map(|(n, c)| (*n, c.as_str())),
            now,
        ))
    }

    /// The user's bundles now (`ca.crt` of the peer and the server Secret; [`Self::check_user`]
    /// made sure they exist), and the trust Secret: its name, its live object (refused when it
    /// is not this cluster's), what it holds.
    async fn user_trust_state(
        &self,
        uid: &str,
    ) -> Result<(UserBundles, String, Option<Secret>, Option<UserTrust>), Error> {
        let bundle = |secret: Option<Secret>| secret.and_then(|s| text(&s, CA)).unwrap_or_default();
        let user = UserBundles {
            peer: bundle(self.get(&self.secrets.peer).await?),
            server: bundle(self.get(&self.secrets.server).await?),
        };
        let name = self
            .secrets
            .trust
            .clone()
            .unwrap_or_else(|| self.names.tls_secret("trust"));
        let live = self.get(&name).await?;
        if let Some(live) = &live {
            self.ours(live, uid)?;
        }
        let held = live
            .as_ref()
            .and_then(|l| user_trust::read(|k| text(l, k), l.annotations()));
        Ok((user, name, live, held))
    }

    /// Why the trust Secret must be written: missing, or a step due.
    pub(super) async fn user_drift(
        &self,
        mr: &EtcdCluster,
        rolled_out: bool,
    ) -> Result<Vec<String>, Error> {
        let uid = mr.uid().unwrap_or_default();
        let (user, name, live, held) = self.user_trust_state(&uid).await?;
        let mut reasons = Vec::new();
        if live.is_none() {
            reasons.push(format!("Secret {name} is missing"));
        } else if live
            .as_ref()
            .is_some_and(|l| owner_mismatch(l, &uid, children::owned(mr)))
        {
            reasons.push(format!("Secret {name}: owner reference differs"));
        }
        if let Some((_, step)) = user_trust::next(held.as_ref(), &user, rolled_out) {
            reasons.push(format!("Secret {name}: trust step {step:?} is due"));
        }
        Ok(reasons)
    }

    /// Writes the trust Secret's next step when one is due (or its owner reference); returns
    /// the step.
    pub(super) async fn ensure_user(
        &self,
        mr: &EtcdCluster,
        rolled_out: bool,
    ) -> Result<Option<user_trust::Step>, Error> {
        let uid = mr.uid().unwrap_or_default();
        let (user, name, live, held) = self.user_trust_state(&uid).await?;
        let (trust, step) = match (user_trust::next(held.as_ref(), &user, rolled_out), held) {
            (Some((trust, step)), _) => (trust, Some(step)),
            (None, Some(held))
                if live
                    .as_ref()
                    .is_some_and(|l| owner_mismatch(l, &uid, children::owned(mr))) =>
            {
                (held, None)
            }
            (None, _) => return Ok(None),
        };
        let (data, annotations) = user_trust::contents(&trust);
        let data: Vec<(&str, &str)> = data.iter().map(|(k, v)| (*k, v.as_str())).collect();
        OwnedSecret {
            name: &name,
            type_: "Opaque",
            data: &data,
            annotations: Some(annotations),
        }
        .apply(self.children, mr, self.names)
        .await?;
        Ok(step)
    }
}
