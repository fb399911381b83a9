//! Batching: N instances sharing credentials, endpoint and region are read up to 100 per
//! `DescribeInstances` call (from the mock's counters of calls and of the instance IDs they
//! named), against one call per instance with batching off.

use std::time::Duration;

use crate::controller_support::*;
use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig};
use ferroplane_apis::common::ManagementAction;
use ferroplane_testkit::eventually;
use futures::StreamExt;
use provider_alibaba::Options;

const N: usize = 150;
const POLL: Duration = Duration::from_secs(1);
/// How long the rounds may take on a loaded machine before the test gives up (a guard: the
/// assertions count calls, not time).
const ROUNDS_WAIT: Duration = Duration::from_secs(120);

/// Imports N instances made in the mock as Observe-only ECSInstances, waits until all are
/// Ready, then until the mock has been asked about `rounds` × N more instances (what `rounds`
/// poll rounds of every object read, however the machine paces them); returns the
/// `DescribeInstances` calls that took and the instance IDs they named.
async fn describe_calls_for_rounds(batching: bool, rounds: u64) -> (u64, u64) {
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
    let stats = || env.mock().stats();
    // One snapshot: the mock counts a call and the IDs it names together, and a call between
    // two reads would count in one figure and not the other.
    let before = stats();
    let (calls_before, ids_before) = (
        before.calls_of("DescribeInstances"),
        before.instance_ids_described,
    );
    let wanted = rounds * N as u64;
    eventually(format!(
        "the mock asked about the {N} instances {rounds} more times"
    ))
    .within(ROUNDS_WAIT)
    .until(|| {
        let named = stats().instance_ids_described - ids_before;
        if named >= wanted {
            Ok(())
        } else {
            Err(Box::new(named))
        }
    })
    .await;
    let after = stats();
    let calls = after.calls_of("DescribeInstances") - calls_before;
    let ids = after.instance_ids_described - ids_before;
    eprintln!("batching={batching}: {calls} DescribeInstances calls named {ids} instances");
    env.stop().await;
    (calls, ids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_instances_cost_about_ceil_n_over_100_calls_per_round() {
    let (calls, ids) = describe_calls_for_rounds(true, 4).await;
    // One sweep of the N objects names up to 100 instances per call: ceil(N/100) calls. The
    // slack: when polls drift apart on a slow, shared machine a sweep may split into up to
    // SPLIT_SLACK more calls (seen here: 13 calls for 693 instances at load 5.7 on 2 cores).
    const SPLIT_SLACK: u64 = 2;
    let sweeps = ids.div_ceil(N as u64);
    let allowed = sweeps * ((N as u64).div_ceil(100) + SPLIT_SLACK);
    assert!(
        calls <= allowed,
        "{calls} DescribeInstances calls named {ids} instances ({sweeps} sweeps of {N}): \
         more than {allowed}, not batched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_batching_every_object_makes_its_own_call() {
    let (calls, ids) = describe_calls_for_rounds(false, 2).await;
    assert_eq!(
        calls, ids,
        "unbatched, each DescribeInstances call names one instance"
    );
}
