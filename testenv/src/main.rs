//! `ferroplane-testenv`: builds the real control plane (`build`) or builds what is missing and
//! runs it in the foreground (`up --dir D`) until SIGTERM or Ctrl-C.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use ferroplane_testenv::{Builder, Component, ControlPlane, Options};
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser)]
#[command(about = "A real Kubernetes control plane on 127.0.0.1, built from Go modules")]
struct Cli {
    /// Where built programs are cached.
    #[arg(long, global = true, env = "FERROPLANE_TESTENV_CACHE")]
    cache: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build every component that is not cached yet (about 11 minutes cold on 2 cores).
    Build,
    /// Start the control plane; writes D/kubeconfig and D/ready once healthy, and stops every
    /// process on SIGTERM or Ctrl-C.
    Up {
        /// The control plane's directory: kubeconfig, ready, logs/, certificates, etcd's data.
        #[arg(long)]
        dir: PathBuf,
        /// How many fake nodes to register.
        #[arg(long, default_value_t = 2)]
        nodes: usize,
    },
    /// Print the pinned versions and whether each is built.
    Versions,
    /// Build the pinned Helm CLI (`helm` in versions.yaml), which the chart's tests run.
    BuildHelm,
    /// Build Crossplane core and its CLI at their pinned versions (`crossplane`,
    /// `crossplane_cli` in versions.yaml) and the composition function of the Crossplane tests.
    BuildCrossplane,
    /// Build etcd releases for EtcdCluster members (`etcd_members`), e.g. `v3.5.35 v3.6.16`;
    /// without a version, the pinned `etcd_upgrade_from`.
    BuildEtcd {
        versions: Vec<String>,
        /// Also build each release's `etcdutl` (3.5 and later), which restores snapshots.
        #[arg(long)]
        etcdutl: bool,
    },
}

fn main() -> ExitCode {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let code = runtime.block_on(run());
    // Not waiting for the runtime's blocking threads: after a signal during `build` there may
    // be one still running `go`, which the signal reached too.
    runtime.shutdown_background();
    code
}

async fn run() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::BuildEtcd {
            mut versions,
            etcdutl,
        } => {
            let builder = Builder::new(cli.cache);
            if versions.is_empty() {
                versions.push(builder.versions().etcd_upgrade_from.clone());
            }
            tokio::task::spawn_blocking(move || {
                for version in versions {
                    let etcd = builder.ensure_etcd(&version)?;
                    eprintln!("etcd {version}: {}", etcd.display());
                    if etcdutl {
                        let etcdutl = builder.ensure_etcdutl(&version)?;
                        eprintln!("etcdutl {version}: {}", etcdutl.display());
                    }
                }
                Ok(())
            })
            .await
            .expect("the build thread does not panic")
        }
        Cmd::BuildHelm => {
            let builder = Builder::new(cli.cache);
            tokio::task::spawn_blocking(move || {
                let helm = builder.ensure_helm()?;
                eprintln!("helm {}: {}", builder.versions().helm, helm.display());
                Ok(())
            })
            .await
            .expect("the build thread does not panic")
        }
        Cmd::BuildCrossplane => {
            let builder = Builder::new(cli.cache);
            tokio::task::spawn_blocking(move || {
                let (core, crds) = builder.ensure_crossplane()?;
                let versions = builder.versions();
                eprintln!(
                    "crossplane {}: {} (CRDs in {})",
                    versions.crossplane,
                    core.display(),
                    crds.display()
                );
                let cli = builder.ensure_crossplane_cli()?;
                eprintln!(
                    "crossplane CLI {}: {}",
                    versions.crossplane_cli,
                    cli.display()
                );
                let function = builder.ensure_composition_function()?;
                eprintln!("composition function: {}", function.display());
                Ok(())
            })
            .await
            .expect("the build thread does not panic")
        }
        Cmd::Build => {
            let builder = Builder::new(cli.cache);
            let built = tokio::task::spawn_blocking(move || {
                builder.ensure_all()?;
                Ok(Component::ALL.map(|c| {
                    (
                        c,
                        builder.versions().of(c).to_string(),
                        builder.component_dir(c),
                    )
                }))
            })
            .await
            .expect("the build thread does not panic");
            built.map(|components| {
                for (c, version, dir) in components {
                    eprintln!("{} {version}: {}", c.name(), dir.display());
                }
            })
        }
        Cmd::Versions => {
            let builder = Builder::new(cli.cache);
            for c in Component::ALL.into_iter().chain([
                Component::Helm,
                Component::Crossplane,
                Component::CrossplaneCli,
            ]) {
                let state = if builder.is_built(c) {
                    "built"
                } else {
                    "not built"
                };
                println!(
                    "{:<10} {} {:<8} {state}: {}",
                    c.name(),
                    c.module(),
                    builder.versions().of(c),
                    builder.component_dir(c).display()
                );
            }
            Ok(())
        }
        Cmd::Up { dir, nodes } => up(dir, nodes, cli.cache).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn up(dir: PathBuf, nodes: usize, cache: Option<PathBuf>) -> ferroplane_testenv::Result<()> {
    let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("a SIGINT handler");
    let opts = Options {
        dir: Some(dir),
        nodes,
        cache_dir: cache,
        ..Options::default()
    };
    // A signal during the build or the start stops it too: dropping the future drops whatever
    // was started.
    let mut cp = tokio::select! {
        cp = ControlPlane::start(opts) => cp?,
        _ = term.recv() => return Ok(()),
        _ = int.recv() => return Ok(()),
    };
    let kubeconfig = cp.kubeconfig_path();
    eprintln!(
        "\nready in {:.1} s: Kubernetes {} (etcd {}, kwok {}), nodes {}\n\n  export KUBECONFIG={}\n  kubectl get nodes\n\nlogs in {}; Ctrl-C or SIGTERM stops everything.",
        cp.started_in().as_secs_f64(),
        cp.versions().kubernetes,
        cp.versions().etcd,
        cp.versions().kwok,
        cp.nodes().join(", "),
        kubeconfig.display(),
        cp.log_path("")
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let outcome = loop {
        tokio::select! {
            _ = term.recv() => break Ok(()),
            _ = int.recv() => break Ok(()),
            _ = tick.tick() => {
                if let Err(e) = cp.check_running() {
                    break Err(e);
                }
            }
        }
    };
    tracing::info!("stopping");
    cp.stop();
    outcome
}
