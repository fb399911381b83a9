//! The ECSInstance controller: the framework's managed controller with the [`EcsConnector`],
//! wired to requeue instances when their ProviderConfig, ClusterProviderConfig or credentials
//! Secret (or their `passwordSecretRef` Secret) changes.

use ferroplane_apis::alibabacloud::{ECSInstance, KeyPair, SecurityGroup, VSwitch};
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, references};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use super::connector::EcsConnector;
use crate::config_watches::watch_provider_configs;
use crate::options::Options;

/// Name of the managed kind in metrics and logs.
pub const KIND: &str = "ECSInstance";

/// The ECSInstance controller alone, wired to requeue instances when their ProviderConfig,
/// ClusterProviderConfig or credentials Secret changes. [`crate::run`] uses it.
pub fn ecs_instance_controller(
    runtime: &Runtime,
    options: &Options,
) -> ManagedController<ECSInstance, EcsConnector> {
    let client = runtime.client().clone();
    let connector = EcsConnector::new(client.clone(), options, runtime.external_calls(KIND));
    let resolved = connector.configs();
    // An instance waiting for a referenced VSwitch or SecurityGroup goes on once it is Ready.
    let controller = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(ControllerConfig {
            concurrency: options.max_concurrent_reconciles,
            requeue: options.requeue_policy(),
        })
        .watches_related(
            options.api::<VSwitch>(&client),
            watcher::Config::default(),
            references::referencing::<VSwitch, ECSInstance>,
        )
        .watches_related(
            options.api::<SecurityGroup>(&client),
            watcher::Config::default(),
            references::referencing::<SecurityGroup, ECSInstance>,
        )
        .watches_related(
            options.api::<KeyPair>(&client),
            watcher::Config::default(),
            references::referencing::<KeyPair, ECSInstance>,
        );
    watch_provider_configs(
        controller,
        &client,
        options,
        resolved,
        Some(Box::new(using_password)),
    )
}

/// ECSInstances whose `passwordSecretRef` names `secret`.
fn using_password(
    secret: &PartialObjectMeta<Secret>,
    store: &Store<ECSInstance>,
) -> Vec<ObjectRef<ECSInstance>> {
    store
        .state()
        .iter()
        .filter(|i| {
            i.namespace() == secret.namespace()
                && i.spec
                    .for_provider
                    .password_secret_ref
                    .as_ref()
                    .is_some_and(|r| r.name == secret.name_any())
        })
        .map(|i| ObjectRef::from_obj(i.as_ref()))
        .collect()
}
