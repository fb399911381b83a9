//! [`Membership`] over etcd's JSON gRPC gateway: `POST /v3/cluster/member/*` and
//! `POST /v3/maintenance/status`, which etcd 3.4 and later serve on the client port.
//! uint64 IDs travel as decimal strings in JSON.

use std::future::Future;
use std::time::Duration;

use serde_json::{Value, json};

use super::api::{self, Member, MemberStatus, Membership, PromoteOutcome};
use super::auth::{self, AuthStatus, Password, ROOT, RootCredentials};
use super::error::MembershipError;
use super::grpc;
use super::http::GatewayConfig;
use super::session::RootSession;
use super::wire::{MemberAdd, MemberList, WireStatus, decode};

/// How long one member's defragmentation may take.
const DEFRAGMENT_TIMEOUT: Duration = Duration::from_secs(300);

/// Talks to a cluster through a list of client URLs, trying the next one when a URL is
/// unreachable (the Service URL in a cluster; every member's URL in tests).
#[derive(Clone, Debug)]
pub struct GatewayClient {
    http: reqwest::Client,
    endpoints: Vec<String>,
    session: RootSession,
}

impl GatewayClient {
    /// Streams a snapshot into `out` from the first endpoint that answers a status call, and
    /// the store revision that member reported just before (the snapshot holds at least it).
    pub async fn save_snapshot(
        &self,
        out: &mut (impl tokio::io::AsyncWrite + Unpin + Send),
    ) -> Result<(super::snapshot::SnapshotInfo, u64), super::snapshot::SnapshotError> {
        // A snapshot needs root when authentication is on; a fresh token outlives the stream's
        // start, which is when etcd checks it.
        self.session.forget_token();
        let token = self
            .token()
            .await
            .map_err(|e| super::snapshot::SnapshotError::NoMember {
                detail: e.to_string(),
            })?;
        let mut last = None;
        for endpoint in &self.endpoints {
            match post(
                &self.http,
                endpoint,
                "status",
                "/v3/maintenance/status",
                &json!({}),
                token.as_ref(),
            )
            .await
            {
                Ok(value) => {
                    let revision = decode::<WireStatus>("status", value)
                        .map(|s| s.header.revision)
                        .unwrap_or(0);
                    let info =
                        super::snapshot::save(&self.http, endpoint, token.as_ref(), out).await?;
                    return Ok((info, revision));
                }
                Err(error) => last = Some(error),
            }
        }
        Err(super::snapshot::SnapshotError::NoMember {
            detail: last.map_or_else(|| "no client URL".to_owned(), |e| e.to_string()),
        })
    }

    pub fn new(endpoints: Vec<String>, config: &GatewayConfig) -> Result<Self, MembershipError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .build()
            .map_err(|source| MembershipError::Unreachable {
                endpoint: "(client setup)".into(),
                source,
            })?;
        Ok(Self::with_http(http, endpoints))
    }

    /// Shares one HTTP connection pool between the clients of many clusters.
    pub fn with_http(http: reqwest::Client, endpoints: Vec<String>) -> Self {
        let endpoints = endpoints
            .into_iter()
            .map(|e| e.trim_end_matches('/').to_owned())
            .collect();
        Self {
            http,
            endpoints,
            session: RootSession::default(),
        }
    }

    /// The token to send (see [`RootSession::token`]).
    async fn token(&self) -> Result<Option<Password>, MembershipError> {
        self.session
            .token(|password| self.authenticate(password))
            .await
    }

    /// A token from etcd for root with `password`.
    async fn authenticate(&self, password: Password) -> Result<String, MembershipError> {
        let body = json!({"name": ROOT, "password": password.expose()});
        let value = self
            .call_with("authenticate", "/v3/auth/authenticate", &body, None)
            .await?;
        value
            .get("token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| MembershipError::Decode {
                endpoint: self.endpoints.join(","),
                action: "authenticate",
                detail: "the answer carries no token".to_owned(),
            })
    }

    /// `attempt` with root's token (see [`RootSession::authorized`]).
    async fn authorized<T, F, Fut>(&self, attempt: F) -> Result<T, MembershipError>
    where
        F: Fn(Option<Password>) -> Fut,
        Fut: Future<Output = Result<T, MembershipError>>,
    {
        self.session
            .authorized(|password| self.authenticate(password), attempt)
            .await
    }

    /// POSTs to the first endpoint that answers at all; an etcd error answer is not retried
    /// elsewhere because every member would give the same one.
    async fn call(
        &self,
        action: &'static str,
        path: &str,
        body: Value,
    ) -> Result<Value, MembershipError> {
        let body = &body;
        self.authorized(
            |token| async move { self.call_with(action, path, body, token.as_ref()).await },
        )
        .await
    }

    async fn call_with(
        &self,
        action: &'static str,
        path: &str,
        body: &Value,
        token: Option<&Password>,
    ) -> Result<Value, MembershipError> {
        let mut last = MembershipError::NoEndpoints;
        for endpoint in &self.endpoints {
            match post(&self.http, endpoint, action, path, body, token).await {
                Err(error @ MembershipError::Unreachable { .. }) => last = error,
                other => return other,
            }
        }
        Err(last)
    }
}

