//! Mappers from related objects (ProviderConfigs, their Secrets) to the managed objects that
//! depend on them, for [`ManagedController::watches_related`](crate::ManagedController::watches_related):
//! a rotated credential or an edited endpoint reconciles every affected object at once instead of
//! at the next poll.
//!
//! Lookups read the controller's reflector store (no API calls).

use ferroplane_apis::common::ProviderConfigKind;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use crate::resource::ManagedResource;

/// Managed objects that reference the provider config `name` of `kind`. A namespaced
/// `ProviderConfig` serves only objects in its own namespace.
pub fn referencing_provider_config<K: ManagedResource>(
    store: &Store<K>,
    kind: ProviderConfigKind,
    namespace: Option<&str>,
    name: &str,
) -> Vec<ObjectRef<K>> {
    store
        .state()
        .iter()
        .filter(|obj| {
            obj.provider_config_ref()
                .is_some_and(|r| r.kind == kind && r.name == name)
                && match kind {
                    ProviderConfigKind::ProviderConfig => obj.namespace().as_deref() == namespace,
                    ProviderConfigKind::ClusterProviderConfig => true,
                }
        })
        .map(|obj| ObjectRef::from_obj(obj.as_ref()))
        .collect()
}

/// A mapper for watching a provider-config kind `R` itself: each change reconciles the managed
/// objects that reference it.
pub fn provider_config_mapper<R, K>(
    kind: ProviderConfigKind,
) -> impl Fn(&R, &Store<K>) -> Vec<ObjectRef<K>>
where
    R: Resource,
    K: ManagedResource,
{
    move |config: &R, store: &Store<K>| {
        referencing_provider_config(
            store,
            kind,
            config.meta().namespace.as_deref(),
            &config.name_any(),
        )
    }
}

