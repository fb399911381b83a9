//! The controller suite's environment: a sandbox with ferroplane's CRDs, the ECS mock, a
//! credentials Secret and a `default` ProviderConfig pointing at the mock, and the controllers
//! of `provider_alibaba::run` in-process (all from ferroplane-testkit); plus what the tests do
//! with ECSInstances. [`Env::stop`] shuts everything down.

use std::time::Duration;

use alibaba_mock::{InstanceSummary, MockConfig, MockServer, ResourceKind};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::EcsClient;
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::rpc::RetryPolicy;
use alibaba_sdk::vpc::VpcClient;
use ferroplane_apis::alibabacloud::{
    ECSInstance, ECSInstanceParameters, ECSInstanceSpec, ProviderConfig,
};
use ferroplane_apis::common::names::SYNCED;
use ferroplane_apis::common::{
    ConditionStatus, DeletionPolicy, ProviderConfigReference, default_management_policies,
};
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::{TestCluster, ecs_mock, events, eventually, secrets};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use provider_alibaba::{ClientOverrides, Options};
use serde_json::Value;

pub use ferroplane_testkit::conditions::{condition, external_name};

pub const NS: &str = "default";
pub const AK: &str = "LTAItestkey";
pub const SK: &str = "test-access-key-secret-value";
pub const CREDS: &str = "alibaba-creds";
pub const REGION: &str = "cn-beijing";
pub const IMAGE: &str = "aliyun_3_x64_20G_alibase_20240528.vhd";
pub const TYPE: &str = "ecs.g6.large";
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Env {
    cluster: TestCluster,
    mock: MockServer,
    pub client: kube::Client,
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
            ..ClientOverrides::default()
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
        let mut cluster = TestCluster::start().await;
        cluster.install_crds(ferroplane_apis::crds()).await;
        let mock = ecs_mock::start(mock.with_transition_delay(Duration::from_millis(100))).await;
        options.client.sts_endpoint = Some(mock.endpoint());
        // The `default` ProviderConfig is namespaced and names the mock: allow it, as
        // `ferroplane sandbox` does.
        options
            .allowed_endpoints
            .allow(&mock.endpoint())
            .expect("the mock's endpoint is a URL");
        let client = cluster.client();
        ecs_mock::use_mock(&client, NS, &mock, CREDS, (AK, SK)).await;
        cluster.spawn_controllers(|runtime, shutdown| async move {
            provider_alibaba::run(&runtime, options, shutdown.cancelled_owned()).await
        });
        Self {
            cluster,
            mock,
            client,
        }
    }

    pub fn mock(&self) -> &MockServer {
        &self.mock
    }

    pub async fn stop(self) {
        // The controllers first: they call the mock until they stop.
        let Self { cluster, mock, .. } = self;
        cluster.shutdown().await;
        mock.shutdown().await;
    }

    pub fn instances(&self) -> Api<ECSInstance> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub async fn put_secret(&self, name: &str, data: &[(&str, &str)]) {
        secrets::put(&self.client, NS, name, data).await;
    }

    pub async fn create_provider_config(
        &self,
        name: &str,
        secret: &str,
        key: Option<&str>,
        endpoint: &str,
    ) {
        ecs_mock::create_provider_config(&self.client, NS, name, secret, key, endpoint).await;
    }

    pub async fn provider_config(&self, name: &str) -> Option<ProviderConfig> {
        Api::<ProviderConfig>::namespaced(self.client.clone(), NS)
            .get_opt(name)
            .await
            .expect("read provider config")
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

    pub async fn delete(&self, name: &str) {
        self.instances()
            .delete(name, &DeleteParams::default())
            .await
            .expect("ECSInstance deleted");
    }

    /// Watches the object until `check` holds (`None`: it does not exist); panics with the
    /// last version seen after [`WAIT`].
    pub async fn wait_for(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(Option<&ECSInstance>) -> bool,
    ) -> Option<ECSInstance> {
        eventually(format!("{name}: {what}"))
            .within(WAIT)
            .for_object(&self.instances(), name, check)
            .await
    }

    /// Watches the sandbox has started streaming, ever (the controllers' and the tests' own): a
    /// barrier for a test that must be watching before it changes something.
    pub fn watches_started(&self) -> usize {
        self.cluster.sandbox().watches_started()
    }

    /// Waits until Ready=True and returns the object.
    pub async fn wait_ready(&self, name: &str) -> ECSInstance {
        self.wait_for(name, "Ready=True", |o| o.is_some_and(is_ready))
            .await
            .expect("exists")
    }

    /// Waits until Synced=False with `needle` in the message; returns the message.
    pub async fn wait_sync_error(&self, name: &str, needle: &str) -> String {
        let obj = self
            .wait_for(name, &format!("Synced=False mentioning {needle}"), |o| {
                o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                    c.status == ConditionStatus::False && c.message.contains(needle)
                })
            })
            .await
            .expect("exists");
        condition(&obj, SYNCED).expect("synced").message.clone()
    }

    /// The IDs of the mock's live resources of `kind`.
    pub fn live(&self, kind: ResourceKind) -> Vec<String> {
        self.mock
            .resources()
            .into_iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.id)
            .collect()
    }

    pub fn mock_instance(&self, id: &str) -> Option<InstanceSummary> {
        ecs_mock::instance(&self.mock, id)
    }

    /// Re-checks the mock until `check` holds for instance `id`.
    pub async fn wait_mock(
        &self,
        id: &str,
        what: &str,
        check: impl Fn(Option<&InstanceSummary>) -> bool,
    ) {
        eventually(format!("mock instance {id}: {what}"))
            .within(WAIT)
            .until(|| {
                let found = self.mock_instance(id);
                if check(found.as_ref()) {
                    Ok(())
                } else {
                    Err(Box::new(found))
                }
            })
            .await;
    }

    /// A progress barrier for "nothing changes" checks: returns once the controllers have
    /// observed the cloud `times` more times (DescribeInstances calls since now), so a check
    /// after it judges what they did, not how long a window lasted. For tests with one object.
    pub async fn observed_again(&self, times: u64) {
        let before = self.mock.stats().calls_of("DescribeInstances");
        eventually(format!("{times} more DescribeInstances calls"))
            .within(WAIT)
            .until(|| self.mock.stats().calls_of("DescribeInstances") >= before + times)
            .await;
    }

    pub async fn event_reasons(&self, name: &str) -> Vec<String> {
        events::reasons(&self.client, NS, name).await
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
                v_switch_id: alibaba_mock::defaults::first_vswitch_id(REGION),
                security_group_ids: Some(vec![alibaba_mock::defaults::security_group_id(REGION)]),
                ..ECSInstanceParameters::default()
            },
        },
    );
    obj.metadata.namespace = Some(NS.into());
    obj
}

/// Signed clients of the mock, to look at what the controllers made.
pub fn cloud(env: &Env) -> (EcsClient, VpcClient) {
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new(AK, SK))
        .endpoint(env.mock().endpoint())
        .build()
        .expect("ECS client");
    let vpc = VpcClient::with_settings_of(&ecs, parse_endpoint(&env.mock().endpoint()).unwrap())
        .expect("VPC client");
    (ecs, vpc)
}

/// Waits until the object `name` of kind `K` in [`NS`] is Ready, and returns it.
pub async fn wait_ready<K>(env: &Env, name: &str) -> K
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + ferroplane_apis::common::Managed
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let api: Api<K> = Api::namespaced(env.client.clone(), NS);
    eventually(format!("{} {name}: Ready=True", K::kind(&())))
        .within(WAIT)
        .for_object(&api, name, |o| o.is_some_and(is_ready))
        .await
        .expect("exists")
}
