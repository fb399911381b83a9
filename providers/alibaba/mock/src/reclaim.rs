//! Spot reclaims on demand: ECS takes a spot instance back when the market price passes its
//! limit or capacity runs out. The instance is first locked (`OperationLocks` lists
//! `Recycling`; ECS gives about five minutes' notice) and then released.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use serde::Deserialize;

use crate::locks::lock;
use crate::state::Shared;

/// A reclaim as `POST /_mock/reclaim` takes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReclaimRequest {
    pub instance_id: String,
    /// Between the lock and the release; default 0.
    #[serde(default)]
    pub notice_ms: u64,
}

/// Locks `instance_id` as `Recycling` now and releases it after `notice`, on the current tokio
/// runtime. Refused for an instance that is not live or not a spot instance.
pub fn reclaim(shared: &Arc<Shared>, instance_id: &str, notice: Duration) -> Result<(), String> {
    lock(&shared.store).mark_recycling(instance_id)?;
    let shared = Arc::clone(shared);
    let id = instance_id.to_owned();
    tokio::spawn(async move {
        tokio::time::sleep(notice).await;
        lock(&shared.store).release_reclaimed(&id, Timestamp::now());
    });
    Ok(())
}
