//! The ECS mock as the Alibaba controllers' cloud: starting it, the credentials Secret and the
//! ProviderConfig that point the controllers at it, and looking its instances up.

use alibaba_mock::{InstanceSummary, MockConfig, MockServer};
use ferroplane_apis::alibabacloud::{
    ConnectionSettings, CredentialsSecretRef, CredentialsSource, ProviderConfig,
    ProviderConfigSpec, ProviderCredentials,
};
use ferroplane_runtime::UID_TAG;
use kube::api::{Api, PostParams};

use crate::secrets;

/// Starts the mock on 127.0.0.1 (a free port).
pub async fn start(config: MockConfig) -> MockServer {
    MockServer::start(config).await.expect("ECS mock starts")
}

/// Creates ProviderConfig `namespace/name` whose credentials come from Secret `secret` (the
/// entry `key` in the JSON layout, or the key-per-field layout without it) and whose endpoint
/// is `endpoint`.
pub async fn create_provider_config(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    secret: &str,
    key: Option<&str>,
    endpoint: &str,
) {
    let api: Api<ProviderConfig> = Api::namespaced(client.clone(), namespace);
    let mut config = ProviderConfig::new(
        name,
        ProviderConfigSpec {
            credentials: ProviderCredentials {
                source: CredentialsSource::Secret,
                secret_ref: Some(CredentialsSecretRef {
                    name: secret.into(),
                    namespace: None,
                    key: key.map(str::to_owned),
                }),
                rrsa: None,
                ram_role_arn: None,
                instance_role: None,
            },
            connection: ConnectionSettings {
                endpoint: Some(endpoint.into()),
                ..ConnectionSettings::default()
            },
        },
    );
    config.metadata.namespace = Some(namespace.into());
    api.create(&PostParams::default(), &config)
        .await
        .expect("provider config created");
}

/// Puts Secret `secret` with the key pair (`accessKeyId`, `accessKeySecret`) and creates
/// ProviderConfig `default` that uses it against `mock`, in `namespace`.
pub async fn use_mock(
    client: &kube::Client,
    namespace: &str,
    mock: &MockServer,
    secret: &str,
    (access_key_id, access_key_secret): (&str, &str),
) {
    secrets::put(
        client,
        namespace,
        secret,
        &[
            ("accessKeyId", access_key_id),
            ("accessKeySecret", access_key_secret),
        ],
    )
    .await;
    create_provider_config(client, namespace, "default", secret, None, &mock.endpoint()).await;
}

/// The mock's instance `id`, if it exists.
pub fn instance(mock: &MockServer, id: &str) -> Option<InstanceSummary> {
    mock.instances().into_iter().find(|i| i.instance_id == id)
}

/// The mock's live instances tagged with the object UID `uid`.
pub fn instances_of(mock: &MockServer, uid: &str) -> Vec<InstanceSummary> {
    mock.instances()
        .into_iter()
        .filter(|i| i.tags.get(UID_TAG).map(String::as_str) == Some(uid))
        .collect()
}
