//! Batching: N instances sharing credentials, endpoint and region cost about ceil(N/100)
//! `DescribeInstances` calls per poll round (read from the mock's counters), against N with
//! batching off.

use std::time::Duration;

use crate::controller_support::*;
use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig};
use ferroplane_apis::common::ManagementAction;
use futures::StreamExt;
use provider_alibaba::Options;

const N: usize = 150;
const POLL: Duration = Duration::from_secs(1);

/// Imports N instances made in the mock as Observe-only ECSInstances, waits until all are
/// Ready, then returns the `DescribeInstances` calls made during `rounds` poll intervals.
async fn describe_calls_per_round(batching: bool, rounds: u32) -> (u64, u64) {
    let options = Options {
        poll_interval: POLL,
        batching,
        max_concurrent_reconciles: 64,
        ..test_options()
    };
    let env = Env::start_with(options, MockConfig::new(AK, SK)).await;
    let spec = LaunchSpec {
        region_id: REGION.into(),
        image_id: IMAGE.into(),
        instance_type: TYPE.into(),
        vswitch_id: alibaba_mock::defaults::first_vswitch_id(REGION),
        security_group_ids: vec![alibaba_mock::defaults::security_group_id(REGION)],
        ..LaunchSpec::default()
    };
    let ids = env
        .mock()
        .create_instances(DEFAULT_ACCOUNT_ID, &spec, N)
        .expect("instances");
    futures::stream::iter(ids.iter().enumerate())
        .for_each_concurrent(16, |(i, id)| {
            let env = &env;
            async move {
                let mut obj = instance(&format!("vm-{i:03}"));
                obj.metadata.annotations =
                    Some([("ferroplane.io/external-name".to_owned(), id.clone())].into());
                obj.spec.management_policies = vec![ManagementAction::Observe];
                env.create(&obj).await;
            }
        })
        .await;
    for i in 0..N {
        env.wait_ready(&format!("vm-{i:03}")).await;
    }
    let before = env.mock().stats().calls_of("DescribeInstances");
    tokio::time::sleep(POLL * rounds).await;
    let calls = env.mock().stats().calls_of("DescribeInstances") - before;
    eprintln!(
        "batching={batching}: {calls} DescribeInstances calls in {rounds} poll rounds for {N} instances"
    );
    env.stop().await;
    (calls, u64::from(rounds))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_instances_cost_about_ceil_n_over_100_calls_per_round() {
    let (calls, rounds) = describe_calls_per_round(true, 4).await;
    let per_round = N.div_ceil(100) as u64;
    // Ideally one sweep of ceil(N/100) calls per round (8 in 4 rounds when the machine keeps
    // up); when polls drift apart on a slow, shared machine sweeps split, still far below N.
    assert!(calls * 10 < N as u64 * rounds, "{calls} calls: not batched");
    assert!(
        calls <= 3 * per_round * (rounds + 1),
        "{calls} DescribeInstances calls in {rounds} rounds for {N} instances"
    );
    assert!(
        calls >= per_round,
        "{calls} calls: the instances were not observed at all"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_batching_every_object_makes_its_own_call() {
    let (calls, rounds) = describe_calls_per_round(false, 2).await;
    assert!(
        calls >= (N as u64) * (rounds - 1),
        "{calls} calls in {rounds} rounds for {N} unbatched instances"
    );
}
