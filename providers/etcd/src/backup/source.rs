//! Taking a snapshot of a cluster: [`SnapshotSource`], implemented by the production
//! membership client (etcd's JSON gateway, `/v3/maintenance/snapshot`, checksum-verified) and
//! by the sandbox's simulation. The snapshot is spooled to disk as it streams ([`Spooled`]),
//! never held whole in memory.

use std::future::Future;

use super::spool::Spooled;
use crate::membership::GatewayClient;
use crate::membership::snapshot::SnapshotError;

/// A snapshot on disk, verified.
#[derive(Debug)]
pub struct Taken {
    /// The snapshot file: the database followed by its SHA-256.
    pub snapshot: Spooled,
    /// SHA-256 of the database, hex.
    pub sha256: String,
    /// The store revision the member reported just before.
    pub revision: Option<i64>,
}

/// Something that can stream a snapshot of its cluster.
pub trait SnapshotSource: Send + Sync {
    fn snapshot(&self) -> impl Future<Output = Result<Taken, SnapshotError>> + Send;
}

impl SnapshotSource for GatewayClient {
    async fn snapshot(&self) -> Result<Taken, SnapshotError> {
        let file = Spooled::file()?;
        let mut out = tokio::fs::File::from_std(file.try_clone()?);
        let (info, revision) = self.save_snapshot(&mut out).await?;
        drop(out);
        Ok(Taken {
            snapshot: Spooled::new(file, info.size),
            sha256: info.sha256,
            revision: i64::try_from(revision).ok().filter(|r| *r > 0),
        })
    }
}
