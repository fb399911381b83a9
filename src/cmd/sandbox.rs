//! `ferroplane sandbox`: the in-memory Kubernetes API server on 127.0.0.1, with a kubeconfig
//! for kubectl, until Ctrl-C or SIGTERM.
//!
//! Without `--api-only` it also starts the ECS mock, installs the CRDs, creates the
//! `alibabacloud-credentials` Secret and the `default` ProviderConfig pointing at the mock, and
//! runs every controller as ferroplane's ServiceAccount under deploy/'s RBAC, which the sandbox
//! enforces (see `ferroplane::environment`).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use ferroplane::environment::{Environment, EnvironmentConfig};
use ferroplane_sandbox::{Sandbox, SandboxConfig};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run only the Kubernetes API server (no ECS mock, no CRDs, no controllers).
    #[arg(long)]
    api_only: bool,

    /// How long ECS instances stay Pending, Starting or Stopping in the mock, e.g. `2s`, `0`.
    #[arg(long, default_value = "2s", value_parser = parse_mock_duration)]
    transition_delay: Duration,

    /// How late the mock lists new instances and unlists released ones, as ECS does (eventual
    /// consistency); `0` lists them at once.
    #[arg(long, default_value = "1s", value_parser = parse_mock_duration)]
    visibility_lag: Duration,

    /// How often the controllers observe each resource when nothing changes.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    poll_interval: Duration,

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

fn parse_duration(text: &str) -> Result<Duration, String> {
    ferroplane_runtime::requeue::parse_duration(text).map_err(|e| e.to_string())
}

/// The ECS mock's own duration syntax (as `ferroplane ecs-mock`), which also takes `0`.
fn parse_mock_duration(text: &str) -> Result<Duration, String> {
    alibaba_mock::parse_duration(text).map_err(|e| e.to_string())
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.api_only {
        return run_full(args).await;
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
    writeln!(stdout, "export KUBECONFIG={}", kubeconfig.display())
        .context("cannot write to stdout")?;
    stdout.flush().context("cannot flush stdout")?;
    drop(stdout);
    tracing::info!(url = %sandbox.url(), "sandbox API server serving; stop with Ctrl-C or SIGTERM");
    ferroplane::signals::shutdown_signal().await?;
    tracing::info!("stopping the sandbox");
    sandbox.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// The sandbox with the ECS mock and every controller.
async fn run_full(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = EnvironmentConfig::new(&args.dir);
    config.api_port = args.port;
    config.transition_delay = args.transition_delay;
    config.visibility_lag = args.visibility_lag;
    config.simulate_workloads = !args.no_simulate_workloads;
    if let Some(options) = config.controllers.as_mut() {
        options.poll_interval = args.poll_interval;
    }
    let environment = Environment::start(config).await?;
    let info = environment.info();
    let kubeconfig = info.kubeconfig.display();
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "export KUBECONFIG={kubeconfig}\n\
         \n\
         ferroplane sandbox is running (stop it with Ctrl-C):\n\
         \x20 Kubernetes API  {api}\n\
         \x20 ECS mock        {ecs}\n\
         \x20 ProviderConfig  default/default, credentials in Secret default/{secret}\n\
         \x20 CLI access      {access} (read by `ferroplane ecs call` and `import`)\n\
         \x20 Controllers     as ServiceAccount ferroplane-system/ferroplane, with deploy/rbac/'s rules\n\
         \x20                 ({controller_kubeconfig})\n\
         \n\
         Try, in another terminal:\n\
         \x20 export KUBECONFIG={kubeconfig}\n\
         \x20 kubectl apply -f deploy/samples/ecsinstance.yaml\n\
         \x20 kubectl get ecs -w                      # READY True after a few seconds\n\
         \x20 kubectl describe ecs ins-0702\n\
         \x20 kubectl patch ecs ins-0702 --type merge -p '{{\"spec\":{{\"forProvider\":{{\"desiredStatus\":\"Stopped\"}}}}}}'\n\
         \x20 kubectl delete ecs ins-0702             # releases the instance in the mock\n\
         \x20 kubectl apply -f deploy/samples/stack.yaml   # VPC, NAT, EIPs, rules, two instances\n\
         \x20 kubectl get managed\n\
         \x20 curl -s {ecs}/_mock/instances           # what the cloud holds\n\
         \x20 kubectl apply -f deploy/samples/application.yaml -f deploy/samples/etcdcluster.yaml\n\
         \x20 kubectl get managed",
        api = info.api_server,
        ecs = info.ecs_endpoint,
        secret = ferroplane::environment::CREDENTIALS_SECRET,
        access = args.dir.join(ferroplane::sandbox_access::FILE_NAME).display(),
        controller_kubeconfig = info.controller_kubeconfig.display(),
    )
    .context("cannot write to stdout")?;
    stdout.flush().context("cannot flush stdout")?;
    drop(stdout);
    ferroplane::signals::shutdown_signal().await?;
    tracing::info!("stopping the sandbox");
    environment.shutdown().await;
    ferroplane::sandbox_access::SandboxAccess::remove(&args.dir);
    Ok(ExitCode::SUCCESS)
}
