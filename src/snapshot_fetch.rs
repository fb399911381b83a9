//! Fetching a snapshot for a restore, the step of an EtcdCluster restore Job that reads it
//! (`ferroplane etcd-restore fetch`, see provider-etcd's `restore::render`): a download through
//! its signed URL, or a copy from a mounted volume, written to a file as it arrives (never held
//! whole in memory), with the SHA-256 trailer etcd appends to a snapshot checked on the way
//! ([`check`]). In the library so that the snapshot benchmark measures this very code.
//!
//! The URL is a credential until it expires: it is never printed ([`redacted`]).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

/// Bytes of the SHA-256 etcd appends to a snapshot's database.
const TRAILER: usize = 32;

/// What a snapshot's bytes hash to.
#[derive(Debug, PartialEq, Eq)]
pub struct Digest256 {
    /// SHA-256 of everything before the trailer, hex.
    pub database: String,
    /// The trailer, hex.
    pub trailer: String,
}

/// Hashes a stream of bytes except its last [`TRAILER`], which it keeps.
#[derive(Default)]
struct TrailerHasher {
    hasher: Sha256,
    held: Vec<u8>,
}

impl TrailerHasher {
    fn update(&mut self, chunk: &[u8]) {
        self.held.extend_from_slice(chunk);
        if self.held.len() > TRAILER {
            let cut = self.held.len() - TRAILER;
            self.hasher.update(&self.held[..cut]);
            self.held.drain(..cut);
        }
    }

    fn finish(self) -> Option<Digest256> {
        (self.held.len() == TRAILER).then(|| Digest256 {
            database: hex::encode(self.hasher.finalize()),
            trailer: hex::encode(&self.held),
        })
    }
}

/// Where a URL points, without its query (which holds the signature).
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.to_string()
        }
        Err(_) => "<the URL in the URL file>".to_owned(),
    }
}

/// How long a fetch keeps trying to reach a server that refuses connections or whose name does
/// not resolve yet (a restore's snapshot server starting, its DNS record not published yet).
const CONNECT_PATIENCE: Duration = Duration::from_secs(120);

/// Whether `e` says the server is not there yet (refused, or its name not resolved), not that
/// it is the wrong one (a certificate refused), which waiting does not change.
pub(crate) fn not_there_yet(e: &reqwest::Error) -> bool {
    if !e.is_connect() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(error) = source {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        if error.to_string().starts_with("dns error") {
            return true;
        }
        source = error.source();
    }
    false
}

/// Downloads the snapshot at `url` into `out`, hashing it as it arrives. With `ca_pem`, the
/// server must present a certificate of that CA, and only of it (a restore's snapshot server).
pub async fn download(
    url: &str,
    out: &Path,
    ca_pem: Option<&[u8]>,
) -> anyhow::Result<(u64, Digest256)> {
    let shown = redacted(url);
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(120));
    if let Some(ca) = ca_pem {
        let ca = reqwest::Certificate::from_pem(ca).context("reading the server's CA")?;
        builder = builder.tls_certs_only([ca]);
    }
    let client = builder.build().context("making the HTTP client")?;
    let started = tokio::time::Instant::now();
    let mut pause = Duration::from_secs(1);
    let mut response = loop {
        match client.get(url).send().await {
            Ok(response) => break response,
            Err(e) if not_there_yet(&e) && started.elapsed() + pause < CONNECT_PATIENCE => {
                tracing::info!(url = %shown, error = %e.without_url(), "cannot connect yet; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(10));
            }
            Err(e) => bail!("fetching {shown}: {}", e.without_url()),
        }
    };
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        let code = body
            .split_once("<Code>")
            .and_then(|(_, rest)| rest.split_once("</Code>"))
            .map_or("", |(code, _)| code);
        bail!(
            "fetching {shown}: {status} {code}; an expired URL is signed again by the controller: delete the Job to try again"
        );
    }
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut file = tokio::fs::File::create(out)
        .await
        .with_context(|| format!("creating {}", out.display()))?;
    let mut hasher = TrailerHasher::default();
    let mut size = 0u64;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| anyhow::anyhow!("reading {shown}: {}", e.without_url()))?
    {
        hasher.update(&chunk);
        size += chunk.len() as u64;
        file.write_all(&chunk)
            .await
            .with_context(|| format!("writing {}", out.display()))?;
    }
    file.sync_all()
        .await
        .with_context(|| format!("syncing {}", out.display()))?;
    let digest = hasher
        .finish()
        .with_context(|| format!("{shown} is {size} bytes: too short for an etcd snapshot"))?;
    Ok((size, digest))
}

