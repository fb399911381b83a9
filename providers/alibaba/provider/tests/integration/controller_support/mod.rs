//! Harness of the controller tests: the sandbox API server with ferroplane's CRDs, the ECS mock,
//! a credentials Secret and a `default` ProviderConfig pointing at the mock, and the controllers
//! of `provider_alibaba::run` in-process. [`Env::stop`] shuts everything down.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::Duration;

use alibaba_mock::{InstanceSummary, MockConfig, MockServer};
use alibaba_sdk::rpc::RetryPolicy;
use ferroplane_apis::alibabacloud::{
    ClusterProviderConfig, ConnectionSettings, CredentialsSecretRef, CredentialsSource,
    ECSInstance, ECSInstanceParameters, ECSInstanceSpec, ProviderConfig, ProviderConfigSpec,
    ProviderCredentials,
};
use ferroplane_apis::common::{
    Condition, ConditionStatus, DeletionPolicy, ProviderConfigReference,
    default_management_policies,
};
use ferroplane_runtime::{Runtime, RuntimeConfig};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use provider_alibaba::{ClientOverrides, Options};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub const NS: &str = "default";
pub const AK: &str = "LTAItestkey";
pub const SK: &str = "test-access-key-secret-value";
pub const CREDS: &str = "alibaba-creds";
pub const REGION: &str = "cn-beijing";
pub const IMAGE: &str = "aliyun_3_x64_20G_alibase_20240528.vhd";
pub const TYPE: &str = "ecs.g6.large";
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Env {
    pub sandbox: Option<Sandbox>,
    pub mock: Option<MockServer>,
    pub client: kube::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// Fast options for tests: short poll, fast transitions, few retries inside the client.
pub fn test_options() -> Options {
    Options {
        poll_interval: Duration::from_millis(500),
        transition_interval: Duration::from_millis(100),
        batch_window: Duration::from_millis(10),
        client: ClientOverrides {
            request_timeout: Some(Duration::from_secs(5)),
            connect_timeout: Some(Duration::from_secs(1)),
            retry: Some(RetryPolicy {
                max_attempts: 2,
                min_delay: Duration::from_millis(20),
                max_delay: Duration::from_millis(100),
                max_elapsed: Duration::from_secs(2),
            }),
            sts_endpoint: None,
        },
        ..Options::default()
    }
}

impl Env {
    pub async fn start() -> Self {
        Self::start_with(test_options(), MockConfig::new(AK, SK)).await
    }

    /// Starts with these options (the STS endpoint is set to the mock) and mock configuration
    /// (transition delay forced to 100 ms).
    pub async fn start_with(mut options: Options, mock: MockConfig) -> Self {
        let sandbox = Sandbox::start(SandboxConfig::default())
            .await
            .expect("sandbox starts");
        let client = kube::Client::try_from(kube::Config::new(
            sandbox.url().parse().expect("sandbox url"),
        ))
        .expect("client");
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in ferroplane_apis::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("CRD installed");
        }
        let mock = MockServer::start(mock.with_transition_delay(Duration::from_millis(100)))
            .await
            .expect("mock starts");
        options.client.sts_endpoint = Some(mock.endpoint());
        let env = Self {
            sandbox: Some(sandbox),
            client: client.clone(),
            mock: None,
            stop: None,
            task: None,
        };
        env.put_secret(CREDS, &[("accessKeyId", AK), ("accessKeySecret", SK)])
            .await;
        env.create_provider_config("default", CREDS, None, &mock.endpoint())
            .await;
        let runtime = Runtime::new(
            client.clone(),
            RuntimeConfig {
                rate_limit: 0.0,
                ..RuntimeConfig::default()
            },
        );
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            provider_alibaba::run(&runtime, options, async move {
                let _ = rx.await;
            })
            .await
            .expect("the controllers run");
        });
        Self {
            mock: Some(mock),
            stop: Some(tx),
            task: Some(task),
            ..env
        }
    }

    pub fn mock(&self) -> &MockServer {
        self.mock.as_ref().expect("mock running")
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(10), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
        if let Some(mock) = self.mock.take() {
            mock.shutdown().await;
        }
        if let Some(sandbox) = self.sandbox.take() {
            sandbox.shutdown().await;
        }
    }

    pub fn instances(&self) -> Api<ECSInstance> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub async fn put_secret(&self, name: &str, data: &[(&str, &str)]) {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), NS);
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..Secret::default()
        };
        match api.get_opt(name).await.expect("read secret") {
            None => {
                api.create(&PostParams::default(), &secret)
                    .await
                    .expect("secret created");
            }
            Some(_) => {
                api.replace(name, &PostParams::default(), &secret)
                    .await
                    .expect("secret replaced");
            }
        }
    }

    pub async fn create_provider_config(
        &self,
        name: &str,
        secret: &str,
        key: Option<&str>,
        endpoint: &str,
    ) {
        let api: Api<ProviderConfig> = Api::namespaced(self.client.clone(), NS);
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
                },
                connection: ConnectionSettings {
                    endpoint: Some(endpoint.into()),
                    ..ConnectionSettings::default()
                },
            },
        );
        config.metadata.namespace = Some(NS.into());
        api.create(&PostParams::default(), &config)
            .await
            .expect("provider config created");
    }

    pub async fn provider_config(&self, name: &str) -> Option<ProviderConfig> {
        Api::<ProviderConfig>::namespaced(self.client.clone(), NS)
            .get_opt(name)
            .await
            .expect("read provider config")
    }

    pub async fn cluster_provider_config(&self, name: &str) -> Option<ClusterProviderConfig> {
        Api::<ClusterProviderConfig>::all(self.client.clone())
            .get_opt(name)
            .await
            .expect("read cluster provider config")
    }

    pub async fn create(&self, instance: &ECSInstance) -> ECSInstance {
        self.instances()
            .create(&PostParams::default(), instance)
            .await
            .expect("ECSInstance created")
    }

    pub async fn get(&self, name: &str) -> Option<ECSInstance> {
        self.instances()
            .get_opt(name)
            .await
            .expect("read ECSInstance")
    }

    /// Merge-patches the object's spec.forProvider.
    pub async fn patch_for_provider(&self, name: &str, patch: Value) {
        let body = serde_json::json!({"spec": {"forProvider": patch}});
        self.instances()
            .patch(name, &PatchParams::default(), &Patch::Merge(body))
            .await
            .expect("ECSInstance patched");
    }

    pub async fn patch_spec(&self, name: &str, patch: Value) {
        let body = serde_json::json!({ "spec": patch });
        self.instances()
            .patch(name, &PatchParams::default(), &Patch::Merge(body))
            .await
            .expect("ECSInstance patched");
    }

    pub async fn delete(&self, name: &str) {
        self.instances()
            .delete(name, &DeleteParams::default())
            .await
            .expect("ECSInstance deleted");
    }

    /// Polls the object until `check` holds; panics with the last state after [`WAIT`].
    pub async fn wait_for(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(Option<&ECSInstance>) -> bool,
    ) -> Option<ECSInstance> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let obj = self.get(name).await;
            if check(obj.as_ref()) {
                return obj;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {name}: {what}; last: {:#?}",
                obj.map(|o| (o.metadata.annotations, o.spec.for_provider, o.status))
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until Ready=True and returns the object.
    pub async fn wait_ready(&self, name: &str) -> ECSInstance {
        self.wait_for(name, "Ready=True", |o| {
            o.and_then(|o| condition(o, "Ready"))
                .is_some_and(|c| c.status == ConditionStatus::True)
        })
        .await
        .expect("exists")
    }

    /// Waits until Synced=False with `reason` in the message; returns the message.
    pub async fn wait_sync_error(&self, name: &str, needle: &str) -> String {
        let obj = self
            .wait_for(name, &format!("Synced=False mentioning {needle}"), |o| {
                o.and_then(|o| condition(o, "Synced")).is_some_and(|c| {
                    c.status == ConditionStatus::False && c.message.contains(needle)
                })
            })
            .await
            .expect("exists");
        condition(&obj, "Synced").expect("synced").message.clone()
    }

    pub fn mock_instance(&self, id: &str) -> Option<InstanceSummary> {
        self.mock()
            .instances()
            .into_iter()
            .find(|i| i.instance_id == id)
    }

    /// Polls the mock until `check` holds for instance `id`.
    pub async fn wait_mock(
        &self,
        id: &str,
        what: &str,
        check: impl Fn(Option<&InstanceSummary>) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let found = self.mock_instance(id);
            if check(found.as_ref()) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for mock instance {id}: {what}; last: {found:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn event_reasons(&self, name: &str) -> Vec<String> {
        let api: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), NS);
        api.list(&Default::default())
            .await
            .expect("events listed")
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .filter_map(|e| e.reason)
            .collect()
    }
}

/// An ECSInstance in the `default` namespace with the `default` ProviderConfig.
pub fn instance(name: &str) -> ECSInstance {
    let mut obj = ECSInstance::new(
        name,
        ECSInstanceSpec {
            deletion_policy: DeletionPolicy::Delete,
            management_policies: default_management_policies(),
            provider_config_ref: ProviderConfigReference::default(),
            write_connection_secret_to_ref: None,
            for_provider: ECSInstanceParameters {
                region_id: REGION.into(),
                image_id: IMAGE.into(),
                instance_type: TYPE.into(),
                instance_name: Some(name.into()),
                internet_max_bandwidth_out: Some(5),
                ..ECSInstanceParameters::default()
            },
        },
    );
    obj.metadata.namespace = Some(NS.into());
    obj
}

pub fn condition<'a>(obj: &'a ECSInstance, type_: &str) -> Option<&'a Condition> {
    obj.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
}

pub fn external_name(obj: &ECSInstance) -> Option<String> {
    obj.metadata
        .annotations
        .as_ref()?
        .get("ferroplane.io/external-name")
        .cloned()
}
