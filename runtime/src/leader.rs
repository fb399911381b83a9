//! Leader election on a `coordination.k8s.io` Lease (with `kube-lease-manager`), so that of
//! several replicas exactly one reconciles at a time: controllers start when the lease is
//! acquired and are cancelled (gracefully, letting running reconciles finish) when it is lost or
//! on shutdown; then the replica contends again.

use std::future::Future;
use std::time::Duration;

use kube::Client;
use kube_lease_manager::LeaseManagerBuilder;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::error::RunError;

/// Where the Lease lives and how long it is valid.
#[derive(Clone, Debug)]
pub struct LeaderConfig {
    /// Name of the Lease, e.g. `ferroplane-leader`.
    pub lease_name: String,
    /// Namespace of the Lease (the provider's own namespace).
    pub namespace: String,
    /// Unique identity of this replica, usually the pod name.
    pub identity: String,
    /// How long the lease is valid after the last renewal.
    pub lease_duration: Duration,
    /// How long before expiry the holder renews.
    pub renew_grace: Duration,
}

impl LeaderConfig {
    /// A 15 s lease renewed 5 s before expiry.
    pub fn new(
        lease_name: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        Self {
            lease_name: lease_name.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_grace: Duration::from_secs(5),
        }
    }
}

/// Runs `work` only while this replica holds the Lease. `work` gets a token that is cancelled
/// when the lease is lost or `shutdown` completes; it must then stop (e.g. pass
/// `token.cancelled_owned()` to [`ManagedController::run`](crate::ManagedController::run)).
/// Returns after `shutdown`, once `work` has stopped and the lease is released.
pub async fn run_while_leader<F, Fut>(
    client: Client,
    config: LeaderConfig,
    shutdown: impl Future<Output = ()>,
    mut work: F,
) -> Result<(), RunError>
where
    F: FnMut(CancellationToken) -> Fut,
    Fut: Future<Output = ()>,
{
    let lease_err = |source| RunError::LeaderElection {
        lease: config.lease_name.clone(),
        source,
    };
    let manager = LeaseManagerBuilder::new(client, config.lease_name.clone())
        .with_namespace(config.namespace.clone())
        .with_identity(config.identity.clone())
        .with_duration(config.lease_duration.as_secs().max(1))
        .with_grace(config.renew_grace.as_secs().max(1))
        .build()
        .await
        .map_err(lease_err)?;
    let (mut leader, handle) = manager.watch().await;
    tokio::pin!(shutdown);

    let stop_reason = 'contend: loop {
        // Wait for the lease.
        while !*leader.borrow_and_update() {
            tokio::select! {
                _ = &mut shutdown => break 'contend None,
                changed = leader.changed() => if changed.is_err() {
                    break 'contend Some("lease manager stopped");
                },
            }
        }
        info!(lease = %config.lease_name, identity = %config.identity, "acquired leadership");
        let token = CancellationToken::new();
        let running = work(token.clone());
        tokio::pin!(running);
        loop {
            tokio::select! {
                _ = &mut running => break 'contend None,
                _ = &mut shutdown => {
                    token.cancel();
                    running.await;
                    break 'contend None;
                }
                changed = leader.changed() => {
                    if changed.is_err() || !*leader.borrow_and_update() {
                        warn!(lease = %config.lease_name, "lost leadership; stopping controllers");
                        token.cancel();
                        running.await;
                        if changed.is_err() {
                            break 'contend Some("lease manager stopped");
                        }
                        continue 'contend;
                    }
                }
            }
        }
    };
    // Closing the channel makes the manager release the lease and exit.
    drop(leader);
    let outcome = handle.await;
    match outcome {
        Ok(Ok(_)) => {
            if let Some(why) = stop_reason {
                warn!(lease = %config.lease_name, "{why}");
            }
            Ok(())
        }
        Ok(Err(source)) => Err(lease_err(source)),
        Err(join) => Err(RunError::LeaderTask {
            lease: config.lease_name.clone(),
            message: join.to_string(),
        }),
    }
}
