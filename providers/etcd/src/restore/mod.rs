//! `spec.restore`: a new EtcdCluster bootstrapped from a snapshot. Before the StatefulSet
//! exists, the controller makes each member's data claim and runs a Job per member that
//! restores the snapshot into it ([`render`]); only when every claim is restored does it create
//! the StatefulSet, whose pods then start on the restored data (etcd ignores its `initial-*`
//! settings when the data directory is not empty). The Jobs and the Secret with the snapshot's
//! URL are removed once the StatefulSet exists.
//!
//! The progress is kept on the claims (annotations: made for this cluster's UID, `pending` or
//! `done`), which outlive the Jobs and the status: a StatefulSet deleted by hand later is made
//! again on the restored volumes, never restored a second time. A claim that exists and was not
//! made for this restore (an earlier cluster's kept volume) is never written: the restore waits
//! until it is deleted.

mod bbolt;
pub mod render;
pub mod root_password;
mod setup;
pub mod sources;

use ferroplane_apis::etcd::{EtcdCluster, EtcdRestoreStatus};
use ferroplane_runtime::ReconcileError;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::{Client, ResourceExt};

use self::render::{
    EXPIRES_ANNOTATION, JobInput, RESTORE_ANNOTATION, RESTORE_STATE_ANNOTATION, SHA256_ANNOTATION,
    SNAPSHOT_ANNOTATION,
};
pub use self::setup::RestoreSetup;
pub use self::sources::{RestoreSources, SignedSnapshot, SnapshotObject};
use crate::jobs::{self, ignore_conflict, ignore_missing, kube_error};
use crate::names::ClusterNames;
use crate::reasons::{
    CHILD_NOT_OURS, CLOCK, MEMBER_RESTORED, RESTORE_FAILED, RESTORE_UNAVAILABLE, VOLUME_EXISTS,
};
use crate::version::Release;

/// Annotation of a restore's claim: the UID of the EtcdCluster it was made for.
pub const RESTORE_FOR_ANNOTATION: &str = "etcd.ferroplane.io/restore-for";
/// Annotation of a quorum-loss recovery's claim: when the loss it replaces was first seen. A
/// member claim without it (or with another loss's) still holds the lost cluster's data.
pub const RECOVERY_OF_ANNOTATION: &str = "etcd.ferroplane.io/recovery-of";

/// How long a snapshot URL is valid; it is signed again when less than [`RENEW_BEFORE`] is
/// left and a Job may still need it.
const URL_VALIDITY: SignedDuration = SignedDuration::from_hours(6);
const RENEW_BEFORE: SignedDuration = SignedDuration::from_hours(1);

/// Where the restore of one cluster stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// No restore was asked for, or every member's volume holds the snapshot and nothing of
    /// the restore is left to clean up: the StatefulSet may run.
    Done(Option<EtcdRestoreStatus>),
    /// Something to create, renew, mark or remove (what `act` does next).
    Act {
        what: String,
        status: EtcdRestoreStatus,
    },
    /// Jobs are running; nothing to do but wait.
    Wait {
        why: String,
        status: EtcdRestoreStatus,
    },
}

impl Progress {
    /// Whether the StatefulSet must wait for the volumes.
    pub fn holds_members(&self) -> bool {
        match self {
            Progress::Done(_) => false,
            Progress::Act { status, .. } | Progress::Wait { status, .. } => !status.done,
        }
    }

    pub fn status(&self) -> Option<&EtcdRestoreStatus> {
        match self {
            Progress::Done(status) => status.as_ref(),
            Progress::Act { status, .. } | Progress::Wait { status, .. } => Some(status),
        }
    }
}

/// What the restore of one member's volume has come to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum MemberState {
    /// No claim yet.
    NoVolume,
    /// A claim not made for this restore.
    Foreign,
    /// Made; its Job has not been started.
    NoJob,
    Running,
    /// The Job succeeded; the claim is not marked yet.
    Succeeded,
    Failed(String),
    Restored,
}

/// One reconcile's view of a cluster's restore.
pub struct Restorer<'a> {
    pub kube: &'a Client,
    pub names: &'a ClusterNames,
    pub sources: Option<&'a dyn RestoreSources>,
    pub tools_image: &'a str,
    /// For a quorum-loss recovery: the loss it recovers from, marked on the claims it makes
    /// ([`RECOVERY_OF_ANNOTATION`]), and the revision bump of its Jobs.
    pub recovery: Option<RecoveryMarks<'a>>,
}

