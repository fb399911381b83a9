//! Subscription (`PrePaid`) instances and stop modes as ECS bills them: a subscription is bought
//! for `period`, never released before it expires (the object says how to get out), and released
//! once expired; `stoppedMode: StopCharging` stops billing the stopped instance's compute.

use ferroplane_apis::alibabacloud::{DesiredStatus, InstanceChargeType, PeriodUnit, StoppedMode};
use serde_json::json;

use crate::controller_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_released_only_once_it_expires() {
    let env = Env::start().await;
    let mut sub = instance("sub");
    sub.spec.for_provider.instance_charge_type = Some(InstanceChargeType::PrePaid);
    sub.spec.for_provider.period = Some(1);
    sub.spec.for_provider.period_unit = Some(PeriodUnit::Week);
    env.create(&sub).await;
    let ready = env.wait_ready("sub").await;
    let id = external_name(&ready).expect("instance ID").to_owned();
    let at = ready.status.as_ref().expect("status").observed();
    assert_eq!(at.instance_charge_type.as_deref(), Some("PrePaid"));
    assert!(at.expired_time.is_some(), "{at:?}");

    env.delete("sub").await;
    let message = env.wait_sync_error("sub", "SubscriptionNotExpired").await;
    assert!(message.contains("deletionPolicy: Orphan"), "{message}");
    assert!(env.mock_instance(&id).is_some(), "the subscription is kept");

    assert!(env.mock().expire_subscription(&id));
    env.wait_for("sub", "released after expiry", |o| o.is_none())
        .await;
    env.wait_mock(&id, "released", |i| i.is_none()).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_without_period_creates_nothing() {
    let env = Env::start().await;
    let mut sub = instance("no-period");
    sub.spec.for_provider.instance_charge_type = Some(InstanceChargeType::PrePaid);
    env.create(&sub).await;
    let message = env.wait_sync_error("no-period", "period").await;
    assert!(message.contains("InvalidSpec"), "{message}");
    assert!(env.mock().instances().is_empty());
    // Adding the period is a spec change: the instance is created at once.
    env.patch_for_provider("no-period", json!({"period": 1}))
        .await;
    env.wait_ready("no-period").await;
    assert_eq!(env.mock().instances().len(), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_charging_stops_billing_the_stopped_instance() {
    let env = Env::start().await;
    let mut vm = instance("thrifty");
    vm.spec.for_provider.stopped_mode = Some(StoppedMode::StopCharging);
    vm.spec.for_provider.desired_status = Some(DesiredStatus::Stopped);
    env.create(&vm).await;
    let ready = env.wait_ready("thrifty").await;
    let id = external_name(&ready).expect("instance ID").to_owned();
    env.wait_mock(&id, "stopped without compute charges", |i| {
        i.is_some_and(|i| i.status == "Stopped" && !i.compute_charged)
    })
    .await;
    env.wait_for("thrifty", "stoppedMode reported", |o| {
        o.and_then(|o| o.status.as_ref())
            .is_some_and(|s| s.observed().stopped_mode.as_deref() == Some("StopCharging"))
    })
    .await;
    env.stop().await;
}
