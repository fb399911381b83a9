//! A configuration's users: the managed objects of every Alibaba kind whose `providerConfigRef`
//! names it. What Crossplane keeps as ProviderConfigUsage objects and shows as `status.users`
//! is here a count over the kinds' controller caches (no object per user), and, for the
//! deletion decision, fresh lists that cannot lag. Every kind the provider runs is followed
//! through [`ConfigUsers::follow`], so a change of any object's reference (or its deletion)
//! reconciles the configurations it concerns at once.

use std::sync::Arc;

use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ProviderConfig};
use ferroplane_apis::common::{Managed, ProviderConfigKind};
use ferroplane_runtime::{Connector, ManagedController, ManagedResource, ReconcileError};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::future::BoxFuture;
use kube::api::ListParams;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, ResourceExt};

use super::config_kind::ConfigKind;
use super::references::ReferenceChanges;
use crate::reasons::KUBERNETES_API_ERROR;

/// A configuration as a reference names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ConfigId {
    pub(super) kind: ProviderConfigKind,
    /// The configuration's namespace, for a ProviderConfig.
    pub(super) namespace: Option<String>,
    pub(super) name: String,
}

impl ConfigId {
    pub(super) fn of<P: ConfigKind>(config: &P) -> Self {
        Self {
            kind: P::KIND,
            namespace: config.namespace(),
            name: config.name_any(),
        }
    }

    /// Whether `object` references this configuration.
    pub(super) fn used_by<K: Managed + ResourceExt>(&self, object: &K) -> bool {
        object.provider_config_ref().is_some_and(|r| {
            r.kind == self.kind
                && r.name == self.name
                && (self.kind == ProviderConfigKind::ClusterProviderConfig
                    || object.namespace() == self.namespace)
        })
    }
}

/// `Kind namespace/name` of a user, as messages show it.
fn shown<K: ResourceExt + kube::Resource<DynamicType = ()>>(object: &K) -> String {
    let kind = K::kind(&());
    match object.namespace() {
        Some(ns) => format!("{kind} {ns}/{}", object.name_any()),
        None => format!("{kind} {}", object.name_any()),
    }
}

type CachedUsers = Box<dyn Fn(&ConfigId) -> usize + Send + Sync>;
type LiveUsers = Box<
    dyn Fn(kube::Client, ConfigId) -> BoxFuture<'static, Result<Vec<String>, ReconcileError>>
        + Send
        + Sync,
>;

/// The users of configurations, over every followed kind.
pub struct ConfigUsers {
    cached: Vec<CachedUsers>,
    live: Vec<LiveUsers>,
    references: Arc<ReferenceChanges>,
    namespaced: (
        UnboundedSender<ObjectRef<ProviderConfig>>,
        UnboundedReceiver<ObjectRef<ProviderConfig>>,
    ),
    cluster: (
        UnboundedSender<ObjectRef<ClusterProviderConfig>>,
        UnboundedReceiver<ObjectRef<ClusterProviderConfig>>,
    ),
}

impl Default for ConfigUsers {
    fn default() -> Self {
        Self {
            cached: Vec::new(),
            live: Vec::new(),
            references: Arc::default(),
            namespaced: unbounded(),
            cluster: unbounded(),
        }
    }
}

impl ConfigUsers {
    /// Counts the objects of `controller`'s kind among the users, and reconciles the
    /// configurations a change of one of them concerns (through the controller's own watch).
    pub fn follow<K, C>(&mut self, controller: &ManagedController<K, C>)
    where
        K: ManagedResource,
        C: Connector<K>,
    {
        let store: Store<K> = controller.store();
        self.cached.push(Box::new(move |id| {
            store
                .state()
                .iter()
                .filter(|o| id.used_by(o.as_ref()))
                .count()
        }));
        self.live.push(Box::new(|client, id| {
            Box::pin(async move { live_users_of::<K>(client, &id).await })
        }));
        let references = self.references.clone();
        let namespaced = self.namespaced.0.clone();
        let cluster = self.cluster.0.clone();
        controller.observe_objects(move |object| {
            // A send fails only once the configuration controller has stopped.
            for config in references.concerned(object) {
                match config.kind {
                    ProviderConfigKind::ProviderConfig => {
                        let _ = namespaced.unbounded_send(config.object_ref());
                    }
                    ProviderConfigKind::ClusterProviderConfig => {
                        let _ = cluster.unbounded_send(config.object_ref());
                    }
                }
            }
        });
    }

