//! Errors of the Application provider, each with a stable reason (from [`crate::reasons`]) for
//! conditions and events.

use ferroplane_runtime::ReconcileError;
use ferroplane_runtime::children::CallError;

use crate::reasons::{INTERNAL_ERROR, KUBERNETES_API_ERROR};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call, with what was being done (runtime's error for calls on children).
    #[error(transparent)]
    Kube(#[from] CallError),
    #[error("cannot serialize a child object: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("the Application has no {0}; it must come from the API server")]
    MissingMetadata(&'static str),
}

impl Error {
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube(CallError::new(action, source))
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Error::Kube(_) => KUBERNETES_API_ERROR,
            Error::Serialize(_) | Error::MissingMetadata(_) => INTERNAL_ERROR,
        }
    }
}

impl From<Error> for ReconcileError {
    fn from(e: Error) -> Self {
        ReconcileError::retryable(e.reason(), e.to_string()).with_source(e)
    }
}
