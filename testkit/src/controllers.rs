//! Controllers running in the test process: spawned with a shutdown signal, stopped and joined
//! at the end of the test. A provider starts as the binary starts it,
//! `run(&Runtime, Options, shutdown) -> Result<(), RunError>`.

use std::future::Future;
use std::time::Duration;

use ferroplane_runtime::{RunError, Runtime, RuntimeConfig};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long controllers may take to stop once told to.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A runtime for tests: no client-side rate limit, otherwise the defaults.
pub fn test_runtime(client: kube::Client) -> Runtime {
    Runtime::new(
        client,
        RuntimeConfig {
            rate_limit: 0.0,
            ..RuntimeConfig::default()
        },
    )
}

/// Controllers running on a task of their own until [`Controllers::stop`].
#[must_use = "controllers run until stopped; call `stop` at the end of the test"]
pub struct Controllers {
    shutdown: CancellationToken,
    task: JoinHandle<Result<(), RunError>>,
}

impl Controllers {
    /// Spawns `run(runtime, shutdown)`; `shutdown` is cancelled by [`Controllers::stop`].
    /// For a provider: `|rt, stop| async move { provider::run(&rt, options,
    /// stop.cancelled_owned()).await }`.
    pub fn spawn<F, Fut>(runtime: Runtime, run: F) -> Self
    where
        F: FnOnce(Runtime, CancellationToken) -> Fut,
        Fut: Future<Output = Result<(), RunError>> + Send + 'static,
    {
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(run(runtime, shutdown.clone()));
        Self { shutdown, task }
    }

    /// Kills the controllers as a crash would: their task is dropped wherever it is, in the
    /// middle of a cloud call or an API write, with no shutdown step; returns once it is gone.
    pub async fn kill(self) {
        self.shutdown.cancel();
        self.task.abort();
        let joined = self.task.await;
        if let Err(error) = joined
            && error.is_panic()
        {
            std::panic::resume_unwind(error.into_panic());
        }
    }

    /// Signals shutdown and waits for the controllers to return; panics when they do not stop
    /// in time, panicked, or returned an error.
    pub async fn stop(self) {
        self.shutdown.cancel();
        let joined = tokio::time::timeout(STOP_TIMEOUT, self.task)
            .await
            .unwrap_or_else(|_| panic!("the controllers stop within {STOP_TIMEOUT:?}"));
        match joined {
            Ok(result) => result.expect("the controllers run"),
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(error) => panic!("the controllers task failed: {error}"),
        }
    }
}
