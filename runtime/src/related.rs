//! Mappers from related objects (ProviderConfigs, their Secrets) to the managed objects that
//! depend on them, for [`ManagedController::watches_related`](crate::ManagedController::watches_related):
//! a rotated credential or an edited endpoint reconciles every affected object at once instead of
//! at the next poll.
//!
//! Lookups read the controller's reflector store (no API calls).

use ferroplane_apis::common::ProviderConfigKind;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use crate::ManagedResource;

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
