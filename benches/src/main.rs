//! `cargo run --release -p ferroplane-bench -- --instances N`: ferroplane at scale, measured.
//!
//! Runs the API server (`--cluster sandbox`, the default: the sandbox in this process; `--cluster
//! real`: the real control plane of ferroplane-testenv) and the ECS mock (transition delay 0) in
//! this process and the
//! ECSInstance controller in a child process (this program re-executed with `--controller`, the
//! same code path as `ferroplane run`), so the controller's memory is measured alone. Then:
//! 1. floor: a bare client creates N ECSInstances and patches each one's status once;
//! 2. N ECSInstances are applied and timed until all are Ready;
//! 3. Kubernetes writes per created object, ECS calls by action;
//! 4. steady state: DescribeInstances calls per poll round, batched, then with batching off
//!    (one call per object, what Crossplane does) after restarting the controller;
//! 5. the controller's peak resident memory (VmHWM), and per ECSInstance above its resident
//!    memory before the first object.
//!
//! With `--fleet`, one ECSFleet of N replicas instead (`fleet.rs`); with `--import`, an account
//! of N instances imported, applied, reconciled and planned (`import.rs`).
//!
//! The last line of stdout is one JSON object with the headline figures.

mod cluster;
mod controller_process;
mod fleet;
mod import;
mod namespaces;

// The allocator of the `ferroplane` binary, so that the controller is measured as it runs.
#[cfg(not(feature = "heap-profile"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
// A heap profile instead (slower, and its peak is not jemalloc's): where the bytes are.
#[cfg(feature = "heap-profile")]
#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Parser;
use cluster::{Cluster, ClusterKind};
use controller_process::{Child, ControllerSettings};
use ferroplane::controllers::{self, Kind, Options};
use ferroplane_apis::alibabacloud::{ECSInstance, ECSInstanceParameters, ECSInstanceSpec};
use ferroplane_runtime::{Runtime, RuntimeConfig};
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, Patch, PatchParams, PostParams};
use namespaces::{copy_credentials, create_namespace};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

const BENCH_NAMESPACE: &str = "bench";
const FLOOR_NAMESPACE: &str = "floor";

#[derive(Debug, Parser)]
#[command(
    about = "Scale benchmark of the ECSInstance controller against the sandbox and the ECS mock"
)]
struct Args {
    /// The API server: the sandbox, or the real kube-apiserver of ferroplane-testenv (built on
    /// first use, about 10 minutes on 2 cores).
    #[arg(long, value_enum, default_value = "sandbox")]
    cluster: ClusterKind,
    /// Number of ECSInstances.
    #[arg(long, default_value_t = 1000)]
    instances: usize,
    /// Poll interval of the controller in steady state.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    poll_interval: Duration,
    /// Poll rounds measured in steady state (per mode).
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Requests in flight when the benchmark (and the floor client) creates objects, and
    /// reconciles the controller runs at once.
    #[arg(long, default_value_t = 16)]
    concurrency: u16,
    /// Reconciles per second across the controller (0 = unlimited; `ferroplane run` defaults to 50).
    #[arg(long, default_value_t = 0.0)]
    rate_limit: f64,
    /// The account's API quota per action in the mock, as Alibaba Cloud's Quota Center lists
    /// it: `RunInstances=600/min` (per region and wall-clock minute; a list or several flags).
    /// With a RunInstances quota the benchmark reports the quota floor beside the time to Ready.
    #[arg(long, value_parser = alibaba_mock::parse_api_rate_limits)]
    api_rate_limit: Vec<alibaba_mock::ApiRateLimits>,
    /// Latency the mock adds to every ECS answer (e.g. 100ms).
    #[arg(long, default_value = "0ms", value_parser = parse_duration)]
    latency: Duration,
    /// Measure one ECSFleet of `--instances` replicas instead: placement with half the zones
    /// out of stock, then a rolling image change (see `fleet.rs`).
    #[arg(long, conflicts_with = "import")]
    fleet: bool,
    /// Measure `ferroplane import` instead: `--instances` instances made in the mock, imported
    /// with `--manage`, applied, reconciled and planned (see `import.rs`; needs the `ferroplane`
    /// binary built beside this one).
    #[arg(long)]
    import: bool,
    /// `--fleet`: the rollout's maxSurge (a number or a percentage).
    #[arg(long, default_value = "10%")]
    max_surge: String,
    /// `--fleet`: the rollout's maxUnavailable (a number or a percentage).
    #[arg(long, default_value = "10%")]
    max_unavailable: String,
    /// Write a heap profile of each controller process into this directory
    /// (`dhat-heap.<pid>.json`; build with `--features heap-profile`; `dhat-top` summarizes it).
    #[arg(long)]
    heap_profile: Option<std::path::PathBuf>,
    /// Internal: run the controller against `--kubeconfig` (the child process).
    #[arg(long, hide = true)]
    controller: bool,
    #[arg(long, hide = true)]
    kubeconfig: Option<std::path::PathBuf>,
    #[arg(long, hide = true)]
    no_batch_describe: bool,
    /// Internal: the ECS mock's endpoint, which the namespaced ProviderConfigs name.
    #[arg(long, hide = true)]
    allow_endpoint: Vec<String>,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    ferroplane_runtime::requeue::parse_duration(text).map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // The controller child inherits RUST_LOG and stderr from the benchmark.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if args.controller {
        return run_controller(args).await;
    }
    if args.heap_profile.is_some() && !cfg!(feature = "heap-profile") {
        bail!("--heap-profile needs a build with `--features heap-profile`");
    }
    run_benchmark(args).await
}