/// What a quorum-loss recovery adds to a restore.
#[derive(Clone, Copy, Debug)]
pub struct RecoveryMarks<'a> {
    /// When the loss was first seen (`status.quorumLoss.since`).
    pub since: &'a str,
    pub revision_bump: Option<u64>,
}

/// What `look` read, for `act`.
struct Seen {
    claims: Vec<Option<PersistentVolumeClaim>>,
    jobs: Vec<Option<Job>>,
    secret: Option<Secret>,
    states: Vec<MemberState>,
}

fn annotation<'a>(obj: &'a impl ResourceExt, key: &str) -> Option<&'a str> {
    obj.meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

impl Restorer<'_> {
    fn size(cluster: &EtcdCluster) -> u32 {
        u32::try_from(cluster.spec.size).unwrap_or(0)
    }

    /// Refuses a Job or Secret with a restore object's name that this cluster does not own:
    /// its status would be taken for the restore's, or its data overwritten.
    fn refuse_foreign(
        &self,
        what: &str,
        name: &str,
        meta: &kube::api::ObjectMeta,
        uid: &str,
    ) -> Result<(), ReconcileError> {
        let ours = jobs::owned_by(meta, uid);
        if ours {
            return Ok(());
        }
        Err(ReconcileError::terminal(
            CHILD_NOT_OURS,
            format!(
                "{what} {name} exists and is not this EtcdCluster's; ferroplane never adopts or changes it. Delete or rename it, or restore into a cluster of another name"
            ),
        ))
    }

    async fn read(&self, cluster: &EtcdCluster) -> Result<Seen, ReconcileError> {
        let ns = &self.names.namespace;
        let claims_api: Api<PersistentVolumeClaim> = Api::namespaced(self.kube.clone(), ns);
        let jobs_api: Api<Job> = Api::namespaced(self.kube.clone(), ns);
        let secrets: Api<Secret> = Api::namespaced(self.kube.clone(), ns);
        let uid = cluster.uid().unwrap_or_default();
        let (mut claims, mut jobs, mut states) = (Vec::new(), Vec::new(), Vec::new());
        for ordinal in 0..Self::size(cluster) {
            let name = self.names.data_volume(ordinal);
            let claim = claims_api
                .get_opt(&name)
                .await
                .map_err(kube_error(format!("reading volume {name}")))?;
            let job_name = render::job_name(self.names, ordinal);
            let job = jobs_api
                .get_opt(&job_name)
                .await
                .map_err(kube_error(format!("reading Job {job_name}")))?;
            if let Some(job) = &job {
                self.refuse_foreign("Job", &job_name, &job.metadata, &uid)?;
            }
            let state = match &claim {
                None => MemberState::NoVolume,
                Some(c) if annotation(c, RESTORE_FOR_ANNOTATION) != Some(uid.as_str()) => {
                    MemberState::Foreign
                }
                Some(c) if annotation(c, RESTORE_STATE_ANNOTATION) == Some("done") => {
                    MemberState::Restored
                }
                Some(_) => match job.as_ref().map(jobs::outcome) {
                    None => MemberState::NoJob,
                    Some(None) => MemberState::Running,
                    Some(Some(Ok(()))) => MemberState::Succeeded,
                    Some(Some(Err(why))) => MemberState::Failed(why),
                },
            };
            claims.push(claim);
            jobs.push(job);
            states.push(state);
        }
        let secret_name = render::source_secret_name(self.names);
        let secret = secrets
            .get_opt(&secret_name)
            .await
            .map_err(kube_error(format!("reading Secret {secret_name}")))?;
        if let Some(secret) = &secret {
            self.refuse_foreign("Secret", &secret_name, &secret.metadata, &uid)?;
        }
        Ok(Seen {
            claims,
            jobs,
            secret,
            states,
        })
    }

    fn status(seen: &Seen) -> EtcdRestoreStatus {
        let restored = seen
            .states
            .iter()
            .filter(|s| **s == MemberState::Restored)
            .count();
        let from_claims = seen
            .claims
            .iter()
            .flatten()
            .find_map(|c| annotation(c, RESTORE_ANNOTATION).map(str::to_owned));
        let secret = seen.secret.as_ref();
        EtcdRestoreStatus {
            snapshot: secret
                .and_then(|s| annotation(s, SNAPSHOT_ANNOTATION).map(str::to_owned))
                .or(from_claims),
            sha256: secret.and_then(|s| annotation(s, SHA256_ANNOTATION).map(str::to_owned)),
            restored_members: i32::try_from(restored).unwrap_or(i32::MAX),
            done: !seen.states.is_empty() && restored == seen.states.len(),
        }
    }

    /// Where the restore of `cluster` stands; `statefulset_exists` says whether its members
    /// were started. Reads only.
    pub async fn look(
        &self,
        cluster: &EtcdCluster,
        statefulset_exists: bool,
        now: Timestamp,
    ) -> Result<Progress, ReconcileError> {
        if cluster.spec.restore.is_none() {
            return Ok(Progress::Done(None));
        }
        if statefulset_exists {
            return self.look_after(cluster).await;
        }
        let seen = self.read(cluster).await?;
        let status = Self::status(&seen);
        if status.done {
            return Ok(Progress::Done(Some(status)));
        }

        let act = |what: String| Progress::Act {
            what,
            status: status.clone(),
        };
        // A Job that succeeded is recorded on its volume first, whatever another one did.
        if let Some(ordinal) = seen
            .states
            .iter()
            .position(|s| *s == MemberState::Succeeded)
        {
            let ordinal = u32::try_from(ordinal).unwrap_or(0);
            return Ok(act(format!(
                "mark volume {} restored",
                self.names.data_volume(ordinal)
            )));
        }
        for (ordinal, state) in seen.states.iter().enumerate() {
            let volume = self.names.data_volume(u32::try_from(ordinal).unwrap_or(0));
            match state {
                MemberState::Foreign => {
                    return Err(ReconcileError::dependency(
                        VOLUME_EXISTS,
                        format!(
                            "volume {volume} exists and was not made for this restore (a volume kept from an earlier cluster named {}?): ferroplane never restores over it. Delete it (kubectl delete pvc -n {} {volume}) if its data is not needed, or restore into a cluster of another name",
                            self.names.name, self.names.namespace
                        ),
                    ));
                }
                MemberState::Failed(why) => {
                    let job = render::job_name(self.names, u32::try_from(ordinal).unwrap_or(0));
                    return Err(ReconcileError::dependency(
                        RESTORE_FAILED,
                        format!(
                            "restore Job {job} failed ({why}); see kubectl logs -n {} job/{job} --all-containers, then delete the Job to try again",
                            self.names.namespace
                        ),
                    ));
                }
                _ => {}
            }
        }
        let Some(secret) = &seen.secret else {
            return Ok(act("sign a URL of the snapshot for the restore Jobs".into()));
        };
        let expires =
            annotation(secret, EXPIRES_ANNOTATION).and_then(|e| e.parse::<Timestamp>().ok());
        let unfinished = seen.states.iter().any(|s| {
            matches!(
                s,
                MemberState::NoVolume | MemberState::NoJob | MemberState::Running
            )
        });
        let by_url = annotation(secret, SNAPSHOT_ANNOTATION)
            .is_none_or(|snapshot| sources::volume_file(snapshot).is_none());
        if by_url && unfinished && expires.is_none_or(|e| e.duration_since(now) < RENEW_BEFORE) {
            return Ok(act("sign the snapshot's URL again before it expires".into()));
        }
        let mut running = Vec::new();
        for (ordinal, state) in seen.states.iter().enumerate() {
            let ordinal = u32::try_from(ordinal).unwrap_or(0);
            match state {
                MemberState::NoVolume => {
                    return Ok(act(format!(
                        "create volume {}",
                        self.names.data_volume(ordinal)
                    )));
                }
                MemberState::NoJob => {
                    return Ok(act(format!(
                        "start restore Job {}",
                        render::job_name(self.names, ordinal)
                    )));
                }
                MemberState::Succeeded => {
                    return Ok(act(format!(
                        "mark volume {} restored",
                        self.names.data_volume(ordinal)
                    )));
                }
                MemberState::Running => running.push(render::job_name(self.names, ordinal)),
                MemberState::Restored | MemberState::Foreign | MemberState::Failed(_) => {}
            }
        }
        Ok(Progress::Wait {
            why: format!(
                "restoring {}: {} of {} members' volumes restored; waiting for Jobs {}",
                status.snapshot.as_deref().unwrap_or("the snapshot"),
                status.restored_members,
                seen.states.len(),
                running.join(", ")
            ),
            status,
        })
    }

    /// [`Self::look`] once the members run: whether Jobs or the Secret are left to remove (one
    /// list and one read per poll, whatever the size); the status is the last one written,
    /// read from the claims only when it has none.
    async fn look_after(&self, cluster: &EtcdCluster) -> Result<Progress, ReconcileError> {
        let ns = &self.names.namespace;
        let uid = cluster.uid().unwrap_or_default();
        let jobs: Api<Job> = Api::namespaced(self.kube.clone(), ns);
        let selector = format!("{}={}", render::RESTORE_OF_LABEL, self.names.name);
        let left_jobs = jobs
            .list_metadata(&ListParams::default().labels(&selector))
            .await
            .map_err(kube_error("listing the restore's Jobs".into()))?
            .items
            .into_iter()
            .filter(|j| jobs::owned_by(&j.metadata, &uid))
            .count();
        let secrets: Api<Secret> = Api::namespaced(self.kube.clone(), ns);
        let secret_name = render::source_secret_name(self.names);
        let left_secret = secrets
            .get_metadata_opt(&secret_name)
            .await
            .map_err(kube_error(format!("reading Secret {secret_name}")))?
            .is_some_and(|s| jobs::owned_by(&s.metadata, &uid));
        let recorded = cluster
            .status
            .as_ref()
            .and_then(|s| s.restore.clone())
            .filter(|r| r.done && r.snapshot.is_some());
        let mut status = match recorded {
            Some(status) => status,
            None => Self::status(&self.read(cluster).await?),
        };
        // The members run: the volumes hold whatever they wrote since.
        status.done = true;
        Ok(if left_jobs > 0 || left_secret {
            Progress::Act {
                what: "remove the restore's Jobs and the snapshot URL's Secret".into(),
                status,
            }
        } else {
            Progress::Done(Some(status))
        })
    }

    /// Takes every step of the restore that is due now; returns the events to record
    /// (reason, message).
    pub async fn act(
        &self,
        cluster: &EtcdCluster,
        release: &Release,
        statefulset_exists: bool,
        now: Timestamp,
    ) -> Result<Vec<(&'static str, String)>, ReconcileError> {
        let Some(restore) = &cluster.spec.restore else {
            return Ok(Vec::new());
        };
        let ns = &self.names.namespace;
        let claims_api: Api<PersistentVolumeClaim> = Api::namespaced(self.kube.clone(), ns);
        let jobs_api: Api<Job> = Api::namespaced(self.kube.clone(), ns);
        let secrets: Api<Secret> = Api::namespaced(self.kube.clone(), ns);
        let seen = self.read(cluster).await?;
        let mut events = Vec::new();
        if statefulset_exists {
            let background = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Background),
                ..DeleteParams::default()
            };
            for job in seen.jobs.iter().flatten() {
                ignore_missing(jobs_api.delete(&job.name_any(), &background).await)
                    .map_err(kube_error(format!("deleting Job {}", job.name_any())))?;
            }
            if let Some(secret) = &seen.secret {
                ignore_missing(
                    secrets
                        .delete(&secret.name_any(), &DeleteParams::default())
                        .await,
                )
                .map_err(kube_error(format!("deleting Secret {}", secret.name_any())))?;
            }
            return Ok(events);
        }
        if Self::status(&seen).done {
            return Ok(events);
        }
        if seen.states.contains(&MemberState::Foreign) {
            // `look` reports it; nothing is written next to another cluster's volume.
            return Ok(events);
        }
        let secret = self
            .ensure_source(cluster, restore, seen.secret.as_ref(), now)
            .await?;
        let snapshot = annotation(&secret, SNAPSHOT_ANNOTATION)
            .unwrap_or_default()
            .to_owned();
        let sha256 = annotation(&secret, SHA256_ANNOTATION).map(str::to_owned);
        let uid = cluster.uid().unwrap_or_default();
        let token = crate::render::initial_cluster_token(cluster, self.names);
        let size = Self::size(cluster);
        for (ordinal, state) in seen.states.iter().enumerate() {
            let ordinal = u32::try_from(ordinal).unwrap_or(0);
            let volume = self.names.data_volume(ordinal);
            match state {
                MemberState::NoVolume => {
                    let mut claim = render::claim(cluster, self.names, ordinal, &snapshot);
                    claim
                        .annotations_mut()
                        .insert(RESTORE_FOR_ANNOTATION.to_owned(), uid.clone());
                    if let Some(recovery) = &self.recovery {
                        claim
                            .annotations_mut()
                            .insert(RECOVERY_OF_ANNOTATION.to_owned(), recovery.since.to_owned());
                    }
                    ignore_conflict(claims_api.create(&PostParams::default(), &claim).await)
                        .map_err(kube_error(format!("creating volume {volume}")))?;
                }
                MemberState::Succeeded => {
                    let patch = serde_json::json!({"metadata": {"annotations": {RESTORE_STATE_ANNOTATION: "done"}}});
                    claims_api
                        .patch(&volume, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                        .map_err(kube_error(format!("marking volume {volume} restored")))?;
                    events.push((
                        MEMBER_RESTORED,
                        format!("volume {volume} holds snapshot {snapshot}"),
                    ));
                    continue;
                }
                _ => {}
            }
            if matches!(state, MemberState::NoVolume | MemberState::NoJob) {
                let job = render::job(&JobInput {
                    cluster,
                    names: self.names,
                    release,
                    ordinal,
                    size,
                    token: &token,
                    sha256: sha256.as_deref(),
                    tools_image: self.tools_image,
                    file: sources::volume_file(&snapshot),
                    revision_bump: self.recovery.and_then(|r| r.revision_bump),
                    root_password_secret: cluster
                        .spec
                        .auth
                        .as_ref()
                        .map(|a| a.root_secret_ref.name.as_str()),
                });
                ignore_conflict(jobs_api.create(&PostParams::default(), &job).await).map_err(
                    kube_error(format!(
                        "creating Job {}",
                        render::job_name(self.names, ordinal)
                    )),
                )?;
            }
        }
        Ok(events)
    }

    /// The Secret with the snapshot's URL: made (the snapshot chosen once, then kept) or signed
    /// again when it is about to expire.
    async fn ensure_source(
        &self,
        cluster: &EtcdCluster,
        restore: &ferroplane_apis::etcd::EtcdRestore,
        live: Option<&Secret>,
        now: Timestamp,
    ) -> Result<Secret, ReconcileError> {
        let expires = live
            .and_then(|s| annotation(s, EXPIRES_ANNOTATION))
            .and_then(|e| e.parse::<Timestamp>().ok());
        let chosen = live.and_then(|s| annotation(s, SNAPSHOT_ANNOTATION));
        if let Some(live) = live
            && (chosen.is_some_and(|c| sources::volume_file(c).is_some())
                || expires.is_some_and(|e| e.duration_since(now) >= RENEW_BEFORE))
        {
            // A file in a volume has no URL to renew.
            return Ok(live.clone());
        }
        let mut object = sources::choose(self.kube, cluster, &restore.from).await?;
        // The snapshot chosen first stays the one restored, whatever backups are taken since.
        if let Some(chosen) = chosen
            && let Some(key) = chosen.strip_prefix(&object.display_prefix())
        {
            object.key = key.to_owned();
            object.sha256 = live
                .and_then(|s| annotation(s, SHA256_ANNOTATION))
                .map(str::to_owned);
        }
        let secret = match &object.place {
            sources::SnapshotPlace::Volume { .. } => render::source_secret(
                cluster,
                self.names,
                &object.display(),
                None,
                object.sha256.as_deref(),
            ),
            sources::SnapshotPlace::Oss(_) => {
                let Some(sources) = self.sources else {
                    return Err(ReconcileError::terminal(
                        RESTORE_UNAVAILABLE,
                        "this controller runs without snapshot stores, so it cannot restore from OSS; run the EtcdCluster controller of `ferroplane run`",
                    ));
                };
                let expires = now
                    .checked_add(URL_VALIDITY)
                    .map_err(|e| ReconcileError::retryable(CLOCK, e.to_string()))?;
                let signed = sources.sign(&object, expires).await?;
                render::source_secret(
                    cluster,
                    self.names,
                    &object.display(),
                    Some((&signed.url, expires)),
                    signed.sha256.as_deref(),
                )
            }
        };
        let api: Api<Secret> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let name = render::source_secret_name(self.names);
        let written = match live {
            None => api.create(&PostParams::default(), &secret).await,
            Some(_) => {
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&secret))
                    .await
            }
        }
        .map_err(kube_error(format!("writing Secret {name}")))?;
        Ok(written)
    }
}

#[cfg(test)]
mod tests;
