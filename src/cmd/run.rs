//! `ferroplane run`: the production daemon. Controllers for the enabled kinds against the cluster
//! of the current kubeconfig (or the in-cluster config), `/healthz`, `/readyz` and `/metrics` on
//! `--metrics-addr`, optional Lease-based leader election, graceful shutdown on SIGTERM.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use ferroplane::controllers::{self, Kind, Options};
use ferroplane_runtime::leader::{self, LeaderConfig};
use ferroplane_runtime::{Metrics, Runtime, RuntimeConfig};
use tokio_util::sync::CancellationToken;

use crate::health::{self, ReadyFlag};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kinds to reconcile, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Kind::all())]
    kinds: Vec<Kind>,

    /// Watch only this namespace (default: all namespaces), for every kind: what a namespaced
    /// install (deploy/namespaced/, Roles only) allows.
    #[arg(long)]
    namespace: Option<String>,

    /// Address of the `/metrics`, `/healthz` and `/readyz` server.
    #[arg(long, default_value = "127.0.0.1:8080")]
    metrics_addr: SocketAddr,

    /// Reconcile only while holding the Lease `ferroplane-leader`, so that of several replicas
    /// exactly one works at a time.
    #[arg(long)]
    leader_elect: bool,

    /// Namespace of the leader-election Lease.
    #[arg(long, env = "POD_NAMESPACE", default_value = "ferroplane-system")]
    leader_election_namespace: String,

    /// Identity in the Lease (default: the pod name, else the host name and process ID).
    #[arg(long, env = "POD_NAME")]
    leader_election_identity: Option<String>,

    /// How often each resource is observed when nothing changes, e.g. `60s`, `5m`. A resource
    /// in transition (starting, stopping, being released) is observed every 5 s, or at this
    /// interval when it is shorter.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    poll_interval: Duration,

    /// Reconciles of one kind running at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    max_concurrent_reconciles: u16,

    /// Reconciles per second across all controllers (0 = unlimited).
    #[arg(long, default_value_t = 50.0)]
    rate_limit: f64,

    /// An endpoint namespaced ProviderConfigs may name in `endpoint` or `stsEndpoint`, besides
    /// `https://*.aliyuncs.com`: a URL (`http://10.0.0.5:8080`: exactly that scheme, host and
    /// port) or a host name (`https` on port 443). Repeat for more.
    #[arg(long = "allow-endpoint", value_name = "URL_OR_HOST", value_parser = parse_allowed_endpoint)]
    allow_endpoint: Vec<String>,

    /// Days a CA made for an EtcdCluster with generated TLS is valid.
    #[arg(long, default_value_t = 3650, value_parser = clap::value_parser!(i64).range(2..=36500))]
    etcd_ca_validity_days: i64,

    /// Days before its expiry at which such a CA is rotated (a new CA is trusted, the
    /// certificates are reissued from it, then the old one is dropped, the members restarting
    /// one at a time after each step). Less than `--etcd-ca-validity-days`.
    #[arg(long, default_value_t = 730, value_parser = clap::value_parser!(i64).range(1..=36499))]
    etcd_ca_renew_before_days: i64,

    /// Image of the ferroplane steps of EtcdCluster restore Jobs (fetching and checking the
    /// snapshot): this release's image by default; set it for a mirror or a private registry.
    #[arg(long, env = "FERROPLANE_TOOLS_IMAGE", default_value_t = provider_etcd::controller::default_tools_image())]
    tools_image: String,

    /// Observe each ECS instance with its own DescribeInstances call instead of batches of 100
    /// (what other providers do; for comparisons only).
    #[arg(long, hide = true)]
    no_batch_describe: bool,
}

fn parse_allowed_endpoint(text: &str) -> Result<String, String> {
    provider_alibaba::EndpointAllowList::default()
        .allow(text)
        .map(|()| text.to_owned())
        .map_err(|e| e.to_string())
}

