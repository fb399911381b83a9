//! Errors of the Application provider, each with a stable reason for conditions and events.

use ferroplane_runtime::ReconcileError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API call failed while {action}: {source}")]
    Kube {
        action: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot serialize a child object: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("the Application has no {0}; it must come from the API server")]
    MissingMetadata(&'static str),
}

impl Error {
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            action: action.into(),
            source,
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Error::Kube { .. } => "KubernetesApiError",
            Error::Serialize(_) | Error::MissingMetadata(_) => "InternalError",
        }
    }
}

impl From<Error> for ReconcileError {
    fn from(e: Error) -> Self {
        ReconcileError::retryable(e.reason(), e.to_string()).with_source(e)
    }
}
