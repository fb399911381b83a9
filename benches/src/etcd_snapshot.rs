//! `cargo run --release -p ferroplane-bench --bin etcd-snapshot-bench`: the peak memory of an
//! EtcdBackup snapshot of about 1 GiB (`--size-mib`) stored in OSS, and of fetching it back for a
//! restore. Not a test: it prints figures.
//!
//! This process runs the OSS mock and a synthetic etcd member: its `/v3/maintenance/status` and
//! `/v3/maintenance/snapshot`, the JSON gateway's stream of base64 blobs of 32 KiB (etcd's chunk)
//! followed by the SHA-256 trailer, made up as it is sent: no etcd database of a gigabyte is
//! built, the bytes are pseudo-random. Each phase runs in a child process (this program
//! re-executed with `--phase`) that prints its peak resident memory (VmHWM) when done:
//! 1. backup, the EtcdBackup controller's code: provider-etcd's `GatewayClient` as a
//!    `SnapshotSource` (stream, verify, spool to a temporary file) and the binary's OSS
//!    `SnapshotStore::put` (a streamed PutObject of known length);
//! 2. restore, the fetch step of a restore Job: `ferroplane::snapshot_fetch::download` through a
//!    signed URL, then `check` (trailer and recorded SHA-256). `etcdutl snapshot restore`, the
//!    next step, is etcd's own program and not measured.
//!
//! The last line of stdout is one JSON object with the figures.

// The allocator of the `ferroplane` binary, so that the code is measured as it runs there.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use alibaba_mock::{MockConfig, MockServer};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::oss::{Addressing, OssClient};
use anyhow::{Context as _, bail};
use axum::body::{Body, Bytes};
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use clap::Parser;
use ferroplane::etcd_backup_store::OssStore;
use jiff::Timestamp;
use provider_etcd::backup::{SnapshotMeta, SnapshotSource as _, SnapshotStore as _};
use provider_etcd::membership::GatewayClient;
use sha2::{Digest as _, Sha256};

const AK: &str = "bench-ak";
const SECRET: &str = "bench-secret";
const BUCKET: &str = "snapshots";
const KEY: &str = "etcd/bench/snapshot.db";
/// etcd sends a snapshot in chunks of 32 KiB.
const BLOB: usize = 32 * 1024;

#[derive(Debug, Parser)]
#[command(about = "Peak memory of a large etcd snapshot's backup to OSS and fetch for a restore")]
struct Args {
    /// Size of the synthetic database, MiB.
    #[arg(long, default_value_t = 1024)]
    size_mib: u64,
    /// Internal: run one phase in this process (the child).
    #[arg(long, value_enum, hide = true)]
    phase: Option<Phase>,
    /// Internal: the synthetic member's URL (backup).
    #[arg(long, hide = true)]
    etcd: Option<String>,
    /// Internal: the OSS mock's URL (backup).
    #[arg(long, hide = true)]
    oss: Option<String>,
    /// Internal: the file with the snapshot's signed URL (restore).
    #[arg(long, hide = true)]
    url_file: Option<PathBuf>,
    /// Internal: where the restore writes the snapshot.
    #[arg(long, hide = true)]
    out: Option<PathBuf>,
    /// Internal: the SHA-256 the restore checks.
    #[arg(long, hide = true)]
    sha256: Option<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Phase {
    Backup,
    Restore,
}

/// What a phase reports on its last line.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Report {
    bytes: u64,
    sha256: String,
    seconds: f64,
    /// VmHWM when the phase starts (the runtime and its threads) and at its end, MiB.
    base_rss_mib: f64,
    peak_rss_mib: f64,
}

