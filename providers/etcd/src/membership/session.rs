//! The client half of etcd authentication, the same for the gateway client and the simulation:
//! root's passwords, the token the last authentication gave (shared by a client's clones), and
//! one more attempt with a new token when etcd refuses the one sent. Public for the sandbox's
//! simulated membership (`ferroplane-sandbox-etcd`), which authenticates the same way.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::auth::{self, AuthStatus, Password, RootCredentials};
use super::error::MembershipError;

/// What authenticating found (the token is redacted in `Debug` like a password).
#[derive(Clone, Debug, Default)]
enum Found {
    #[default]
    Unknown,
    /// etcd answered that authentication is off: calls go without a token.
    Disabled,
    Token {
        token: Password,
        /// Which of the credentials' passwords etcd accepted.
        password: usize,
    },
}

/// Root's credentials and what authenticating with them found.
#[derive(Clone, Debug, Default)]
pub struct RootSession {
    credentials: RootCredentials,
    found: Arc<Mutex<Found>>,
}

impl RootSession {
    pub fn credentials(&self) -> &RootCredentials {
        &self.credentials
    }

    /// Other credentials start over; the same ones keep the token.
    pub fn set_credentials(&mut self, credentials: RootCredentials) {
        if credentials != self.credentials {
            self.credentials = credentials;
            self.found = Arc::default();
        }
    }

    fn found(&self) -> MutexGuard<'_, Found> {
        self.found.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The token is no longer good (root's password changed, authentication just enabled).
    pub fn forget_token(&self) {
        *self.found() = Found::Unknown;
    }

    /// Authentication was just disabled.
    pub fn disabled(&self) {
        *self.found() = Found::Disabled;
    }

    /// The token to send: none without credentials or while authentication is off; else the
    /// one kept, or a new one from the first of root's passwords etcd accepts.
    /// `authenticate` asks etcd for a token with one password.
    pub async fn token<A, AFut>(&self, authenticate: A) -> Result<Option<Password>, MembershipError>
    where
        A: Fn(Password) -> AFut,
        AFut: Future<Output = Result<String, MembershipError>>,
    {
        if self.credentials.is_empty() {
            return Ok(None);
        }
        let known = self.found().clone();
        match known {
            Found::Disabled => return Ok(None),
            Found::Token { token, .. } => return Ok(Some(token)),
            Found::Unknown => {}
        }
        for (index, password) in self.credentials.passwords.iter().enumerate() {
            match authenticate(password.clone()).await {
                Ok(token) => {
                    let token = Password::new(token);
                    *self.found() = Found::Token {
                        token: token.clone(),
                        password: index,
                    };
                    return Ok(Some(token));
                }
                Err(e) if auth::is_not_enabled(&e) => {
                    self.disabled();
                    return Ok(None);
                }
                Err(e) if auth::is_wrong_password(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Err(MembershipError::AuthFailed {
            tried: self.credentials.passwords.len(),
        })
    }

    /// `attempt` with the token; once more with a new token when etcd says the token is
    /// missing or no longer valid (expired, root's password changed, authentication just
    /// enabled).
    pub async fn authorized<T, A, AFut, F, Fut>(
        &self,
        authenticate: A,
        attempt: F,
    ) -> Result<T, MembershipError>
    where
        A: Fn(Password) -> AFut,
        AFut: Future<Output = Result<String, MembershipError>>,
        F: Fn(Option<Password>) -> Fut,
        Fut: Future<Output = Result<T, MembershipError>>,
    {
        let token = self.token(&authenticate).await?;
        match attempt(token).await {
            Err(e) if !self.credentials.is_empty() && auth::needs_new_token(&e) => {
                self.forget_token();
                let token = self.token(&authenticate).await?;
                attempt(token).await
            }
            other => other,
        }
    }

    /// What the last authentication found: which password is root's, or that authentication
    /// is off (after [`Self::token`]).
    pub fn status(&self) -> AuthStatus {
        match &*self.found() {
            Found::Token { password, .. } => AuthStatus::Enabled {
                password: *password,
            },
            _ => AuthStatus::Disabled,
        }
    }
}
