//! Why a faults setting or a scripted answer was refused: shared by the run-time faults
//! (`config`) and the scripted answers (`injection`).

/// Why a faults setting was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FaultsError {
    /// A rate outside 0–1.
    #[error("{name} must be a fraction between 0 and 1, got {value}")]
    Rate { name: &'static str, value: f64 },
    /// An injected error code the mock does not know.
    #[error("cannot inject {code:?}: known codes are {}", crate::ErrorResponse::INJECTABLE_CODES.join(", "))]
    UnknownCode { code: String },
    /// A scripted answer with both or neither of `code` and `fault`.
    #[error(
        "a scripted answer names exactly one of `code` (an ECS error) or `fault` (droppedResponse, truncatedBody, nonJsonBody)"
    )]
    CodeOrFault,
}
