//! Which Alibaba Cloud account a configuration's credentials act in: asked once per
//! configuration version (STS `GetCallerIdentity`, which needs no RAM permission) and kept with
//! that version's clients. Every kind reports `<account ID>/<region>` as its external scope
//! (`ExternalClient::scope`), which the framework records beside the external name: a
//! `providerConfigRef` moved to a configuration of another account is then refused instead of
//! creating a second resource there and leaving the first one unmanaged.

use alibaba_sdk::Error;
use alibaba_sdk::sts::StsClient;
use ferroplane_runtime::ReconcileError;
use tokio::sync::OnceCell;

use crate::cloud_error::product_error;
use crate::config_resolution::ConfigError;

/// What asking failed with before any call: the configuration's STS endpoint is unusable.
#[derive(Debug)]
struct Unusable {
    reason: &'static str,
    message: String,
}

/// The account behind one configuration version's credentials, asked for on first use.
#[derive(Debug)]
pub struct AccountIdentity {
    sts: Result<StsClient, Unusable>,
    account_id: OnceCell<String>,
}

impl AccountIdentity {
    /// Asks `sts`; a client that could not be built fails every ask with its error (the other
    /// clients of the configuration still work until then).
    pub fn new(sts: Result<StsClient, ConfigError>) -> Self {
        Self {
            sts: sts.map_err(|e| Unusable {
                reason: e.reason(),
                message: e.to_string(),
            }),
            account_id: OnceCell::new(),
        }
    }

    /// The account ID; a failed call is not kept (the next reconcile asks again).
    pub async fn account_id(&self, config: &str) -> Result<&str, ReconcileError> {
        const WHAT: &str =
            "cannot tell which account the credentials belong to (STS GetCallerIdentity)";
        let sts = self.sts.as_ref().map_err(|unusable| {
            ReconcileError::terminal(unusable.reason, format!("{WHAT}: {}", unusable.message))
        })?;
        self.account_id
            .get_or_try_init(|| async {
                sts.get_caller_identity()
                    .await
                    .map(|identity| identity.account_id)
            })
            .await
            .map(String::as_str)
            .map_err(|e: Error| product_error(&e, config, "sts").context(WHAT))
    }
}

/// The external scope of a resource of `region` in `account_id`.
pub fn scope(account_id: &str, region: &str) -> String {
    format!("{account_id}/{region}")
}
