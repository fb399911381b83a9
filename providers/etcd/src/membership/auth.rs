//! etcd authentication as the membership clients use it: root's passwords (never shown), what
//! etcd says about authentication, and which of etcd's errors mean "authenticate again".
//!
//! With authentication on, etcd wants a token from `Auth/Authenticate` on every call that
//! needs a permission (membership changes, defragmentation, snapshots, keys). A token stops
//! being valid when it expires (simple tokens: `--auth-token-ttl`, 300 s by default), when
//! root's password changes and when authentication is disabled; etcd then answers
//! `Unauthenticated` "invalid auth token", and a client authenticates again and retries once
//! (as etcd's own Go client does, also for "user name is empty" and "revision of auth store is
//! old").

use std::fmt;

use super::error::MembershipError;
use super::grpc;

/// The user ferroplane authenticates as.
pub const ROOT: &str = "root";

/// etcd's messages (`api/v3rpc/rpctypes`).
pub const AUTH_NOT_ENABLED: &str = "etcdserver: authentication is not enabled";
pub const AUTH_FAILED: &str = "etcdserver: authentication failed, invalid user ID or password";
pub const INVALID_AUTH_TOKEN: &str = "etcdserver: invalid auth token";
pub const USER_EMPTY: &str = "etcdserver: user name is empty";
pub const AUTH_OLD_REVISION: &str = "etcdserver: revision of auth store is old";
pub const USER_ALREADY_EXISTS: &str = "etcdserver: user name already exists";
pub const ROLE_ALREADY_EXISTS: &str = "etcdserver: role name already exists";

/// A password: `Debug` never shows it, and it has no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The text, for the request body that carries it to etcd and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// Root's passwords a client may authenticate with, tried in this order: the password in
/// effect (what ferroplane last set), then the auth Secret's (after a change that was made
/// but not recorded). Empty: the client sends no token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootCredentials {
    pub passwords: Vec<Password>,
}

impl RootCredentials {
    /// `passwords` in order, each once.
    pub fn new(passwords: impl IntoIterator<Item = Password>) -> Self {
        let mut unique: Vec<Password> = Vec::new();
        for password in passwords {
            if !unique.contains(&password) {
                unique.push(password);
            }
        }
        Self { passwords: unique }
    }

    pub fn is_empty(&self) -> bool {
        self.passwords.is_empty()
    }
}

/// Whether etcd requires authentication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthStatus {
    Disabled,
    /// On; root's password is the client's `passwords[password]`.
    Enabled {
        password: usize,
    },
}

/// Whether `error` means the token is missing or no longer valid: authenticate, then retry.
pub fn needs_new_token(error: &MembershipError) -> bool {
    matches!(
        error,
        MembershipError::Api { code, message, .. }
            if (*code == grpc::UNAUTHENTICATED && message.contains(INVALID_AUTH_TOKEN))
                || (*code == grpc::INVALID_ARGUMENT
                    && (message.contains(USER_EMPTY) || message.contains(AUTH_OLD_REVISION)))
    )
}

/// Whether `error` is etcd's answer to authenticating while authentication is off.
pub fn is_not_enabled(error: &MembershipError) -> bool {
    matches!(
        error,
        MembershipError::Api { code: grpc::FAILED_PRECONDITION, message, .. }
            if message.contains(AUTH_NOT_ENABLED)
    )
}

/// Whether `error` is etcd refusing a user name and password.
pub fn is_wrong_password(error: &MembershipError) -> bool {
    matches!(
        error,
        MembershipError::Api { code: grpc::INVALID_ARGUMENT, message, .. }
            if message.contains(AUTH_FAILED)
    )
}

/// Whether `error` says that what was to be created exists already.
pub fn already_exists(error: &MembershipError, message: &str) -> bool {
    matches!(
        error,
        MembershipError::Api { code: grpc::FAILED_PRECONDITION, message: m, .. } if m.contains(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: i32, message: &str) -> MembershipError {
        MembershipError::Api {
            action: "test",
            code,
            message: message.to_owned(),
        }
    }

    #[test]
    fn passwords_never_show_in_debug_output() {
        let credentials = RootCredentials::new([Password::new("hunter2"), Password::new("s3")]);
        let shown = format!("{credentials:?} {:?}", Password::new("hunter2"));
        assert!(
            !shown.contains("hunter2") && !shown.contains("s3"),
            "{shown}"
        );
    }

    #[test]
    fn credentials_keep_order_and_drop_repeats() {
        let c = RootCredentials::new(["a", "b", "a"].map(Password::new));
        assert_eq!(c.passwords, vec![Password::new("a"), Password::new("b")]);
    }

    #[test]
    fn token_errors_are_told_from_others() {
        assert!(needs_new_token(&api(16, INVALID_AUTH_TOKEN)));
        assert!(needs_new_token(&api(3, USER_EMPTY)));
        assert!(needs_new_token(&api(3, AUTH_OLD_REVISION)));
        assert!(!needs_new_token(&api(3, AUTH_FAILED)));
        assert!(!needs_new_token(&api(7, "etcdserver: permission denied")));
        assert!(is_not_enabled(&api(9, AUTH_NOT_ENABLED)));
        assert!(is_wrong_password(&api(3, AUTH_FAILED)));
        assert!(already_exists(
            &api(9, USER_ALREADY_EXISTS),
            USER_ALREADY_EXISTS
        ));
    }
}
