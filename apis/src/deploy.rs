//! The RBAC manifests of `deploy/`, embedded so that the binary's sandbox, the tests and a
//! cluster install all grant the controller exactly the same rules (one source: the YAML files).
//!
//! The controller runs as ServiceAccount [`SERVICE_ACCOUNT`] in [`SERVICE_ACCOUNT_NAMESPACE`].
//! A cluster install binds the roles of the providers it runs ([`cluster_rbac`]); a namespaced
//! install ([`namespaced_rbac`]) grants Roles in one namespace only.

use serde_json::Value;

/// The namespace of the controller's ServiceAccount (`deploy/manager/namespace.yaml`).
pub const SERVICE_ACCOUNT_NAMESPACE: &str = "ferroplane-system";
/// The controller's ServiceAccount (`deploy/manager/serviceaccount.yaml`).
pub const SERVICE_ACCOUNT: &str = "ferroplane";

/// One manifest file of `deploy/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Manifest {
    /// The path under `deploy/`, e.g. `rbac/alibaba.yaml`.
    pub path: &'static str,
    pub yaml: &'static str,
}

/// The provider a set of rules is for (`ferroplane run --kinds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    /// ECSInstance, ProviderConfig, ClusterProviderConfig.
    Alibaba,
    /// EtcdCluster.
    Etcd,
    /// Application.
    Application,
}

macro_rules! manifest {
    ($path:literal) => {
        Manifest {
            path: $path,
            yaml: include_str!(concat!("../../deploy/", $path)),
        }
    };
}

/// The Namespace and the ServiceAccount the controller runs as.
pub const MANAGER: [Manifest; 2] = [
    manifest!("manager/namespace.yaml"),
    manifest!("manager/serviceaccount.yaml"),
];

/// Rules every install needs: Events.
pub const COMMON: Manifest = manifest!("rbac/common.yaml");
/// The leader-election Lease in `ferroplane-system` (`run --leader-elect`).
pub const LEADER_ELECTION: Manifest = manifest!("rbac/leader-election.yaml");
/// Writes of connection Secrets (`writeConnectionSecretToRef`); optional.
pub const CONNECTION_SECRETS: Manifest = manifest!("rbac/connection-secrets.yaml");

/// The cluster-wide role of one provider, with its binding.
pub fn provider_rbac(provider: Provider) -> Manifest {
    match provider {
        Provider::Alibaba => manifest!("rbac/alibaba.yaml"),
        Provider::Etcd => manifest!("rbac/etcd.yaml"),
        Provider::Application => manifest!("rbac/application.yaml"),
    }
}

/// The namespaced install of one provider: Roles and RoleBindings without a namespace, to be
/// created in the namespace the controller watches (`kubectl apply -n <ns>`).
pub fn namespaced_provider_rbac(provider: Provider) -> Manifest {
    match provider {
        Provider::Alibaba => manifest!("namespaced/alibaba.yaml"),
        Provider::Etcd => manifest!("namespaced/etcd.yaml"),
        Provider::Application => manifest!("namespaced/application.yaml"),
    }
}

/// Events and connection Secrets of the namespaced install.
pub const NAMESPACED_COMMON: Manifest = manifest!("namespaced/common.yaml");

/// A manifest file could not be read as YAML objects.
#[derive(Debug, thiserror::Error)]
#[error("deploy/{path} is not a stream of YAML objects: {reason}")]
pub struct ManifestError {
    path: &'static str,
    reason: String,
}

impl Manifest {
    /// The objects of the file, in order (empty documents skipped).
    pub fn objects(&self) -> Result<Vec<Value>, ManifestError> {
        let documents: Vec<Value> =
            serde_saphyr::from_multiple(self.yaml).map_err(|e| ManifestError {
                path: self.path,
                reason: e.to_string(),
            })?;
        Ok(documents.into_iter().filter(Value::is_object).collect())
    }
}

