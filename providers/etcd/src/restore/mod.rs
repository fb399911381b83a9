//! `spec.restore`: a new EtcdCluster bootstrapped from a snapshot. Before the StatefulSet
//! exists, the controller makes each member's data claim and runs a Job per member that
//! restores the snapshot into it ([`render`]); only when every claim is restored does it create
//! the StatefulSet, whose pods then start on the restored data (etcd ignores its `initial-*`
//! settings when the data directory is not empty). The Jobs and the Secret with the snapshot's
//! URL are removed once the StatefulSet exists.
//!
//! A snapshot in a claim that one node at a time can mount (ReadWriteOnce) would make the
//! member Jobs mounting it run one after another, each waiting for the claim to detach from the
//! last one's node. Such a snapshot is served instead ([`render::Delivery::Served`]): one pod
//! mounts the claim and serves the file over HTTPS with a CA and a token made for this restore;
//! the member Jobs start once it is ready and fetch it all at once, wherever they run. The
//! server and its Service go with the Jobs.
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
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Secret, Service};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::{Client, ResourceExt};

use self::render::{
    DELIVERY_ANNOTATION, Delivery, EXPIRES_ANNOTATION, JobInput, RESTORE_ANNOTATION,
    RESTORE_STATE_ANNOTATION, SHA256_ANNOTATION, SNAPSHOT_ANNOTATION, ServedSource, SourceContent,
};
pub use self::setup::RestoreSetup;
pub use self::sources::{RestoreSources, SignedSnapshot, SnapshotObject};
use crate::jobs::{self, ignore_conflict, ignore_missing, kube_error};
use crate::names::ClusterNames;
use crate::reasons::{
    CHILD_NOT_OURS, CLOCK, MEMBER_RESTORED, RESTORE_FAILED, RESTORE_UNAVAILABLE,
    SNAPSHOT_SERVER_STARTED, VOLUME_EXISTS,
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
/// How long a snapshot server's CA is valid: a restore takes hours at most; a year leaves room
/// for one that waits (a failed Job nobody deleted).
const SERVER_CA_DAYS: i64 = 365;

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
    /// The snapshot server's Job (a served snapshot).
    server: Option<Job>,
    states: Vec<MemberState>,
}

/// Where the snapshot server of a served snapshot stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ServerState {
    /// No server is needed (the snapshot is in a bucket, or in a claim the Jobs mount).
    NotNeeded,
    Missing,
    Starting,
    Ready,
    /// Its Job ended (failed, or the server stopped): it serves nothing.
    Ended(String),
}

/// How the member Jobs of a restore whose source Secret is `secret` get the snapshot.
fn delivery(secret: &Secret) -> Delivery<'_> {
    let snapshot = annotation(secret, SNAPSHOT_ANNOTATION).unwrap_or_default();
    match sources::volume_file(snapshot) {
        None => Delivery::SignedUrl,
        Some(_) if annotation(secret, DELIVERY_ANNOTATION) == Some(Delivery::annotation(true)) => {
            Delivery::Served
        }
        Some((claim, path)) => Delivery::Mounted { claim, path },
    }
}

