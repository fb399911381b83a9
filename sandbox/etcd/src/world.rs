//! What the simulated members see of the cluster they run in, read through the Kubernetes API:
//! which ordinals of the StatefulSet have a running pod (the sandbox stores a StatefulSet's
//! pods), the data volume each one mounts (its PersistentVolumeClaim, identified by uid: a new
//! claim is an empty data dir), the
//! configuration file it reads from the bootstrap ConfigMap, and the etcd version of the pod
//! template's image.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod};
use kube::api::{Api, ListParams};
use serde_json::Value;

use provider_etcd::names::ClusterNames;

/// The data directory a pod mounts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DataDir {
    /// The PersistentVolumeClaim with this uid: outlives the pod, until the claim is deleted.
    Claim { name: String, uid: String },
    /// An `emptyDir` (no storage configured): lost when the pod of this ordinal goes.
    Ephemeral { ordinal: u32 },
}

/// `initial-cluster-state` of a configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialState {
    New,
    Existing,
}

/// What etcd reads from a member's configuration file when its data dir is empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartConfig {
    pub name: String,
    pub state: InitialState,
    /// `initial-cluster-token`: members of a new cluster form one cluster only with the same
    /// token.
    pub token: String,
    /// Peer URLs of `initial-cluster`, in file order.
    pub initial_cluster: Vec<String>,
}

/// One ordinal whose pod is ready, with what it mounts and reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadyPod {
    pub ordinal: u32,
    pub data: DataDir,
    pub config: StartConfig,
}

/// The cluster as the members see it at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct World {
    pub pods: Vec<ReadyPod>,
    /// The etcd version of the pod template's image tag (`…:v3.5.17` → `3.5.17`).
    pub template_version: Option<String>,
    /// Whether every pod runs the current template (the rollout is complete).
    pub rolled_out: bool,
}

/// Reads the StatefulSet, its data claims and the bootstrap ConfigMap of `names`.
pub async fn observe(kube: &kube::Client, names: &ClusterNames) -> Result<World, kube::Error> {
    let sets: Api<StatefulSet> = Api::namespaced(kube.clone(), &names.namespace);
    let Some(set) = sets.get_opt(&names.statefulset()).await? else {
        return Ok(World::default());
    };
    if set.metadata.deletion_timestamp.is_some() {
        return Ok(World::default());
    }
    let maps: Api<ConfigMap> = Api::namespaced(kube.clone(), &names.namespace);
    let files = maps
        .get_opt(&names.bootstrap_config())
        .await?
        .and_then(|m| m.data)
        .unwrap_or_default();
    let uses_claims = set
        .spec
        .as_ref()
        .and_then(|s| s.volume_claim_templates.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.metadata.name.as_deref() == Some("data")));
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(kube.clone(), &names.namespace);
    // Listed, not read one by one: the controller's account may list pods, not get them.
    let stored = Api::<Pod>::namespaced(kube.clone(), &names.namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let mut pods = Vec::new();
    for ordinal in 0..wanted_ordinals(&set) {
        // Only a running pod runs etcd: one deleted, or not made yet (its claim is being
        // deleted), runs nothing.
        let name = names.member(ordinal);
        let running = stored.iter().any(|p| {
            p.metadata.name.as_deref() == Some(name.as_str())
                && p.metadata.deletion_timestamp.is_none()
                && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
        });
        if !running {
            continue;
        }
        let data = if uses_claims {
            let name = names.data_volume(ordinal);
            // A pod whose claim does not exist (yet) stays Pending.
            let Some(uid) = claims.get_opt(&name).await?.and_then(|c| c.metadata.uid) else {
                continue;
            };
            DataDir::Claim { name, uid }
        } else {
            DataDir::Ephemeral { ordinal }
        };
        // A pod whose configuration file is missing cannot start its container.
        let Some(config) = files
            .get(&format!("{}.json", names.member(ordinal)))
            .and_then(|f| parse_config(f))
        else {
            continue;
        };
        pods.push(ReadyPod {
            ordinal,
            data,
            config,
        });
    }
    Ok(World {
        pods,
        template_version: template_version(&set),
        rolled_out: rolled_out(&set),
    })
}

/// Ordinals below this may have a running pod: those the StatefulSet wants (a scale-down's
/// condemned pods are gone once `replicas` drops; a scale-up's new pods run once the
/// simulator has made them).
fn wanted_ordinals(set: &StatefulSet) -> u32 {
    let wanted = set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    u32::try_from(wanted).unwrap_or(0)
}

fn rolled_out(set: &StatefulSet) -> bool {
    let Some(status) = set.status.as_ref() else {
        return false;
    };
    status.observed_generation >= set.metadata.generation
        && status.update_revision.is_some()
        && status.update_revision == status.current_revision
}

fn template_version(set: &StatefulSet) -> Option<String> {
    let image = set
        .spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == "etcd")?
        .image
        .clone()?;
    version_of_image(&image)
}

/// `registry/etcd:v3.5.17` → `3.5.17`; `None` for an image without a version tag.
pub fn version_of_image(image: &str) -> Option<String> {
    let (repository, tag) = image.rsplit_once(':')?;
    if tag.contains('/') || repository.is_empty() {
        return None;
    }
    let version = tag.strip_prefix('v').unwrap_or(tag);
    let numeric = version.split('.').count() == 3
        && version
            .split(['.', '-'])
            .next()
            .is_some_and(|major| major.chars().all(|c| c.is_ascii_digit()));
    numeric.then(|| version.to_owned())
}

/// The settings etcd reads at its first start from a rendered configuration file.
pub fn parse_config(file: &str) -> Option<StartConfig> {
    let value: Value = serde_json::from_str(file).ok()?;
    let state = match value.get("initial-cluster-state")?.as_str()? {
        "new" => InitialState::New,
        "existing" => InitialState::Existing,
        _ => return None,
    };
    let initial_cluster = value
        .get("initial-cluster")?
        .as_str()?
        .split(',')
        .filter_map(|entry| entry.split_once('=').map(|(_, url)| url.to_owned()))
        .collect();
    Some(StartConfig {
        name: value.get("name")?.as_str()?.to_owned(),
        state,
        token: value
            .get("initial-cluster-token")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        initial_cluster,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_image_tags() {
        assert_eq!(
            version_of_image("gcr.io/etcd-development/etcd:v3.5.17").as_deref(),
            Some("3.5.17")
        );
        assert_eq!(
            version_of_image("localhost:5000/etcd:3.6.0").as_deref(),
            Some("3.6.0")
        );
        assert_eq!(version_of_image("localhost:5000/etcd"), None);
        assert_eq!(version_of_image("evil:1"), None);
    }

    #[test]
    fn reads_a_rendered_configuration_file() {
        let file = r#"{"name":"e-2","initial-cluster":"e-0=http://a:2380,e-2=http://c:2380","initial-cluster-state":"existing"}"#;
        let config = parse_config(file).expect("parses");
        assert_eq!(config.state, InitialState::Existing);
        assert_eq!(config.initial_cluster, ["http://a:2380", "http://c:2380"]);
        assert_eq!(config.name, "e-2");
    }
}
