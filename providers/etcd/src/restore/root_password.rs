//! Root's password in a snapshot, set to the one the restored cluster's `spec.auth` Secret holds
//! now: a snapshot taken with authentication carries the users of its time, and the password
//! root had then may be long gone (rotated since, or another cluster's).
//!
//! etcd keeps its users in its bbolt database, bucket `authUsers`, under the user's name; the
//! value is the protobuf `authpb.User` (field 1 the name, field 2 the password's bcrypt hash,
//! `$2a$<cost>$…`, always 60 bytes). The restore Job's fetch step ([`reset_root_password`])
//! walks the database's current tree to root's record ([`super::bbolt`]) and writes the hash of
//! the current password over the old one (the same length: no page changes; bbolt checksums
//! only its meta pages), then the snapshot's SHA-256 trailer again, which `etcdutl snapshot
//! restore` checks. Nothing else is written: a key or value of the cluster's own data that
//! happens to hold the same bytes is not root's record. Every member's Job writes the same
//! bytes (the salt is derived from the snapshot), so the members' databases stay equal. A
//! snapshot without root (authentication never set up) is left as it is.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::FileExt as _;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use super::bbolt::{BoltError, Database};

/// etcd's bucket of users, and root's name in it.
const AUTH_USERS: &[u8] = b"authUsers";
const ROOT: &[u8] = b"root";
/// Bytes of a bcrypt hash in etcd's format.
const HASH: usize = 60;
/// Bytes of the snapshot's SHA-256 trailer.
const TRAILER: u64 = 32;
/// Bytes read at a time.
const BLOCK: usize = 1 << 20;

/// What [`reset_root_password`] did.
#[derive(Debug, PartialEq, Eq)]
pub struct Reset {
    /// Whether the snapshot has a root user, whose password was set (else nothing changed).
    pub root_found: bool,
    /// The snapshot's database SHA-256, hex (its trailer).
    pub sha256: String,
}

