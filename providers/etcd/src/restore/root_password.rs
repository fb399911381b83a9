//! Root's password in a snapshot, set to the one the restored cluster's `spec.auth` Secret holds
//! now: a snapshot taken with authentication carries the users of its time, and the password
//! root had then may be long gone (rotated since, or another cluster's).
//!
//! etcd keeps its users in its bbolt database, bucket `authUsers`, under the user's name; the
//! value is the protobuf `authpb.User` (field 1 the name, field 2 the password's bcrypt hash,
//! `$2a$<cost>$…`, always 60 bytes). A bbolt leaf page stores a value right after its key, so
//! root's record reads `root`, `0a 04 root 12 3c`, then the hash. The restore Job's fetch step
//! ([`reset_root_password`]) writes the hash of the current password over every such record (the
//! same length: no page changes; bbolt checksums only its meta pages), then the snapshot's
//! SHA-256 trailer again, which `etcdutl snapshot restore` checks. Every member's Job writes the
//! same bytes (the salt is derived from the snapshot), so the members' databases stay equal.
//! A snapshot without root (authentication never set up) is left as it is.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::FileExt as _;
use std::path::Path;

use sha2::{Digest as _, Sha256};

/// What precedes root's hash: the key `root`, then the value's field 1 (`root`) and the tag and
/// length of field 2 (60 bytes).
const RECORD: &[u8] = b"root\x0a\x04root\x12\x3c";
/// Bytes of a bcrypt hash in etcd's format.
const HASH: usize = 60;
/// Bytes of the snapshot's SHA-256 trailer.
const TRAILER: u64 = 32;
/// Bytes read at a time.
const BLOCK: usize = 1 << 20;

/// What [`reset_root_password`] did.
#[derive(Debug, PartialEq, Eq)]
pub struct Reset {
    /// Records of root rewritten (0: the snapshot has no root user).
    pub records: usize,
    /// The snapshot's new database SHA-256, hex (its trailer).
    pub sha256: String,
}

