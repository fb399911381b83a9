//! `ferroplane ecs-mock`: the ECS mock server alone, until Ctrl-C or SIGTERM.
//!
//! The first line on stdout is `listening on http://ADDR` (flushed), so scripts can start it with
//! `--listen 127.0.0.1:0` and read the port.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use alibaba_mock::{
    ApiRateLimits, DEFAULT_ACCOUNT_ID, ErrorInjection, Faults, MockConfig, MockServer, StockLimit,
    parse_api_rate_limits, parse_duration,
};
use alibaba_sdk::Secret;
use anyhow::Context as _;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on; port 0 picks a free port. Only a loopback address, unless
    /// --allow-remote is given: the mock accepts the key given here from anyone who reaches it.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,

    /// Allow --listen on a non-loopback address (reachable from other machines).
    #[arg(long)]
    allow_remote: bool,

    /// AccessKeyId the mock accepts.
    #[arg(long, env = "FERROPLANE_MOCK_ACCESS_KEY_ID")]
    access_key_id: String,

    /// AccessKeySecret of that key.
    #[arg(long, env = "FERROPLANE_MOCK_ACCESS_KEY_SECRET", hide_env_values = true, value_parser = parse_secret)]
    access_key_secret: Secret,

    /// Account that owns the key (instances are scoped to it).
    #[arg(long, default_value = DEFAULT_ACCOUNT_ID)]
    account_id: String,

    /// How long Pending, Starting and Stopping last (e.g. 0, 500ms, 2s).
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    transition_delay: Duration,

    /// Fraction (0-1) of requests answered with Throttling.User.
    #[arg(long, default_value_t = 0.0)]
    throttle_rate: f64,

    /// Fraction (0-1) of requests answered with ServiceUnavailable.
    #[arg(long, default_value_t = 0.0)]
    error_rate: f64,

    /// Fraction (0-1) of requests processed whose response is then dropped (connection cut).
    #[arg(long, default_value_t = 0.0)]
    drop_rate: f64,

    /// Calls allowed per account, region and action in each minute; more answer Throttling.User.
    #[arg(long)]
    api_rate_limit_per_minute: Option<u32>,

    /// Per-action quotas over --api-rate-limit-per-minute, as ECS's table of API rate limits:
    /// `RunInstances=600,DescribeInstances=3000` (calls per account, region and minute; a
    /// `/min` suffix is accepted). May be given several times.
    #[arg(long, value_parser = parse_api_rate_limits)]
    api_rate_limit: Vec<ApiRateLimits>,

    /// Delay added before every API answer (e.g. 0, 50ms).
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    latency: Duration,

    /// How long a new instance stays out of DescribeInstances and tag searches, and a released
    /// one stays in them, as on the real cloud (e.g. 0, 2s). Default 0: consistent at once.
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    visibility_lag: Duration,

    /// Most live instances per account; more answers QuotaExceed.ElasticQuota.
    #[arg(long)]
    instance_quota: Option<usize>,

    /// Stock of an instance type in a zone, repeatable: ZONE/TYPE=N (N more instances, then
    /// OperationDenied.NoStock), e.g. cn-hangzhou-b/ecs.g6.large=0. Changeable at run time with
    /// POST /_mock/stock.
    #[arg(long = "stock", value_name = "ZONE/TYPE=N", value_parser = StockLimit::parse)]
    stock: Vec<StockLimit>,

    /// An ECS error for the next calls, repeatable: CODE[:ACTION[:TIMES]], e.g.
    /// OperationConflict:StopInstance:2 or Forbidden.RAM (every action, once). More can be
    /// added at run time with POST /_mock/errors.
    #[arg(long = "inject-error", value_name = "CODE[:ACTION[:TIMES]]", value_parser = parse_injection)]
    inject_errors: Vec<ErrorInjection>,
}

fn parse_injection(raw: &str) -> Result<ErrorInjection, String> {
    let mut parts = raw.split(':');
    let code = parts.next().unwrap_or_default();
    let action = parts.next().filter(|a| !a.is_empty() && *a != "*");
    let times = match parts.next() {
        None => 1,
        Some(n) => n
            .parse()
            .map_err(|_| format!("`{n}` in `{raw}` is not a number of calls"))?,
    };
    if parts.next().is_some() {
        return Err(format!("`{raw}` is not CODE[:ACTION[:TIMES]]"));
    }
    let injection = ErrorInjection::new(code, action, times);
    injection.validate().map_err(|e| e.to_string())?;
    Ok(injection)
}

