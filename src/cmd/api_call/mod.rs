//! Signs and sends one action of an Alibaba Cloud API (ECS or VPC, see [`product`]) and prints
//! the JSON response: the body of `ferroplane cloud call` and `ferroplane ecs call`.
//!
//! Credentials come from `ALIBABA_CLOUD_ACCESS_KEY_ID`, `ALIBABA_CLOUD_ACCESS_KEY_SECRET` and
//! optional `ALIBABA_CLOUD_SECURITY_TOKEN`. An API error prints its code, message and request ID
//! on stderr and exits with status 1; anything else that fails (no credentials, unreachable
//! endpoint, a `--param` the client sets itself, see [`reserved`]) is reported by `main` and
//! exits with status 1 too.
//!
//! Safe on a real account, as Alibaba's official SDKs are: an action that takes a `ClientToken`
//! gets a fresh one (a UUID) when `--param ClientToken=...` is not given, so a retry after a lost
//! response cannot act twice; a write without a token is sent once and never retried (see
//! [`alibaba_sdk::ecs::retry_safety`]).

pub mod product;
mod reserved;

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use alibaba_sdk::Error;
use alibaba_sdk::credentials::{Credentials, CredentialsProvider, EnvProvider};
use alibaba_sdk::ecs::{EcsClient, RetrySafety};
use alibaba_sdk::endpoint::{Network, parse_endpoint};
use alibaba_sdk::rpc::{HttpMethod, Params, RetryPolicy, SignatureVersion};
use alibaba_sdk::vpc::VpcClient;
use anyhow::Context as _;
use ferroplane::sandbox_access::SandboxAccess;

use self::product::Product;

/// What every `call` subcommand takes.
#[derive(Debug, clap::Args)]
pub struct CallArgs {
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
    /// Not Action, Version (set by the API called) or a parameter of the signature.
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

/// Calls `product` as `args` say with the credentials of the environment (or, when it has none
/// and no `--endpoint` is given, of a running `ferroplane sandbox`'s mock: see
/// [`ferroplane::sandbox_access`]), printing to the process's stdout and stderr.
pub async fn run(product: Product, mut args: CallArgs) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    match sandbox_fallback(args.endpoint.is_some())? {
        Some(access) => {
            args.endpoint = Some(access.endpoint);
            let credentials = Credentials::new(access.access_key_id, access.access_key_secret);
            call(
                product,
                args,
                credentials,
                &mut stdout.lock(),
                &mut stderr.lock(),
            )
            .await
        }
        None => {
            call(
                product,
                args,
                EnvProvider::new(),
                &mut stdout.lock(),
                &mut stderr.lock(),
            )
            .await
        }
    }
}

/// The running sandbox's mock, when the environment names no access key and no endpoint was
/// given; a note on stderr says which endpoint is used (never the key secret).
pub fn sandbox_fallback(endpoint_given: bool) -> anyhow::Result<Option<SandboxAccess>> {
    if endpoint_given || std::env::var_os("ALIBABA_CLOUD_ACCESS_KEY_ID").is_some() {
        return Ok(None);
    }
    let dir = ferroplane::sandbox_access::default_dir();
    let access = SandboxAccess::read(&dir)?;
    if let Some(access) = &access {
        eprintln!(
            "note: no ALIBABA_CLOUD_ACCESS_KEY_ID set; using the sandbox's mock at {} ({})",
            access.endpoint,
            dir.join(ferroplane::sandbox_access::FILE_NAME).display()
        );
    }
    Ok(access)
}

/// The signed client of `product`, as `args` configure it.
enum Client {
    Ecs(EcsClient),
    Vpc(VpcClient),
}

impl Client {
    fn build(
        product: Product,
        args: &CallArgs,
        credentials: impl CredentialsProvider + 'static,
        retry: RetryPolicy,
    ) -> anyhow::Result<Self> {
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
            .request_timeout(Duration::from_secs(args.timeout_secs))
            .retry(retry);
        if let Some(endpoint) = &args.endpoint {
            builder = builder.endpoint(endpoint);
        }
        let ecs = builder.build().context("cannot set up the API client")?;
        Ok(match product {
            Product::Ecs => Client::Ecs(ecs),
            Product::Vpc => {
                let endpoint = match &args.endpoint {
                    Some(endpoint) => parse_endpoint(endpoint)?,
                    None => product.endpoint(
                        &args.region,
                        if args.vpc {
                            Network::Vpc
                        } else {
                            Network::Public
                        },
                    )?,
                };
                Client::Vpc(
                    VpcClient::with_settings_of(&ecs, endpoint)
                        .context("cannot set up the VPC API client")?,
                )
            }
        })
    }

    async fn call(&self, action: &str, params: &Params) -> Result<serde_json::Value, Error> {
        match self {
            Client::Ecs(ecs) => ecs.call(action, params).await,
            Client::Vpc(vpc) => vpc.call_typed(action, params).await,
        }
    }
}

async fn call(
    product: Product,
    args: CallArgs,
    credentials: impl CredentialsProvider + 'static,
    out: &mut impl Write,
    err: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let mut params: Params = reserved::checked(product, args.params.clone())?
        .into_iter()
        .collect();
    let retry = match product.retry_safety(&args.action, &mut params) {
        RetrySafety::ReadOnly | RetrySafety::Idempotent => RetryPolicy {
            max_attempts: usize::from(args.max_attempts),
            ..RetryPolicy::default()
        },
        RetrySafety::NotIdempotent => RetryPolicy::none(),
    };
    let client = Client::build(product, &args, credentials, retry)?;
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
mod tests;
