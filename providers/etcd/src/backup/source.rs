//! Taking a snapshot of a cluster: [`SnapshotSource`], implemented by the production
//! membership client (etcd's JSON gateway, `/v3/maintenance/snapshot`, checksum-verified) and
//! by the sandbox's simulation.

use std::future::Future;

use crate::membership::GatewayClient;
use crate::membership::snapshot::SnapshotError;

/// A snapshot in memory, verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The snapshot file: the database followed by its SHA-256.
    pub bytes: Vec<u8>,
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
        let mut bytes = Vec::new();
        let (info, revision) = self.save_snapshot(&mut bytes).await?;
        Ok(Taken {
            bytes,
            sha256: info.sha256,
            revision: i64::try_from(revision).ok().filter(|r| *r > 0),
        })
    }
}