/// Why `--listen` was refused.
#[derive(Debug, PartialEq, Eq)]
pub struct RemoteListen(SocketAddr);

impl std::fmt::Display for RemoteListen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refusing to listen on {}: not a loopback address, and the mock accepts its key from anyone who reaches it; use --listen 127.0.0.1:PORT, or pass --allow-remote if other machines must reach it",
            self.0
        )
    }
}

impl std::error::Error for RemoteListen {}

/// A loopback `listen` address is always fine; any other needs `allow_remote`.
fn check_listen(listen: SocketAddr, allow_remote: bool) -> Result<(), RemoteListen> {
    if listen.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(RemoteListen(listen))
    }
}

fn parse_secret(value: &str) -> Result<Secret, std::convert::Infallible> {
    Ok(Secret::new(value))
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    check_listen(args.listen, args.allow_remote)?;
    let faults = Faults {
        throttle_rate: args.throttle_rate,
        error_rate: args.error_rate,
        latency: args.latency,
        retry_after_ms: None,
        drop_rate: args.drop_rate,
        api_rate_limit_per_minute: args.api_rate_limit_per_minute,
    };
    faults.validate().context("invalid fault rates")?;
    let mut config = MockConfig::new(args.access_key_id, args.access_key_secret.expose())
        .with_listen(args.listen)
        .with_transition_delay(args.transition_delay)
        .with_visibility_lag(args.visibility_lag)
        .with_faults(faults);
    config.instance_quota = args.instance_quota;
    config.api_rate_limits = args.api_rate_limit.into_iter().flatten().collect();
    config.injections = args.inject_errors;
    if let Some(key) = config.access_keys.first_mut() {
        key.account_id = args.account_id;
    }
    let mock = MockServer::start(config).await?;
    for limit in &args.stock {
        mock.set_stock(limit);
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", mock.endpoint()).context("cannot write to stdout")?;
    stdout.flush().context("cannot flush stdout")?;
    drop(stdout);
    tracing::info!(endpoint = %mock.endpoint(), "ECS mock serving; stop with Ctrl-C or SIGTERM");
    ferroplane::signals::shutdown_signal().await?;
    tracing::info!("stopping the ECS mock");
    mock.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_loopback_listen_address_needs_allow_remote() {
        use clap::Parser as _;

        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let parse = |extra: &[&str]| {
            let mut argv = vec![
                "ecs-mock",
                "--access-key-id",
                "ak",
                "--access-key-secret",
                "sk",
            ];
            argv.extend_from_slice(extra);
            Cli::try_parse_from(argv).unwrap().args
        };
        let local = parse(&[]);
        assert!(check_listen(local.listen, local.allow_remote).is_ok());
        assert_eq!(local.visibility_lag, Duration::ZERO);
        for addr in ["[::1]:0", "127.0.0.2:8080"] {
            let a = parse(&["--listen", addr]);
            assert!(check_listen(a.listen, a.allow_remote).is_ok(), "{addr}");
        }
        for addr in ["0.0.0.0:8080", "[::]:0", "192.168.1.10:80"] {
            let a = parse(&["--listen", addr]);
            let error = check_listen(a.listen, a.allow_remote).unwrap_err();
            assert!(error.to_string().contains("--allow-remote"), "{error}");
            let a = parse(&["--listen", addr, "--allow-remote"]);
            assert!(check_listen(a.listen, a.allow_remote).is_ok(), "{addr}");
        }
        let lagged = parse(&["--visibility-lag", "2s"]);
        assert_eq!(lagged.visibility_lag, Duration::from_secs(2));
    }

    #[test]
    fn injected_errors_parse() {
        assert_eq!(
            parse_injection("OperationConflict:StopInstance:2").unwrap(),
            ErrorInjection::new("OperationConflict", Some("StopInstance"), 2)
        );
        assert_eq!(
            parse_injection("Forbidden.RAM").unwrap(),
            ErrorInjection::new("Forbidden.RAM", None, 1)
        );
        assert_eq!(
            parse_injection("Throttling.Api:*:5").unwrap(),
            ErrorInjection::new("Throttling.Api", None, 5)
        );
        for bad in ["NoSuchCode", "Throttling:A:x", "Throttling:A:1:2"] {
            assert!(parse_injection(bad).is_err(), "{bad}");
        }
    }
}
