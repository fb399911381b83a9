//! Throughput of the ECS mock for the call the provider makes most: `DescribeInstances` with 100
//! instance IDs, V1-signed POST over loopback, with 10,000 live instances.
//!
//! Run: `cargo bench -p alibaba-mock --bench mock_describe` (optional env: `BENCH_SECONDS`,
//! default 5; `BENCH_CONCURRENCY`, default 8). Prints figures; asserts nothing about time.

use std::time::{Duration, Instant};

use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec};
use ferroplane_testkit::mock_requests::{IMAGE, REGION, Signer, TYPE, start};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(run());
}

async fn run() {
    let seconds = env_number("BENCH_SECONDS", 5).clamp(1, 120);
    let concurrency = env_number("BENCH_CONCURRENCY", 8).clamp(1, 256) as usize;
    let mock = start(Duration::from_secs(3600)).await;
    let ids = mock
        .create_instances(
            DEFAULT_ACCOUNT_ID,
            &LaunchSpec::new(REGION, IMAGE, TYPE).with_default_network(),
            10_000,
        )
        .expect("seed instances");
    let batches: Vec<String> = ids
        .chunks(100)
        .map(|chunk| serde_json::to_string(chunk).expect("JSON array"))
        .collect();
    let signer = Signer::new(&mock);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(concurrency);
    for worker in 0..concurrency {
        let signer = signer.clone();
        let batches = batches.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut described = 0usize;
            let mut n = worker;
            while Instant::now() < deadline {
                let batch = &batches[n % batches.len()];
                n += concurrency;
                let t0 = Instant::now();
                let (status, body) = signer
                    .ecs_text(
                        "DescribeInstances",
                        &[
                            ("RegionId", REGION),
                            ("InstanceIds", batch),
                            ("MaxResults", "100"),
                        ],
                    )
                    .await;
                latencies.push(t0.elapsed());
                assert_eq!(status, 200, "{body}");
                // Counting IDs keeps the client's share of the CPU small (no JSON tree).
                described += body.matches("\"InstanceId\":").count();
            }
            (latencies, described)
        }));
    }
    let mut latencies = Vec::new();
    let mut described = 0;
    for task in tasks {
        let (l, d) = task.await.expect("worker");
        latencies.extend(l);
        described += d;
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let requests = latencies.len();
    println!(
        "mock_describe: DescribeInstances with 100 IDs, V1-signed POST, loopback, 10000 live instances"
    );
    println!("  concurrency       {concurrency}");
    println!("  duration          {elapsed:.2} s");
    println!("  requests          {requests}");
    println!("  requests/s        {:.0}", requests as f64 / elapsed);
    println!("  instances/s       {:.0}", described as f64 / elapsed);
    println!(
        "  latency p50/p99   {:.2} ms / {:.2} ms",
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3
    );
    let stats = mock.stats();
    println!(
        "  mock counted      {} DescribeInstances calls",
        stats.calls_of("DescribeInstances")
    );
    mock.shutdown().await;
}