fn status_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn oss_client(endpoint: &str) -> anyhow::Result<OssClient> {
    Ok(OssClient::new(
        reqwest::Client::new(),
        url::Url::parse(endpoint).context("the OSS endpoint")?,
        Addressing::Path,
        Credentials::new(AK, SECRET),
    ))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    match args.phase {
        None => parent(&args).await,
        Some(phase) => {
            let base = status_mib("VmHWM:").unwrap_or(f64::NAN);
            let started = Instant::now();
            let (bytes, sha256) = match phase {
                Phase::Backup => backup(&args).await?,
                Phase::Restore => restore(&args).await?,
            };
            let report = Report {
                bytes,
                sha256,
                seconds: started.elapsed().as_secs_f64(),
                base_rss_mib: base,
                peak_rss_mib: status_mib("VmHWM:").unwrap_or(f64::NAN),
            };
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
    }
}

/// The child's backup: the controller's `take`, without the Kubernetes around it.
async fn backup(args: &Args) -> anyhow::Result<(u64, String)> {
    let etcd = args.etcd.clone().context("--etcd")?;
    let oss = args.oss.as_deref().context("--oss")?;
    let member = GatewayClient::with_http(reqwest::Client::new(), vec![etcd]);
    let taken = member
        .snapshot()
        .await
        .map_err(|e| anyhow::anyhow!("snapshot: {e}"))?;
    let store = OssStore::with_client(oss_client(oss)?, BUCKET, "the benchmark's key");
    let meta = SnapshotMeta {
        sha256: taken.sha256.clone(),
        revision: taken.revision,
        taken_at: Timestamp::now(),
        generation: Some(1),
    };
    store
        .put(KEY, &taken.snapshot, &meta)
        .await
        .map_err(|e| anyhow::anyhow!("put: {e}"))?;
    Ok((taken.snapshot.size(), taken.sha256))
}

/// The child's restore: the Job's fetch step.
async fn restore(args: &Args) -> anyhow::Result<(u64, String)> {
    let url_file = args.url_file.as_deref().context("--url-file")?;
    let out = args.out.as_deref().context("--out")?;
    let url = std::fs::read_to_string(url_file).context("the URL file")?;
    let (size, digest) = ferroplane::snapshot_fetch::download(url.trim(), out, None).await?;
    ferroplane::snapshot_fetch::check(&digest, args.sha256.as_deref())?;
    Ok((size, digest.database))
}

/// A deterministic, fast stream of pseudo-random bytes (xorshift64*).
struct Filler(u64);

impl Filler {
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let word = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

fn blob_line(bytes: &[u8]) -> Bytes {
    Bytes::from(format!(
        "{{\"result\":{{\"blob\":\"{}\"}}}}\n",
        STANDARD.encode(bytes)
    ))
}

/// The JSON gateway's snapshot stream of a `size`-byte database, its trailer last.
fn snapshot_stream(size: u64) -> Body {
    struct State {
        left: u64,
        filler: Filler,
        hasher: Option<Sha256>,
    }
    let state = State {
        left: size,
        filler: Filler(0x9E37_79B9_7F4A_7C15),
        hasher: Some(Sha256::new()),
    };
    let stream = futures::stream::unfold(state, |mut state| async move {
        if state.left == 0 {
            // The trailer, then the end (no hasher left).
            let trailer = state.hasher.take()?.finalize();
            return Some((
                Ok::<_, std::convert::Infallible>(blob_line(&trailer)),
                state,
            ));
        }
        let hasher = state.hasher.as_mut()?;
        let n = usize::try_from(state.left.min(BLOB as u64)).unwrap_or(BLOB);
        let mut block = vec![0u8; n];
        state.filler.fill(&mut block);
        hasher.update(&block);
        state.left -= n as u64;
        Some((Ok(blob_line(&block)), state))
    });
    Body::from_stream(stream)
}

/// Serves a synthetic member of a `size`-byte database on 127.0.0.1; returns its URL.
async fn synthetic_member(size: u64) -> anyhow::Result<String> {
    let app = axum::Router::new()
        .route(
            "/v3/maintenance/status",
            post(|| async { r#"{"header":{"revision":"1024"},"version":"3.6.0"}"# }),
        )
        .route(
            "/v3/maintenance/snapshot",
            post(move || async move { snapshot_stream(size) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{addr}"))
}

/// Runs this program as a child for one phase; returns its report.
async fn child(phase: &str, extra: &[(&str, &str)]) -> anyhow::Result<Report> {
    let exe = std::env::current_exe().context("cannot find this program")?;
    let mut command = tokio::process::Command::new(exe);
    command.arg("--phase").arg(phase);
    for (flag, value) in extra {
        command.arg(flag).arg(value);
    }
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("running the {phase} phase"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!("the {phase} phase failed ({}): {stdout}", output.status);
    }
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).with_context(|| format!("the {phase} phase's report: {last}"))
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

async fn parent(args: &Args) -> anyhow::Result<()> {
    let size = args.size_mib * 1024 * 1024;
    let mock = MockServer::start(MockConfig::new(AK, SECRET).with_transition_delay(Duration::ZERO))
        .await
        .map_err(|e| anyhow::anyhow!("the OSS mock: {e}"))?;
    let oss = oss_client(&mock.endpoint())?;
    oss.put_bucket(BUCKET)
        .await
        .map_err(|e| anyhow::anyhow!("bucket: {e}"))?;
    let etcd = synthetic_member(size).await?;
    eprintln!(
        "snapshot of {} MiB (synthetic database); load average {}",
        args.size_mib,
        loadavg()
    );

    let backup = child("backup", &[("--etcd", &etcd), ("--oss", &mock.endpoint())]).await?;
    eprintln!(
        "backup (stream from the member, verify, spool, PutObject): {} bytes in {:.1} s, peak RSS {:.1} MiB ({:.1} MiB at start)",
        backup.bytes, backup.seconds, backup.peak_rss_mib, backup.base_rss_mib
    );
    let head = oss
        .head_object(BUCKET, KEY)
        .await
        .map_err(|e| anyhow::anyhow!("the stored snapshot: {e}"))?;
    if head.size != backup.bytes
        || head.meta.get("etcd-sha256").map(String::as_str) != Some(backup.sha256.as_str())
    {
        bail!(
            "OSS holds {} bytes with {:?}, the backup sent {} bytes of {}",
            head.size,
            head.meta.get("etcd-sha256"),
            backup.bytes,
            backup.sha256
        );
    }

    let dir = tempfile::tempdir().context("a directory for the restore")?;
    let url_file = dir.path().join("url");
    let url = oss
        .presign_get(
            BUCKET,
            KEY,
            Timestamp::now() + jiff::SignedDuration::from_hours(1),
        )
        .map_err(|e| anyhow::anyhow!("signing: {e}"))?;
    std::fs::write(&url_file, url.as_str()).context("the URL file")?;
    let out = dir.path().join("scratch/snapshot.db");
    let restore = child(
        "restore",
        &[
            ("--url-file", path_str(&url_file)?),
            ("--out", path_str(&out)?),
            ("--sha256", &backup.sha256),
        ],
    )
    .await?;
    eprintln!(
        "restore fetch (signed GET, write, check): {} bytes in {:.1} s, peak RSS {:.1} MiB ({:.1} MiB at start)",
        restore.bytes, restore.seconds, restore.peak_rss_mib, restore.base_rss_mib
    );
    if restore.sha256 != backup.sha256 {
        bail!("the restore fetched another snapshot than the backup stored");
    }
    mock.shutdown().await;
    println!(
        "{}",
        serde_json::json!({
            "snapshot_bytes": backup.bytes,
            "backup_peak_rss_mib": round1(backup.peak_rss_mib),
            "backup_base_rss_mib": round1(backup.base_rss_mib),
            "backup_seconds": round1(backup.seconds),
            "restore_peak_rss_mib": round1(restore.peak_rss_mib),
            "restore_base_rss_mib": round1(restore.base_rss_mib),
            "restore_seconds": round1(restore.seconds),
            "load_average": loadavg(),
        })
    );
    Ok(())
}

fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str().context("a temporary path that is not UTF-8")
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