    /// The followed kinds' counters, and the two streams of configurations to reconcile.
    pub(super) fn split(self) -> (UserCounts, ChangedConfigs) {
        (
            UserCounts {
                cached: self.cached,
                live: self.live,
            },
            ChangedConfigs {
                namespaced: self.namespaced.1,
                cluster: self.cluster.1,
            },
        )
    }
}

/// The counting half of [`ConfigUsers`], shared by both configuration controllers.
pub(super) struct UserCounts {
    cached: Vec<CachedUsers>,
    live: Vec<LiveUsers>,
}

impl UserCounts {
    /// How many objects use `config`, as the controllers' caches have them.
    pub(super) fn cached_count(&self, config: &ConfigId) -> usize {
        self.cached.iter().map(|count| count(config)).sum()
    }

    /// Every user of `config` by a fresh list of each kind: the deletion decision must not
    /// trust a cache (a configuration deleted under a VPC would leave the VPC without
    /// credentials to delete it with).
    pub(super) async fn live(
        &self,
        client: &kube::Client,
        config: &ConfigId,
    ) -> Result<Vec<String>, ReconcileError> {
        let mut users = Vec::new();
        for list in &self.live {
            users.extend(list(client.clone(), config.clone()).await?);
        }
        Ok(users)
    }
}

/// The configurations whose users changed, by kind.
pub(super) struct ChangedConfigs {
    pub(super) namespaced: UnboundedReceiver<ObjectRef<ProviderConfig>>,
    pub(super) cluster: UnboundedReceiver<ObjectRef<ClusterProviderConfig>>,
}

async fn live_users_of<K: ManagedResource>(
    client: kube::Client,
    config: &ConfigId,
) -> Result<Vec<String>, ReconcileError> {
    let api: Api<K> = match (config.kind, &config.namespace) {
        (ProviderConfigKind::ProviderConfig, Some(ns)) => Api::namespaced(client, ns),
        _ => Api::all(client),
    };
    let list = api.list(&ListParams::default()).await.map_err(|e| {
        ReconcileError::retryable(
            KUBERNETES_API_ERROR,
            format!("cannot list {}s: {e}", K::kind(&())),
        )
    })?;
    Ok(list
        .items
        .iter()
        .filter(|o| config.used_by(*o))
        .map(shown)
        .collect())
}

#[cfg(test)]
mod tests {
    use ferroplane_apis::alibabacloud::VPC;
    use serde_json::json;

    use super::*;

    fn vpc(namespace: &str, config: serde_json::Value) -> VPC {
        serde_json::from_value(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "VPC",
            "metadata": {"name": "net", "namespace": namespace},
            "spec": {"providerConfigRef": config, "forProvider": {"regionId": "cn-beijing", "cidrBlock": "10.0.0.0/8"}},
        }))
        .expect("a VPC")
    }

    fn id(kind: ProviderConfigKind, namespace: Option<&str>, name: &str) -> ConfigId {
        ConfigId {
            kind,
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    #[test]
    fn a_provider_config_is_used_from_its_namespace_a_cluster_one_from_any() {
        let local = vpc("team-a", json!({"name": "default"}));
        let pc = |ns| id(ProviderConfigKind::ProviderConfig, Some(ns), "default");
        assert!(pc("team-a").used_by(&local));
        assert!(!pc("team-b").used_by(&local), "another namespace's config");
        assert!(!id(ProviderConfigKind::ProviderConfig, Some("team-a"), "other").used_by(&local));
        let shared = vpc(
            "team-b",
            json!({"kind": "ClusterProviderConfig", "name": "shared"}),
        );
        assert!(id(ProviderConfigKind::ClusterProviderConfig, None, "shared").used_by(&shared));
        assert!(!pc("team-b").used_by(&shared), "same name, other kind");
        assert_eq!(shown(&local), "VPC team-a/net");
    }
}