/// The EtcdCluster CA policy of the flags; refused when rotation would start as soon as a CA
/// is made.
fn etcd_ca_policy(args: &Args) -> anyhow::Result<provider_etcd::tls::certs::CaPolicy> {
    anyhow::ensure!(
        args.etcd_ca_renew_before_days < args.etcd_ca_validity_days,
        "--etcd-ca-renew-before-days {} must be less than --etcd-ca-validity-days {}: a new CA would be rotated at once, forever",
        args.etcd_ca_renew_before_days,
        args.etcd_ca_validity_days
    );
    Ok(provider_etcd::tls::certs::CaPolicy {
        validity_days: args.etcd_ca_validity_days,
        renew_before_days: args.etcd_ca_renew_before_days,
    })
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    ferroplane_runtime::requeue::parse_duration(text).map_err(|e| e.to_string())
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let client = kube::Client::try_default()
        .await
        .context("cannot load a kubeconfig or the in-cluster configuration")?;
    let metrics = Metrics::new();
    let identity = args
        .leader_election_identity
        .clone()
        .unwrap_or_else(default_identity);
    let options = Options {
        kinds: args.kinds.clone(),
        namespace: args.namespace.clone(),
        poll_interval: args.poll_interval,
        max_concurrent_reconciles: args.max_concurrent_reconciles,
        batch_describe: !args.no_batch_describe,
        allowed_endpoints: allowed_endpoints(&args.allow_endpoint)?,
        etcd_ca: etcd_ca_policy(&args)?,
        tools_image: args.tools_image.clone(),
    };
    let config = RuntimeConfig {
        instance: Some(identity.clone()),
        rate_limit: args.rate_limit,
        controller: options.controller_config(),
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::with_metrics(client.clone(), config, metrics.clone());

    let shutdown = CancellationToken::new();
    let ready = ReadyFlag::default();
    let server = tokio::spawn(health::serve(
        args.metrics_addr,
        metrics,
        ready.clone(),
        shutdown.clone().cancelled_owned(),
    ));
    {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            if let Err(error) = ferroplane::signals::shutdown_signal().await {
                tracing::error!(%error, "cannot listen for signals; stopping");
            }
            tracing::info!("shutting down");
            shutdown.cancel();
        });
    }
    tracing::info!(kinds = ?options.kinds, namespace = ?options.namespace, metrics = %args.metrics_addr, "starting controllers");

    // A standby replica is ready too: it serves metrics and takes over when the leader goes.
    ready.set(true);
    if args.leader_elect {
        let lease = LeaderConfig::new(
            "ferroplane-leader",
            &args.leader_election_namespace,
            identity,
        );
        leader::run_while_leader(client, lease, shutdown.clone().cancelled_owned(), |token| {
            let runtime = runtime.clone();
            let options = options.clone();
            async move { controllers::run(&runtime, &options, token).await }
        })
        .await
        .context("leader election failed")?;
    } else {
        controllers::run(&runtime, &options, shutdown.clone()).await;
    }
    shutdown.cancel();
    match server.await {
        Ok(result) => result?,
        Err(error) => anyhow::bail!("the metrics server task failed: {error}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn allowed_endpoints(entries: &[String]) -> anyhow::Result<provider_alibaba::EndpointAllowList> {
    let mut list = provider_alibaba::EndpointAllowList::default();
    for entry in entries {
        list.allow(entry)
            .with_context(|| format!("invalid --allow-endpoint {entry}"))?;
    }
    Ok(list)
}

fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "ferroplane".to_owned());
    format!("{host}-{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_endpoint_takes_urls_and_hosts_and_refuses_the_rest() {
        assert!(parse_allowed_endpoint("http://10.0.0.5:8080").is_ok());
        assert!(parse_allowed_endpoint("ecs.proxy.example").is_ok());
        let error = parse_allowed_endpoint("ftp://10.0.0.5").unwrap_err();
        assert!(error.contains("http or https"), "{error}");
        let list = allowed_endpoints(&["http://10.0.0.5:8080".to_owned()]).unwrap();
        assert!(list.check("http://10.0.0.5:8080/").is_ok());
        assert!(list.check("http://10.0.0.5:8081/").is_err());
        assert!(list.check("https://ecs.cn-beijing.aliyuncs.com").is_ok());
    }

    #[derive(clap::Parser)]
    struct Run {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn the_etcd_ca_policy_defaults_to_ten_years_rotated_two_before_and_refuses_a_loop() {
        use clap::Parser as _;
        let defaults = Run::try_parse_from(["run"]).expect("parses").args;
        let policy = etcd_ca_policy(&defaults).expect("valid");
        assert_eq!(policy, provider_etcd::tls::certs::CaPolicy::default());
        assert_eq!(
            (policy.validity_days, policy.renew_before_days),
            (3650, 730)
        );
        let looping = Run::try_parse_from([
            "run",
            "--etcd-ca-validity-days",
            "30",
            "--etcd-ca-renew-before-days",
            "30",
        ])
        .expect("parses")
        .args;
        let error = etcd_ca_policy(&looping).unwrap_err().to_string();
        assert!(error.contains("must be less than"), "{error}");
    }
}
