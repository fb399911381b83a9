//! Counting cloud calls in the `external_calls` metric, the same way for every kind.

use alibaba_sdk::Error;
use ferroplane_runtime::ExternalCalls;

/// Counts one call of `action`: `success`, or the error's API code (its kind when it has none,
/// e.g. a timeout).
pub(crate) fn record_call<T>(calls: &ExternalCalls, action: &str, result: &Result<T, Error>) {
    calls.record(
        action,
        match result {
            Ok(_) => "success",
            Err(e) => e.code().unwrap_or(e.reason()),
        },
    );
}
