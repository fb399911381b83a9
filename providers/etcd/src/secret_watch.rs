//! Which clusters a Secret's change concerns, for the controller's Secret watch: the user's
//! Secrets a cluster names (`spec.auth`: root's password, applied at once; `spec.tls`: the
//! user's certificates, followed at once, [`crate::tls::expiry`]). The watch is of metadata
//! only: it never carries a password or a key.

use ferroplane_apis::etcd::EtcdCluster;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};

/// Whether `cluster` names the user Secret `name` (its own namespace).
fn names_secret(cluster: &EtcdCluster, name: &str) -> bool {
    let auth = cluster
        .spec
        .auth
        .as_ref()
        .is_some_and(|a| a.root_secret_ref.name == name);
    let tls = cluster.spec.tls.as_ref().is_some_and(|t| {
        [
            &t.peer_secret_ref,
            &t.server_secret_ref,
            &t.client_secret_ref,
        ]
        .into_iter()
        .flatten()
        .any(|r| r.name == name)
    });
    auth || tls
}

/// The clusters of `secret`'s namespace that name it.
pub fn clusters_using_secret(
    secret: &PartialObjectMeta<Secret>,
    clusters: &Store<EtcdCluster>,
) -> Vec<ObjectRef<EtcdCluster>> {
    let (Some(namespace), Some(name)) = (
        secret.metadata.namespace.as_deref(),
        secret.metadata.name.as_deref(),
    ) else {
        return Vec::new();
    };
    clusters
        .state()
        .iter()
        .filter(|c| c.namespace().as_deref() == Some(namespace) && names_secret(c, name))
        .map(|c| ObjectRef::from_obj(c.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::etcd::EtcdClusterSpec;
    use kube::api::ObjectMeta;
    use kube::runtime::{reflector, watcher};

    fn cluster(ns: &str, name: &str, spec: serde_json::Value) -> EtcdCluster {
        let spec: EtcdClusterSpec = serde_json::from_value(spec).expect("spec");
        let mut c = EtcdCluster::new(name, spec);
        c.metadata.namespace = Some(ns.to_owned());
        c
    }

    #[test]
    fn a_secret_change_reconciles_the_clusters_of_its_namespace_that_name_it() {
        let (store, mut writer) = reflector::store();
        let auth = |s: &str| serde_json::json!({"auth": {"rootSecretRef": {"name": s}}});
        let user_tls = serde_json::json!({"tls": {
            "peerSecretRef": {"name": "peer"},
            "serverSecretRef": {"name": "server"},
            "clientSecretRef": {"name": "client"},
        }});
        for c in [
            cluster("a", "one", auth("root-pw")),
            cluster("a", "two", auth("other")),
            cluster("a", "three", serde_json::json!({})),
            cluster("b", "four", auth("root-pw")),
            cluster("a", "five", user_tls),
            cluster("a", "six", serde_json::json!({"tls": {}})),
        ] {
            writer.apply_watcher_event(&watcher::Event::Apply(c));
        }
        let secret = |ns: &str, name: &str| PartialObjectMeta::<Secret> {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(ns.to_owned()),
                ..ObjectMeta::default()
            },
            ..PartialObjectMeta::default()
        };
        let names = |ns: &str, name: &str| -> Vec<String> {
            clusters_using_secret(&secret(ns, name), &store)
                .into_iter()
                .map(|r| r.name)
                .collect()
        };
        assert_eq!(names("a", "root-pw"), ["one"]);
        assert_eq!(names("b", "root-pw"), ["four"]);
        assert!(names("c", "root-pw").is_empty());
        for user in ["peer", "server", "client"] {
            assert_eq!(names("a", user), ["five"], "{user}");
        }
        assert!(names("b", "peer").is_empty());
        assert!(
            names("a", "six-tls-peer").is_empty(),
            "generated Secrets are owned"
        );
    }
}
