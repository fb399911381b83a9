//! etcd authentication of a cluster (`spec.auth`): root's password comes from the user's
//! Secret (key `password`, in the cluster's namespace: a tenant's cluster never reads another
//! namespace's Secret); ferroplane records the password it last set in a Secret of its own,
//! `<name>-auth`, because changing root's password needs a token obtained with the old one,
//! which the user's Secret no longer holds once it was edited.
//!
//! From what etcd says ([`AuthStatus`]) and the two passwords, [`plan`] picks one step:
//! enable (create root and its role, enable), change root's password, record the password in
//! effect, or disable (when `spec.auth` was removed; root stays, with its password, recorded).
//! Passwords never reach a log, an event, the status or an error message.

use ferroplane_apis::etcd::{EtcdAuthState, EtcdCluster};
use ferroplane_runtime::children::{self, Children, Holder};
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::{Client, ResourceExt};

use crate::error::Error;
use crate::membership::{AuthStatus, Password, RootCredentials};
use crate::names::ClusterNames;
use crate::owned_secret::OwnedSecret;

/// The key of the user's Secret (and of ferroplane's) that holds root's password.
pub const PASSWORD_KEY: &str = "password";

/// The Secret where ferroplane records the password in effect.
pub fn state_secret(names: &ClusterNames) -> String {
    format!("{}-auth", names.name)
}

/// Root's passwords as Kubernetes holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Passwords {
    /// The user's Secret's, when `spec.auth` is set.
    pub wanted: Option<Password>,
    /// The one ferroplane last set.
    pub in_effect: Option<Password>,
    /// ferroplane's Secret has owner references that disagree with the deletion policy (it
    /// must outlive a cluster deleted with `Orphan`, whose etcd keeps running with root's
    /// password).
    pub owner_stale: bool,
}

impl Passwords {
    /// What the membership client authenticates with: the password in effect first.
    pub fn credentials(&self) -> RootCredentials {
        RootCredentials::new(self.in_effect.iter().chain(&self.wanted).cloned())
    }

    /// Whether etcd must be asked about authentication at all: `spec.auth` is set, or was
    /// (ferroplane recorded a password).
    pub fn involved(&self) -> bool {
        self.wanted.is_some() || self.in_effect.is_some()
    }
}

/// One step towards the authentication `spec.auth` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthStep {
    Steady,
    Enable(Password),
    ChangePassword(Password),
    /// etcd accepts the wanted password; ferroplane has not recorded it yet.
    Record(Password),
    Disable,
}

impl AuthStep {
    /// Why the cluster is not as specified, for the drift message (no password in it).
    pub fn describe(&self) -> Option<&'static str> {
        match self {
            AuthStep::Steady => None,
            AuthStep::Enable(_) => Some("authentication is to be enabled"),
            AuthStep::ChangePassword(_) => {
                Some("root's password is to be changed to the auth Secret's")
            }
            AuthStep::Record(_) => Some("the password in effect is to be recorded"),
            AuthStep::Disable => Some("authentication is to be disabled"),
        }
    }
}

/// [`plan`], with the owner references of ferroplane's Secret put right when nothing else is
/// to be done.
pub fn plan_with_owner(passwords: &Passwords, status: AuthStatus) -> AuthStep {
    match (plan(passwords, status), &passwords.in_effect) {
        (AuthStep::Steady, Some(in_effect)) if passwords.owner_stale => {
            AuthStep::Record(in_effect.clone())
        }
        (step, _) => step,
    }
}

/// The step from what etcd says (`status`, with the index into `passwords.credentials()`).
pub fn plan(passwords: &Passwords, status: AuthStatus) -> AuthStep {
    let credentials = passwords.credentials();
    match (&passwords.wanted, status) {
        (Some(wanted), AuthStatus::Disabled) => AuthStep::Enable(wanted.clone()),
        (Some(wanted), AuthStatus::Enabled { password }) => {
            if credentials.passwords.get(password) != Some(wanted) {
                AuthStep::ChangePassword(wanted.clone())
            } else if passwords.in_effect.as_ref() != Some(wanted) {
                AuthStep::Record(wanted.clone())
            } else {
                AuthStep::Steady
            }
        }
        (None, AuthStatus::Enabled { .. }) => AuthStep::Disable,
        (None, AuthStatus::Disabled) => AuthStep::Steady,
    }
}

/// What the status says of `status`.
pub fn state(status: AuthStatus) -> EtcdAuthState {
    match status {
        AuthStatus::Disabled => EtcdAuthState::Disabled,
        AuthStatus::Enabled { .. } => EtcdAuthState::Enabled,
    }
}

/// Reads the user's Secret and reads and writes ferroplane's, for one cluster.
pub struct AuthSecrets<'a> {
    api: Api<Secret>,
    children: &'a Children,
    names: &'a ClusterNames,
}

fn password_of(secret: &Secret) -> Option<Password> {
    secret
        .data
        .as_ref()?
        .get(PASSWORD_KEY)
        .and_then(|b| String::from_utf8(b.0.clone()).ok())
        .filter(|p| !p.is_empty())
        .map(Password::new)
}

impl<'a> AuthSecrets<'a> {
    pub fn new(kube: &Client, children: &'a Children, names: &'a ClusterNames) -> Self {
        Self {
            api: Api::namespaced(kube.clone(), &names.namespace),
            children,
            names,
        }
    }

