//! How the suite starts the provider's controllers (the provider's test passes its `run`).

use std::sync::Arc;

use ferroplane_runtime::{RunError, Runtime};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// Starts the provider's controllers against the mock at the given endpoint until the token
/// is cancelled (the test passes its provider's `run`).
pub type StartControllers = Arc<
    dyn Fn(Runtime, String, CancellationToken) -> BoxFuture<'static, Result<(), RunError>>
        + Send
        + Sync,
>;