/// The child: the ECSInstance controller for the bench namespace, as `ferroplane run` wires it.
async fn run_controller(args: Args) -> anyhow::Result<()> {
    // Written when the controller returns (the benchmark stops it with SIGTERM).
    #[cfg(feature = "heap-profile")]
    let _profiler = args.heap_profile.as_ref().map(|dir| {
        dhat::Profiler::builder()
            .file_name(dir.join(format!("dhat-heap.{}.json", std::process::id())))
            .build()
    });
    let path = args
        .kubeconfig
        .context("--kubeconfig is required with --controller")?;
    let kubeconfig = kube::config::Kubeconfig::read_from(&path)?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let client = kube::Client::try_from(config)?;
    let runtime = Runtime::new(
        client,
        RuntimeConfig {
            rate_limit: args.rate_limit,
            ..RuntimeConfig::default()
        },
    );
    let options = Options {
        kinds: vec![Kind::EcsInstance],
        namespace: Some(BENCH_NAMESPACE.to_owned()),
        poll_interval: args.poll_interval,
        max_concurrent_reconciles: args.concurrency,
        batch_describe: !args.no_batch_describe,
        allowed_endpoints: {
            let mut list = provider_alibaba::EndpointAllowList::default();
            for entry in &args.allow_endpoint {
                list.allow(entry)
                    .with_context(|| format!("invalid --allow-endpoint {entry}"))?;
            }
            list
        },
        ..Options::default()
    };
    let stop = CancellationToken::new();
    let signal = stop.clone();
    tokio::spawn(async move {
        let _ = ferroplane::signals::shutdown_signal().await;
        signal.cancel();
    });
    controllers::run(&runtime, &options, stop).await;
    Ok(())
}

fn settings(args: &Args) -> ControllerSettings {
    ControllerSettings {
        poll_interval: args.poll_interval,
        concurrency: args.concurrency,
        rate_limit: args.rate_limit,
        heap_profile: args.heap_profile.clone(),
    }
}

