//! The controller under measurement, in a child process of its own (this program re-executed
//! with `--controller`), so that its memory is measured alone.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;

/// What the child controller is started with.
pub struct ControllerSettings {
    pub poll_interval: Duration,
    pub concurrency: u16,
    pub rate_limit: f64,
    /// Where the child writes its heap profile (`--heap-profile`).
    pub heap_profile: Option<std::path::PathBuf>,
}

/// How long a stopped child may take to write its heap profile and exit before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(120);

pub struct Child {
    process: tokio::process::Child,
}

impl Child {
    pub fn spawn(
        settings: &ControllerSettings,
        kubeconfig: &std::path::Path,
        ecs_endpoint: &str,
        batching: bool,
    ) -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("cannot find this program")?;
        let mut command = tokio::process::Command::new(exe);
        command
            .arg("--controller")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--poll-interval")
            .arg(format!("{}ms", settings.poll_interval.as_millis()))
            .arg("--concurrency")
            .arg(settings.concurrency.to_string())
            .arg("--rate-limit")
            .arg(settings.rate_limit.to_string())
            .arg("--allow-endpoint")
            .arg(ecs_endpoint)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if !batching {
            command.arg("--no-batch-describe");
        }
        if let Some(dir) = &settings.heap_profile {
            command.arg("--heap-profile").arg(dir);
        }
        Ok(Self {
            process: command
                .spawn()
                .context("cannot start the controller process")?,
        })
    }

    /// Peak resident memory of the child in MiB, from /proc.
    pub fn peak_rss_mib(&self) -> Option<f64> {
        self.status_mib("VmHWM:")
    }

    /// Resident memory of the child now, in MiB.
    pub fn rss_mib(&self) -> Option<f64> {
        self.status_mib("VmRSS:")
    }

    fn status_mib(&self, field: &str) -> Option<f64> {
        let pid = self.process.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }

    /// Stops the child: SIGTERM, as a Deployment's pod is stopped, so that a heap profile is
    /// written; SIGKILL after [`STOP_GRACE`].
    pub async fn stop(mut self) {
        if let Some(pid) = self.process.id() {
            // SAFETY: kill(2) on our own child, which has not been reaped (`id` is Some).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            if tokio::time::timeout(STOP_GRACE, self.process.wait())
                .await
                .is_ok()
            {
                return;
            }
        }
        let _ = self.process.start_kill();
        let _ = self.process.wait().await;
    }
}
