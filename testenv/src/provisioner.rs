//! A storage provisioner for the real control plane, which has none (without one, a
//! StatefulSet's claims and so its pods stay Pending): for each Pending claim of a namespace it
//! creates a hostPath PersistentVolume of the claim's size, access modes and class, pre-bound to
//! the claim (`claimRef`); kube-controller-manager's PV controller binds them. Its volumes are
//! `Retain`: once the claim is deleted and the volume Released, the provisioner deletes the
//! volume and its directory, as a dynamic provisioner's `Delete` would.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::core::v1::{
    HostPathVolumeSource, ObjectReference, PersistentVolume, PersistentVolumeClaim,
    PersistentVolumeSpec,
};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};

use crate::error::{Error, Result};

/// The label on the volumes a provisioner made: its id.
const PROVISIONER_LABEL: &str = "testenv.ferroplane.io/provisioner";
const INTERVAL: Duration = Duration::from_millis(250);

/// Provisions the claims of one namespace until dropped.
pub struct Provisioner {
    task: tokio::task::JoinHandle<()>,
}

impl Provisioner {
    /// Starts provisioning `namespace`'s claims into directories under `dir`.
    pub fn start(client: kube::Client, namespace: &str, dir: &Path) -> Result<Self> {
        let volumes_dir = dir.join("volumes");
        std::fs::create_dir_all(&volumes_dir)
            .map_err(Error::io(format!("creating {}", volumes_dir.display())))?;
        let id = format!("{namespace}.{}", std::process::id());
        let work = Work {
            claims: Api::namespaced(client.clone(), namespace),
            volumes: Api::all(client),
            id,
            volumes_dir,
        };
        Ok(Self {
            task: tokio::spawn(work.run()),
        })
    }
}

impl Drop for Provisioner {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Work {
    claims: Api<PersistentVolumeClaim>,
    volumes: Api<PersistentVolume>,
    id: String,
    volumes_dir: PathBuf,
}

impl Work {
    async fn run(self) {
        loop {
            if let Err(error) = self.step().await {
                tracing::warn!(%error, "provisioner: a step failed; trying again");
            }
            tokio::time::sleep(INTERVAL).await;
        }
    }

    async fn step(&self) -> Result<()> {
        let claims = self.claims.list(&ListParams::default()).await?.items;
        let mine = self
            .volumes
            .list(
                &ListParams::default()
                    .labels(&format!("{PROVISIONER_LABEL}={}", label_value(&self.id))),
            )
            .await?
            .items;
        let provisioned: BTreeSet<String> = mine
            .iter()
            .filter_map(|pv| pv.spec.as_ref()?.claim_ref.as_ref()?.uid.clone())
            .collect();
        for claim in &claims {
            let uid = claim.metadata.uid.clone().unwrap_or_default();
            let pending = claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending");
            let unbound = claim.spec.as_ref().is_none_or(|s| s.volume_name.is_none());
            if pending
                && unbound
                && !provisioned.contains(&uid)
                && claim.metadata.deletion_timestamp.is_none()
            {
                self.provision(claim).await?;
            }
        }
        for pv in mine {
            let released = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released");
            if released {
                let name = pv.metadata.name.clone().unwrap_or_default();
                match self.volumes.delete(&name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(e)) if e.code == 404 => {}
                    Err(e) => return Err(e.into()),
                }
                if let Some(path) = pv.spec.and_then(|s| s.host_path).map(|h| h.path) {
                    let _ = std::fs::remove_dir_all(path);
                }
                tracing::info!(volume = %name, "provisioner: released volume deleted with its data");
            }
        }
        Ok(())
    }

    async fn provision(&self, claim: &PersistentVolumeClaim) -> Result<()> {
        let uid = claim.metadata.uid.clone().unwrap_or_default();
        let spec = claim.spec.clone().unwrap_or_default();
        let storage = spec
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage").cloned())
            .ok_or_else(|| Error::Dir(format!("claim {} requests no storage", name_of(claim))))?;
        let dir = self.volumes_dir.join(&uid);
        std::fs::create_dir_all(&dir).map_err(Error::io(format!("creating {}", dir.display())))?;
        let pv = PersistentVolume {
            metadata: ObjectMeta {
                name: Some(format!("pvc-{uid}")),
                labels: Some([(PROVISIONER_LABEL.to_owned(), label_value(&self.id))].into()),
                ..ObjectMeta::default()
            },
            spec: Some(PersistentVolumeSpec {
                capacity: Some([("storage".to_owned(), storage)].into()),
                access_modes: spec.access_modes.clone(),
                storage_class_name: Some(spec.storage_class_name.clone().unwrap_or_default()),
                volume_mode: spec.volume_mode.clone(),
                persistent_volume_reclaim_policy: Some("Retain".to_owned()),
                host_path: Some(HostPathVolumeSource {
                    path: dir.to_string_lossy().into_owned(),
                    type_: Some("Directory".to_owned()),
                }),
                claim_ref: Some(ObjectReference {
                    api_version: Some("v1".to_owned()),
                    kind: Some("PersistentVolumeClaim".to_owned()),
                    namespace: claim.metadata.namespace.clone(),
                    name: claim.metadata.name.clone(),
                    uid: Some(uid),
                    ..ObjectReference::default()
                }),
                ..PersistentVolumeSpec::default()
            }),
            status: None,
        };
        match self.volumes.create(&PostParams::default(), &pv).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

fn name_of(claim: &PersistentVolumeClaim) -> String {
    claim.metadata.name.clone().unwrap_or_default()
}

/// A label value: at most 63 characters of `[A-Za-z0-9._-]`.
fn label_value(id: &str) -> String {
    let cleaned: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    cleaned
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}