/// A mapper for an object one step further away (a Secret): `configs` is a reflector store of
/// provider configs (see [`ManagedController::reflect`](crate::ManagedController::reflect)),
/// `uses(config, related)` says whether a config uses the changed object; every managed object
/// referencing such a config is reconciled.
pub fn via_provider_configs<R, P, K>(
    configs: Store<P>,
    kind: ProviderConfigKind,
    uses: impl Fn(&P, &R) -> bool + Send + Sync + 'static,
) -> impl Fn(&R, &Store<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static
where
    R: Resource,
    P: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    K: ManagedResource,
{
    move |related: &R, store: &Store<K>| {
        let mut out = Vec::new();
        for config in configs.state().iter().filter(|c| uses(c, related)) {
            out.extend(referencing_provider_config(
                store,
                kind,
                config.meta().namespace.as_deref(),
                &config.name_any(),
            ));
        }
        out
    }
}

/// Managed objects of `namespace` that use a `ClusterProviderConfig`: the ones whose admission
/// (a config's `allowedNamespaces` selector) may change when the Namespace's labels do.
pub fn using_cluster_provider_configs_in<K: ManagedResource>(
    store: &Store<K>,
    namespace: &str,
) -> Vec<ObjectRef<K>> {
    store
        .state()
        .iter()
        .filter(|obj| {
            obj.namespace().as_deref() == Some(namespace)
                && obj
                    .provider_config_ref()
                    .is_some_and(|r| r.kind == ProviderConfigKind::ClusterProviderConfig)
        })
        .map(|obj| ObjectRef::from_obj(obj.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::common::{
        Condition, DeletionPolicy, LocalSecretReference, ManagementAction, ProviderConfigReference,
    };
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kube::CustomResource;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector::{self, store::Writer};
    use kube::runtime::watcher;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "t.io",
        version = "v1",
        kind = "Thing",
        namespaced,
        status = "ThingStatus"
    )]
    #[serde(rename_all = "camelCase")]
    struct ThingSpec {
        deletion_policy: DeletionPolicy,
        management_policies: Vec<ManagementAction>,
        provider_config_ref: ProviderConfigReference,
        write_connection_secret_to_ref: Option<LocalSecretReference>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    struct ThingStatus {
        conditions: Vec<Condition>,
        observed_generation: Option<i64>,
    }

    ferroplane_apis::impl_managed!(Thing, provider_config);

    fn thing(ns: &str, name: &str, kind: ProviderConfigKind, config: &str) -> Thing {
        let mut t = Thing::new(
            name,
            ThingSpec {
                deletion_policy: DeletionPolicy::Delete,
                management_policies: vec![ManagementAction::All],
                provider_config_ref: ProviderConfigReference {
                    kind,
                    name: config.into(),
                },
                write_connection_secret_to_ref: None,
            },
        );
        t.metadata.namespace = Some(ns.into());
        t
    }

    fn filled<T: Resource<DynamicType = ()> + Clone>(items: Vec<T>) -> Store<T> {
        let (reader, mut writer): (Store<T>, Writer<T>) = reflector::store();
        for item in items {
            writer.apply_watcher_event(&watcher::Event::Apply(item));
        }
        reader
    }

    fn names(refs: Vec<ObjectRef<Thing>>) -> Vec<String> {
        let mut out: Vec<String> = refs
            .into_iter()
            .map(|r| format!("{}/{}", r.namespace.unwrap_or_default(), r.name))
            .collect();
        out.sort();
        out
    }

    fn store() -> Store<Thing> {
        use ProviderConfigKind::{ClusterProviderConfig, ProviderConfig};
        filled(vec![
            thing("a", "t1", ProviderConfig, "default"),
            thing("b", "t2", ProviderConfig, "default"),
            thing("a", "t3", ClusterProviderConfig, "default"),
            thing("b", "t4", ClusterProviderConfig, "default"),
            thing("a", "t5", ProviderConfig, "other"),
        ])
    }

    #[test]
    fn namespaced_configs_serve_their_namespace_cluster_configs_everyone() {
        let store = store();
        let ns = referencing_provider_config(
            &store,
            ProviderConfigKind::ProviderConfig,
            Some("a"),
            "default",
        );
        assert_eq!(names(ns), vec!["a/t1"]);
        let cluster = referencing_provider_config(
            &store,
            ProviderConfigKind::ClusterProviderConfig,
            None,
            "default",
        );
        assert_eq!(names(cluster), vec!["a/t3", "b/t4"]);
    }

    #[test]
    fn a_namespace_reaches_its_objects_that_use_cluster_configs() {
        let store = store();
        assert_eq!(
            names(using_cluster_provider_configs_in(&store, "a")),
            vec!["a/t3"]
        );
        assert!(using_cluster_provider_configs_in(&store, "c").is_empty());
    }

    #[test]
    fn provider_config_mapper_uses_the_changed_object() {
        let store = store();
        let config = ConfigMap {
            metadata: ObjectMeta {
                name: Some("other".into()),
                namespace: Some("a".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let mapper = provider_config_mapper::<ConfigMap, Thing>(ProviderConfigKind::ProviderConfig);
        assert_eq!(names(mapper(&config, &store)), vec!["a/t5"]);
    }

    #[test]
    fn secret_change_reaches_objects_through_the_configs_that_use_it() {
        let store = store();
        // ConfigMaps stand in for provider configs; data.secret names the Secret they use.
        let config = |ns: &str, name: &str, secret: &str| ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                ..ObjectMeta::default()
            },
            data: Some([("secret".to_owned(), secret.to_owned())].into()),
            ..ConfigMap::default()
        };
        let configs = filled(vec![
            config("a", "default", "creds"),
            config("b", "default", "other-creds"),
            config("a", "other", "creds"),
        ]);
        let mapper = via_provider_configs::<Secret, ConfigMap, Thing>(
            configs,
            ProviderConfigKind::ProviderConfig,
            |cfg, secret| {
                cfg.metadata.namespace == secret.metadata.namespace
                    && cfg.data.as_ref().and_then(|d| d.get("secret"))
                        == secret.metadata.name.as_ref()
            },
        );
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some("creds".into()),
                namespace: Some("a".into()),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        };
        assert_eq!(names(mapper(&secret, &store)), vec!["a/t1", "a/t5"]);
    }
}
