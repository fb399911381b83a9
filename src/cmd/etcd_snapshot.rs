//! `ferroplane etcd-snapshot save`: the container of an EtcdBackup Job whose destination is a
//! volume (see provider-etcd's `backup::volume`). Streams a snapshot from the first member that
//! answers (its SHA-256 trailer checked) into `<root>/<folder><time>.db.part`, syncs it and
//! renames it to `<time>.db`, writes `<time>.db.json` (SHA-256, revision, time, generation)
//! beside it, deletes the oldest snapshots beyond `--keep` and what an interrupted run left,
//! then writes its report (the snapshot taken, what the folder holds, what it deleted) to
//! `--report-file`, the container's termination message.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use jiff::Timestamp;
use provider_etcd::backup::plan;
use provider_etcd::backup::volume::{JobReport, ReportedSnapshot};
use provider_etcd::membership::{
    GatewayClient, Membership as _, Password, RootCredentials, http_with_tls,
};
use provider_etcd::tls::ClientTls;
use serde::{Deserialize, Serialize};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    step: Step,
}

#[derive(Debug, clap::Subcommand)]
enum Step {
    /// Take a snapshot into the volume and prune it.
    Save(SaveArgs),
}

#[derive(Debug, clap::Args)]
struct SaveArgs {
    /// A member's client URL; repeat for each (the first that answers gives the snapshot).
    #[arg(long = "endpoint", required = true)]
    endpoints: Vec<String>,
    /// Directory with `ca.crt`, `tls.crt` and `tls.key` (a TLS cluster's client certificate).
    #[arg(long)]
    tls_dir: Option<PathBuf>,
    /// Where the volume is mounted.
    #[arg(long)]
    root: PathBuf,
    /// The backup's folder in the volume (`<prefix><namespace>/<name>/<uid>/`).
    #[arg(long)]
    folder: String,
    /// Snapshots to keep in the folder.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    keep: u32,
    /// A file that may hold root's password (a cluster with auth); repeat: tried in order, a
    /// missing file skipped.
    #[arg(long = "password-file")]
    password_files: Vec<PathBuf>,
    /// The EtcdBackup's generation, recorded with the snapshot.
    #[arg(long)]
    generation: Option<i64>,
    /// Where the report goes (the container's termination message path).
    #[arg(long)]
    report_file: PathBuf,
}

