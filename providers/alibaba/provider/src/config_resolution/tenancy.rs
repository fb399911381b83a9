//! Who may use which configuration. A namespace is a tenant boundary:
//!
//! - a namespaced ProviderConfig may only use credentials of its own namespace: `source: Secret`,
//!   or `RamRoleArn` on top of such a Secret. `Environment`, `RRSA`, `InstanceRole` and a
//!   `RamRoleArn` without `secretRef` would act with the controller's own identity
//!   ([`namespaced_source_refusal`]); the CRD refuses them at admission too, this is the same
//!   rule at reconcile, for objects that predate the CRD rule or a server that skips CEL;
//! - a ClusterProviderConfig serves the namespaces its `allowedNamespaces` allows
//!   ([`namespace_allowed`]; absent means all, as before the field existed).

use std::collections::BTreeMap;

use ferroplane_apis::alibabacloud::{
    AllowedNamespaces, CredentialsSource, NamespacesFrom, ProviderCredentials,
};
use kube::core::{Selector, SelectorExt};

/// Why a namespaced ProviderConfig's credentials are refused, if they are.
pub fn namespaced_source_refusal(credentials: &ProviderCredentials) -> Option<&'static str> {
    match credentials.source {
        CredentialsSource::Environment => {
            Some("source Environment would use the controller's own ALIBABA_CLOUD_* identity")
        }
        CredentialsSource::Rrsa => Some("source RRSA would use the controller's own OIDC role"),
        CredentialsSource::InstanceRole => {
            Some("source InstanceRole would use the RAM role of the controller's node")
        }
        CredentialsSource::RamRoleArn if credentials.secret_ref.is_none() => Some(
            "source RamRoleArn without spec.credentials.secretRef would assume the role with the controller's own identity",
        ),
        _ if credentials.rrsa.is_some() => Some(
            "spec.credentials.rrsa (with its OIDC token file) is the controller's own identity",
        ),
        _ if credentials.instance_role.is_some() => {
            Some("spec.credentials.instanceRole is the controller's node identity")
        }
        CredentialsSource::Secret | CredentialsSource::RamRoleArn => None,
    }
}

/// Whether `allowed` admits a namespace with `labels`, and why not.
pub fn namespace_allowed(
    allowed: &AllowedNamespaces,
    labels: &BTreeMap<String, String>,
) -> Result<(), NamespaceRefusal> {
    match allowed.from {
        NamespacesFrom::All => Ok(()),
        NamespacesFrom::Selector => {
            let Some(selector) = allowed.selector.clone() else {
                // The CRD requires a selector with Selector; without one nothing is selected.
                return Err(NamespaceRefusal::NotSelected);
            };
            let selector = Selector::try_from(selector)
                .map_err(|e| NamespaceRefusal::InvalidSelector(e.to_string()))?;
            if selector.matches(labels) {
                Ok(())
            } else {
                Err(NamespaceRefusal::NotSelected)
            }
        }
    }
}

/// Whether `allowed` needs the namespace's labels to decide.
pub fn needs_labels(allowed: Option<&AllowedNamespaces>) -> bool {
    allowed.is_some_and(|a| a.from == NamespacesFrom::Selector)
}

/// Why a namespace is not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceRefusal {
    /// Its labels do not match the selector.
    NotSelected,
    /// The selector cannot be evaluated.
    InvalidSelector(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::alibabacloud::{
        CredentialsSecretRef, RamRoleArnCredentials, RrsaCredentials,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

    fn credentials(source: CredentialsSource, secret: bool) -> ProviderCredentials {
        ProviderCredentials {
            source,
            secret_ref: secret.then(|| CredentialsSecretRef {
                name: "creds".into(),
                namespace: None,
                key: None,
            }),
            rrsa: None,
            ram_role_arn: (source == CredentialsSource::RamRoleArn).then(|| {
                RamRoleArnCredentials {
                    role_arn: "acs:ram::1:role/r".into(),
                    role_session_name: None,
                    external_id: None,
                    duration_seconds: None,
                }
            }),
            instance_role: None,
        }
    }

    #[test]
    fn only_own_secrets_for_namespaced_configs() {
        assert_eq!(
            namespaced_source_refusal(&credentials(CredentialsSource::Secret, true)),
            None
        );
        assert_eq!(
            namespaced_source_refusal(&credentials(CredentialsSource::RamRoleArn, true)),
            None
        );
        for (source, secret) in [
            (CredentialsSource::Environment, false),
            (CredentialsSource::Environment, true),
            (CredentialsSource::Rrsa, false),
            (CredentialsSource::InstanceRole, false),
            (CredentialsSource::RamRoleArn, false),
        ] {
            assert!(
                namespaced_source_refusal(&credentials(source, secret)).is_some(),
                "{source:?}"
            );
        }
        let mut with_rrsa = credentials(CredentialsSource::Secret, true);
        with_rrsa.rrsa = Some(RrsaCredentials {
            oidc_token_file: Some("/etc/passwd".into()),
            ..RrsaCredentials::default()
        });
        assert!(namespaced_source_refusal(&with_rrsa).is_some());
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn all_or_a_label_selector() {
        let all = AllowedNamespaces {
            from: NamespacesFrom::All,
            selector: None,
        };
        assert!(!needs_labels(Some(&all)));
        assert!(!needs_labels(None));
        assert_eq!(namespace_allowed(&all, &labels(&[])), Ok(()));
        let selected = AllowedNamespaces {
            from: NamespacesFrom::Selector,
            selector: Some(LabelSelector {
                match_labels: Some(labels(&[("ferroplane.io/tenant", "true")])),
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "NotIn".into(),
                    values: Some(vec!["prod".into()]),
                }]),
            }),
        };
        assert!(needs_labels(Some(&selected)));
        assert_eq!(
            namespace_allowed(&selected, &labels(&[("ferroplane.io/tenant", "true")])),
            Ok(())
        );
        assert_eq!(
            namespace_allowed(
                &selected,
                &labels(&[("ferroplane.io/tenant", "true"), ("env", "prod")])
            ),
            Err(NamespaceRefusal::NotSelected)
        );
        assert_eq!(
            namespace_allowed(&selected, &labels(&[])),
            Err(NamespaceRefusal::NotSelected)
        );
        let missing = AllowedNamespaces {
            from: NamespacesFrom::Selector,
            selector: None,
        };
        assert_eq!(
            namespace_allowed(&missing, &labels(&[("a", "b")])),
            Err(NamespaceRefusal::NotSelected)
        );
    }
}
