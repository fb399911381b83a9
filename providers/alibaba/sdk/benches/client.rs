//! Client benchmark: signatures per second (V1 and V3), requests prepared per second and the
//! decode time of a 100-instance `DescribeInstances` response. Round trips against the local mock
//! are alibaba-mock's `client_round_trip` bench. Prints figures; asserts nothing about time.
//!
//! Run: `cargo bench -p alibaba-sdk --bench client` (optional env: `BENCH_MILLIS`, default 1000)

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::DescribeInstancesResponse;
use alibaba_sdk::rpc::{HttpMethod, Params, RequestSpec, SignatureVersion, Signing, prepare};
use alibaba_sdk::signature::{v1, v3};

/// Runs `f` repeatedly for about `budget` and returns (iterations, elapsed).
fn measure(budget: Duration, mut f: impl FnMut()) -> (u64, Duration) {
    for _ in 0..100 {
        f();
    }
    let started = Instant::now();
    let mut iterations = 0u64;
    while started.elapsed() < budget {
        for _ in 0..100 {
            f();
        }
        iterations += 100;
    }
    (iterations, started.elapsed())
}

fn report(name: &str, (iterations, elapsed): (u64, Duration)) {
    let per_second = iterations as f64 / elapsed.as_secs_f64();
    let micros = elapsed.as_secs_f64() * 1e6 / iterations as f64;
    println!("{name:<48} {per_second:>12.0} /s {micros:>10.2} µs each");
}

