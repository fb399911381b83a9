//! What the restore and volume-backup steps share about the Jobs and other objects they make:
//! how a Job ended, whether an object is owned by a given UID, and Kubernetes errors.

use ferroplane_runtime::ReconcileError;
use k8s_openapi::api::batch::v1::Job;
use kube::api::ObjectMeta;

/// How `job` ended, from its `Complete` or `Failed` condition (with why it failed); `None`
/// while it runs.
pub fn outcome(job: &Job) -> Option<Result<(), String>> {
    for condition in job.status.as_ref()?.conditions.iter().flatten() {
        if condition.status != "True" {
            continue;
        }
        match condition.type_.as_str() {
            "Complete" => return Some(Ok(())),
            "Failed" => {
                return Some(Err(condition
                    .message
                    .clone()
                    .or_else(|| condition.reason.clone())
                    .unwrap_or_else(|| "failed".to_owned())));
            }
            _ => {}
        }
    }
    None
}

/// Whether `meta` has an owner reference to `uid`: a name or a label anyone in the namespace
/// can give; an owner reference to this object's UID only its controller does.
pub fn owned_by(meta: &ObjectMeta, uid: &str) -> bool {
    meta.owner_references.iter().flatten().any(|o| o.uid == uid)
}

/// A failed Kubernetes call as a retryable reconcile error saying what was being done.
pub fn kube_error(what: String) -> impl FnOnce(kube::Error) -> ReconcileError {
    move |e| ReconcileError::retryable(crate::reasons::KUBERNETES_API_ERROR, format!("{what}: {e}"))
}

/// `r`, a 404 (already gone) being no error.
pub fn ignore_missing<T>(r: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match r {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// `r`, a 409 (made already, by an earlier reconcile) being no error.
pub fn ignore_conflict<T>(r: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match r {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn job_with(type_: &str, status: &str, message: Option<&str>) -> Job {
        Job {
            status: Some(JobStatus {
                conditions: Some(vec![JobCondition {
                    type_: type_.into(),
                    status: status.into(),
                    message: message.map(str::to_owned),
                    ..JobCondition::default()
                }]),
                ..JobStatus::default()
            }),
            ..Job::default()
        }
    }

    #[test]
    fn jobs_finish_on_their_true_conditions_only() {
        assert_eq!(outcome(&Job::default()), None);
        assert_eq!(outcome(&job_with("Complete", "True", None)), Some(Ok(())));
        assert_eq!(outcome(&job_with("Complete", "False", None)), None);
        assert_eq!(
            outcome(&job_with("Failed", "True", Some("BackoffLimitExceeded"))),
            Some(Err("BackoffLimitExceeded".into()))
        );
    }

    #[test]
    fn ownership_is_by_uid() {
        let meta = ObjectMeta {
            owner_references: Some(vec![OwnerReference {
                uid: "u1".into(),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        };
        assert!(owned_by(&meta, "u1"));
        assert!(!owned_by(&meta, "u2"));
        assert!(!owned_by(&ObjectMeta::default(), "u1"));
    }
}
