//! `ferroplane etcd-restore`: the steps of an EtcdCluster restore Job that need logic, which
//! etcd's shell-less images cannot run (see provider-etcd's `restore::render`):
//!
//! - `fetch`: refuses a volume that holds etcd data, clears what a failed attempt left in the
//!   staging directory, downloads the snapshot through its signed URL and checks the SHA-256
//!   trailer etcd appends to a snapshot (and the SHA-256 recorded when it was taken), then,
//!   with `--root-password-file`, sets root's password in it (provider-etcd's
//!   `restore::root_password`);
//! - `serve`: serves a snapshot file of a mounted volume to the member Jobs over HTTPS, to
//!   those that give the token (`ferroplane::snapshot_serve`), until stopped;
//! - `commit`: moves the restored staging directory to the data directory in one rename, so a
//!   member never starts on a half-restored directory. Running it again after it succeeded
//!   changes nothing.
//!
//! The URL is a credential until it expires: it is read from a file and never printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use ferroplane::snapshot_fetch::{check, copy, download};

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
        /// The CA (PEM) the URL's server must present a certificate of, and the only one
        /// trusted (a restore's snapshot server).
        #[arg(long, requires = "url_file")]
        ca_file: Option<PathBuf>,
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
        /// A file holding root's password now (`spec.auth`'s Secret): root's password in the
        /// snapshot becomes it, whatever it was when the snapshot was taken.
        #[arg(long)]
        root_password_file: Option<PathBuf>,
    },
    /// Serve a snapshot file to the member Jobs over HTTPS.
    Serve {
        /// The snapshot, in a mounted volume.
        #[arg(long)]
        file: PathBuf,
        /// File holding the token a fetcher's URL must carry.
        #[arg(long)]
        token_file: PathBuf,
        /// The server's certificate and key (PEM).
        #[arg(long)]
        cert_file: PathBuf,
        #[arg(long)]
        key_file: PathBuf,
        #[arg(long, default_value = "0.0.0.0:8443")]
        listen: std::net::SocketAddr,
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
            ca_file,
            out,
            sha256,
            data_dir,
            staging_dir,
            root_password_file,
        } => {
            refuse_data(&data_dir)?;
            clear_staging(&staging_dir)?;
            let (size, digest) = match (url_file, file) {
                (Some(url_file), _) => {
                    let url = std::fs::read_to_string(&url_file).with_context(|| {
                        format!("reading the snapshot URL from {}", url_file.display())
                    })?;
                    let ca = ca_file
                        .map(|f| {
                            std::fs::read(&f)
                                .with_context(|| format!("reading the CA from {}", f.display()))
                        })
                        .transpose()?;
                    download(url.trim(), &out, ca.as_deref()).await?
                }
                (None, Some(file)) => copy(&file, &out)?,
                (None, None) => bail!("give --url-file or --file"),
            };
            check(&digest, sha256.as_deref())?;
            tracing::info!(bytes = size, sha256 = %digest.database, "snapshot fetched and checked");
            if let Some(file) = root_password_file {
                reset_root(&file, &out, &digest.database)?;
            }
        }
        Step::Serve {
            file,
            token_file,
            cert_file,
            key_file,
            listen,
        } => {
            let read =
                |f: &Path| std::fs::read(f).with_context(|| format!("reading {}", f.display()));
            let token = String::from_utf8(read(&token_file)?)
                .with_context(|| format!("{} is not text", token_file.display()))?
                .trim()
                .to_owned();
            let source = ferroplane::snapshot_serve::Source {
                file,
                token,
                cert_pem: read(&cert_file)?,
                key_pem: read(&key_file)?,
            };
            let handle = axum_server::Handle::new();
            let stopping = handle.clone();
            tokio::spawn(async move {
                if let Err(e) = ferroplane::signals::shutdown_signal().await {
                    tracing::warn!(error = %e, "cannot listen for signals; stop with SIGKILL");
                    return;
                }
                stopping.graceful_shutdown(Some(std::time::Duration::from_secs(10)));
            });
            tracing::info!(%listen, "snapshot server listening for the restore's Jobs");
            ferroplane::snapshot_serve::serve(source, listen, handle).await?;
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

/// Sets root's password in the fetched snapshot to the one in `file`, read as the controller
/// reads the Secret (the value as it is). The password is never logged.
fn reset_root(file: &Path, snapshot: &Path, sha256: &str) -> anyhow::Result<()> {
    let password = std::fs::read(file)
        .with_context(|| format!("reading root's password from {}", file.display()))?;
    if password.is_empty() {
        bail!(
            "{} is empty: spec.auth's Secret needs a non-empty `password`",
            file.display()
        );
    }
    let reset =
        provider_etcd::restore::root_password::reset_root_password(snapshot, &password, sha256)
            .map_err(|e| anyhow::anyhow!("setting root's password in the snapshot: {e}"))?;
    if !reset.root_found {
        tracing::info!("the snapshot has no root user: nothing to set");
    } else {
        tracing::info!(sha256 = %reset.sha256, "root's password in the snapshot set to spec.auth's");
    }
    Ok(())
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
}
