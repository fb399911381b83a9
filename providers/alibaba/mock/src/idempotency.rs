//! ClientToken idempotency shared by every create that takes a token: the fingerprint of the
//! parameters a call was made with, and the error for a token reused with other parameters.

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::error::ErrorResponse;

/// Hash of the parameters a ClientToken call was made with.
pub fn fingerprint(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// `IdempotentParameterMismatch` (400): a ClientToken reused with other parameters.
pub fn idempotent_mismatch() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IdempotentParameterMismatch",
        "The ClientToken was already used with different parameters; use a new ClientToken for a different request.",
    )
}
