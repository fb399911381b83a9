//! Tests of `cloud call` / `ecs call` against the mock.

use alibaba_mock::{MockConfig, MockServer};
use alibaba_sdk::credentials::Credentials;
use clap::Parser as _;

use super::*;

/// `call ARGS...`: the arguments of `cloud call`; `argv[0]` is the command's name.
#[derive(Debug, clap::Parser)]
struct Cli {
    #[arg(long, value_enum, default_value_t = Product::Ecs)]
    product: Product,
    #[command(flatten)]
    args: CallArgs,
}

fn call_args(argv: &[&str]) -> (Product, CallArgs) {
    let cli = Cli::try_parse_from(argv).unwrap();
    (cli.product, cli.args)
}

/// Runs `call` with `argv` (starting with `call`) and the given secret for access key
/// `cli-ak`; returns the result and what it printed to stdout and stderr.
async fn run_call(argv: &[&str], secret: &str) -> (anyhow::Result<ExitCode>, Vec<u8>, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let (product, args) = call_args(argv);
    let result = call(
        product,
        args,
        Credentials::new("cli-ak", secret),
        &mut out,
        &mut err,
    )
    .await;
    (result, out, String::from_utf8(err).unwrap())
}

#[test]
fn parses_params_and_options() {
    let (product, args) = call_args(&[
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
    assert_eq!(product, Product::Ecs);
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

#[tokio::test]
async fn the_vpc_api_is_called_with_its_version() {
    let mock = MockServer::start(
        MockConfig::new("cli-ak", "cli-secret").with_transition_delay(Duration::ZERO),
    )
    .await
    .unwrap();
    let endpoint = mock.endpoint();
    for signature in ["v1", "v3"] {
        let (result, out, err) = run_call(
            &[
                "call",
                "--product",
                "vpc",
                "DescribeVpcs",
                "--region",
                "cn-beijing",
                "--endpoint",
                &endpoint,
                "--signature",
                signature,
            ],
            "cli-secret",
        )
        .await;
        assert_eq!(result.unwrap(), ExitCode::SUCCESS, "{err}");
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let vpcs = json["Vpcs"]["Vpc"].as_array().expect("Vpcs.Vpc");
        assert_eq!(
            vpcs[0]["VpcId"],
            alibaba_mock::defaults::vpc_id("cn-beijing"),
            "{json}"
        );
    }
    assert_eq!(mock.stats().calls_of("DescribeVpcs"), 2);

    // A VPC write without a token is sent once; CreateVpc gets one and may be retried.
    let (result, out, _) = run_call(
        &[
            "call",
            "--product",
            "vpc",
            "CreateVpc",
            "--region",
            "cn-beijing",
            "--endpoint",
            &endpoint,
            "--param",
            "CidrBlock=10.0.0.0/8",
        ],
        "cli-secret",
    )
    .await;
    assert_eq!(result.unwrap(), ExitCode::SUCCESS);
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(
        json["VpcId"]
            .as_str()
            .is_some_and(|id| id.starts_with("vpc-")),
        "{json}"
    );
}

#[test]
fn the_default_endpoint_is_the_apis_own() {
    let endpoint =
        |product: Product, network| product.endpoint("cn-beijing", network).unwrap().to_string();
    assert_eq!(
        endpoint(Product::Vpc, Network::Public),
        "https://vpc.cn-beijing.aliyuncs.com/"
    );
    assert_eq!(
        endpoint(Product::Vpc, Network::Vpc),
        "https://vpc-vpc.cn-beijing.aliyuncs.com/"
    );
    assert_eq!(
        endpoint(Product::Ecs, Network::Public),
        "https://ecs.cn-beijing.aliyuncs.com/"
    );
    let mut params = Params::new();
    assert_eq!(
        Product::Vpc.retry_safety("CreateVSwitch", &mut params),
        RetrySafety::Idempotent
    );
    assert!(params.contains("ClientToken"));
    assert_eq!(
        Product::Vpc.retry_safety("DeleteVpc", &mut Params::new()),
        RetrySafety::NotIdempotent
    );
    assert_eq!(
        Product::Vpc.retry_safety("DescribeVSwitches", &mut Params::new()),
        RetrySafety::ReadOnly
    );
}

#[tokio::test]
async fn a_parameter_the_client_sets_is_honoured_or_refused_by_name() {
    let mock = MockServer::start(
        MockConfig::new("cli-ak", "cli-secret").with_transition_delay(Duration::ZERO),
    )
    .await
    .unwrap();
    let endpoint = mock.endpoint();
    // The version of the API called: honoured.
    let (result, out, _) = run_call(
        &[
            "call",
            "DescribeRegions",
            "--endpoint",
            &endpoint,
            "--param",
            "Version=2014-05-26",
        ],
        "cli-secret",
    )
    .await;
    assert_eq!(result.unwrap(), ExitCode::SUCCESS);
    assert!(!out.is_empty());
    let sent = mock.stats().calls_of("DescribeRegions");
    // Another version, the action, or what the signature sets: refused before any call,
    // naming the parameter and what sets it.
    for (param, names) in [
        ("Version=2016-04-28", ["Version", "--product vpc"]),
        ("Action=DescribeVpcs", ["Action", "ACTION argument"]),
        ("SignatureNonce=n-1", ["SignatureNonce", "every request"]),
        (
            "AccessKeyId=LTAIother",
            ["AccessKeyId", "ALIBABA_CLOUD_ACCESS_KEY_ID"],
        ),
        ("SignatureVersion=1.0", ["SignatureVersion", "--signature"]),
    ] {
        let (result, _, _) = run_call(
            &[
                "call",
                "DescribeRegions",
                "--endpoint",
                &endpoint,
                "--param",
                param,
            ],
            "cli-secret",
        )
        .await;
        let message = format!("{:#}", result.expect_err(param));
        for name in names {
            assert!(message.contains(name), "{param}: {name:?} in {message}");
        }
    }
    assert_eq!(
        mock.stats().calls_of("DescribeRegions"),
        sent,
        "nothing was sent"
    );
}
