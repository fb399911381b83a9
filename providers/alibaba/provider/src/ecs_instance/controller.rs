//! The ECSInstance controller: the framework's managed controller with the [`EcsConnector`],
//! wired to requeue instances when their ProviderConfig, ClusterProviderConfig or credentials
//! Secret (or their `passwordSecretRef` Secret) changes.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ECSInstance, ProviderConfig};
use ferroplane_apis::common::ProviderConfigKind;
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, related};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

use super::connector::EcsConnector;
use crate::config_resolution::uses_secret;
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
    let connector_configs = connector.configs();
    let mut controller = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(ControllerConfig {
            concurrency: options.max_concurrent_reconciles,
            requeue: options.requeue_policy(),
        });
    let configs: Api<ProviderConfig> = options.api(&client);
    let cluster_configs: Api<ClusterProviderConfig> = Api::all(client.clone());
    // Only names and versions matter: a metadata-only watch never carries credentials.
    let secrets: Api<PartialObjectMeta<Secret>> = options.api(&client);
    let config_store = controller.reflect(configs.clone(), watcher::Config::default());
    let cluster_store = controller.reflect(cluster_configs.clone(), watcher::Config::default());

    let by_config = related::provider_config_mapper::<ProviderConfig, ECSInstance>(
        ProviderConfigKind::ProviderConfig,
    );
    let by_cluster_config = related::provider_config_mapper::<ClusterProviderConfig, ECSInstance>(
        ProviderConfigKind::ClusterProviderConfig,
    );
    let via_config =
        related::via_provider_configs::<PartialObjectMeta<Secret>, ProviderConfig, ECSInstance>(
            config_store,
            ProviderConfigKind::ProviderConfig,
            uses_secret,
        );
    let via_cluster_config = related::via_provider_configs::<
        PartialObjectMeta<Secret>,
        ClusterProviderConfig,
        ECSInstance,
    >(
        cluster_store,
        ProviderConfigKind::ClusterProviderConfig,
        uses_secret,
    );
    let config_changes = SpecChanges::default();
    let cluster_changes = SpecChanges::default();
    let secret_changes = SpecChanges::default();
    // The resolved-config cache hears of every change before the instances are requeued.
    let (resolved, cluster_resolved, secret_resolved) = (
        connector_configs.clone(),
        connector_configs.clone(),
        connector_configs,
    );
    controller
        .watches_related(configs, watcher::Config::default(), move |c, store| {
            resolved.config_changed(ProviderConfigKind::ProviderConfig, c);
            config_changes.filter(c, || by_config(c, store))
        })
        .watches_related(
            cluster_configs,
            watcher::Config::default(),
            move |c, store| {
                cluster_resolved.config_changed(ProviderConfigKind::ClusterProviderConfig, c);
                cluster_changes.filter(c, || by_cluster_config(c, store))
            },
        )
        .watches_related(secrets, watcher::Config::default(), move |s, store| {
            secret_resolved.secret_changed(s);
            secret_changes.filter(s, || {
                let mut refs = via_config(s, store);
                refs.extend(via_cluster_config(s, store));
                refs.extend(using_password(s, store));
                refs
            })
        })
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

/// Remembers the last version of each related object seen, so that only changes that matter
/// requeue managed objects: a new `generation` (spec) of a config, or any change of a Secret.
/// Without it, every `status.users` write of a ProviderConfig would requeue all its instances.
#[derive(Default)]
struct SpecChanges {
    seen: Mutex<HashMap<String, String>>,
}

impl SpecChanges {
    fn filter<R: Resource, K: Resource>(
        &self,
        related: &R,
        refs: impl FnOnce() -> Vec<ObjectRef<K>>,
    ) -> Vec<ObjectRef<K>> {
        let meta = related.meta();
        let uid = meta.uid.clone().unwrap_or_else(|| related.name_any());
        let version = match meta.generation {
            Some(generation) => generation.to_string(),
            None => meta.resource_version.clone().unwrap_or_default(),
        };
        let version = format!("{version}/{}", meta.deletion_timestamp.is_some());
        let changed = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.insert(uid, version.clone()).as_deref() != Some(version.as_str())
        };
        if changed { refs() } else { Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(generation: i64, rv: &str) -> ProviderConfig {
        let mut c: ProviderConfig = serde_json::from_value(serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ProviderConfig",
            "metadata": {"name": "default", "namespace": "ns", "uid": "u-1"},
            "spec": {"credentials": {"source": "Environment"}},
        }))
        .expect("config");
        c.metadata.generation = Some(generation);
        c.metadata.resource_version = Some(rv.into());
        c
    }

    #[test]
    fn only_spec_changes_of_a_config_requeue_its_instances() {
        let changes = SpecChanges::default();
        let one = || vec![ObjectRef::<ECSInstance>::new("a").within("ns")];
        assert_eq!(
            changes.filter(&config(1, "10"), one).len(),
            1,
            "first sight"
        );
        assert!(
            changes.filter(&config(1, "11"), one).is_empty(),
            "status write"
        );
        assert_eq!(
            changes.filter(&config(2, "12"), one).len(),
            1,
            "spec change"
        );
    }
}
