//! [`ConfigError`]: why a `providerConfigRef` cannot be used, with a message that says what to
//! fix, the condition reason of each case and its retry class.

use alibaba_sdk::Error;
use ferroplane_apis::common::ProviderConfigKind;
use ferroplane_runtime::ReconcileError;

use super::endpoint_policy::EndpointRefusal;
use super::secret_keys::SecretKeysError;
use crate::reasons::{
    CREDENTIALS_KEY_MISSING, CREDENTIALS_SECRET_NOT_FOUND, CREDENTIALS_SOURCE_NOT_ALLOWED,
    ENDPOINT_NOT_ALLOWED, INVALID_PROVIDER_CONFIG, KUBERNETES_API_ERROR, MALFORMED_CREDENTIALS,
    NAMESPACE_NOT_ALLOWED, PROVIDER_CONFIG_NOT_FOUND, SECRET_NAMESPACE_NOT_ALLOWED,
};

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "{kind:?} {name} not found{}; create it or point spec.providerConfigRef at an existing one",
        namespace.as_ref().map(|ns| format!(" in namespace {ns}")).unwrap_or_default()
    )]
    NotFound {
        kind: ProviderConfigKind,
        name: String,
        namespace: Option<String>,
    },
    #[error(
        "{config} names Secret {secret_namespace}/{secret}, but a ProviderConfig may only read Secrets in its own namespace {namespace}; remove credentials.secretRef.namespace or use a ClusterProviderConfig"
    )]
    SecretNamespaceNotAllowed {
        config: String,
        namespace: String,
        secret_namespace: String,
        secret: String,
    },
    #[error(
        "{config} has credentials source {source_name} but no {field}; set spec.credentials.{field}"
    )]
    MissingField {
        config: String,
        source_name: &'static str,
        field: &'static str,
    },
    #[error(
        "{config}: credentials Secret {namespace}/{name} not found; create it with the keys accessKeyId and accessKeySecret"
    )]
    SecretNotFound {
        config: String,
        namespace: String,
        name: String,
    },
    #[error("{config}: {source}")]
    SecretKeys {
        config: String,
        #[source]
        source: SecretKeysError,
    },
    #[error("{config}: cannot read from the Kubernetes API: {source}")]
    Kube {
        config: String,
        #[source]
        source: kube::Error,
    },
    #[error("{config}: {source}")]
    Client {
        config: String,
        #[source]
        source: Error,
    },
    #[error(
        "{config}: {why}; a namespaced ProviderConfig may only use credentials.source Secret, or RamRoleArn with a secretRef, in its own namespace. Use a ClusterProviderConfig set up by an administrator for the controller's identity"
    )]
    SourceNotAllowed { config: String, why: &'static str },
    #[error(
        "{config}: spec.{field} {endpoint} is not allowed: {refusal}. Remove it to use the region's Alibaba Cloud endpoint, or use a ClusterProviderConfig"
    )]
    EndpointNotAllowed {
        config: String,
        field: &'static str,
        endpoint: String,
        refusal: EndpointRefusal,
    },
    #[error(
        "{config} does not allow namespace {namespace} (spec.allowedNamespaces{}); ask its administrator to admit the namespace, or use a ProviderConfig of this namespace",
        detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
    )]
    NamespaceNotAllowed {
        config: String,
        namespace: String,
        detail: Option<String>,
    },
}

impl ConfigError {
    /// The condition reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => PROVIDER_CONFIG_NOT_FOUND,
            Self::SecretNamespaceNotAllowed { .. } => SECRET_NAMESPACE_NOT_ALLOWED,
            Self::MissingField { .. } => INVALID_PROVIDER_CONFIG,
            Self::SecretNotFound { .. } => CREDENTIALS_SECRET_NOT_FOUND,
            Self::SecretKeys {
                source: SecretKeysError::MalformedJson { .. },
                ..
            } => MALFORMED_CREDENTIALS,
            Self::SecretKeys { .. } => CREDENTIALS_KEY_MISSING,
            Self::Kube { .. } => KUBERNETES_API_ERROR,
            Self::Client { .. } => INVALID_PROVIDER_CONFIG,
            Self::SourceNotAllowed { .. } => CREDENTIALS_SOURCE_NOT_ALLOWED,
            Self::EndpointNotAllowed { .. } => ENDPOINT_NOT_ALLOWED,
            Self::NamespaceNotAllowed { .. } => NAMESPACE_NOT_ALLOWED,
        }
    }

    /// As a reconcile error: every case waits for the config, its Secret or the API to change.
    pub fn into_reconcile(self) -> ReconcileError {
        let reason = self.reason();
        let message = self.to_string();
        match self {
            Self::Kube { .. } => ReconcileError::retryable(reason, message),
            _ => ReconcileError::dependency(reason, message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_have_reasons_and_wait_for_dependencies() {
        let e = ConfigError::NotFound {
            kind: ProviderConfigKind::ProviderConfig,
            name: "default".into(),
            namespace: Some("ns".into()),
        };
        assert_eq!(e.reason(), "ProviderConfigNotFound");
        assert!(
            e.to_string()
                .contains("ProviderConfig default not found in namespace ns")
        );
        let r = e.into_reconcile();
        assert_eq!(r.retry(), ferroplane_runtime::RetryClass::WaitForDependency);
    }
}
