//! The steps of a `pvc` destination ([`crate::backup::volume`]): what the backup's Jobs say
//! (`observe_volume`) and starting, recording and removing them (`advance_volume`).

use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::{Observation, Readiness, ReconcileError};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, PostParams, PropagationPolicy};

use super::{BackupClient, Destination, recorded};
use crate::backup::plan::{self, Stored};
use crate::backup::source::SnapshotSource;
use crate::backup::store::SnapshotStore;
use crate::backup::volume::{self, BACKUP_UID_LABEL, JobReport};
use crate::jobs::{self, ignore_conflict, ignore_missing, kube_error};
use crate::membership::MembershipFactory;
use crate::reasons::{
    SNAPSHOT_FAILED, SNAPSHOT_REPORT_MISSING, SNAPSHOT_REPORT_UNREADABLE, SNAPSHOT_TAKEN,
};
use crate::render;
use crate::tls;

/// What the backup's Jobs say.
struct VolumeView {
    /// The folder: the newest finished Job's report, else the status's record.
    stored: Vec<Stored>,
    /// Jobs that succeeded, with their reports, to record and remove.
    finished: Vec<(String, JobReport)>,
    /// Jobs that failed: name, why, whether of the occurrence due now.
    failed: Vec<(String, String, bool)>,
    running: Vec<String>,
    /// The occurrence due now, if a snapshot is due, and why.
    due: Option<(String, String)>,
}

fn occurrence_of(job: &Job) -> String {
    job.annotations()
        .get("etcd.ferroplane.io/occurrence")
        .cloned()
        .unwrap_or_default()
}

/// Which occurrence a snapshot taken now belongs to: the generation without a schedule, the
/// scheduled time after the newest snapshot with one.
fn occurrence(mr: &EtcdBackup, cron: Option<&croner::Cron>, stored: &[Stored]) -> String {
    match cron {
        None => format!("g{}", mr.metadata.generation.unwrap_or(0)),
        Some(cron) => stored
            .iter()
            .max_by(|a, b| a.key.cmp(&b.key))
            .and_then(|s| s.meta.as_ref())
            .and_then(|m| plan::next_after(cron, m.taken_at))
            .map_or_else(|| "first".to_owned(), |t| t.to_string()),
    }
}

