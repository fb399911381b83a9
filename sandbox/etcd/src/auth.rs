//! etcd's auth store, simulated: users with passwords and roles, the `root` user and role that
//! enabling requires, simple tokens that expire `--auth-token-ttl` after their last use (300 s
//! by default) and die with a password change or when authentication is disabled. Calls that
//! need a permission are refused with etcd's own errors: no token "user name is empty", an
//! unknown or expired one "invalid auth token".

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use provider_etcd::membership::auth::{
    AUTH_FAILED, AUTH_NOT_ENABLED, INVALID_AUTH_TOKEN, ROLE_ALREADY_EXISTS, ROOT,
    USER_ALREADY_EXISTS, USER_EMPTY,
};
use provider_etcd::membership::{MembershipError, grpc};

/// etcd's default `--auth-token-ttl`.
pub const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(300);

const USER_NOT_FOUND: &str = "etcdserver: user name not found";
const ROLE_NOT_FOUND: &str = "etcdserver: role name not found";
const ROOT_USER_NOT_EXIST: &str = "etcdserver: root user does not exist";
const ROOT_ROLE_NOT_GRANTED: &str = "etcdserver: root user does not have root role";
const PERMISSION_DENIED: &str = "etcdserver: permission denied";

fn refused(action: &'static str, code: i32, message: &str) -> MembershipError {
    MembershipError::Api {
        action,
        code,
        message: message.to_owned(),
    }
}

#[derive(Clone, Debug, Default)]
struct User {
    password: String,
    roles: BTreeSet<String>,
}

#[derive(Clone, Debug)]
struct Token {
    user: String,
    expires: Instant,
}

/// One cluster's auth store (members share it, as etcd replicates it through raft).
#[derive(Debug)]
pub struct AuthStore {
    enabled: bool,
    users: BTreeMap<String, User>,
    roles: BTreeSet<String>,
    tokens: HashMap<String, Token>,
    ttl: Duration,
    issued: u64,
}

impl Default for AuthStore {
    fn default() -> Self {
        Self::with_ttl(DEFAULT_TOKEN_TTL)
    }
}