/// Copies a snapshot file (a volume's), hashing it as [`download`] does.
pub fn copy(from: &Path, out: &Path) -> anyhow::Result<(u64, Digest256)> {
    use std::io::{Read, Write};
    if from
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        bail!("{} leaves the volume ('..'): refusing", from.display());
    }
    let mut input =
        std::fs::File::open(from).with_context(|| format!("opening {}", from.display()))?;
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut output =
        std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
    let mut hasher = TrailerHasher::default();
    let mut size = 0u64;
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = input
            .read(&mut buffer)
            .with_context(|| format!("reading {}", from.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        size += n as u64;
        output
            .write_all(&buffer[..n])
            .with_context(|| format!("writing {}", out.display()))?;
    }
    output
        .sync_all()
        .with_context(|| format!("syncing {}", out.display()))?;
    let digest = hasher.finish().with_context(|| {
        format!(
            "{} is {size} bytes: too short for an etcd snapshot",
            from.display()
        )
    })?;
    Ok((size, digest))
}

/// Refuses a damaged snapshot (its database does not hash to its trailer) or another one than
/// the one recorded (`expected`, the SHA-256 taken with it).
pub fn check(digest: &Digest256, expected: Option<&str>) -> anyhow::Result<()> {
    if digest.database != digest.trailer {
        bail!(
            "the snapshot is damaged: its database hashes to {} but its trailer says {}",
            digest.database,
            digest.trailer
        );
    }
    if let Some(expected) = expected
        && !expected.eq_ignore_ascii_case(&digest.database)
    {
        bail!(
            "the snapshot is not the one recorded: its database hashes to {}, {expected} was recorded when it was taken",
            digest.database
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(db: &[u8]) -> Vec<u8> {
        let mut bytes = db.to_vec();
        bytes.extend_from_slice(&Sha256::digest(db));
        bytes
    }

    fn digest_in_chunks(bytes: &[u8], chunk: usize) -> Option<Digest256> {
        let mut hasher = TrailerHasher::default();
        for part in bytes.chunks(chunk.max(1)) {
            hasher.update(part);
        }
        hasher.finish()
    }

    #[test]
    fn the_trailer_checks_whatever_the_chunking() {
        let bytes = snapshot(&[7u8; 1000]);
        for chunk in [1, 31, 32, 33, 500, 5000] {
            let digest = digest_in_chunks(&bytes, chunk).expect("long enough");
            check(&digest, None).expect("intact");
            check(&digest, Some(&digest.database.to_uppercase())).expect("recorded");
        }
    }

    #[test]
    fn damage_and_another_snapshot_are_refused() {
        let mut bytes = snapshot(b"database");
        bytes[3] ^= 1;
        let damaged = digest_in_chunks(&bytes, 4).expect("long enough");
        assert!(
            check(&damaged, None)
                .unwrap_err()
                .to_string()
                .contains("damaged")
        );
        let other = digest_in_chunks(&snapshot(b"other"), 4).expect("long enough");
        let recorded = digest_in_chunks(&snapshot(b"database"), 4).expect("long enough");
        assert!(
            check(&other, Some(&recorded.database))
                .unwrap_err()
                .to_string()
                .contains("not the one recorded")
        );
        assert_eq!(digest_in_chunks(&[1u8; 31], 8), None);
    }

    #[test]
    fn a_file_is_copied_and_checked_like_a_download() {
        let dir = tempfile::tempdir().expect("temp dir");
        let from = dir.path().join("in.db");
        std::fs::write(&from, snapshot(&[3u8; 3000])).expect("write");
        let (size, digest) = copy(&from, &dir.path().join("out/snapshot.db")).expect("copied");
        assert_eq!(size, 3032);
        check(&digest, None).expect("intact");
        assert!(copy(&dir.path().join("a/../in.db"), &dir.path().join("x")).is_err());
    }

    #[test]
    fn urls_are_shown_without_their_signature() {
        let shown = redacted("http://127.0.0.1:9/b/k.db?OSSAccessKeyId=id&Signature=s3cr3t");
        assert!(!shown.contains("s3cr3t"));
        assert!(shown.ends_with("/b/k.db"));
    }
}