impl<F, T> BackupClient<F, T>
where
    F: MembershipFactory,
    F::Client: SnapshotSource,
    T: SnapshotStore,
{
    fn jobs_api(&self, mr: &EtcdBackup) -> Api<Job> {
        Api::namespaced(self.kube.clone(), &mr.namespace().unwrap_or_default())
    }

    /// This backup's Jobs.
    async fn jobs(&self, mr: &EtcdBackup) -> Result<Vec<Job>, ReconcileError> {
        let uid = mr.uid().unwrap_or_default();
        let listed = self
            .jobs_api(mr)
            .list(&ListParams::default().labels(&format!("{BACKUP_UID_LABEL}={uid}")))
            .await
            .map_err(kube_error("listing the backup's Jobs".into()))?;
        // A label anyone in the namespace can write: only Jobs this backup owns count.
        Ok(listed
            .items
            .into_iter()
            .filter(|j| jobs::owned_by(&j.metadata, &uid))
            .collect())
    }

    /// Deletes every Job of the backup (its pods with it).
    pub(super) async fn volume_jobs(&self, mr: &EtcdBackup) -> Result<(), ReconcileError> {
        for job in self.jobs(mr).await? {
            self.delete_job(mr, &job.name_any()).await?;
        }
        Ok(())
    }

    async fn delete_job(&self, mr: &EtcdBackup, name: &str) -> Result<(), ReconcileError> {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        ignore_missing(self.jobs_api(mr).delete(name, &params).await)
            .map_err(kube_error(format!("deleting Job {name}")))
    }

    /// The report a succeeded Job's pod left as its termination message.
    async fn report_of(&self, mr: &EtcdBackup, job: &Job) -> Result<JobReport, ReconcileError> {
        let job_uid = job.uid().unwrap_or_default();
        let job = &job.name_any();
        let pods: Api<Pod> =
            Api::namespaced(self.kube.clone(), &mr.namespace().unwrap_or_default());
        let list = pods
            .list(&ListParams::default().labels(&format!("batch.kubernetes.io/job-name={job}")))
            .await
            .map_err(kube_error(format!("listing the pods of Job {job}")))?;
        let message = list
            .items
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded"))
            .filter(|p| jobs::owned_by(&p.metadata, &job_uid))
            .flat_map(|p| {
                p.status
                    .iter()
                    .flat_map(|s| s.container_statuses.iter().flatten())
            })
            .find_map(|c| c.state.as_ref()?.terminated.as_ref()?.message.clone())
            .ok_or_else(|| {
                ReconcileError::retryable(
                    SNAPSHOT_REPORT_MISSING,
                    format!("Job {job} succeeded but its pod's report is not there (yet)"),
                )
            })?;
        serde_json::from_str(&message).map_err(|e| {
            ReconcileError::retryable(
                SNAPSHOT_REPORT_UNREADABLE,
                format!("the report of Job {job} is not understood: {e}"),
            )
        })
    }

    async fn look_volume(&self, mr: &EtcdBackup) -> Result<VolumeView, ReconcileError> {
        let mut stored = recorded(mr);
        let mut view = VolumeView {
            stored: Vec::new(),
            finished: Vec::new(),
            failed: Vec::new(),
            running: Vec::new(),
            due: None,
        };
        let mut failed = Vec::new();
        let mut finished_jobs: Vec<(String, JobReport)> = Vec::new();
        for job in self.jobs(mr).await? {
            let name = job.name_any();
            match jobs::outcome(&job) {
                Some(Ok(())) => finished_jobs.push((name.clone(), self.report_of(mr, &job).await?)),
                Some(Err(why)) => failed.push((name, why, occurrence_of(&job))),
                None => view.running.push(name),
            }
        }
        // The newest report describes the folder as it is now.
        finished_jobs.sort_by(|a, b| a.1.taken.key.cmp(&b.1.taken.key));
        if let Some((_, newest)) = finished_jobs.last() {
            stored = newest
                .kept
                .iter()
                .map(volume::ReportedSnapshot::stored)
                .collect();
        }
        view.finished = finished_jobs;
        let current = occurrence(mr, self.cron.as_ref(), &stored);
        view.failed = failed
            .into_iter()
            .map(|(name, why, of)| (name, why, of == current))
            .collect();
        let due = if stored.is_empty() {
            Some("no snapshot yet".to_owned())
        } else {
            plan::due(mr, self.cron.as_ref(), &stored, Timestamp::now())
        };
        view.due = due.map(|why| (current, why));
        view.stored = stored;
        Ok(view)
    }

    pub(super) async fn observe_volume(
        &self,
        mr: &EtcdBackup,
    ) -> Result<Observation, ReconcileError> {
        let view = self.look_volume(mr).await?;
        if let Some((job, why, _)) = view.failed.iter().find(|(_, _, current)| *current) {
            return Err(ReconcileError::dependency(
                SNAPSHOT_FAILED,
                format!(
                    "snapshot Job {job} failed ({why}); see kubectl logs -n {} job/{job}, then delete the Job to try again",
                    mr.namespace().unwrap_or_default()
                ),
            ));
        }
        let nothing_yet =
            view.stored.is_empty() && view.finished.is_empty() && view.running.is_empty();
        if nothing_yet {
            return Ok(Observation::missing());
        }
        let mut observation = Observation::found(plan::external_name(mr, &self.folder))
            .with_status(plan::status(self.cron.as_ref(), &view.stored))?;
        if view.stored.is_empty() {
            // Ready once a snapshot is recorded, as for a bucket.
            observation = observation.with_readiness(Readiness::Creating);
        }
        if let Some((job, _)) = view.finished.first() {
            observation = observation.with_diff(format!("record the snapshot of Job {job}"));
        } else if let Some((job, _, _)) = view.failed.first() {
            observation =
                observation.with_diff(format!("remove Job {job} of an earlier occurrence"));
        } else if !view.running.is_empty() {
            observation = observation.in_transition().with_note(format!(
                "taking a snapshot: Job {} running",
                view.running.join(", ")
            ));
        } else if let Some((_, why)) = &view.due {
            observation = observation.with_diff(why.clone());
        }
        Ok(observation)
    }

    /// Records and removes finished Jobs, then starts the Job of the occurrence due now.
    pub(super) async fn advance_volume(&self, mr: &EtcdBackup) -> Result<(), ReconcileError> {
        let Destination::Volume { claim } = &self.store else {
            return Ok(());
        };
        let view = self.look_volume(mr).await?;
        for (job, report) in &view.finished {
            let taken = &report.taken;
            self.events
                .normal(
                    mr,
                    SNAPSHOT_TAKEN,
                    super::taken_message(
                        &format!("{} in volume {claim}", taken.key),
                        taken.size,
                        &taken.sha256,
                        taken.revision,
                    ),
                )
                .await;
            for key in &report.pruned {
                self.pruned_event(mr, key).await;
            }
            self.delete_job(mr, job).await?;
        }
        for (job, _, current) in &view.failed {
            if !current {
                self.delete_job(mr, job).await?;
            }
        }
        let Some((occurrence, _)) = &view.due else {
            return Ok(());
        };
        let name = volume::job_name(mr, occurrence);
        if view.running.contains(&name) || view.failed.iter().any(|(j, _, _)| *j == name) {
            return Ok(());
        }
        let cluster = self.cluster(mr).await?;
        let names = render::cluster_names(&cluster)
            .map_err(|e| ReconcileError::retryable(e.reason(), e.to_string()))?;
        let client_secret = tls::secret_names(&cluster, &names).map(|s| s.client);
        let auth_secrets: Vec<String> = cluster
            .spec
            .auth
            .as_ref()
            .map(|auth| {
                vec![
                    crate::auth::state_secret(&names),
                    auth.root_secret_ref.name.clone(),
                ]
            })
            .unwrap_or_default();
        let job = volume::job(&volume::JobInput {
            backup: mr,
            cluster: &cluster,
            names: &names,
            claim,
            folder: &self.folder,
            occurrence,
            keep: plan::keep(mr),
            client_tls_secret: client_secret.as_deref(),
            auth_secrets: &auth_secrets,
            tools_image: &self.tools_image,
        });
        ignore_conflict(self.jobs_api(mr).create(&PostParams::default(), &job).await)
            .map_err(kube_error(format!("creating Job {name}")))
    }
}
