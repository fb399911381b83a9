//! How usable the provider says the external resource is; the framework turns it into the
//! `Ready` condition.

/// Is the external resource usable? Becomes the `Ready` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Usable (`Ready=True`, reason `Available`).
    Available,
    /// Exists but not usable, with why (`Ready=False`, reason `Unavailable`).
    Unavailable(String),
    /// Not usable for a reason of the provider's own (`Ready=False`, reason `reason`, a named
    /// constant of the provider's `reasons`), with why.
    UnavailableBecause { reason: &'static str, why: String },
    /// Still being created (`Ready=False`, reason `Creating`).
    Creating,
}
