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
        "{config} names Secret {secret_namespace}/{secret}, but a ProviderConfig may only read Secrets in its own namespace {namespace}; remove spec.credentials.secretRef.namespace or use a ClusterProviderConfig"
    )]
    SecretNamespaceNotAllowed {
        config: String,
        namespace: String,
        secret_namespace: String,
        secret: String,
    },
    #[error(
        "{config} has credentials source {source_name} but no spec.credentials.{field}; set it"
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
        "{config}: {why}; a namespaced ProviderConfig may only use spec.credentials.source Secret, or RamRoleArn with a spec.credentials.secretRef, in its own namespace. Use a ClusterProviderConfig set up by an administrator for the controller's identity"
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

    /// Every dotted field path `word.word…` in `message` (a domain like `aliyuncs.com` is not
    /// one).
    fn field_paths(message: &str) -> Vec<String> {
        message
            .split(|c: char| !(c.is_ascii_alphabetic() || c == '.'))
            .map(|token| token.trim_matches('.'))
            .filter(|token| {
                let segments: Vec<&str> = token.split('.').collect();
                segments.len() > 1
                    && segments.last() != Some(&"com")
                    && segments
                        .iter()
                        .all(|s| s.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
            })
            .map(str::to_owned)
            .collect()
    }

    /// Whether `path` (`spec.credentials.secretRef.key`) is a property of `crd`'s schema.
    fn in_schema(crd: &serde_json::Value, path: &str) -> bool {
        let mut node = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        for segment in path.split('.') {
            node = &node["properties"][segment];
            if node.is_null() {
                return false;
            }
        }
        true
    }

    // A message that names a field the user cannot find (`credentialsSecretRef.key`) sends them
    // looking for nothing: every field path a configuration message names is written from
    // `spec`, as the CRDs spell it, and exists there, so renaming a field breaks this test.
    #[test]
    fn every_field_a_message_names_exists_in_the_crds() {
        use ferroplane_apis::alibabacloud::{
            ClusterProviderConfig, ECSInstance, ProviderConfig, ProviderCredentials,
        };
        use kube::CustomResourceExt;

        use super::super::endpoint_policy::EndpointAllowList;
        use super::super::secret_keys::credentials_from_secret;
        use super::super::tenancy::namespaced_source_refusal;

        let crds: Vec<serde_json::Value> = [
            ProviderConfig::crd(),
            ClusterProviderConfig::crd(),
            ECSInstance::crd(),
        ]
        .iter()
        .map(|crd| serde_json::to_value(crd).expect("a CRD serializes"))
        .collect();
        let config = || "ProviderConfig ns/pc".to_owned();
        let mut errors = vec![
            ConfigError::NotFound {
                kind: ProviderConfigKind::ProviderConfig,
                name: "pc".into(),
                namespace: Some("ns".into()),
            },
            ConfigError::SecretNamespaceNotAllowed {
                config: config(),
                namespace: "ns".into(),
                secret_namespace: "other".into(),
                secret: "creds".into(),
            },
            ConfigError::SecretNotFound {
                config: config(),
                namespace: "ns".into(),
                name: "creds".into(),
            },
            ConfigError::NamespaceNotAllowed {
                config: config(),
                namespace: "ns".into(),
                detail: None,
            },
        ];
        for (source_name, field) in [
            ("Secret", "secretRef"),
            ("Secret", "secretRef.namespace"),
            ("RamRoleArn", "ramRoleArn"),
        ] {
            errors.push(ConfigError::MissingField {
                config: config(),
                source_name,
                field,
            });
        }
        for key in [None, Some("credentials")] {
            let source = credentials_from_secret("ns/creds", &Default::default(), key)
                .expect_err("an empty Secret");
            errors.push(ConfigError::SecretKeys {
                config: config(),
                source,
            });
        }
        for credentials in [
            serde_json::json!({"source": "Environment"}),
            serde_json::json!({"source": "RRSA"}),
            serde_json::json!({"source": "InstanceRole"}),
            serde_json::json!({"source": "RamRoleArn", "ramRoleArn": {"roleArn": "acs:ram::1:role/r"}}),
            serde_json::json!({"source": "Secret", "secretRef": {"name": "c"}, "rrsa": {}}),
            serde_json::json!({"source": "Secret", "secretRef": {"name": "c"}, "instanceRole": {}}),
        ] {
            let credentials: ProviderCredentials =
                serde_json::from_value(credentials).expect("credentials");
            let why = namespaced_source_refusal(&credentials).expect("refused");
            errors.push(ConfigError::SourceNotAllowed {
                config: config(),
                why,
            });
        }
        for field in ["endpoint", "stsEndpoint"] {
            let refusal = EndpointAllowList::default()
                .check("http://127.0.0.1:1")
                .expect_err("refused");
            errors.push(ConfigError::EndpointNotAllowed {
                config: config(),
                field,
                endpoint: "http://127.0.0.1:1".into(),
                refusal,
            });
        }
        for error in errors {
            let message = error.to_string();
            let paths = field_paths(&message);
            for path in &paths {
                assert!(
                    path.starts_with("spec.") && crds.iter().any(|crd| in_schema(crd, path)),
                    "{path:?} is not a field of the CRDs, in: {message}"
                );
            }
        }
    }
}
