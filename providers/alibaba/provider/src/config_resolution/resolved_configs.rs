//! Resolved configurations kept between reconciles. Resolving costs two reads from the API
//! server (the config and its Secret); without this every reconcile of every instance would pay
//! them. An entry lives until a watch event says its config or its Secret changed: the
//! ECSInstance controller already watches both kinds to requeue instances, and tells this cache
//! first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ferroplane_apis::common::{ProviderConfigKind, ProviderConfigReference};
use kube::{Resource, ResourceExt};

use super::client_settings::ResolvedConfig;
use super::config_error::ConfigError;
use super::resolver::ConfigResolver;

/// (kind, namespace for a ProviderConfig, name) of a configuration.
type ConfigKey = (ProviderConfigKind, Option<String>, String);

#[derive(Default)]
struct Entries {
    by_config: HashMap<ConfigKey, Arc<ResolvedConfig>>,
    /// Bumped by every invalidation: a resolve that started before one must not store what it
    /// read, which may be the version the invalidation was about.
    epoch: u64,
}

/// The cache, in front of a [`ConfigResolver`]. Cheap to share behind an `Arc`.
pub struct ResolvedConfigs {
    resolver: ConfigResolver,
    entries: Mutex<Entries>,
}

impl ResolvedConfigs {
    pub fn new(resolver: ConfigResolver) -> Self {
        Self {
            resolver,
            entries: Mutex::default(),
        }
    }

    /// The configuration `reference` names for an object in `namespace`, from the cache or
    /// freshly resolved. Failures are not kept: the next reconcile tries again. Whether the
    /// configuration admits `namespace` is checked on every call (a cached ClusterProviderConfig
    /// serves many namespaces, and a Namespace's labels change without a config event).
    pub async fn resolve(
        &self,
        reference: &ProviderConfigReference,
        namespace: &str,
    ) -> Result<Arc<ResolvedConfig>, ConfigError> {
        let key = key(reference, namespace);
        let epoch = {
            let entries = self.lock();
            entries.by_config.get(&key).cloned().ok_or(entries.epoch)
        };
        let epoch = match epoch {
            Ok(hit) => {
                self.resolver.admit(&hit, namespace).await?;
                return Ok(hit);
            }
            Err(epoch) => epoch,
        };
        let resolved = Arc::new(self.resolver.resolve(reference, namespace).await?);
        let mut entries = self.lock();
        if entries.epoch == epoch {
            entries.by_config.insert(key, resolved.clone());
        }
        Ok(resolved)
    }

    /// A ProviderConfig or ClusterProviderConfig was added, changed or deleted.
    pub fn config_changed<P: Resource<DynamicType = ()>>(
        &self,
        kind: ProviderConfigKind,
        config: &P,
    ) {
        let key = (kind, config.namespace(), config.name_any());
        let mut entries = self.lock();
        entries.epoch += 1;
        entries.by_config.remove(&key);
    }

    /// A Secret was added, changed or deleted: forget the configurations that read it.
    pub fn secret_changed<S: Resource>(&self, secret: &S) {
        let namespace = secret.namespace().unwrap_or_default();
        let name = secret.name_any();
        let mut entries = self.lock();
        entries.epoch += 1;
        entries.by_config.retain(|_, resolved| {
            resolved
                .secret
                .as_ref()
                .is_none_or(|(ns, n)| *ns != namespace || *n != name)
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn key(reference: &ProviderConfigReference, namespace: &str) -> ConfigKey {
    let namespace = match reference.kind {
        ProviderConfigKind::ProviderConfig => Some(namespace.to_owned()),
        ProviderConfigKind::ClusterProviderConfig => None,
    };
    (reference.kind, namespace, reference.name.clone())
}
