//! `ferroplane etcd-restore`: the steps of an EtcdCluster restore Job that need logic, which
//! etcd's shell-less images cannot run (see provider-etcd's `restore::render`):
//!
//! - `fetch`: refuses a volume that holds etcd data, clears what a failed attempt left in the
//!   staging directory, downloads the snapshot through its signed URL and checks the SHA-256
//!   trailer etcd appends to a snapshot (and the SHA-256 recorded when it was taken);
//! - `commit`: moves the restored staging directory to the data directory in one rename, so a
//!   member never starts on a half-restored directory. Running it again after it succeeded
//!   changes nothing.
//!
//! The URL is a credential until it expires: it is read from a file and never printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

/// Bytes of the SHA-256 etcd appends to a snapshot's database.
const TRAILER: usize = 32;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    step: Step,
}

#[derive(Debug, clap::Subcommand)]
enum Step {
    /// Download and check the snapshot.
    Fetch {
        /// File holding the snapshot's signed URL.
        #[arg(long, required_unless_present = "file", conflicts_with = "file")]
        url_file: Option<PathBuf>,
        /// The snapshot as a file (in a mounted volume) instead.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Where to write the snapshot.
        #[arg(long)]
        out: PathBuf,
        /// The SHA-256 (hex) of the database recorded when the snapshot was taken.
        #[arg(long)]
        sha256: Option<String>,
        /// The member's data directory, which must not hold data yet.
        #[arg(long)]
        data_dir: PathBuf,
        /// Where the restore writes before `commit`; cleared here.
        #[arg(long)]
        staging_dir: PathBuf,
    },
    /// Move the restored directory into place.
    Commit {
        #[arg(long)]
        staging_dir: PathBuf,
        #[arg(long)]
        data_dir: PathBuf,
    },
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.step {
        Step::Fetch {
            url_file,
            file,
            out,
            sha256,
            data_dir,
            staging_dir,
        } => {
            refuse_data(&data_dir)?;
            clear_staging(&staging_dir)?;
            let (size, digest) = match (url_file, file) {
                (Some(url_file), _) => {
                    let url = std::fs::read_to_string(&url_file).with_context(|| {
                        format!("reading the snapshot URL from {}", url_file.display())
                    })?;
                    download(url.trim(), &out).await?
                }
                (None, Some(file)) => copy(&file, &out)?,
                (None, None) => bail!("give --url-file or --file"),
            };
            check(&digest, sha256.as_deref())?;
            tracing::info!(bytes = size, sha256 = %digest.database, "snapshot fetched and checked");
        }
        Step::Commit {
            staging_dir,
            data_dir,
        } => match commit(&staging_dir, &data_dir)? {
            Committed::Moved => {
                tracing::info!(data_dir = %data_dir.display(), "restored data in place")
            }
            Committed::Already => {
                tracing::info!(data_dir = %data_dir.display(), "restored data was already in place")
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}

fn holds_files(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_some()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
    }
}

fn refuse_data(data_dir: &Path) -> anyhow::Result<()> {
    if holds_files(data_dir)? {
        bail!(
            "{} already holds etcd data: a restore never writes over a member's data",
            data_dir.display()
        );
    }
    Ok(())
}

fn clear_staging(staging_dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(staging_dir) {
        Ok(()) => {
            tracing::info!(dir = %staging_dir.display(), "removed what an earlier attempt left");
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("clearing {}", staging_dir.display())),
    }
}

/// What a snapshot's bytes hash to.
#[derive(Debug, PartialEq, Eq)]
struct Digest256 {
    /// SHA-256 of everything before the trailer, hex.
    database: String,
    /// The trailer, hex.
    trailer: String,
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
fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.to_string()
        }
        Err(_) => "<the URL in the URL file>".to_owned(),
    }
}

async fn download(url: &str, out: &Path) -> anyhow::Result<(u64, Digest256)> {
    let shown = redacted(url);
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(120))
        .build()
        .context("making the HTTP client")?;
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("fetching {shown}: {}", e.without_url()))?;
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

/// Copies a snapshot file, hashing it as [`download`] does.
fn copy(from: &Path, out: &Path) -> anyhow::Result<(u64, Digest256)> {
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

fn check(digest: &Digest256, expected: Option<&str>) -> anyhow::Result<()> {
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

#[derive(Debug, PartialEq, Eq)]
enum Committed {
    Moved,
    Already,
}

fn commit(staging: &Path, data: &Path) -> anyhow::Result<Committed> {
    let staged = holds_files(staging)?;
    let in_place = holds_files(data)?;
    match (staged, in_place) {
        (false, true) => Ok(Committed::Already),
        (false, false) => bail!(
            "nothing restored in {}: the restore step did not run",
            staging.display()
        ),
        (true, true) => bail!(
            "both {} and {} hold data: refusing to choose; delete the volume and the Job to restore again",
            staging.display(),
            data.display()
        ),
        (true, false) => {
            // An empty data directory (made by a mount, say) cannot be renamed over.
            if data.exists() {
                std::fs::remove_dir(data)
                    .with_context(|| format!("removing empty {}", data.display()))?;
            }
            std::fs::rename(staging, data)
                .with_context(|| format!("moving {} to {}", staging.display(), data.display()))?;
            if let Some(parent) = data.parent()
                && let Ok(dir) = std::fs::File::open(parent)
            {
                // The rename is durable once its directory is.
                let _ = dir.sync_all();
            }
            Ok(Committed::Moved)
        }
    }
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
    fn commit_moves_once_and_never_over_data() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (staging, data) = (dir.path().join("restoring"), dir.path().join("data"));
        assert!(commit(&staging, &data).is_err(), "nothing restored");
        std::fs::create_dir_all(staging.join("member")).expect("staging");
        std::fs::create_dir_all(&data).expect("empty data dir");
        assert_eq!(commit(&staging, &data).expect("moved"), Committed::Moved);
        assert!(data.join("member").is_dir());
        assert_eq!(commit(&staging, &data).expect("again"), Committed::Already);
        std::fs::create_dir_all(staging.join("member")).expect("staging again");
        assert!(commit(&staging, &data).is_err(), "both hold data");
    }

    #[test]
    fn fetch_refuses_data_and_clears_staging() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        refuse_data(&data).expect("no data dir");
        std::fs::create_dir_all(data.join("member")).expect("data");
        assert!(refuse_data(&data).is_err());
        let staging = dir.path().join("restoring");
        std::fs::create_dir_all(staging.join("member/wal")).expect("leftover");
        clear_staging(&staging).expect("cleared");
        assert!(!staging.exists());
        clear_staging(&staging).expect("nothing to clear");
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