fn describe_params() -> BTreeMap<String, String> {
    let ids: Vec<String> = (0..100).map(|i| format!("i-bp1{i:017}")).collect();
    [
        ("AccessKeyId", "LTAI5tBenchmarkKey0000000"),
        ("Action", "DescribeInstances"),
        ("Format", "JSON"),
        ("RegionId", "cn-hangzhou"),
        (
            "InstanceIds",
            &serde_json::to_string(&ids).unwrap_or_default(),
        ),
        ("MaxResults", "100"),
        ("SignatureMethod", v1::SIGNATURE_METHOD),
        ("SignatureNonce", "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"),
        ("SignatureVersion", v1::SIGNATURE_VERSION),
        ("Timestamp", "2024-01-01T00:00:00Z"),
        ("Version", "2014-05-26"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn instance_json(i: usize) -> serde_json::Value {
    serde_json::json!({
        "InstanceId": format!("i-bp1{i:017}"),
        "InstanceName": format!("web-{i}"),
        "Description": "benchmark instance",
        "HostName": format!("web-{i}"),
        "Status": "Running",
        "InstanceType": "ecs.g7.large",
        "ImageId": "aliyun_3_x64_20G_alibase_20240819.vhd",
        "RegionId": "cn-hangzhou",
        "ZoneId": "cn-hangzhou-i",
        "Cpu": 2,
        "Memory": 8192,
        "OSType": "linux",
        "OSName": "Alibaba Cloud Linux 3.2104 LTS 64位",
        "InstanceChargeType": "PostPaid",
        "InternetChargeType": "PayByTraffic",
        "InternetMaxBandwidthOut": 5,
        "CreationTime": "2024-01-01T00:00Z",
        "StartTime": "2024-01-01T00:01Z",
        "ExpiredTime": "2099-12-31T15:59Z",
        "DeletionProtection": false,
        "VpcAttributes": {
            "VpcId": "vpc-bp1benchmark",
            "VSwitchId": "vsw-bp1benchmark",
            "PrivateIpAddress": {"IpAddress": [format!("172.16.{}.{}", i / 256, i % 256)]},
            "NatIpAddress": ""
        },
        "PublicIpAddress": {"IpAddress": [format!("47.96.{}.{}", i / 256, i % 256)]},
        "EipAddress": {"AllocationId": "", "IpAddress": "", "InternetChargeType": ""},
        "SecurityGroupIds": {"SecurityGroupId": ["sg-bp1benchmark"]},
        "Tags": {"Tag": [
            {"TagKey": "ferroplane.io/uid", "TagValue": format!("0b5f6d4e-0000-4000-8000-{i:012}")},
            {"TagKey": "env", "TagValue": "bench"}
        ]},
        "OperationLocks": {"LockReason": []},
        "NetworkInterfaces": {"NetworkInterface": [{"NetworkInterfaceId": "eni-1", "PrimaryIpAddress": "172.16.0.1", "MacAddress": "00:16:3e:00:00:01"}]},
        "DedicatedHostAttribute": {"DedicatedHostId": "", "DedicatedHostName": ""}
    })
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("BENCH_MILLIS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    );
    println!("alibaba-sdk client benchmark ({budget:?} per figure)\n");

    let params = describe_params();
    report(
        "V1 signature (DescribeInstances, 100 IDs)",
        measure(budget, || {
            let to_sign = v1::string_to_sign("POST", black_box(&params));
            black_box(v1::sign("bench-secret", &to_sign));
        }),
    );

    let query: BTreeMap<String, String> = params
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "RegionId" | "InstanceIds" | "MaxResults"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let payload = v3::hashed_payload(b"");
    let headers: BTreeMap<String, String> = [
        ("host", "ecs-cn-hangzhou.aliyuncs.com"),
        ("x-acs-action", "DescribeInstances"),
        ("x-acs-content-sha256", payload.as_str()),
        ("x-acs-date", "2024-01-01T00:00:00Z"),
        (
            "x-acs-signature-nonce",
            "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
        ),
        ("x-acs-version", "2014-05-26"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    report(
        "V3 signature (DescribeInstances, 100 IDs)",
        measure(budget, || {
            let request = v3::canonical_request("POST", "/", black_box(&query), &headers, &payload);
            black_box(v3::sign("bench-secret", &v3::string_to_sign(&request)));
        }),
    );

    let endpoint = url::Url::parse("https://ecs-cn-hangzhou.aliyuncs.com/").expect("static URL");
    let business: Params = query.clone().into();
    let credentials = Credentials::new("LTAI5tBenchmarkKey0000000", "bench-secret")
        .with_security_token("CAIS".repeat(80));
    for (name, signature, method) in [
        (
            "prepared request V1 POST (+ STS token)",
            SignatureVersion::V1,
            HttpMethod::Post,
        ),
        (
            "prepared request V3 POST (+ STS token)",
            SignatureVersion::V3,
            HttpMethod::Post,
        ),
    ] {
        let spec = RequestSpec {
            endpoint: &endpoint,
            action: "DescribeInstances",
            version: "2014-05-26",
            method,
            signature,
            params: &business,
        };
        report(
            name,
            measure(budget, || {
                black_box(prepare(
                    &spec,
                    &Signing {
                        credentials: Some(&credentials),
                        nonce: "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
                        timestamp: "2024-01-01T00:00:00Z",
                    },
                ));
            }),
        );
    }

    let body = serde_json::json!({
        "RequestId": "6D2C4B1A-0000-4000-8000-000000000001",
        "TotalCount": 100,
        "PageNumber": 1,
        "PageSize": 100,
        "NextToken": "",
        "Instances": {"Instance": (0..100).map(instance_json).collect::<Vec<_>>()}
    })
    .to_string()
    .into_bytes();
    let (iterations, elapsed) = measure(budget, || {
        let page: DescribeInstancesResponse =
            serde_json::from_slice(black_box(&body)).expect("benchmark body decodes");
        black_box(page);
    });
    report(
        "decode DescribeInstances (100 instances)",
        (iterations, elapsed),
    );
    let mib_per_second =
        body.len() as f64 * iterations as f64 / elapsed.as_secs_f64() / (1024.0 * 1024.0);
    println!(
        "{:<48} {:>12} bytes, {mib_per_second:.0} MiB/s",
        "  response size",
        body.len()
    );
}