/// Why the password could not be reset.
#[derive(Debug, thiserror::Error)]
pub enum ResetError {
    #[error("cannot rewrite the snapshot: {0}")]
    Io(#[from] io::Error),
    #[error("cannot find root's record in the snapshot: {0}")]
    Database(#[from] BoltError),
    #[error(
        "root's record in the snapshot {0}, so ferroplane cannot set its password; restore the snapshot into a cluster without spec.auth"
    )]
    Record(&'static str),
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

/// Where root's password hash lies in the database (a file offset) and its bcrypt cost; `None`
/// when the snapshot has no root user.
fn locate(file: &File, db_len: u64) -> Result<Option<(u64, u32)>, ResetError> {
    let db = Database::open(file, db_len)?;
    let Some(record) = db.find(&[AUTH_USERS], ROOT)? else {
        return Ok(None);
    };
    let fields = user_fields(&record.value).ok_or(ResetError::Record("is no user record"))?;
    if fields.name != Some(ROOT) {
        return Err(ResetError::Record("names another user"));
    }
    let (at, hash) = fields.password.ok_or(ResetError::Record(
        "holds no password (a user added without one?)",
    ))?;
    let cost = cost_of(hash).ok_or(ResetError::Record("holds no bcrypt password hash"))?;
    Ok(Some((record.offset + at, cost)))
}

/// What [`user_fields`] reads of an `authpb.User`.
struct UserFields<'a> {
    name: Option<&'a [u8]>,
    /// Offset in the record, and bytes.
    password: Option<(u64, &'a [u8])>,
}

/// The name (field 1) and password (field 2) of an `authpb.User` in protobuf's wire format;
/// `None` when the bytes are not one.
fn user_fields(record: &[u8]) -> Option<UserFields<'_>> {
    let mut fields = UserFields {
        name: None,
        password: None,
    };
    let mut at = 0usize;
    while at < record.len() {
        let tag = varint(record, &mut at)?;
        match tag & 7 {
            0 => {
                varint(record, &mut at)?;
            }
            1 => at = at.checked_add(8)?,
            2 => {
                let len = usize::try_from(varint(record, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|e| *e <= record.len())?;
                let bytes = &record[at..end];
                match tag >> 3 {
                    1 => fields.name = Some(bytes),
                    2 => fields.password = Some((at as u64, bytes)),
                    _ => {}
                }
                at = end;
            }
            5 => at = at.checked_add(4)?,
            _ => return None,
        }
    }
    (at == record.len()).then_some(fields)
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Sets root's password to `password` in the snapshot file at `path` (the database followed by
/// its SHA-256, already checked) and writes its new trailer. `seed` (the snapshot's SHA-256)
/// makes the salt, the same in every member's Job.
pub fn reset_root_password(path: &Path, password: &[u8], seed: &str) -> Result<Reset, ResetError> {
    let mut file = File::options().read(true).write(true).open(path)?;
    let len = file.metadata()?.len();
    let db_len = len.checked_sub(TRAILER).ok_or(ResetError::Short)?;
    let Some((offset, cost)) = locate(&file, db_len)? else {
        return Ok(Reset {
            root_found: false,
            sha256: hex::encode(database_sha256(&mut file, db_len)?),
        });
    };
    let salt: [u8; 16] = Sha256::digest(format!("ferroplane root password {seed}"))[..16]
        .try_into()
        .map_err(|_| ResetError::Hash("salt".to_owned()))?;
    let hash = bcrypt::hash_with_salt(password, cost, salt)
        .map_err(|e| ResetError::Hash(e.to_string()))?
        .format_for_version(bcrypt::Version::TwoA);
    if hash.len() != HASH {
        return Err(ResetError::Hash(format!(
            "a hash of {} bytes instead of {HASH}",
            hash.len()
        )));
    }
    file.write_all_at(hash.as_bytes(), offset)?;
    // The trailer again, over the database as it is now.
    let digest = database_sha256(&mut file, db_len)?;
    file.seek(SeekFrom::Start(db_len))?;
    file.write_all(&digest)?;
    file.sync_all()?;
    Ok(Reset {
        root_found: true,
        sha256: hex::encode(digest),
    })
}

/// The SHA-256 of the database's `db_len` bytes.
fn database_sha256(file: &mut File, db_len: u64) -> io::Result<[u8; 32]> {
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
    Ok(hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::super::bbolt::testing::{DbBuilder, inline_bucket, paged_bucket};
    use super::*;

    const BUCKET: u32 = 0x01;

    fn snapshot(db: &[u8]) -> Vec<u8> {
        let mut all = db.to_vec();
        all.extend_from_slice(&Sha256::digest(db));
        all
    }

    /// An `authpb.User` as etcd stores it: name, password hash, roles.
    fn user(name: &str, hash: &str, roles: &[&str]) -> Vec<u8> {
        let mut r = vec![0x0a, u8::try_from(name.len()).expect("short")];
        r.extend(name.as_bytes());
        r.extend([0x12, u8::try_from(hash.len()).expect("short")]);
        r.extend(hash.as_bytes());
        for role in roles {
            r.extend([0x1a, u8::try_from(role.len()).expect("short")]);
            r.extend(role.as_bytes());
        }
        r
    }

    fn old_hash() -> String {
        bcrypt::hash_with_salt("old", 4, [1; 16])
            .expect("hash")
            .format_for_version(bcrypt::Version::TwoA)
    }

    /// Where `needle` occurs in `haystack`.
    fn positions(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
        haystack
            .windows(needle.len())
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i)
            .collect()
    }

    fn write(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("snapshot.db");
        std::fs::write(&path, snapshot(bytes)).expect("write");
        (dir, path)
    }

    #[test]
    fn only_root_s_record_gets_the_new_hash_and_the_trailer_follows() {
        let old = old_hash();
        let root = user("root", &old, &["root"]);
        let alice = user("alice", &old, &[]);
        // The cluster's own data holding root's record byte for byte, as a value and in a key,
        // across pages of the `key` bucket: none of it is root's record.
        let mut db = DbBuilder::new();
        let decoy_leaf = db.leaf(&[(0, b"\x00\x01", &root), (0, &root, b"v")]);
        let other_leaf = db.leaf(&[(0, b"z", &root)]);
        let keys = db.branch(&[(b"\x00", decoy_leaf), (b"z", other_leaf)]);
        let users = db.leaf(&[(0, b"alice", &alice), (0, b"root", &root)]);
        let top = db.leaf(&[
            (BUCKET, b"authUsers", &paged_bucket(users)),
            (BUCKET, b"key", &paged_bucket(keys)),
        ]);
        let bytes = db.finish([Some((top, 5)), Some((top, 4))]);
        assert_eq!(
            positions(&bytes, &root).len(),
            4,
            "the record and three decoys"
        );
        let (_dir, path) = write(&bytes);

        let reset = reset_root_password(&path, b"new", "seed").expect("reset");
        assert!(reset.root_found);
        let after = std::fs::read(&path).expect("read");
        assert_eq!(after.len(), bytes.len() + 32, "no byte added or removed");
        let (new_db, trailer) = after.split_at(after.len() - 32);
        assert_eq!(trailer, Sha256::digest(new_db).as_slice());
        assert_eq!(reset.sha256, hex::encode(trailer));
        assert_eq!(
            positions(new_db, &root).len(),
            3,
            "the decoys are unchanged, root's record is not"
        );
        assert_eq!(
            positions(new_db, &alice).len(),
            1,
            "alice keeps her password"
        );
        let changed: Vec<usize> = (0..bytes.len())
            .filter(|i| bytes[*i] != new_db[*i])
            .collect();
        let record_at = users as usize * 4096;
        assert!(
            changed
                .iter()
                .all(|i| (record_at..record_at + 4096).contains(i)),
            "only root's page changed"
        );
        let hash_at = record_at
            + positions(
                &new_db[record_at..record_at + 4096],
                b"\x0a\x04root\x12\x3c",
            )[0]
            + 8;
        let hash = std::str::from_utf8(&new_db[hash_at..hash_at + HASH]).expect("text");
        assert!(hash.starts_with("$2a$04$"), "the old cost is kept: {hash}");
        assert!(bcrypt::verify("new", hash).expect("verifies"));
        assert!(!bcrypt::verify("old", hash).expect("verifies"));
    }

    #[test]
    fn every_member_writes_the_same_bytes_and_an_inline_bucket_is_found() {
        let old = old_hash();
        let root = user("root", &old, &["root"]);
        let mut db = DbBuilder::new();
        let users = inline_bucket(&[(0, b"root", &root)]);
        let top = db.leaf(&[(BUCKET, b"authUsers", &users)]);
        let bytes = db.finish([Some((top, 2)), Some((top, 1))]);
        let (_a, first) = write(&bytes);
        let (_b, second) = write(&bytes);
        let one = reset_root_password(&first, b"new", "seed").expect("reset");
        let two = reset_root_password(&second, b"new", "seed").expect("reset");
        assert!(one.root_found);
        assert_eq!(one, two);
        let after = std::fs::read(&first).expect("read");
        assert_eq!(after, std::fs::read(&second).expect("read"));
        assert!(
            positions(&after, &root).is_empty(),
            "root's hash was replaced"
        );
    }

    #[test]
    fn a_snapshot_without_root_is_left_alone() {
        let mut db = DbBuilder::new();
        let users = inline_bucket(&[(0, b"alice", &user("alice", &old_hash(), &[]))]);
        let top = db.leaf(&[(BUCKET, b"authUsers", &users)]);
        let with_users = db.finish([Some((top, 1)), Some((top, 1))]);
        let mut db = DbBuilder::new();
        let top = db.leaf(&[(BUCKET, b"key", &inline_bucket(&[(0, b"k", b"v")]))]);
        let without_auth = db.finish([Some((top, 1)), Some((top, 1))]);
        for bytes in [with_users, without_auth] {
            let (_dir, path) = write(&bytes);
            let reset = reset_root_password(&path, b"new", "seed").expect("reset");
            assert!(!reset.root_found);
            assert_eq!(reset.sha256, hex::encode(Sha256::digest(&bytes)));
            assert_eq!(std::fs::read(&path).expect("read"), snapshot(&bytes));
        }
    }

    #[test]
    fn a_root_record_without_a_bcrypt_hash_or_a_file_that_is_no_database_is_refused() {
        let mut db = DbBuilder::new();
        let users = inline_bucket(&[(0, b"root", &user("root", "", &["root"]))]);
        let top = db.leaf(&[(BUCKET, b"authUsers", &users)]);
        let (_dir, path) = write(&db.finish([Some((top, 1)), Some((top, 1))]));
        let err = reset_root_password(&path, b"new", "seed").expect_err("no hash");
        assert!(matches!(err, ResetError::Record(_)), "{err}");
        assert!(err.to_string().contains("without spec.auth"), "{err}");

        let (_dir, path) = write(b"no users here, and no database either");
        let err = reset_root_password(&path, b"new", "seed").expect_err("no database");
        assert!(
            matches!(err, ResetError::Database(BoltError::NotBolt(_))),
            "{err}"
        );
    }

    #[test]
    fn user_records_are_read_field_by_field() {
        let hash = old_hash();
        let record = user("root", &hash, &["root", "admin"]);
        let fields = user_fields(&record).expect("a record");
        assert_eq!(fields.name, Some(&b"root"[..]));
        let (at, bytes) = fields.password.expect("password");
        assert_eq!((at, bytes), (8, hash.as_bytes()));
        // Options (field 4, a message) after the roles, as 3.5+ writes for some users.
        let mut with_options = record.clone();
        with_options.extend([0x22, 0x02, 0x08, 0x00]);
        assert!(user_fields(&with_options).is_some());
        let mut truncated = record.clone();
        truncated.truncate(record.len() - 2);
        assert!(user_fields(&truncated).is_none());
    }
}