fn server_state(secret: Option<&Secret>, server: Option<&Job>) -> ServerState {
    if secret.is_none_or(|s| delivery(s) != Delivery::Served) {
        return ServerState::NotNeeded;
    }
    let Some(job) = server else {
        return ServerState::Missing;
    };
    match jobs::outcome(job) {
        Some(Err(why)) => ServerState::Ended(why),
        Some(Ok(())) => ServerState::Ended("it completed, so it serves nothing".to_owned()),
        None if job.status.as_ref().and_then(|s| s.ready).unwrap_or(0) > 0 => ServerState::Ready,
        None => ServerState::Starting,
    }
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
        let server_name = render::source_server_name(self.names);
        let server = jobs_api
            .get_opt(&server_name)
            .await
            .map_err(kube_error(format!("reading Job {server_name}")))?;
        if let Some(server) = &server {
            self.refuse_foreign("Job", &server_name, &server.metadata, &uid)?;
        }
        Ok(Seen {
            claims,
            jobs,
            secret,
            server,
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
        let server = server_state(Some(secret), seen.server.as_ref());
        let server_name = render::source_server_name(self.names);
        if unfinished {
            match &server {
                ServerState::Missing => {
                    return Ok(act(format!("start the snapshot server Job {server_name}")));
                }
                ServerState::Ended(why) => {
                    return Err(ReconcileError::dependency(
                        RESTORE_FAILED,
                        format!(
                            "snapshot server Job {server_name} ended ({why}) while volumes wait for the snapshot; see kubectl logs -n {} job/{server_name}, then delete the Job to start it again",
                            self.names.namespace
                        ),
                    ));
                }
                ServerState::NotNeeded | ServerState::Starting | ServerState::Ready => {}
            }
        }
        let mut running = Vec::new();
        let mut held = false;
        for (ordinal, state) in seen.states.iter().enumerate() {
            let ordinal = u32::try_from(ordinal).unwrap_or(0);
            match state {
                MemberState::NoVolume => {
                    return Ok(act(format!(
                        "create volume {}",
                        self.names.data_volume(ordinal)
                    )));
                }
                MemberState::NoJob if server == ServerState::Starting => held = true,
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
        let waiting_for = match (held, running.is_empty()) {
            (true, true) => format!("snapshot server Job {server_name} to be ready"),
            (true, false) => format!(
                "Jobs {} and snapshot server Job {server_name} to be ready",
                running.join(", ")
            ),
            (false, _) => format!("Jobs {}", running.join(", ")),
        };
        Ok(Progress::Wait {
            why: format!(
                "restoring {}: {} of {} members' volumes restored; waiting for {waiting_for}",
                status.snapshot.as_deref().unwrap_or("the snapshot"),
                status.restored_members,
                seen.states.len(),
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
        let services: Api<Service> = Api::namespaced(self.kube.clone(), ns);
        let server_name = render::source_server_name(self.names);
        let left_service = services
            .get_metadata_opt(&server_name)
            .await
            .map_err(kube_error(format!("reading Service {server_name}")))?
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
        Ok(if left_jobs > 0 || left_secret || left_service {
            Progress::Act {
                what: "remove the restore's Jobs, its snapshot server and the snapshot's Secret"
                    .into(),
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
            for job in seen.jobs.iter().flatten().chain(&seen.server) {
                ignore_missing(jobs_api.delete(&job.name_any(), &background).await)
                    .map_err(kube_error(format!("deleting Job {}", job.name_any())))?;
            }
            let services: Api<Service> = Api::namespaced(self.kube.clone(), ns);
            let server_name = render::source_server_name(self.names);
            let uid = cluster.uid().unwrap_or_default();
            if let Some(service) = services
                .get_metadata_opt(&server_name)
                .await
                .map_err(kube_error(format!("reading Service {server_name}")))?
                && jobs::owned_by(&service.metadata, &uid)
            {
                ignore_missing(
                    services
                        .delete(&server_name, &DeleteParams::default())
                        .await,
                )
                .map_err(kube_error(format!("deleting Service {server_name}")))?;
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
        let server = server_state(Some(&secret), seen.server.as_ref());
        if server == ServerState::Missing
            && let Some((claim, path)) = sources::volume_file(&snapshot)
        {
            let services: Api<Service> = Api::namespaced(self.kube.clone(), ns);
            let name = render::source_server_name(self.names);
            ignore_conflict(
                services
                    .create(
                        &PostParams::default(),
                        &render::source_service(cluster, self.names),
                    )
                    .await,
            )
            .map_err(kube_error(format!("creating Service {name}")))?;
            // One of that name already there: ours from an earlier pass, or not ours (its
            // selector would not find the server).
            if let Some(service) = services
                .get_metadata_opt(&name)
                .await
                .map_err(kube_error(format!("reading Service {name}")))?
            {
                self.refuse_foreign("Service", &name, &service.metadata, &uid)?;
            }
            let job = render::source_server_job(cluster, self.names, self.tools_image, claim, path);
            ignore_conflict(jobs_api.create(&PostParams::default(), &job).await)
                .map_err(kube_error(format!("creating Job {name}")))?;
            events.push((
                SNAPSHOT_SERVER_STARTED,
                format!(
                    "volume {claim} can be mounted on one node at a time: Job {name} serves {snapshot} to the members' restore Jobs, which run at once"
                ),
            ));
        }
        // Member Jobs fetch a served snapshot only from a server that answers.
        let may_start_jobs = matches!(server, ServerState::NotNeeded | ServerState::Ready);
        let delivery = delivery(&secret);
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
            if matches!(state, MemberState::NoVolume | MemberState::NoJob) && may_start_jobs {
                let job = render::job(&JobInput {
                    cluster,
                    names: self.names,
                    release,
                    ordinal,
                    size,
                    token: &token,
                    sha256: sha256.as_deref(),
                    tools_image: self.tools_image,
                    delivery,
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

    /// Whether the member Jobs fetch the snapshot in `claim` from a snapshot server: unless
    /// pods on several nodes may mount it at once.
    async fn needs_server(&self, claim: &str) -> Result<bool, ReconcileError> {
        let claims: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        let found = claims
            .get_opt(claim)
            .await
            .map_err(kube_error(format!("reading volume {claim}")))?
            .ok_or_else(|| {
                ReconcileError::dependency(
                    RESTORE_UNAVAILABLE,
                    format!(
                        "the snapshot's volume {claim} does not exist in namespace {}",
                        self.names.namespace
                    ),
                )
            })?;
        let modes = found.spec.and_then(|s| s.access_modes).unwrap_or_default();
        Ok(render::needs_server(&modes))
    }

    /// New credentials of a snapshot server: a CA for it alone, the server's certificate for
    /// its DNS name, and a random token.
    fn served_source(&self, now: Timestamp) -> Result<ServedSource, ReconcileError> {
        use rand::Rng as _;
        let failed = |e: crate::tls::certs::CertError| {
            ReconcileError::retryable(
                crate::reasons::INTERNAL_ERROR,
                format!("cannot make the snapshot server's certificate: {e}"),
            )
        };
        let ca_name = format!("{} restore source", self.names.name);
        let ca = crate::tls::certs::new_ca_for(&ca_name, now, SERVER_CA_DAYS).map_err(failed)?;
        let host = render::source_server_host(self.names);
        let leaf = crate::tls::certs::issue(
            &ca_name,
            &ca.key_pem,
            crate::tls::certs::Leaf::Server,
            &[host.clone(), format!("{host}.cluster.local")],
            now,
        )
        .map_err(failed)?;
        let token: [u8; 32] = rand::rng().random();
        Ok(ServedSource {
            ca_pem: ca.cert_pem,
            cert_pem: leaf.cert_pem,
            key_pem: leaf.key_pem,
            token: hex::encode(token),
        })
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
            sources::SnapshotPlace::Volume { claim } => {
                let served = if self.needs_server(claim).await? {
                    Some(self.served_source(now)?)
                } else {
                    None
                };
                let content = match &served {
                    Some(served) => SourceContent::Served(served),
                    None => SourceContent::Mounted,
                };
                render::source_secret(
                    cluster,
                    self.names,
                    &object.display(),
                    content,
                    object.sha256.as_deref(),
                )
            }
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
                    SourceContent::SignedUrl {
                        url: &signed.url,
                        expires,
                    },
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
