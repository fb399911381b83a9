//! `ferroplane sandbox`: the in-memory Kubernetes API server on 127.0.0.1, with a kubeconfig
//! for kubectl, until Ctrl-C or SIGTERM.
//!
//! Only `--api-only` exists for now: the full sandbox (ECS mock and controllers) arrives with the
//! ECSInstance controller, and until then the command runs the API server alone either way.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use ferroplane_sandbox::{Sandbox, SandboxConfig};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run only the Kubernetes API server (no ECS mock, no controllers).
    #[arg(long)]
    api_only: bool,

    /// Directory for the kubeconfig (`DIR/kubeconfig`).
    #[arg(long, default_value = ".ferroplane")]
    dir: PathBuf,

    /// Port on 127.0.0.1; 0 or absent picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// Do not mark Deployments and StatefulSets ready.
    #[arg(long)]
    no_simulate_workloads: bool,

    /// How long after a change the simulator marks a workload ready, in milliseconds.
    #[arg(long, default_value_t = 500)]
    workload_delay_ms: u64,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.api_only {
        eprintln!(
            "note: the full sandbox (ECS mock and controllers) arrives with the ECSInstance controller; running the API server only"
        );
    }
    let config = SandboxConfig {
        port: args.port,
        simulate_workloads: !args.no_simulate_workloads,
        workload_delay: Duration::from_millis(args.workload_delay_ms),
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::start(config).await?;
    let kubeconfig = sandbox.write_kubeconfig(&args.dir)?;
    let kubeconfig = std::path::absolute(&kubeconfig).unwrap_or(kubeconfig);
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "export KUBECONFIG={}", kubeconfig.display()).context("cannot write to stdout")?;
    stdout.flush().context("cannot flush stdout")?;
    drop(stdout);
    tracing::info!(url = %sandbox.url(), "sandbox API server serving; stop with Ctrl-C or SIGTERM");
    shutdown_signal().await?;
    tracing::info!("stopping the sandbox");
    sandbox.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result.context("cannot listen for Ctrl-C")?,
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    Ok(())
}
