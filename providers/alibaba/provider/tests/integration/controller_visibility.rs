//! ECS lists a new instance late and a released one for a while (eventual consistency). With the
//! mock doing the same, one object makes exactly one instance, and its deletion waits for the
//! release instead of dropping the finalizer of an instance it cannot see yet.

use std::time::Duration;

use alibaba_mock::MockConfig;
use ferroplane_apis::common::names::EXTERNAL_CREATE_SUCCEEDED;

use crate::controller_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_listed_instance_is_created_once_and_released_once() {
    // Long enough for a reconcile to see the instance unlisted, even on a loaded machine.
    let lag = Duration::from_secs(5);
    let env = Env::start_with(
        test_options(),
        MockConfig::new(AK, SK).with_visibility_lag(lag),
    )
    .await;
    env.create(&instance("late")).await;
    // While the mock does not list it, the object says why it waits.
    env.wait_for("late", "waiting for the new instance to be listed", |o| {
        o.and_then(|o| condition(o, "Synced"))
            .is_some_and(|c| c.message.contains("is not listed by the cloud yet"))
    })
    .await;
    let ready = env.wait_ready("late").await;
    let stats = env.mock().stats();
    assert_eq!(stats.instances_created, 1, "{stats:?}");
    assert_eq!(stats.calls.get("RunInstances"), Some(&1), "{stats:?}");
    // Listed now: the creation time has done its job.
    env.wait_for("late", "creation time forgotten once listed", |o| {
        o.is_some_and(|o| {
            !o.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(EXTERNAL_CREATE_SUCCEEDED))
        })
    })
    .await;
    let id = external_name(&ready).expect("instance ID").to_owned();
    env.delete("late").await;
    env.wait_for("late", "gone", |o| o.is_none()).await;
    assert_eq!(env.mock().stats().instances_live, 0);
    assert!(env.mock_instance(&id).is_none_or(|i| i.status != "Running"));
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_spends_no_read_before_the_instance_is_listed() {
    // The mock's default lag in the sandbox. The create path does not look at the new
    // instance (a look would find nothing); its first look comes once the lag has passed,
    // however late the machine runs it.
    let lag = Duration::from_secs(1);
    let env = Env::start_with(
        test_options(),
        MockConfig::new(AK, SK).with_visibility_lag(lag),
    )
    .await;
    let names: Vec<String> = (0..12).map(|i| format!("listed-{i:02}")).collect();
    for name in &names {
        env.create(&instance(name)).await;
    }
    for name in &names {
        env.wait_ready(name).await;
    }
    let stats = env.mock().stats();
    assert_eq!(stats.instances_created, 12, "{stats:?}");
    assert_eq!(stats.calls_of("RunInstances"), 12, "{stats:?}");
    assert!(stats.instance_ids_described >= 12, "{stats:?}");
    assert_eq!(
        stats.unlisted_ids_described, 0,
        "no DescribeInstances named an instance before it was listed: {stats:?}"
    );
    // Listed at the first look: the creation time went with the late-initialized spec.
    for name in &names {
        env.wait_for(name, "creation time forgotten", |o| {
            o.is_some_and(|o| {
                !o.metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key(EXTERNAL_CREATE_SUCCEEDED))
            })
        })
        .await;
    }
    env.stop().await;
}