/// What `<time>.db.json` holds.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct Sidecar {
    sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revision: Option<i64>,
    taken_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generation: Option<i64>,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.step {
        Step::Save(save) => {
            let report = save_snapshot(&save).await?;
            tracing::info!(key = %report.taken.key, bytes = report.taken.size, sha256 = %report.taken.sha256, pruned = report.pruned.len(), "snapshot stored");
            std::fs::write(&save.report_file, report.to_message())
                .with_context(|| format!("writing the report to {}", save.report_file.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn client_tls(dir: &Path) -> anyhow::Result<ClientTls> {
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .with_context(|| format!("reading {}", dir.join(file).display()))
    };
    Ok(ClientTls {
        ca_pem: read("ca.crt")?,
        cert_pem: read("tls.crt")?,
        key_pem: read("tls.key")?,
    })
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

async fn save_snapshot(args: &SaveArgs) -> anyhow::Result<JobReport> {
    let builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(120));
    let http = match &args.tls_dir {
        Some(dir) => http_with_tls(builder, &client_tls(dir)?)
            .map_err(|e| anyhow::anyhow!("the client certificate: {e}"))?,
        None => builder.build().context("making the HTTP client")?,
    };
    let mut client = GatewayClient::with_http(http, args.endpoints.clone());
    let passwords: Vec<Password> = args
        .password_files
        .iter()
        // As the controller reads the Secret: the value as it is, trailing newline included.
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter(|p| !p.is_empty())
        .map(Password::new)
        .collect();
    if !passwords.is_empty() {
        client.set_credentials(RootCredentials::new(passwords));
    }
    let dir = args.root.join(&args.folder);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let now = Timestamp::now();
    let name = plan::key_at("", now);
    let part = dir.join(format!("{name}.part"));
    let mut file = tokio::fs::File::create(&part)
        .await
        .with_context(|| format!("creating {}", part.display()))?;
    let (info, revision) = client
        .save_snapshot(&mut file)
        .await
        .map_err(|e| anyhow::anyhow!("taking the snapshot: {e}"))?;
    file.sync_all()
        .await
        .with_context(|| format!("syncing {}", part.display()))?;
    drop(file);
    let sidecar = Sidecar {
        sha256: info.sha256.clone(),
        revision: i64::try_from(revision).ok().filter(|r| *r > 0),
        taken_at: now.to_string(),
        generation: args.generation,
    };
    std::fs::write(
        dir.join(format!("{name}.json")),
        serde_json::to_vec(&sidecar)?,
    )
    .context("writing the snapshot's metadata")?;
    std::fs::rename(&part, dir.join(&name)).context("moving the snapshot into place")?;
    sync_dir(&dir);
    let (kept, pruned) = prune(&dir, &args.folder, args.keep as usize)?;
    let taken = kept
        .iter()
        .find(|s| s.key.ends_with(&name))
        .cloned()
        .context("the snapshot just written is not in its folder")?;
    Ok(JobReport {
        taken,
        kept,
        pruned,
    })
}

/// Deletes the oldest snapshots beyond `keep` (and what an interrupted run left); returns what
/// stays, newest first, and the keys deleted.
fn prune(
    dir: &Path,
    folder: &str,
    keep: usize,
) -> anyhow::Result<(Vec<ReportedSnapshot>, Vec<String>)> {
    let mut names: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".part") {
            std::fs::remove_file(dir.join(&name)).ok();
        } else if name.ends_with(".db") {
            names.push(name);
        }
    }
    names.sort_unstable();
    names.reverse();
    let mut kept = Vec::new();
    let mut pruned = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let key = format!("{folder}{name}");
        let path = dir.join(name);
        let sidecar_path = dir.join(format!("{name}.json"));
        if i >= keep {
            std::fs::remove_file(&path).with_context(|| format!("deleting {}", path.display()))?;
            std::fs::remove_file(&sidecar_path).ok();
            pruned.push(key);
            continue;
        }
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let sidecar: Option<Sidecar> = std::fs::read(&sidecar_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        kept.push(ReportedSnapshot {
            key,
            size,
            sha256: sidecar
                .as_ref()
                .map(|s| s.sha256.clone())
                .unwrap_or_default(),
            revision: sidecar.as_ref().and_then(|s| s.revision),
            taken_at: sidecar
                .as_ref()
                .map(|s| s.taken_at.clone())
                .unwrap_or_default(),
            generation: sidecar.as_ref().and_then(|s| s.generation),
        });
    }
    sync_dir(dir);
    Ok((kept, pruned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_keeps_the_newest_and_clears_leftovers() {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, sha) in [
            ("20261101T000000.000Z.db", "a"),
            ("20261102T000000.000Z.db", "b"),
            ("20261103T000000.000Z.db", "c"),
        ] {
            std::fs::write(dir.path().join(name), b"snapshot").expect("write");
            let sidecar = Sidecar {
                sha256: sha.into(),
                revision: Some(7),
                taken_at: "2026-11-01T00:00:00Z".into(),
                generation: Some(1),
            };
            std::fs::write(
                dir.path().join(format!("{name}.json")),
                serde_json::to_vec(&sidecar).expect("json"),
            )
            .expect("write");
        }
        std::fs::write(dir.path().join("20261104T000000.000Z.db.part"), b"half").expect("write");
        let (kept, pruned) = prune(dir.path(), "f/", 2).expect("pruned");
        assert_eq!(
            kept.iter().map(|k| k.key.as_str()).collect::<Vec<_>>(),
            ["f/20261103T000000.000Z.db", "f/20261102T000000.000Z.db"]
        );
        assert_eq!(kept[0].sha256, "c");
        assert_eq!(pruned, ["f/20261101T000000.000Z.db"]);
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left.len(), 4, "two snapshots and their metadata: {left:?}");
    }
}
