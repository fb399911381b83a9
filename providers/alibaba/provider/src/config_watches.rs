//! Requeues of managed objects when what their credentials come from changes: their
//! ProviderConfig or ClusterProviderConfig (spec changes only), the credentials Secret of one, or
//! the labels of their Namespace (a ClusterProviderConfig's `allowedNamespaces` selector matches
//! them). Every Alibaba kind is wired the same way by [`watch_provider_configs`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ProviderConfig};
use ferroplane_apis::common::ProviderConfigKind;
use ferroplane_runtime::{Connector, ManagedController, ManagedResource, related};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};

use crate::config_resolution::{ResolvedConfigs, uses_secret};
use crate::options::Options;

/// Objects of `K` that depend on a changed Secret some other way than through their config (an
/// ECSInstance's password Secret).
pub type ExtraSecretUsers<K> =
    Box<dyn Fn(&PartialObjectMeta<Secret>, &Store<K>) -> Vec<ObjectRef<K>> + Send + Sync>;

/// Wires `controller` to requeue its objects when their configuration or its Secret changes,
/// telling `resolved` (the connector's cache) first.
pub fn watch_provider_configs<K, C>(
    mut controller: ManagedController<K, C>,
    client: &kube::Client,
    options: &Options,
    resolved: Arc<ResolvedConfigs>,
    extra_secret_users: Option<ExtraSecretUsers<K>>,
) -> ManagedController<K, C>
where
    K: ManagedResource,
    C: Connector<K>,
{
    let configs: Api<ProviderConfig> = options.api(client);
    // Only names and versions matter: a metadata-only watch never carries credentials.
    let secrets: Api<PartialObjectMeta<Secret>> = options.api(client);
    let config_store = controller.reflect(configs.clone(), watcher::Config::default());
    let by_config =
        related::provider_config_mapper::<ProviderConfig, K>(ProviderConfigKind::ProviderConfig);
    let via_config = related::via_provider_configs::<PartialObjectMeta<Secret>, ProviderConfig, K>(
        config_store,
        ProviderConfigKind::ProviderConfig,
        uses_secret,
    );
    let config_changes = SpecChanges::default();
    let config_resolved = resolved.clone();
    controller =
        controller.watches_related(configs, watcher::Config::default(), move |c, store| {
            config_resolved.config_changed(ProviderConfigKind::ProviderConfig, c);
            config_changes.filter(c, || by_config(c, store))
        });

    // ClusterProviderConfigs are cluster-scoped: a namespaced install (`--namespace`, Roles
    // only) can neither watch nor use them.
    let via_cluster_config = if options.namespace.is_none() {
        let cluster_configs: Api<ClusterProviderConfig> = Api::all(client.clone());
        let cluster_store = controller.reflect(cluster_configs.clone(), watcher::Config::default());
        let by_cluster_config = related::provider_config_mapper::<ClusterProviderConfig, K>(
            ProviderConfigKind::ClusterProviderConfig,
        );
        let cluster_changes = SpecChanges::default();
        let cluster_resolved = resolved.clone();
        controller = controller.watches_related(
            cluster_configs,
            watcher::Config::default(),
            move |c, store| {
                cluster_resolved.config_changed(ProviderConfigKind::ClusterProviderConfig, c);
                cluster_changes.filter(c, || by_cluster_config(c, store))
            },
        );
        // A namespace labelled into (or out of) a ClusterProviderConfig's `allowedNamespaces`
        // is admitted (or refused) at once, not at its objects' next retry.
        let namespaces: Api<PartialObjectMeta<Namespace>> = Api::all(client.clone());
        let label_changes = LabelChanges::default();
        controller =
            controller.watches_related(namespaces, watcher::Config::default(), move |ns, store| {
                label_changes.filter(ns, || {
                    related::using_cluster_provider_configs_in(store, &ns.name_any())
                })
            });
        Some(related::via_provider_configs::<
            PartialObjectMeta<Secret>,
            ClusterProviderConfig,
            K,
        >(
            cluster_store,
            ProviderConfigKind::ClusterProviderConfig,
            uses_secret,
        ))
    } else {
        None
    };

    // The resolved-config cache hears of every change before the objects are requeued.
    let secret_changes = SpecChanges::default();
    controller.watches_related(secrets, watcher::Config::default(), move |s, store| {
        resolved.secret_changed(s);
        secret_changes.filter(s, || {
            let mut refs = via_config(s, store);
            if let Some(via_cluster_config) = &via_cluster_config {
                refs.extend(via_cluster_config(s, store));
            }
            if let Some(extra) = &extra_secret_users {
                refs.extend(extra(s, store));
            }
            refs
        })
    })
}

/// Remembers the last version of each related object seen, so that only changes that matter
/// requeue managed objects: a new `generation` (spec) of a config, or any change of a Secret.
/// Without it, every `status.users` write of a ProviderConfig would requeue all its objects.
#[derive(Default)]
pub struct SpecChanges {
    seen: Mutex<HashMap<String, String>>,
}

impl SpecChanges {
    pub fn filter<R: Resource, K: Resource>(
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

/// Remembers the labels of each Namespace seen, so that only a change of labels requeues the
/// objects of a namespace. The first sight of a namespace requeues nothing: its objects are
/// reconciled when they are first seen themselves.
#[derive(Default)]
pub struct LabelChanges {
    seen: Mutex<HashMap<String, BTreeMap<String, String>>>,
}

impl LabelChanges {
    pub fn filter<R: Resource, K: Resource>(
        &self,
        related: &R,
        refs: impl FnOnce() -> Vec<ObjectRef<K>>,
    ) -> Vec<ObjectRef<K>> {
        let labels = related.meta().labels.clone().unwrap_or_default();
        let previous = self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(related.name_any(), labels.clone());
        match previous {
            Some(previous) if previous != labels => refs(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::alibabacloud::ECSInstance;

    fn config(generation: i64, rv: &str) -> ProviderConfig {
        let mut c: ProviderConfig = serde_json::from_value(serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ProviderConfig",
            "metadata": {"name": "default", "namespace": "ns", "uid": "u-1"},
            "spec": {"credentials": {"source": "Secret", "secretRef": {"name": "s"}}},
        }))
        .expect("config");
        c.metadata.generation = Some(generation);
        c.metadata.resource_version = Some(rv.into());
        c
    }

    fn namespace(labels: &[(&str, &str)]) -> PartialObjectMeta<Namespace> {
        let mut ns = PartialObjectMeta::<Namespace>::default();
        ns.metadata.name = Some("team-a".into());
        ns.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        ns
    }

    #[test]
    fn only_label_changes_of_a_namespace_requeue_its_objects() {
        let changes = LabelChanges::default();
        let one = || vec![ObjectRef::<ECSInstance>::new("a").within("team-a")];
        let tenant = namespace(&[("tenant", "a")]);
        assert!(changes.filter(&tenant, one).is_empty(), "first sight");
        assert!(changes.filter(&tenant, one).is_empty(), "same labels");
        let labelled = namespace(&[("tenant", "a"), ("ferroplane", "allowed")]);
        assert_eq!(changes.filter(&labelled, one).len(), 1, "label added");
        assert_eq!(changes.filter(&tenant, one).len(), 1, "label removed");
    }

    #[test]
    fn only_spec_changes_of_a_config_requeue_its_objects() {
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
