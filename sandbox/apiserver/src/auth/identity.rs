//! Who sends a request. Requests without credentials are the sandbox's administrator (kubectl
//! sends no credentials over plain http, and the admin kubeconfig has none); a bearer token the
//! sandbox issued for a ServiceAccount is that account, as kube-apiserver authenticates it; any
//! other token is refused with 401. The administrator may impersonate (`kubectl --as`).

use std::collections::HashMap;
use std::sync::Mutex;

use axum::http::HeaderMap;

/// An authenticated user other than the administrator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub groups: Vec<String>,
}

impl User {
    /// `system:serviceaccount:<namespace>:<name>` with the groups Kubernetes gives it.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_owned(),
            ],
        }
    }
}

/// The sender of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// In `system:masters`: never authorized against RBAC.
    Admin,
    User(User),
}

/// Why a request was not authenticated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthnError {
    #[error("the bearer token is not one this sandbox issued")]
    UnknownToken,
    #[error("the token's ServiceAccount {namespace}/{name} no longer exists")]
    AccountGone { namespace: String, name: String },
    #[error("the Authorization header is not a bearer token")]
    Malformed,
}

/// The ServiceAccount tokens the sandbox issued.
#[derive(Debug, Default)]
pub struct Tokens(Mutex<HashMap<String, (String, String)>>);

impl Tokens {
    /// A new random token for `namespace/name`.
    pub fn issue(&self, namespace: &str, name: &str) -> String {
        let token = format!(
            "sandbox-sa.{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(token.clone(), (namespace.to_owned(), name.to_owned()));
        token
    }

    fn account_of(&self, token: &str) -> Option<(String, String)> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(token)
            .cloned()
    }
}

/// Authenticates `headers`; `account_exists` says whether a ServiceAccount is still stored.
pub fn authenticate(
    headers: &HeaderMap,
    tokens: &Tokens,
    account_exists: impl Fn(&str, &str) -> bool,
) -> Result<Identity, AuthnError> {
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else {
        return Ok(impersonated(headers).unwrap_or(Identity::Admin));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .ok_or(AuthnError::Malformed)?;
    let (namespace, name) = tokens.account_of(token).ok_or(AuthnError::UnknownToken)?;
    if !account_exists(&namespace, &name) {
        return Err(AuthnError::AccountGone { namespace, name });
    }
    Ok(Identity::User(User::service_account(&namespace, &name)))
}

/// `Impersonate-User` (and `Impersonate-Group`) of the administrator, as `kubectl --as` sends.
fn impersonated(headers: &HeaderMap) -> Option<Identity> {
    let name = headers.get("impersonate-user")?.to_str().ok()?.to_owned();
    let mut user = match name
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((namespace, account)) => User::service_account(namespace, account),
        None => User {
            name: name.clone(),
            groups: vec!["system:authenticated".to_owned()],
        },
    };
    for group in headers.get_all("impersonate-group") {
        if let Ok(group) = group.to_str()
            && !user.groups.iter().any(|g| g == group)
        {
            user.groups.push(group.to_owned());
        }
    }
    Some(Identity::User(user))
}
