//! `ferroplane ecs call ACTION`: signs and sends any ECS action and prints the JSON response.
//!
//! Credentials come from `ALIBABA_CLOUD_ACCESS_KEY_ID`, `ALIBABA_CLOUD_ACCESS_KEY_SECRET` and
//! optional `ALIBABA_CLOUD_SECURITY_TOKEN`. An ECS error prints its code, message and request ID
//! on stderr and exits with status 1; anything else that fails (no credentials, unreachable
//! endpoint) is reported by `main` and exits with status 1 too.
//!
//! Safe on a real account, as Alibaba's official SDKs are: an action that takes a `ClientToken`
//! gets a fresh one (a UUID) when `--param ClientToken=...` is not given, so a retry after a lost
//! response cannot act twice; a write without a token is sent once and never retried (see
//! [`alibaba_sdk::ecs::retry_safety`]).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use alibaba_sdk::Error;
use alibaba_sdk::credentials::{CredentialsProvider, EnvProvider};
use alibaba_sdk::ecs::{EcsClient, RetrySafety, retry_safety};
use alibaba_sdk::rpc::{HttpMethod, Params, RetryPolicy, SignatureVersion};
use anyhow::Context as _;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: EcsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum EcsCommand {
    /// Sign and send one ECS API action, e.g. `ferroplane ecs call DescribeRegions`.
    Call(CallArgs),
}

#[derive(Debug, clap::Args)]
struct CallArgs {
    /// The action, e.g. DescribeInstances.
    action: String,

    /// Region ID; also sent as RegionId unless a --param sets it.
    #[arg(long, env = "ALIBABA_CLOUD_REGION_ID", default_value = "cn-hangzhou")]
    region: String,

    /// Endpoint URL instead of the region's (e.g. http://127.0.0.1:8080 for the mock).
    #[arg(long)]
    endpoint: Option<String>,

    /// Use the region's VPC-internal endpoint.
    #[arg(long, conflicts_with = "endpoint")]
    vpc: bool,

    /// A request parameter, repeatable: --param InstanceIds='["i-1"]' --param PageSize=50.
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    params: Vec<(String, String)>,

    /// Signature scheme.
    #[arg(long, value_enum, default_value_t = Signature::V1)]
    signature: Signature,

    /// HTTP method.
    #[arg(long, value_enum, default_value_t = Method::Post, ignore_case = true)]
    method: Method,

    /// Attempts in total for throttling, 5xx and transport errors (1 disables retries). Writes
    /// without a ClientToken are never retried.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=20))]
    max_attempts: u16,

    /// Per-attempt request timeout in seconds.
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Signature {
    V1,
    V3,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Method {
    Get,
    Post,
}

fn parse_param(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("`{raw}` is not KEY=VALUE")),
    }
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        EcsCommand::Call(call_args) => {
            let stdout = std::io::stdout();
            let stderr = std::io::stderr();
            call(
                call_args,
                EnvProvider::new(),
                &mut stdout.lock(),
                &mut stderr.lock(),
            )
            .await
        }
    }
}

