//! Round trips of the SDK's ECS client against the local mock: sequential `DescribeInstances`
//! calls for 100 IDs, V1 and V3 (signing, HTTP on 127.0.0.1, the mock's own work and decoding
//! together). Prints figures; asserts nothing about time.
//!
//! Run: `cargo bench -p alibaba-mock --bench client_round_trip` (optional env: `BENCH_MILLIS`,
//! default 1000)

use std::hint::black_box;
use std::time::{Duration, Instant};

use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::EcsClient;
use alibaba_sdk::rpc::SignatureVersion;

fn main() {
    let budget = Duration::from_millis(
        std::env::var("BENCH_MILLIS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    );
    println!("ECS client round trips against the mock ({budget:?} per figure)\n");
    round_trips(budget);
}

/// Sequential `DescribeInstances` calls for 100 IDs against the local mock (signing, HTTP on
/// 127.0.0.1, the mock's own work and decoding together).
fn round_trips(budget: Duration) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let mock = match MockServer::start(MockConfig::new("bench-ak", "bench-secret")).await {
            Ok(mock) => mock,
            Err(error) => {
                println!("mock round trips skipped: {error}");
                return;
            }
        };
        let spec = LaunchSpec::new(
            "cn-hangzhou",
            "centos_7_8_x64_20G_alibase_20200519.vhd",
            "ecs.g6.large",
        )
        .with_default_network();
        let ids = match mock.create_instances(DEFAULT_ACCOUNT_ID, &spec, 100) {
            Ok(ids) => ids,
            Err(error) => {
                println!("mock round trips skipped: {error}");
                return;
            }
        };
        for signature in [SignatureVersion::V1, SignatureVersion::V3] {
            let client = EcsClient::builder("cn-hangzhou")
                .endpoint(mock.endpoint())
                .credentials(Credentials::new("bench-ak", "bench-secret"))
                .signature(signature)
                .build()
                .expect("client builds");
            let mut latencies = Vec::new();
            let started = Instant::now();
            while started.elapsed() < budget {
                let call = Instant::now();
                match client.describe_instances_by_ids(&ids).await {
                    Ok(found) => {
                        black_box(found);
                    }
                    Err(error) => {
                        println!("mock round trip failed: {error}");
                        return;
                    }
                }
                latencies.push(call.elapsed());
            }
            latencies.sort();
            let p50 = latencies[latencies.len() / 2];
            let p99 = latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)];
            println!(
                "{:<48} {:>12.0} /s   p50 {p50:?} p99 {p99:?}",
                format!("mock round trip {signature:?} (100 IDs)"),
                latencies.len() as f64 / started.elapsed().as_secs_f64()
            );
        }
        mock.shutdown().await;
    });
}