async fn run_benchmark(args: Args) -> anyhow::Result<()> {
    let n = args.instances;
    let mut env = Cluster::start(args.cluster).await?;
    let client = env.client();
    for ns in [BENCH_NAMESPACE, FLOOR_NAMESPACE] {
        create_namespace(&client, ns).await?;
    }
    copy_credentials(&client, &[BENCH_NAMESPACE, FLOOR_NAMESPACE]).await?;
    if args.fleet {
        for (action, per_minute) in args.api_rate_limit.iter().flatten() {
            env.mock().set_api_rate_limit(action, Some(*per_minute));
            println!("ECS quota: {action} {per_minute} calls per minute");
        }
        let bench = fleet::FleetBench {
            replicas: n,
            max_surge: args.max_surge.clone(),
            max_unavailable: args.max_unavailable.clone(),
            controller: settings(&args),
            run_instances_per_minute: args
                .api_rate_limit
                .iter()
                .flatten()
                .find(|(action, _)| action.as_str() == "RunInstances")
                .map(|(_, per_minute)| *per_minute),
        };
        let summary = fleet::run(&mut env, &bench).await;
        env.shutdown().await;
        println!("{}", summary?);
        return Ok(());
    }
    if args.import {
        let bench = import::ImportBench {
            instances: n,
            namespace: BENCH_NAMESPACE,
            concurrency: args.concurrency as usize,
            controller: settings(&args),
        };
        let summary = import::run(&mut env, &bench).await;
        env.shutdown().await;
        println!("{}", summary?);
        return Ok(());
    }
    println!(
        "ferroplane-bench: {n} ECSInstances on {}, concurrency {}, poll interval {:?}, rate limit {}",
        env.describe(),
        args.concurrency,
        args.poll_interval,
        if args.rate_limit > 0.0 {
            args.rate_limit.to_string()
        } else {
            "none".into()
        }
    );

    let quotas: alibaba_mock::ApiRateLimits = args
        .api_rate_limit
        .iter()
        .flatten()
        .map(|(a, n)| (a.clone(), *n))
        .collect();
    for (action, per_minute) in &quotas {
        env.mock().set_api_rate_limit(action, Some(*per_minute));
        println!("ECS quota: {action} {per_minute} calls per minute");
    }
    if !args.latency.is_zero() {
        env.mock()
            .set_faults(alibaba_mock::Faults {
                latency: args.latency,
                ..alibaba_mock::Faults::default()
            })
            .context("cannot set the mock's latency")?;
        println!("ECS latency: {:?} per answer", args.latency);
    }

    // 1. The floor: what a bare client needs to create N objects and patch each status once.
    let floor = measure_floor(&client, n, args.concurrency as usize).await?;
    println!(
        "floor: {n} creates + {n} status patches in {:.2} s",
        floor.as_secs_f64()
    );

    // 2. The controller, then N ECSInstances until all are Ready.
    env.reset_writes().await?;
    let child = Child::spawn(
        &settings(&args),
        &env.kubeconfig(),
        &env.ecs_endpoint(),
        true,
    )?;
    // The controller's memory with no object yet (caches synced, empty): the base the
    // per-instance figure is counted from.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let base_rss = child.rss_mib().unwrap_or(f64::NAN);
    let started = Instant::now();
    create_instances(&client, BENCH_NAMESPACE, n, args.concurrency as usize).await?;
    let created = started.elapsed();
    // About 20 ms per instance on the 2-core VM at N = 10,000; ample beyond that.
    let ready_timeout = Duration::from_secs(600).max(Duration::from_millis(50) * n as u32);
    wait_all_ready(&client, n, ready_timeout).await?;
    let to_ready = started.elapsed();
    println!(
        "ready: all {n} Ready after {:.2} s (applying them took {:.2} s); {:.2}x the floor",
        to_ready.as_secs_f64(),
        created.as_secs_f64(),
        to_ready.as_secs_f64() / floor.as_secs_f64()
    );

    // 3. Writes and cloud calls of the create phase.
    let writes = env.writes().await?;
    let object_writes: u64 = writes
        .iter()
        .filter(|((verb, resource), _)| verb != "create" && resource.starts_with("ecsinstances."))
        .map(|(_, count)| count)
        .sum();
    let writes_per_create = object_writes as f64 / n as f64;
    println!(
        "kubernetes writes during the create phase (excluding the benchmark's own {n} creates):"
    );
    for ((verb, resource), count) in &writes {
        println!("  {verb:>6} {resource}: {count}");
    }
    println!(
        "  => {writes_per_create:.2} writes per created object to the object itself (finalizer, external name, status)"
    );
    print_calls(
        "ECS calls during the create phase",
        &env.mock().stats().calls,
    );
    let stats = env.mock().stats();
    println!(
        "instances created {} / live {} (expected {n} / {n})",
        stats.instances_created, stats.instances_live
    );
    let ecs_calls: u64 = stats.calls.values().sum();
    let throttled: u64 = stats
        .errors
        .iter()
        .filter(|(code, _)| code.starts_with("Throttling"))
        .map(|(_, count)| count)
        .sum();
    let ecs_calls_per_create = ecs_calls as f64 / n as f64;
    let throttled_fraction = throttled as f64 / (ecs_calls as f64).max(1.0);
    println!(
        "  => {ecs_calls_per_create:.2} ECS calls per created instance, {throttled} of {ecs_calls} answers throttled ({:.1} %)",
        throttled_fraction * 100.0
    );
    // What the RunInstances quota alone allows: N creates at its rate.
    let quota_floor = quotas
        .get("RunInstances")
        .map(|per_minute| n as f64 / (f64::from(*per_minute) / 60.0));
    if let Some(quota_floor) = quota_floor {
        println!(
            "quota floor: {quota_floor:.1} s for {n} RunInstances; Ready after {:.2}x that",
            to_ready.as_secs_f64() / quota_floor
        );
    }
    if stats.instances_created != n as u64 {
        bail!(
            "expected exactly {n} instances created, the mock created {}",
            stats.instances_created
        );
    }

    // 4. Steady state, batched, once the create phase's last observations have gone by.
    tokio::time::sleep(args.poll_interval).await;
    let batched = steady_state_describe_calls(env.mock(), &args).await;
    let peak_rss = child.peak_rss_mib().unwrap_or(f64::NAN);
    child.stop().await;
    println!("steady state, batched: {batched:.1} DescribeInstances per poll round");
    let kib_per_instance = (peak_rss - base_rss) * 1024.0 / n as f64;
    println!(
        "controller peak RSS: {peak_rss:.1} MiB; {base_rss:.1} MiB before the first object, so {kib_per_instance:.2} KiB per ECSInstance above that"
    );

    // ... and unbatched, with a fresh controller (one DescribeInstances per object).
    let child = Child::spawn(
        &settings(&args),
        &env.kubeconfig(),
        &env.ecs_endpoint(),
        false,
    )?;
    // Let the restarted controller's initial pass over every object go by first.
    tokio::time::sleep(args.poll_interval).await;
    let unbatched = steady_state_describe_calls(env.mock(), &args).await;
    child.stop().await;
    println!(
        "steady state, unbatched: {unbatched:.1} DescribeInstances per poll round ({:.0}x more)",
        unbatched / batched.max(f64::MIN_POSITIVE)
    );

    env.shutdown().await;
    let summary = serde_json::json!({
        "cluster": format!("{:?}", args.cluster).to_lowercase(),
        "instances": n,
        "seconds_to_ready": round2(to_ready.as_secs_f64()),
        "floor_seconds": round2(floor.as_secs_f64()),
        "describe_calls_per_poll": round2(batched),
        "unbatched_describe_calls_per_poll": round2(unbatched),
        "kube_writes_per_create": round2(writes_per_create),
        "ecs_calls_per_create": round2(ecs_calls_per_create),
        "throttled_fraction": round2(throttled_fraction * 1000.0) / 1000.0,
        "quota_floor_seconds": quota_floor.map(round2),
        "peak_rss_mib": round2(peak_rss),
        "base_rss_mib": round2(base_rss),
        "kib_per_instance": round2(kib_per_instance),
    });
    println!("{summary}");
    Ok(())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn print_calls(title: &str, calls: &BTreeMap<String, u64>) {
    println!("{title}:");
    for (action, count) in calls {
        println!("  {action}: {count}");
    }
}

async fn steady_state_describe_calls(mock: &alibaba_mock::MockServer, args: &Args) -> f64 {
    let before = mock
        .stats()
        .calls
        .get("DescribeInstances")
        .copied()
        .unwrap_or(0);
    tokio::time::sleep(args.poll_interval * args.rounds).await;
    let after = mock
        .stats()
        .calls
        .get("DescribeInstances")
        .copied()
        .unwrap_or(0);
    (after - before) as f64 / f64::from(args.rounds)
}

fn instance(name: String) -> ECSInstance {
    let mut object = ECSInstance::new(
        &name,
        ECSInstanceSpec {
            deletion_policy: Default::default(),
            management_policies: ferroplane_apis::common::default_management_policies(),
            provider_config_ref: Default::default(),
            write_connection_secret_to_ref: None,
            for_provider: ECSInstanceParameters {
                region_id: "cn-beijing".into(),
                image_id: "centos_7_8_x64_20G_alibase_20200519.vhd".into(),
                instance_type: "ecs.g6.large".into(),
                instance_name: Some(name.clone()),
                internet_max_bandwidth_out: Some(1),
                v_switch_id: alibaba_mock::defaults::first_vswitch_id("cn-beijing"),
                security_group_ids: Some(vec![alibaba_mock::defaults::security_group_id(
                    "cn-beijing",
                )]),
                ..ECSInstanceParameters::default()
            },
        },
    );
    object.metadata.labels = Some([("bench".to_owned(), "true".to_owned())].into());
    object
}

async fn create_instances(
    client: &kube::Client,
    ns: &str,
    n: usize,
    concurrency: usize,
) -> anyhow::Result<()> {
    let api: Api<ECSInstance> = Api::namespaced(client.clone(), ns);
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &instance(format!("vm-{i:05}")))
                    .await
                    .map(|_| ())
            }
        })
        .buffer_unordered(concurrency)
        .try_collect::<Vec<()>>()
        .await
        .context("creating ECSInstances failed")?;
    Ok(())
}