async fn post(
    http: &reqwest::Client,
    endpoint: &str,
    action: &'static str,
    path: &str,
    body: &Value,
    token: Option<&Password>,
) -> Result<Value, MembershipError> {
    let unreachable = |source| MembershipError::Unreachable {
        endpoint: endpoint.to_owned(),
        source,
    };
    let mut request = http.post(format!("{endpoint}{path}")).json(body);
    if let Some(token) = token {
        // etcd reads the token from the `authorization` metadata, without a scheme.
        request = request.header(reqwest::header::AUTHORIZATION, token.expose());
    }
    let response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(unreachable)?;
    if status == reqwest::StatusCode::BAD_REQUEST && refuses_common_name(&bytes) {
        return Err(MembershipError::CommonNameRefused {
            endpoint: endpoint.to_owned(),
        });
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| MembershipError::Decode {
        endpoint: endpoint.to_owned(),
        action,
        detail: format!("HTTP {status}, body is not JSON ({e})"),
    })?;
    if let Some(code) = value
        .get("code")
        .and_then(Value::as_i64)
        .filter(|_| !status.is_success() || value.get("error").is_some())
    {
        let message = value
            .get("message")
            .or_else(|| value.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        return Err(MembershipError::Api {
            action,
            code: i32::try_from(code).unwrap_or(i32::MAX),
            message,
        });
    }
    if !status.is_success() {
        return Err(MembershipError::Decode {
            endpoint: endpoint.to_owned(),
            action,
            detail: format!("HTTP {status}"),
        });
    }
    Ok(value)
}

/// Whether a plain-text answer is etcd's refusal of a client certificate with a Common Name
/// (`embed/serve.go`, once authentication is on).
fn refuses_common_name(body: &[u8]) -> bool {
    String::from_utf8_lossy(body).contains("CommonName of client sending a request against gateway")
}

impl Membership for GatewayClient {
    async fn list(&self) -> Result<Vec<Member>, MembershipError> {
        let value = self
            .call("member list", "/v3/cluster/member/list", json!({}))
            .await?;
        Ok(decode::<MemberList>("member list", value)?
            .members
            .into_iter()
            .map(Member::from)
            .collect())
    }

    async fn add_learner(&self, peer_url: &str) -> Result<Member, MembershipError> {
        let body = json!({"peerURLs": [peer_url], "isLearner": true});
        let added = self
            .call("member add", "/v3/cluster/member/add", body)
            .await
            .and_then(|value| decode::<MemberAdd>("member add", value))
            .map(|added| added.member.into());
        api::settle_add(added, peer_url, || self.list()).await
    }

    async fn promote(&self, id: u64) -> Result<PromoteOutcome, MembershipError> {
        match self
            .call(
                "member promote",
                "/v3/cluster/member/promote",
                json!({"ID": id.to_string()}),
            )
            .await
        {
            Ok(_) => Ok(PromoteOutcome::Promoted),
            Err(MembershipError::Api {
                code: grpc::FAILED_PRECONDITION,
                message,
                ..
            }) if message.contains("in sync") => Ok(PromoteOutcome::NotCaughtUp),
            // A retry after a lost answer: the member is a voter already.
            Err(MembershipError::Api {
                code: grpc::FAILED_PRECONDITION,
                message,
                ..
            }) if message.contains("can only promote a learner member") => {
                Ok(PromoteOutcome::Promoted)
            }
            Err(e) => Err(e),
        }
    }

    async fn remove(&self, id: u64) -> Result<(), MembershipError> {
        // Asked again for a member already gone (a reconcile repeated after a crash), etcd can
        // panic ("unexpected removal of unknown remote peer", etcd-io/etcd#13119): a member
        // the list no longer has is not asked for.
        if !self.list().await?.iter().any(|m| m.id == id) {
            return Ok(());
        }
        match self
            .call(
                "member remove",
                "/v3/cluster/member/remove",
                json!({"ID": id.to_string()}),
            )
            .await
        {
            Ok(_)
            | Err(MembershipError::Api {
                code: grpc::NOT_FOUND,
                ..
            }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn status(&self, client_url: &str) -> Result<MemberStatus, MembershipError> {
        let body = json!({});
        let value = self
            .authorized(|token| {
                let body = &body;
                async move {
                    post(
                        &self.http,
                        client_url.trim_end_matches('/'),
                        "status",
                        "/v3/maintenance/status",
                        body,
                        token.as_ref(),
                    )
                    .await
                }
            })
            .await?;
        let s: WireStatus = decode("status", value)?;
        Ok(MemberStatus {
            member_id: s.header.member_id,
            leader: s.leader,
            version: s.version,
            raft_index: s.raft_index,
            is_learner: s.is_learner,
            errors: s.errors,
            db_size: s.db_size,
            db_size_in_use: s.db_size_in_use,
        })
    }

    async fn defragment(&self, client_url: &str) -> Result<(), MembershipError> {
        self.authorized(|token| defragment(&self.http, client_url, token))
            .await
    }

    fn set_credentials(&mut self, credentials: RootCredentials) {
        self.session.set_credentials(credentials);
    }

    async fn auth_status(&self) -> Result<AuthStatus, MembershipError> {
        if self.session.credentials().is_empty() {
            // Without a password, authenticating as root with an empty one tells whether
            // authentication is on.
            let probe = json!({"name": ROOT, "password": ""});
            return match self
                .call_with("authenticate", "/v3/auth/authenticate", &probe, None)
                .await
            {
                Err(e) if auth::is_not_enabled(&e) => Ok(AuthStatus::Disabled),
                Err(e) if auth::is_wrong_password(&e) => {
                    Err(MembershipError::AuthFailed { tried: 0 })
                }
                Err(e) => Err(e),
                Ok(_) => Err(MembershipError::AuthFailed { tried: 0 }),
            };
        }
        self.token().await?;
        Ok(self.session.status())
    }

    async fn enable_auth(&self, password: &Password) -> Result<(), MembershipError> {
        let user = json!({"name": ROOT, "password": password.expose()});
        match self
            .call("user add", "/v3/auth/user/add", user.clone())
            .await
        {
            Err(e) if auth::already_exists(&e, auth::USER_ALREADY_EXISTS) => {
                self.call("change password", "/v3/auth/user/changepw", user)
                    .await?;
            }
            other => {
                other?;
            }
        }
        match self
            .call("role add", "/v3/auth/role/add", json!({"name": ROOT}))
            .await
        {
            Err(e) if auth::already_exists(&e, auth::ROLE_ALREADY_EXISTS) => {}
            other => {
                other?;
            }
        }
        self.call(
            "grant role",
            "/v3/auth/user/grant",
            json!({"user": ROOT, "role": ROOT}),
        )
        .await?;
        self.call("auth enable", "/v3/auth/enable", json!({}))
            .await?;
        self.session.forget_token();
        Ok(())
    }

    async fn disable_auth(&self) -> Result<(), MembershipError> {
        self.call("auth disable", "/v3/auth/disable", json!({}))
            .await?;
        self.session.disabled();
        Ok(())
    }

    async fn change_root_password(&self, password: &Password) -> Result<(), MembershipError> {
        self.call(
            "change password",
            "/v3/auth/user/changepw",
            json!({"name": ROOT, "password": password.expose()}),
        )
        .await?;
        self.session.forget_token();
        Ok(())
    }
}

/// `Maintenance/Defragment` of the member at `client_url`.
async fn defragment(
    http: &reqwest::Client,
    client_url: &str,
    token: Option<Password>,
) -> Result<(), MembershipError> {
    let endpoint = client_url.trim_end_matches('/');
    // Rewriting the database takes about a second per gigabyte: far longer than the
    // membership calls' timeout.
    let mut request = http
        .post(format!("{endpoint}/v3/maintenance/defragment"))
        .timeout(DEFRAGMENT_TIMEOUT)
        .json(&json!({}));
    if let Some(token) = &token {
        request = request.header(reqwest::header::AUTHORIZATION, token.expose());
    }
    let response = request
        .send()
        .await
        .map_err(|source| MembershipError::Unreachable {
            endpoint: endpoint.to_owned(),
            source,
        })?;
    let status = response.status();
    let bytes = response.bytes().await.unwrap_or_default();
    if status == reqwest::StatusCode::BAD_REQUEST && refuses_common_name(&bytes) {
        return Err(MembershipError::CommonNameRefused {
            endpoint: endpoint.to_owned(),
        });
    }
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if status.is_success() && value.get("error").is_none() {
        return Ok(());
    }
    Err(MembershipError::Api {
        action: "defragment",
        code: value
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(-1),
        message: value
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    })
}

#[cfg(test)]
mod tests;