async fn call(
    args: CallArgs,
    credentials: impl CredentialsProvider + 'static,
    out: &mut impl Write,
    err: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let mut builder = EcsClient::builder(&args.region)
        .credentials(credentials)
        .vpc(args.vpc)
        .signature(match args.signature {
            Signature::V1 => SignatureVersion::V1,
            Signature::V3 => SignatureVersion::V3,
        })
        .method(match args.method {
            Method::Get => HttpMethod::Get,
            Method::Post => HttpMethod::Post,
        })
        .request_timeout(Duration::from_secs(args.timeout_secs));
    let mut params: Params = args.params.into_iter().collect();
    let retry = match retry_safety(&args.action, &mut params) {
        RetrySafety::ReadOnly | RetrySafety::Idempotent => RetryPolicy {
            max_attempts: usize::from(args.max_attempts),
            ..RetryPolicy::default()
        },
        RetrySafety::NotIdempotent => RetryPolicy::none(),
    };
    builder = builder.retry(retry);
    if let Some(endpoint) = &args.endpoint {
        builder = builder.endpoint(endpoint);
    }
    let client = builder.build().context("cannot set up the ECS client")?;
    match client.call(&args.action, &params).await {
        Ok(response) => {
            serde_json::to_writer_pretty(&mut *out, &response)?;
            writeln!(out)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(Error::Api(api)) => {
            writeln!(err, "error: {}: {}", api.code, api.message)?;
            if let Some(request_id) = &api.request_id {
                writeln!(err, "request id: {request_id}")?;
            }
            writeln!(err, "HTTP status: {}", api.http_status)?;
            if let Some(recommend) = &api.recommend {
                writeln!(err, "recommend: {recommend}")?;
            }
            Ok(ExitCode::FAILURE)
        }
        // Transport and credential errors name the action and what to check already.
        Err(other) => Err(other.into()),
    }
}

#[cfg(test)]
mod tests {
    use alibaba_mock::{MockConfig, MockServer};
    use alibaba_sdk::credentials::Credentials;
    use clap::Parser as _;

    use super::*;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn call_args(argv: &[&str]) -> CallArgs {
        let cli = Cli::try_parse_from(std::iter::once("ecs").chain(argv.iter().copied())).unwrap();
        let EcsCommand::Call(args) = cli.args.command;
        args
    }

    /// Runs `ecs` with `argv` and the given secret for access key `cli-ak`; returns the result
    /// and what it printed to stdout and stderr.
    async fn run_call(argv: &[&str], secret: &str) -> (anyhow::Result<ExitCode>, Vec<u8>, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let result = call(
            call_args(argv),
            Credentials::new("cli-ak", secret),
            &mut out,
            &mut err,
        )
        .await;
        (result, out, String::from_utf8(err).unwrap())
    }

    #[test]
    fn parses_params_and_options() {
        let args = call_args(&[
            "call",
            "DescribeInstances",
            "--region",
            "cn-beijing",
            "--param",
            "InstanceIds=[\"i-1\"]",
            "--param",
            "Tag.1.Value=a=b",
            "--signature",
            "v3",
            "--method",
            "GET",
        ]);
        assert_eq!(args.action, "DescribeInstances");
        assert_eq!(args.params[0], ("InstanceIds".into(), "[\"i-1\"]".into()));
        assert_eq!(args.params[1], ("Tag.1.Value".into(), "a=b".into()));
        assert!(matches!(args.signature, Signature::V3));
        assert!(matches!(args.method, Method::Get));
        assert!(parse_param("novalue").is_err());
        assert!(parse_param("=x").is_err());
    }

    #[tokio::test]
    async fn calls_the_mock_and_prints_json_or_the_error() {
        let mock = MockServer::start(
            MockConfig::new("cli-ak", "cli-secret").with_transition_delay(Duration::ZERO),
        )
        .await
        .unwrap();
        let endpoint = mock.endpoint();
        for signature in ["v1", "v3"] {
            let (result, out, _) = run_call(
                &[
                    "call",
                    "DescribeRegions",
                    "--endpoint",
                    &endpoint,
                    "--signature",
                    signature,
                ],
                "cli-secret",
            )
            .await;
            let code = result.unwrap();
            assert_eq!(code, ExitCode::SUCCESS);
            let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert!(json["Regions"]["Region"].is_array(), "{json}");
        }

        let (result, out, err) = run_call(
            &[
                "call",
                "DescribeInstanceAttribute",
                "--endpoint",
                &endpoint,
                "--param",
                "InstanceId=i-doesnotexist",
            ],
            "cli-secret",
        )
        .await;
        let code = result.unwrap();
        assert_eq!(code, ExitCode::FAILURE);
        assert!(
            err.starts_with("error: InvalidInstanceId.NotFound: "),
            "{err}"
        );
        assert!(err.contains("request id: "), "{err}");
        assert!(out.is_empty());

        let (result, _, err) = run_call(
            &["call", "DescribeRegions", "--endpoint", &endpoint],
            "wrong-secret",
        )
        .await;
        let code = result.unwrap();
        assert_eq!(code, ExitCode::FAILURE);
        assert!(err.contains("SignatureDoesNotMatch"), "{err}");
        assert!(!err.contains("wrong-secret"));
    }

    #[tokio::test]
    async fn lost_responses_never_create_or_act_twice() {
        let mock = MockServer::start(
            MockConfig::new("cli-ak", "cli-secret")
                .with_transition_delay(Duration::ZERO)
                .with_faults(alibaba_mock::Faults {
                    drop_rate: 1.0,
                    ..alibaba_mock::Faults::default()
                }),
        )
        .await
        .unwrap();
        let endpoint = mock.endpoint();
        let (result, _, _) = run_call(
            &[
                "call",
                "RunInstances",
                "--endpoint",
                &endpoint,
                "--param",
                "ImageId=centos_7_8_x64_20G_alibase_20200519.vhd",
                "--param",
                "InstanceType=ecs.g6.large",
                "--param",
                &format!(
                    "VSwitchId={}",
                    alibaba_mock::defaults::vswitch_id("cn-hangzhou-b")
                ),
                "--param",
                &format!(
                    "SecurityGroupId={}",
                    alibaba_mock::defaults::security_group_id("cn-hangzhou")
                ),
            ],
            "cli-secret",
        )
        .await;
        assert!(result.is_err(), "every answer is lost");
        let stats = mock.stats();
        assert!(
            stats.calls_of("RunInstances") > 1,
            "the create is retried with its ClientToken: {stats:?}"
        );
        assert_eq!(stats.instances_created, 1, "{stats:?}");
        assert_eq!(mock.instances().len(), 1);

        // A write without a token is sent once, never retried.
        let id = mock.instances()[0].instance_id.clone();
        let (result, _, _) = run_call(
            &[
                "call",
                "StopInstance",
                "--endpoint",
                &endpoint,
                "--param",
                &format!("InstanceId={id}"),
            ],
            "cli-secret",
        )
        .await;
        assert!(result.is_err());
        assert_eq!(mock.stats().calls_of("StopInstance"), 1);
    }
}