async fn measure_floor(
    client: &kube::Client,
    n: usize,
    concurrency: usize,
) -> anyhow::Result<Duration> {
    let api: Api<ECSInstance> = Api::namespaced(client.clone(), FLOOR_NAMESPACE);
    let started = Instant::now();
    create_instances(client, FLOOR_NAMESPACE, n, concurrency).await?;
    let limiter = Arc::new(Semaphore::new(concurrency));
    let now = jiff::Timestamp::now().to_string();
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        let api = api.clone();
        let limiter = Arc::clone(&limiter);
        let status = serde_json::json!({"status": {
            "atProvider": {"instanceId": format!("i-floor{i:05}"), "status": "Running"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now}],
        }});
        tasks.push(tokio::spawn(async move {
            let _permit = limiter.acquire().await;
            api.patch_status(
                &format!("vm-{i:05}"),
                &PatchParams::default(),
                &Patch::Merge(&status),
            )
            .await
            .map(|_| ())
        }));
    }
    for task in tasks {
        task.await?.context("floor status patch failed")?;
    }
    Ok(started.elapsed())
}

/// Waits until all `n` ECSInstances are Ready, following a watch (a full LIST every few
/// hundred milliseconds would itself load the API server the controller shares).
async fn wait_all_ready(client: &kube::Client, n: usize, timeout: Duration) -> anyhow::Result<()> {
    use kube::runtime::{WatchStreamExt, watcher};
    let api: Api<ECSInstance> = Api::namespaced(client.clone(), BENCH_NAMESPACE);
    let mut ready = std::collections::HashSet::new();
    let events = watcher(api, watcher::Config::default()).applied_objects();
    futures::pin_mut!(events);
    let deadline = tokio::time::Instant::now() + timeout;
    while ready.len() < n {
        let next = tokio::time::timeout_at(deadline, events.next()).await;
        let Ok(Some(event)) = next else {
            bail!(
                "only {} of {n} ECSInstances became Ready within {timeout:?}",
                ready.len()
            );
        };
        let object = event.context("watch of ECSInstances failed")?;
        let is_ready = object.status.as_ref().is_some_and(|s| {
            s.conditions.iter().any(|c| {
                c.type_ == "Ready" && c.status == ferroplane_apis::common::ConditionStatus::True
            })
        });
        let name = object.metadata.name.unwrap_or_default();
        if is_ready {
            ready.insert(name);
        } else {
            ready.remove(&name);
        }
    }
    Ok(())
}