/// Why the password could not be reset.
#[derive(Debug, thiserror::Error)]
pub enum ResetError {
    #[error("cannot rewrite the snapshot: {0}")]
    Io(#[from] io::Error),
    #[error("cannot hash the new root password: {0}")]
    Hash(String),
    #[error("the snapshot is too short to hold a database")]
    Short,
}

/// A bcrypt hash as etcd writes it (`$2a$10$` and 53 characters); its cost.
fn cost_of(hash: &[u8]) -> Option<u32> {
    if hash.len() != HASH || hash[0] != b'$' || hash[1] != b'2' || hash[3] != b'$' {
        return None;
    }
    if hash[6] != b'$' {
        return None;
    }
    std::str::from_utf8(&hash[4..6]).ok()?.parse().ok()
}

/// Offsets (in the database) of root's hashes, with their cost.
fn find(file: &mut File, db_len: u64) -> io::Result<Vec<(u64, u32)>> {
    let window = RECORD.len() + HASH;
    let mut found = Vec::new();
    let mut buffer: Vec<u8> = Vec::with_capacity(BLOCK + window);
    // Absolute offset of `buffer[0]`.
    let mut base = 0u64;
    let mut read = 0u64;
    file.seek(SeekFrom::Start(0))?;
    let mut block = vec![0u8; BLOCK];
    while read < db_len {
        let want = usize::try_from((db_len - read).min(BLOCK as u64)).unwrap_or(BLOCK);
        let n = file.read(&mut block[..want])?;
        if n == 0 {
            break;
        }
        read += n as u64;
        buffer.extend_from_slice(&block[..n]);
        let mut i = 0;
        while i + window <= buffer.len() {
            if buffer[i..].starts_with(RECORD) {
                let hash = &buffer[i + RECORD.len()..i + window];
                if let Some(cost) = cost_of(hash) {
                    found.push((base + (i + RECORD.len()) as u64, cost));
                }
            }
            i += 1;
        }
        // Keep what a record starting there could still need.
        let keep_from = buffer.len().saturating_sub(window - 1);
        buffer.drain(..keep_from);
        base += keep_from as u64;
    }
    Ok(found)
}

/// Sets root's password to `password` in the snapshot file at `path` (the database followed by
/// its SHA-256, already checked) and writes its new trailer. `seed` (the snapshot's SHA-256)
/// makes the salt, the same in every member's Job.
pub fn reset_root_password(path: &Path, password: &[u8], seed: &str) -> Result<Reset, ResetError> {
    let mut file = File::options().read(true).write(true).open(path)?;
    let len = file.metadata()?.len();
    let db_len = len.checked_sub(TRAILER).ok_or(ResetError::Short)?;
    let found = find(&mut file, db_len)?;
    let salt: [u8; 16] = Sha256::digest(format!("ferroplane root password {seed}"))[..16]
        .try_into()
        .map_err(|_| ResetError::Hash("salt".to_owned()))?;
    for (offset, cost) in &found {
        let hash = bcrypt::hash_with_salt(password, *cost, salt)
            .map_err(|e| ResetError::Hash(e.to_string()))?
            .format_for_version(bcrypt::Version::TwoA);
        if hash.len() != HASH {
            return Err(ResetError::Hash(format!(
                "a hash of {} bytes instead of {HASH}",
                hash.len()
            )));
        }
        file.write_all_at(hash.as_bytes(), *offset)?;
    }
    // The trailer again, over the database as it is now.
    let mut hasher = Sha256::new();
    file.seek(SeekFrom::Start(0))?;
    let mut left = db_len;
    let mut block = vec![0u8; BLOCK];
    while left > 0 {
        let want = usize::try_from(left.min(BLOCK as u64)).unwrap_or(BLOCK);
        file.read_exact(&mut block[..want])?;
        hasher.update(&block[..want]);
        left -= want as u64;
    }
    let digest = hasher.finalize();
    file.seek(SeekFrom::Start(db_len))?;
    file.write_all(&digest)?;
    file.sync_all()?;
    Ok(Reset {
        records: found.len(),
        sha256: hex::encode(digest),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(db: &[u8]) -> Vec<u8> {
        let mut all = db.to_vec();
        all.extend_from_slice(&Sha256::digest(db));
        all
    }

    fn record(hash: &str) -> Vec<u8> {
        let mut r = RECORD.to_vec();
        r.extend_from_slice(hash.as_bytes());
        r.extend_from_slice(b"\x1a\x04root");
        r
    }

    #[test]
    fn every_record_of_root_gets_the_new_hash_and_the_trailer_follows() {
        let old = bcrypt::hash_with_salt("old", 4, [1; 16])
            .expect("hash")
            .format_for_version(bcrypt::Version::TwoA);
        // One record across the first block boundary, one far after it.
        let mut db = vec![0u8; BLOCK - 20];
        db.extend(record(&old));
        db.extend(vec![7u8; 3 * BLOCK]);
        db.extend(record(&old));
        db.extend(b"user0\x0a\x05user0\x12\x3c".iter());
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("snapshot.db");
        std::fs::write(&path, snapshot(&db)).expect("write");

        let reset = reset_root_password(&path, b"new", "seed").expect("reset");
        assert_eq!(reset.records, 2);
        let after = std::fs::read(&path).expect("read");
        assert_eq!(after.len(), db.len() + 32, "no byte added or removed");
        let (new_db, trailer) = after.split_at(after.len() - 32);
        assert_eq!(trailer, Sha256::digest(new_db).as_slice());
        assert_eq!(reset.sha256, hex::encode(trailer));
        let hashes: Vec<&[u8]> = new_db
            .windows(RECORD.len())
            .enumerate()
            .filter(|(_, w)| *w == RECORD)
            .map(|(i, _)| &new_db[i + RECORD.len()..i + RECORD.len() + HASH])
            .collect();
        assert_eq!(hashes.len(), 2);
        for hash in &hashes {
            let hash = std::str::from_utf8(hash).expect("text");
            assert!(hash.starts_with("$2a$04$"), "the old cost is kept: {hash}");
            assert!(bcrypt::verify("new", hash).expect("verifies"));
            assert!(!bcrypt::verify("old", hash).expect("verifies"));
        }
        assert_eq!(
            hashes[0], hashes[1],
            "one salt: every member writes the same bytes"
        );
    }

    #[test]
    fn a_snapshot_without_root_is_left_alone() {
        let db = b"no users here".to_vec();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("snapshot.db");
        std::fs::write(&path, snapshot(&db)).expect("write");
        let reset = reset_root_password(&path, b"new", "seed").expect("reset");
        assert_eq!(reset.records, 0);
        assert_eq!(std::fs::read(&path).expect("read"), snapshot(&db));
    }
}
