//! A failed Kubernetes API call on a child, naming what was being done: the error every
//! in-cluster provider reports for it (reason [`KUBERNETES_API_ERROR`], retried with backoff).

use crate::error::ReconcileError;
use crate::reasons::KUBERNETES_API_ERROR;

/// A Kubernetes API call on children failed while `action` (e.g. `deleting Deployment/web`).
#[derive(Debug, thiserror::Error)]
#[error("Kubernetes API call failed while {action}: {source}")]
pub struct CallError {
    action: String,
    #[source]
    source: kube::Error,
}

impl CallError {
    pub fn new(action: impl Into<String>, source: kube::Error) -> Self {
        Self {
            action: action.into(),
            source,
        }
    }
}

impl From<CallError> for ReconcileError {
    fn from(e: CallError) -> Self {
        ReconcileError::retryable(KUBERNETES_API_ERROR, e.to_string()).with_source(e)
    }
}
