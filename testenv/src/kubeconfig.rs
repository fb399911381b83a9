//! Kubeconfig files for the control plane's users: the admin, each component, and
//! ServiceAccounts. Pure: the text is made here and written by the caller (with mode 0600, as it
//! holds a key or a token).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;

/// How a kubeconfig's user proves who it is.
pub enum Credential<'a> {
    ClientCertificate { cert_pem: &'a str, key_pem: &'a str },
    Token(&'a str),
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct File<'a> {
    api_version: &'a str,
    kind: &'a str,
    clusters: [Named<'a, Cluster>; 1],
    users: [Named<'a, User>; 1],
    contexts: [Named<'a, Context<'a>>; 1],
    current_context: &'a str,
}

#[derive(Serialize)]
struct Named<'a, T> {
    name: &'a str,
    #[serde(flatten)]
    value: T,
}

#[derive(Serialize)]
struct Cluster {
    cluster: ClusterFields,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields {
    server: String,
    certificate_authority_data: String,
}

#[derive(Serialize)]
struct User {
    user: UserFields,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct UserFields {
    #[serde(skip_serializing_if = "Option::is_none")]
    client_certificate_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_key_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
}

#[derive(Serialize)]
struct Context<'a> {
    context: ContextFields<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ContextFields<'a> {
    cluster: &'a str,
    user: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
}

/// A kubeconfig with one cluster, one user and one current context named `name`.
pub fn render(
    name: &str,
    server: &str,
    ca_pem: &str,
    credential: Credential<'_>,
    namespace: Option<&str>,
) -> String {
    let user = match credential {
        Credential::ClientCertificate { cert_pem, key_pem } => UserFields {
            client_certificate_data: Some(STANDARD.encode(cert_pem)),
            client_key_data: Some(STANDARD.encode(key_pem)),
            token: None,
        },
        Credential::Token(token) => UserFields {
            client_certificate_data: None,
            client_key_data: None,
            token: Some(token.to_string()),
        },
    };
    let file = File {
        api_version: "v1",
        kind: "Config",
        clusters: [Named {
            name,
            value: Cluster {
                cluster: ClusterFields {
                    server: server.to_string(),
                    certificate_authority_data: STANDARD.encode(ca_pem),
                },
            },
        }],
        users: [Named {
            name,
            value: User { user },
        }],
        contexts: [Named {
            name,
            value: Context {
                context: ContextFields {
                    cluster: name,
                    user: name,
                    namespace,
                },
            },
        }],
        current_context: name,
    };
    serde_saphyr::to_string(&file).expect("a kubeconfig always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::config::Kubeconfig;

    #[test]
    fn a_client_certificate_kubeconfig_reads_back() {
        let text = render(
            "admin",
            "https://127.0.0.1:6443",
            "CA",
            Credential::ClientCertificate {
                cert_pem: "CERT",
                key_pem: "KEY",
            },
            None,
        );
        let k = Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(k.current_context.as_deref(), Some("admin"));
        let cluster = k.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("Q0E="));
        let user = k.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_certificate_data.as_deref(), Some("Q0VSVA=="));
        assert!(user.token.is_none());
    }

    #[test]
    fn a_token_kubeconfig_carries_the_namespace() {
        let text = render(
            "ferroplane-system/ferroplane",
            "https://127.0.0.1:6443",
            "CA",
            Credential::Token("t0k3n"),
            Some("ferroplane-system"),
        );
        let k = Kubeconfig::from_yaml(&text).unwrap();
        let ctx = k.contexts[0].context.as_ref().unwrap();
        assert_eq!(ctx.namespace.as_deref(), Some("ferroplane-system"));
        assert!(k.auth_infos[0].auth_info.as_ref().unwrap().token.is_some());
    }
}