/// What a cluster install creates for `providers`: the manager's Namespace and ServiceAccount,
/// the common rules, the leader-election Role, the connection-Secrets role and each provider's
/// ClusterRole, with their bindings.
pub fn cluster_rbac(providers: &[Provider]) -> Vec<Manifest> {
    let mut manifests = MANAGER.to_vec();
    manifests.extend([COMMON, LEADER_ELECTION, CONNECTION_SECRETS]);
    manifests.extend(providers.iter().map(|p| provider_rbac(*p)));
    manifests
}

/// What a namespaced install creates in `namespace` for `providers`: the objects of
/// [`NAMESPACED_COMMON`] and each provider's namespaced file, with `metadata.namespace` set.
/// The manager's Namespace and ServiceAccount are not included.
pub fn namespaced_rbac(
    providers: &[Provider],
    namespace: &str,
) -> Result<Vec<Value>, ManifestError> {
    let mut objects = Vec::new();
    let files = std::iter::once(NAMESPACED_COMMON)
        .chain(providers.iter().map(|p| namespaced_provider_rbac(*p)));
    for manifest in files {
        for mut object in manifest.objects()? {
            object["metadata"]["namespace"] = Value::String(namespace.to_owned());
            objects.push(object);
        }
    }
    Ok(objects)
}

/// Every provider.
pub const ALL_PROVIDERS: [Provider; 3] = [Provider::Alibaba, Provider::Etcd, Provider::Application];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file parses; every binding names the controller's ServiceAccount and a role that
    /// the same install defines.
    #[test]
    fn installs_bind_the_service_account_to_roles_they_define() {
        let cluster: Vec<Value> = cluster_rbac(&ALL_PROVIDERS)
            .iter()
            .flat_map(|m| m.objects().expect("parses"))
            .collect();
        let namespaced = namespaced_rbac(&ALL_PROVIDERS, "team-a").expect("parses");
        for objects in [&cluster, &namespaced] {
            let bindings = objects
                .iter()
                .filter(|o| o["kind"].as_str().is_some_and(|k| k.ends_with("Binding")));
            let mut count = 0;
            for binding in bindings {
                count += 1;
                let role = &binding["roleRef"];
                assert!(
                    objects.iter().any(|o| o["kind"] == role["kind"]
                        && o["metadata"]["name"] == role["name"]),
                    "{binding}: its role is not in the install"
                );
                assert_eq!(
                    binding["subjects"],
                    serde_json::json!([{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": SERVICE_ACCOUNT_NAMESPACE}]),
                );
            }
            assert!(count >= 4, "{count} bindings");
        }
        assert!(
            namespaced.iter().all(
                |o| matches!(o["kind"].as_str(), Some("Role" | "RoleBinding"))
                    && o["metadata"]["namespace"] == "team-a"
            ),
            "a namespaced install has Roles and RoleBindings in its namespace only"
        );
    }

    /// The etcd and application rules are not in the ECSInstance install, and nothing grants
    /// `*`.
    #[test]
    fn an_ecsinstance_install_grants_no_workload_verbs() {
        let objects: Vec<Value> = cluster_rbac(&[Provider::Alibaba])
            .iter()
            .flat_map(|m| m.objects().expect("parses"))
            .collect();
        let rules: Vec<&Value> = objects
            .iter()
            .flat_map(|o| o["rules"].as_array().into_iter().flatten())
            .collect();
        for rule in &rules {
            for field in ["apiGroups", "resources", "verbs"] {
                assert!(
                    !rule[field]
                        .as_array()
                        .expect(field)
                        .contains(&Value::from("*")),
                    "{rule}"
                );
            }
            let resources = rule["resources"].to_string();
            for workload in [
                "deployments",
                "statefulsets",
                "services",
                "ingresses",
                "horizontalpodautoscalers",
                "pods",
            ] {
                assert!(!resources.contains(workload), "{rule}");
            }
        }
    }
}