    async fn get(&self, name: &str) -> Result<Option<Secret>, Error> {
        self.api
            .get_opt(name)
            .await
            .map_err(|e| Error::kube(format!("reading Secret {name}"), e))
    }

    /// The wanted password (an error when `spec.auth` names a Secret that is missing or has
    /// no non-empty `password`) and the recorded one.
    pub async fn passwords(&self, mr: &EtcdCluster) -> Result<Passwords, Error> {
        let wanted = match &mr.spec.auth {
            None => None,
            Some(auth) => {
                let name = &auth.root_secret_ref.name;
                let secret = self.get(name).await?;
                let problem = match &secret {
                    None => Some("does not exist"),
                    Some(s) if password_of(s).is_none() => Some("has no non-empty key password"),
                    Some(_) => None,
                };
                if let Some(problem) = problem {
                    return Err(Error::AuthSecret {
                        name: name.clone(),
                        problem,
                    });
                }
                secret.as_ref().and_then(password_of)
            }
        };
        let state_name = state_secret(self.names);
        let (in_effect, owner_stale) = match self.get(&state_name).await? {
            Some(secret) => {
                self.ours(mr, &secret)?;
                let uid = mr.uid().unwrap_or_default();
                let refers = secret.owner_references().iter().any(|r| r.uid == uid);
                (password_of(&secret), refers != children::owned(mr))
            }
            None => (None, false),
        };
        Ok(Passwords {
            wanted,
            in_effect,
            owner_stale,
        })
    }

    fn ours(&self, mr: &EtcdCluster, live: &Secret) -> Result<(), Error> {
        let uid = mr.uid().unwrap_or_default();
        let value = serde_json::to_value(live).map_err(|source| Error::Serialize {
            what: "Secret",
            source,
        })?;
        let holder = children::holder(&value, &uid);
        match children::refusal_message(&format!("Secret/{}", live.name_any()), &holder, &uid) {
            Some(message) if holder != Holder::Us => Err(Error::NotOurs(message)),
            _ => Ok(()),
        }
    }

    /// Records `password` as the one in effect.
    pub async fn record(&self, mr: &EtcdCluster, password: &Password) -> Result<(), Error> {
        let name = state_secret(self.names);
        OwnedSecret {
            name: &name,
            type_: "Opaque",
            data: &[(PASSWORD_KEY, password.expose())],
            annotations: None,
        }
        .apply(self.children, mr, self.names)
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pw(text: &str) -> Option<Password> {
        Some(Password::new(text))
    }

    #[test]
    fn a_new_auth_is_enabled_with_the_secrets_password() {
        let p = Passwords {
            wanted: pw("a"),
            in_effect: None,
            owner_stale: false,
        };
        assert_eq!(
            plan(&p, AuthStatus::Disabled),
            AuthStep::Enable(Password::new("a"))
        );
        // Enabled with "a" (index 0 of ["a"]) but not recorded yet.
        assert_eq!(
            plan(&p, AuthStatus::Enabled { password: 0 }),
            AuthStep::Record(Password::new("a"))
        );
    }

    #[test]
    fn a_changed_secret_changes_roots_password_then_records_it() {
        let p = Passwords {
            wanted: pw("new"),
            in_effect: pw("old"),
            owner_stale: false,
        };
        assert_eq!(
            p.credentials().passwords,
            vec![Password::new("old"), Password::new("new")]
        );
        assert_eq!(
            plan(&p, AuthStatus::Enabled { password: 0 }),
            AuthStep::ChangePassword(Password::new("new"))
        );
        // Changed, not recorded (a crash in between): etcd accepts the new one.
        assert_eq!(
            plan(&p, AuthStatus::Enabled { password: 1 }),
            AuthStep::Record(Password::new("new"))
        );
        let recorded = Passwords {
            wanted: pw("new"),
            in_effect: pw("new"),
            owner_stale: false,
        };
        assert_eq!(
            plan(&recorded, AuthStatus::Enabled { password: 0 }),
            AuthStep::Steady
        );
    }

    #[test]
    fn removing_auth_disables_it_and_then_nothing_changes() {
        let p = Passwords {
            wanted: None,
            in_effect: pw("old"),
            owner_stale: false,
        };
        assert!(p.involved());
        assert_eq!(
            plan(&p, AuthStatus::Enabled { password: 0 }),
            AuthStep::Disable
        );
        assert_eq!(plan(&p, AuthStatus::Disabled), AuthStep::Steady);
        assert!(!Passwords::default().involved());
    }

    #[test]
    fn a_recorded_secret_with_stale_owner_references_is_written_again() {
        let p = Passwords {
            wanted: pw("a"),
            in_effect: pw("a"),
            owner_stale: true,
        };
        let enabled = AuthStatus::Enabled { password: 0 };
        assert_eq!(plan(&p, enabled), AuthStep::Steady);
        assert_eq!(
            plan_with_owner(&p, enabled),
            AuthStep::Record(Password::new("a"))
        );
        let off = Passwords { wanted: None, ..p };
        assert_eq!(
            plan_with_owner(&off, AuthStatus::Disabled),
            AuthStep::Record(Password::new("a"))
        );
    }

    #[test]
    fn descriptions_and_debug_output_never_carry_a_password() {
        let step = AuthStep::ChangePassword(Password::new("hunter2"));
        let shown = format!("{step:?} {}", step.describe().unwrap_or_default());
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
