//! A snapshot between a member and a store, spooled to disk: the member's stream is written to
//! an unnamed temporary file as it arrives (its SHA-256 trailer checked at the end, see
//! [`crate::membership::snapshot`]), then the store reads it back as a stream of known length.
//! Memory stays a few buffers whatever the database's size; disk holds one snapshot per backup
//! being taken. The file has no name (`O_TMPFILE`, or unlinked at once), so the kernel frees it
//! when the last handle closes, a crash included: nothing is left to clean up.
//!
//! The spool lives in the process's temporary directory (`$TMPDIR`, else `/tmp`): the
//! controller's pod mounts an emptyDir there (deploy/), whose size bounds the largest snapshot.

use std::io::{self, Seek as _, SeekFrom, Write as _};

use crate::membership::snapshot::SnapshotError;

/// A verified snapshot file on disk: the database followed by its SHA-256.
#[derive(Debug)]
pub struct Spooled {
    file: std::fs::File,
    size: u64,
}

fn spool_error(source: io::Error) -> SnapshotError {
    SnapshotError::Spool {
        dir: std::env::temp_dir(),
        source,
    }
}

impl Spooled {
    /// An empty, unnamed file in the temporary directory, to write a snapshot into.
    pub fn file() -> Result<std::fs::File, SnapshotError> {
        tempfile::tempfile().map_err(spool_error)
    }

    /// The snapshot written into `file` (from [`Self::file`]), `size` bytes.
    pub fn new(file: std::fs::File, size: u64) -> Self {
        Self { file, size }
    }

    /// A small snapshot given whole (the sandbox's simulated members, tests).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SnapshotError> {
        let mut file = Self::file()?;
        file.write_all(bytes).map_err(spool_error)?;
        Ok(Self::new(file, bytes.len() as u64))
    }

    /// Bytes of the snapshot, its trailer included.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// A reader from the first byte. Readers share one file offset: read one at a time.
    pub fn reader(&self) -> io::Result<tokio::fs::File> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(tokio::fs::File::from_std(file))
    }

    /// The whole snapshot in memory: for tests and small simulated snapshots only.
    pub async fn read_all(&self) -> io::Result<Vec<u8>> {
        use tokio::io::AsyncReadExt as _;
        let mut bytes = Vec::with_capacity(usize::try_from(self.size).unwrap_or(0));
        self.reader()?.read_to_end(&mut bytes).await?;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_spool_reads_back_from_the_start_every_time() {
        let spooled = Spooled::from_bytes(b"database and trailer").expect("spooled");
        assert_eq!(spooled.size(), 20);
        assert_eq!(
            spooled.read_all().await.expect("read"),
            b"database and trailer"
        );
        assert_eq!(
            spooled.read_all().await.expect("read again"),
            b"database and trailer"
        );
    }
}
