//! A member's snapshot through etcd's JSON gateway: `POST /v3/maintenance/snapshot` answers a
//! stream of JSON lines, `{"result":{"blob":"<base64>"}}` each (or `{"error":{...}}` when the
//! member fails half-way), whose decoded blobs laid end to end are the database followed by
//! the SHA-256 of it, 32 bytes: the file `etcdctl snapshot save` writes and `etcdutl snapshot
//! restore` checks. The stream is written out as it arrives (a database may be gigabytes) and
//! the checksum is verified at the end, so a truncated or corrupted transfer is an error, never
//! a backup.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Bytes of the SHA-256 trailer.
const TRAILER: usize = 32;

/// How long a snapshot may stream: far longer than a membership call (a database of gigabytes
/// over a slow link).
const SNAPSHOT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

/// What a saved snapshot is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// Bytes written, the trailer included.
    pub size: u64,
    /// The SHA-256 of the database (hex), which the snapshot carries and was checked against.
    pub sha256: String,
}

/// Why no snapshot was saved.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("etcd at {endpoint} is unreachable for a snapshot: {source}")]
    Unreachable {
        endpoint: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("etcd at {endpoint} refused the snapshot: {message} (gRPC code {code})")]
    Refused {
        endpoint: String,
        code: i64,
        message: String,
    },
    #[error("the snapshot stream from {endpoint} is not etcd's: {detail}")]
    Decode { endpoint: String, detail: String },
    #[error(
        "the snapshot from {endpoint} is damaged: its checksum does not match its {size} bytes (a transfer cut short?); nothing was kept"
    )]
    Checksum { endpoint: String, size: u64 },
    #[error("cannot write the snapshot: {0}")]
    Write(#[from] std::io::Error),
    #[error(
        "cannot spool the snapshot in the temporary directory {}: {source}; the controller needs a writable $TMPDIR (deploy/ mounts an emptyDir at /tmp) with room for the largest database",
        dir.display()
    )]
    Spool {
        dir: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no member of the cluster answers, so no snapshot can be taken: {detail}")]
    NoMember { detail: String },
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    result: Option<Blob>,
    #[serde(default)]
    error: Option<StreamError>,
}

#[derive(Deserialize)]
struct Blob {
    #[serde(default)]
    blob: String,
}

#[derive(Deserialize)]
struct StreamError {
    #[serde(default, alias = "grpc_code")]
    code: i64,
    #[serde(default)]
    message: String,
}

/// Hashes everything but the last [`TRAILER`] bytes seen, which it holds back.
#[derive(Default)]
struct Verifier {
    hasher: Sha256,
    held: Vec<u8>,
    size: u64,
}

impl Verifier {
    fn feed(&mut self, bytes: &[u8]) {
        self.size += bytes.len() as u64;
        self.held.extend_from_slice(bytes);
        if self.held.len() > TRAILER {
            let cut = self.held.len() - TRAILER;
            self.hasher.update(&self.held[..cut]);
            self.held.drain(..cut);
        }
    }

    /// The database's SHA-256 when the trailer matches it.
    fn finish(self) -> Option<String> {
        let digest = self.hasher.finalize();
        (self.held.len() == TRAILER && digest.as_slice() == self.held.as_slice())
            .then(|| hex::encode(digest))
    }
}

/// The snapshot file of a database: `db` followed by its SHA-256 (what etcd streams).
pub fn with_trailer(db: &[u8]) -> Vec<u8> {
    let mut all = db.to_vec();
    all.extend_from_slice(&Sha256::digest(db));
    all
}

/// Streams a snapshot of the member at `client_url` into `out` and verifies it.
pub async fn save(
    http: &reqwest::Client,
    client_url: &str,
    token: Option<&super::Password>,
    out: &mut (impl AsyncWrite + Unpin),
) -> Result<SnapshotInfo, SnapshotError> {
    let endpoint = client_url.trim_end_matches('/').to_owned();
    let unreachable = |source| SnapshotError::Unreachable {
        endpoint: endpoint.clone(),
        source,
    };
    let mut request = http
        .post(format!("{endpoint}/v3/maintenance/snapshot"))
        .timeout(SNAPSHOT_TIMEOUT)
        .body("{}");
    if let Some(token) = token {
        request = request.header(reqwest::header::AUTHORIZATION, token.expose());
    }
    let mut response = request.send().await.map_err(unreachable)?;
    let mut pending: Vec<u8> = Vec::new();
    let mut verifier = Verifier::default();
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            write_line(&endpoint, &line, &mut verifier, out).await?;
        }
    }
    write_line(&endpoint, &pending, &mut verifier, out).await?;
    out.flush().await?;
    let size = verifier.size;
    let sha256 = verifier.finish().ok_or_else(|| SnapshotError::Checksum {
        endpoint: endpoint.clone(),
        size,
    })?;
    Ok(SnapshotInfo { size, sha256 })
}

async fn write_line(
    endpoint: &str,
    line: &[u8],
    verifier: &mut Verifier,
    out: &mut (impl AsyncWrite + Unpin),
) -> Result<(), SnapshotError> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let decode = |detail: String| SnapshotError::Decode {
        endpoint: endpoint.to_owned(),
        detail,
    };
    let line: Line = serde_json::from_slice(line).map_err(|e| decode(e.to_string()))?;
    if let Some(error) = line.error {
        return Err(SnapshotError::Refused {
            endpoint: endpoint.to_owned(),
            code: error.code,
            message: error.message,
        });
    }
    let blob = line
        .result
        .ok_or_else(|| decode("a line with neither result nor error".to_owned()))?;
    let bytes = STANDARD
        .decode(blob.blob.as_bytes())
        .map_err(|e| decode(format!("a blob is not base64: {e}")))?;
    verifier.feed(&bytes);
    out.write_all(&bytes).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_of(db: &[u8], chunk: usize) -> Vec<u8> {
        let mut all = db.to_vec();
        all.extend_from_slice(&Sha256::digest(db));
        all.chunks(chunk)
            .map(|c| format!("{{\"result\":{{\"blob\":\"{}\"}}}}\n", STANDARD.encode(c)))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn the_trailer_is_checked_whatever_the_chunking() {
        let db: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        for chunk in [1, 7, 32, 33, 4096, 10_000] {
            let mut verifier = Verifier::default();
            let stream = stream_of(&db, chunk);
            for line in stream.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let line: Line = serde_json::from_slice(line).expect("json");
                verifier.feed(
                    &STANDARD
                        .decode(line.result.expect("blob").blob)
                        .expect("b64"),
                );
            }
            assert_eq!(verifier.size, db.len() as u64 + 32);
            assert_eq!(
                verifier.finish(),
                Some(hex::encode(Sha256::digest(&db))),
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn a_truncated_or_altered_snapshot_fails_its_check() {
        let db = vec![7u8; 1000];
        let mut all = db.clone();
        all.extend_from_slice(&Sha256::digest(&db));
        let mut cut = Verifier::default();
        cut.feed(&all[..all.len() - 1]);
        assert_eq!(cut.finish(), None);
        let mut altered = Verifier::default();
        all[10] ^= 1;
        altered.feed(&all);
        assert_eq!(altered.finish(), None);
    }
}
