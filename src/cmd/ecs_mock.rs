//! `ferroplane ecs-mock`: the ECS mock server alone, until Ctrl-C or SIGTERM.
//!
//! The first line on stdout is `listening on http://ADDR` (flushed), so scripts can start it with
//! `--listen 127.0.0.1:0` and read the port.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use alibaba_mock::{
    DEFAULT_ACCOUNT_ID, ErrorInjection, Faults, MockConfig, MockServer, parse_duration,
};
use alibaba_sdk::Secret;
use anyhow::Context as _;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,

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

    /// Delay added before every API answer (e.g. 0, 50ms).
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    latency: Duration,

    /// Most live instances per account; more answers QuotaExceed.ElasticQuota.
    #[arg(long)]
    instance_quota: Option<usize>,

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

fn parse_secret(value: &str) -> Result<Secret, std::convert::Infallible> {
    Ok(Secret::new(value))
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
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
        .with_faults(faults);
    config.instance_quota = args.instance_quota;
    config.injections = args.inject_errors;
    if let Some(key) = config.access_keys.first_mut() {
        key.account_id = args.account_id;
    }
    let mock = MockServer::start(config).await?;
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