impl AuthStore {
    pub fn with_ttl(ttl: Duration) -> Self {
        Self {
            enabled: false,
            users: BTreeMap::new(),
            roles: BTreeSet::new(),
            tokens: HashMap::new(),
            ttl,
            issued: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Every token expires, as when the TTL passes without a call.
    pub fn expire_tokens(&mut self) {
        self.tokens.clear();
    }

    /// `Auth/Authenticate`: a new simple token for `name`.
    pub fn authenticate(
        &mut self,
        name: &str,
        password: &str,
        now: Instant,
    ) -> Result<String, MembershipError> {
        const ACTION: &str = "authenticate";
        if !self.enabled {
            return Err(refused(ACTION, grpc::FAILED_PRECONDITION, AUTH_NOT_ENABLED));
        }
        match self.users.get(name) {
            Some(user) if user.password == password => {}
            _ => return Err(refused(ACTION, grpc::INVALID_ARGUMENT, AUTH_FAILED)),
        }
        self.issued += 1;
        // etcd's simple tokens: random letters, a dot, a counter.
        let token = format!(
            "sim{:013x}.{}",
            self.issued.wrapping_mul(0x9e37_79b9),
            self.issued
        );
        self.tokens.insert(
            token.clone(),
            Token {
                user: name.to_owned(),
                expires: now + self.ttl,
            },
        );
        Ok(token)
    }

    /// The user `token` stands for, refreshing its TTL; `None` while authentication is off.
    fn user_of(
        &mut self,
        action: &'static str,
        token: Option<&str>,
        now: Instant,
    ) -> Result<Option<String>, MembershipError> {
        if !self.enabled {
            return Ok(None);
        }
        let Some(token) = token else {
            return Err(refused(action, grpc::INVALID_ARGUMENT, USER_EMPTY));
        };
        let ttl = self.ttl;
        match self.tokens.get_mut(token) {
            Some(t) if t.expires > now => {
                t.expires = now + ttl;
                Ok(Some(t.user.clone()))
            }
            _ => {
                self.tokens.remove(token);
                Err(refused(action, grpc::UNAUTHENTICATED, INVALID_AUTH_TOKEN))
            }
        }
    }

    /// Refuses a call that needs the root role (membership changes, defragmentation,
    /// snapshots, auth management) unless `token` is a valid token of a user with it.
    pub fn require_admin(
        &mut self,
        action: &'static str,
        token: Option<&str>,
        now: Instant,
    ) -> Result<(), MembershipError> {
        match self.user_of(action, token, now)? {
            None => Ok(()),
            Some(user)
                if self
                    .users
                    .get(&user)
                    .is_some_and(|u| u.roles.contains(ROOT)) =>
            {
                Ok(())
            }
            Some(_) => Err(refused(action, grpc::PERMISSION_DENIED, PERMISSION_DENIED)),
        }
    }

    pub fn user_add(
        &mut self,
        token: Option<&str>,
        name: &str,
        password: &str,
        now: Instant,
    ) -> Result<(), MembershipError> {
        const ACTION: &str = "user add";
        self.require_admin(ACTION, token, now)?;
        if self.users.contains_key(name) {
            return Err(refused(
                ACTION,
                grpc::FAILED_PRECONDITION,
                USER_ALREADY_EXISTS,
            ));
        }
        self.users.insert(
            name.to_owned(),
            User {
                password: password.to_owned(),
                roles: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// Changes a password; the user's tokens stop being valid.
    pub fn change_password(
        &mut self,
        token: Option<&str>,
        name: &str,
        password: &str,
        now: Instant,
    ) -> Result<(), MembershipError> {
        const ACTION: &str = "change password";
        self.require_admin(ACTION, token, now)?;
        let user = self
            .users
            .get_mut(name)
            .ok_or_else(|| refused(ACTION, grpc::FAILED_PRECONDITION, USER_NOT_FOUND))?;
        user.password = password.to_owned();
        self.tokens.retain(|_, t| t.user != name);
        Ok(())
    }

    pub fn role_add(
        &mut self,
        token: Option<&str>,
        name: &str,
        now: Instant,
    ) -> Result<(), MembershipError> {
        const ACTION: &str = "role add";
        self.require_admin(ACTION, token, now)?;
        if !self.roles.insert(name.to_owned()) {
            return Err(refused(
                ACTION,
                grpc::FAILED_PRECONDITION,
                ROLE_ALREADY_EXISTS,
            ));
        }
        Ok(())
    }

    /// Grants `role` to `user` (granting it again is no error, as in etcd).
    pub fn grant(
        &mut self,
        token: Option<&str>,
        user: &str,
        role: &str,
        now: Instant,
    ) -> Result<(), MembershipError> {
        const ACTION: &str = "grant role";
        self.require_admin(ACTION, token, now)?;
        if !self.roles.contains(role) {
            return Err(refused(ACTION, grpc::FAILED_PRECONDITION, ROLE_NOT_FOUND));
        }
        self.users
            .get_mut(user)
            .ok_or_else(|| refused(ACTION, grpc::FAILED_PRECONDITION, USER_NOT_FOUND))?
            .roles
            .insert(role.to_owned());
        Ok(())
    }

    /// `Auth/AuthEnable`: needs root with the root role; enabling again is no error.
    pub fn enable(&mut self) -> Result<(), MembershipError> {
        const ACTION: &str = "auth enable";
        if self.enabled {
            return Ok(());
        }
        let root = self
            .users
            .get(ROOT)
            .ok_or_else(|| refused(ACTION, grpc::FAILED_PRECONDITION, ROOT_USER_NOT_EXIST))?;
        if !root.roles.contains(ROOT) {
            return Err(refused(
                ACTION,
                grpc::FAILED_PRECONDITION,
                ROOT_ROLE_NOT_GRANTED,
            ));
        }
        self.enabled = true;
        Ok(())
    }

    /// `Auth/AuthDisable`: needs root; every token goes.
    pub fn disable(&mut self, token: Option<&str>, now: Instant) -> Result<(), MembershipError> {
        self.require_admin("auth disable", token, now)?;
        self.enabled = false;
        self.tokens.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<impl std::fmt::Debug, MembershipError>) -> (i32, String) {
        match r {
            Err(MembershipError::Api { code, message, .. }) => (code, message),
            other => panic!("expected an API error, got {other:?}"),
        }
    }

    fn enabled(password: &str) -> AuthStore {
        let now = Instant::now();
        let mut store = AuthStore::default();
        store.user_add(None, ROOT, password, now).expect("add");
        store.role_add(None, ROOT, now).expect("role");
        store.grant(None, ROOT, ROOT, now).expect("grant");
        store.enable().expect("enable");
        store
    }

    #[test]
    fn enabling_needs_root_with_the_root_role() {
        let now = Instant::now();
        let mut store = AuthStore::default();
        assert_eq!(code(store.enable()), (9, ROOT_USER_NOT_EXIST.to_owned()));
        store.user_add(None, ROOT, "pw", now).expect("add");
        assert_eq!(code(store.enable()), (9, ROOT_ROLE_NOT_GRANTED.to_owned()));
        assert_eq!(
            code(store.user_add(None, ROOT, "pw", now)),
            (9, USER_ALREADY_EXISTS.to_owned())
        );
        store.role_add(None, ROOT, now).expect("role");
        assert_eq!(
            code(store.role_add(None, ROOT, now)),
            (9, ROLE_ALREADY_EXISTS.to_owned())
        );
        store.grant(None, ROOT, ROOT, now).expect("grant");
        store.grant(None, ROOT, ROOT, now).expect("granted again");
        store.enable().expect("enable");
        store.enable().expect("enabled again");
    }

    #[test]
    fn authentication_is_refused_while_off_and_with_a_wrong_password() {
        let now = Instant::now();
        let mut off = AuthStore::default();
        assert_eq!(
            code(off.authenticate(ROOT, "pw", now)),
            (9, AUTH_NOT_ENABLED.to_owned())
        );
        off.require_admin("member add", None, now)
            .expect("no token needed while off");
        let mut on = enabled("pw");
        assert_eq!(
            code(on.authenticate(ROOT, "other", now)),
            (3, AUTH_FAILED.to_owned())
        );
        assert_eq!(
            code(on.authenticate("nobody", "pw", now)),
            (3, AUTH_FAILED.to_owned())
        );
    }

    #[test]
    fn admin_calls_need_a_live_token() {
        let now = Instant::now();
        let mut store = enabled("pw");
        assert_eq!(
            code(store.require_admin("member add", None, now)),
            (3, USER_EMPTY.to_owned())
        );
        assert_eq!(
            code(store.require_admin("member add", Some("made-up"), now)),
            (16, INVALID_AUTH_TOKEN.to_owned())
        );
        let token = store.authenticate(ROOT, "pw", now).expect("token");
        store
            .require_admin("member add", Some(&token), now)
            .expect("a fresh token is good");
        store.expire_tokens();
        assert_eq!(
            code(store.require_admin("member add", Some(&token), now)),
            (16, INVALID_AUTH_TOKEN.to_owned())
        );
    }

    #[test]
    fn tokens_expire_a_ttl_after_their_last_use() {
        let start = Instant::now();
        let ttl = Duration::from_secs(300);
        let mut store = AuthStore::with_ttl(ttl);
        store.user_add(None, ROOT, "pw", start).expect("add");
        store.role_add(None, ROOT, start).expect("role");
        store.grant(None, ROOT, ROOT, start).expect("grant");
        store.enable().expect("enable");
        let token = store.authenticate(ROOT, "pw", start).expect("token");
        let used = start + Duration::from_secs(200);
        store
            .require_admin("status", Some(&token), used)
            .expect("within the TTL");
        store
            .require_admin("status", Some(&token), used + Duration::from_secs(299))
            .expect("the use renewed it");
        assert_eq!(
            code(store.require_admin(
                "status",
                Some(&token),
                used + Duration::from_secs(299) + ttl
            )),
            (16, INVALID_AUTH_TOKEN.to_owned())
        );
    }

    #[test]
    fn a_password_change_ends_the_users_tokens_and_the_old_password() {
        let now = Instant::now();
        let mut store = enabled("old");
        let token = store.authenticate(ROOT, "old", now).expect("token");
        store
            .change_password(Some(&token), ROOT, "new", now)
            .expect("changepw");
        assert_eq!(
            code(store.require_admin("member add", Some(&token), now)),
            (16, INVALID_AUTH_TOKEN.to_owned())
        );
        assert_eq!(
            code(store.authenticate(ROOT, "old", now)),
            (3, AUTH_FAILED.to_owned())
        );
        let token = store.authenticate(ROOT, "new", now).expect("new password");
        store.disable(Some(&token), now).expect("disable");
        assert!(!store.enabled());
        assert_eq!(
            code(store.authenticate(ROOT, "new", now)),
            (9, AUTH_NOT_ENABLED.to_owned())
        );
    }
}
