//! The benchmark's namespaces, with copies of the environment's credentials and ProviderConfig.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ObjectMeta, PostParams};

pub async fn create_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    api.create(&PostParams::default(), &ns).await?;
    Ok(())
}

/// The environment put the mock's credentials and the `default` ProviderConfig in `default`;
/// the benchmark's namespaces get copies.
pub async fn copy_credentials(client: &kube::Client, namespaces: &[&str]) -> anyhow::Result<()> {
    use ferroplane::environment::{CREDENTIALS_SECRET, PROVIDER_CONFIG};
    use ferroplane_apis::alibabacloud::ProviderConfig;
    use k8s_openapi::api::core::v1::Secret;
    let secret = Api::<Secret>::namespaced(client.clone(), "default")
        .get(CREDENTIALS_SECRET)
        .await?;
    let config = Api::<ProviderConfig>::namespaced(client.clone(), "default")
        .get(PROVIDER_CONFIG)
        .await?;
    for ns in namespaces {
        let mut s = Secret {
            data: secret.data.clone(),
            ..Secret::default()
        };
        s.metadata.name = Some(CREDENTIALS_SECRET.to_owned());
        Api::<Secret>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &s)
            .await?;
        let c = ProviderConfig::new(PROVIDER_CONFIG, config.spec.clone());
        Api::<ProviderConfig>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &c)
            .await?;
    }
    Ok(())
}
