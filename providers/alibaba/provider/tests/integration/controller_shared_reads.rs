//! An error answer of the shared `DescribeInstances` (whatever its code) is an error for every
//! instance it asked about, never "not found": the instances keep their external names, no
//! instance is created, the objects say Synced=False with the error, and all are Ready again
//! once ECS answers. An imported instance ID that ECS does not know is an error, never a launch.

use std::collections::BTreeMap;

use alibaba_mock::ErrorInjection;
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::eventually;

use crate::controller_support::*;

const OBJECTS: usize = 4;
/// Enough calls to outlast the client's own retries (2 attempts) and a few reconciles.
const TIMES: u32 = 6;

fn name(i: usize) -> String {
    format!("shared-{i}")
}

async fn external_names(env: &Env) -> BTreeMap<String, Option<String>> {
    let mut names = BTreeMap::new();
    for i in 0..OBJECTS {
        let obj = env.get(&name(i)).await.expect("exists");
        names.insert(name(i), external_name(&obj));
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_of_the_shared_read_is_never_not_found() {
    let env = Env::start().await;
    for i in 0..OBJECTS {
        env.create(&instance(&name(i))).await;
    }
    for i in 0..OBJECTS {
        env.wait_ready(&name(i)).await;
    }
    let names = external_names(&env).await;
    assert!(names.values().all(Option::is_some), "{names:?}");
    for code in [
        "Forbidden.InstanceNotFound",
        "InvalidInstanceId.NotFound",
        "ServiceUnavailable",
    ] {
        let before = env.mock().stats();
        // Some object reads through a failed call and says so (watched from before the
        // injection, so a short-lived Synced=False is seen).
        let env_ref = &env;
        let watches = (0..OBJECTS).map(|i| {
            Box::pin(async move {
                let env = env_ref;
                let what = format!("Synced=False with {code}");
                env.wait_for(&name(i), &what, |o| {
                    o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                        c.status == ConditionStatus::False && c.message.contains(code)
                    })
                })
                .await
            })
        });
        let watching = env.watches_started();
        let inject = async {
            eventually(format!("the {OBJECTS} objects watched"))
                .within(WAIT)
                .until(|| env.watches_started() >= watching + OBJECTS)
                .await;
            env.mock()
                .inject_error(ErrorInjection::new(code, Some("DescribeInstances"), TIMES))
                .unwrap();
        };
        let seen = tokio::time::timeout(WAIT / 2, futures::future::select_all(watches));
        let (seen, ()) = tokio::join!(seen, inject);
        let reported = seen.is_ok();
        eventually(format!("{code} answered {TIMES} times"))
            .within(WAIT)
            .until(|| {
                let stats = env.mock().stats();
                if stats.errors_of(code) >= before.errors_of(code) + u64::from(TIMES) {
                    Ok(())
                } else {
                    Err(Box::new(stats))
                }
            })
            .await;
        // Then every object is Ready and Synced again, on its own instance.
        for i in 0..OBJECTS {
            env.wait_for(&name(i), "Ready and Synced again", |o| {
                o.is_some_and(|o| {
                    is_ready(o)
                        && condition(o, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                })
            })
            .await;
        }
        let after = env.mock().stats();
        assert_eq!(
            after.calls_of("RunInstances"),
            before.calls_of("RunInstances"),
            "{code} on DescribeInstances made new instances"
        );
        assert_eq!(after.instances_live, OBJECTS as u64, "{code}: {after:?}");
        assert_eq!(
            external_names(&env).await,
            names,
            "{code} moved external names"
        );
        assert!(reported, "no object said Synced=False with {code}");
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importing_an_instance_id_that_does_not_exist_launches_nothing() {
    let env = Env::start().await;
    let mut obj = instance("ghost");
    obj.metadata.annotations = Some(
        [(
            "ferroplane.io/external-name".to_owned(),
            "i-doesnotexist0000000".to_owned(),
        )]
        .into(),
    );
    env.create(&obj).await;
    let msg = env
        .wait_sync_error("ghost", "remove the ferroplane.io/external-name annotation")
        .await;
    assert!(msg.contains("i-doesnotexist0000000"), "{msg}");
    let got = env.get("ghost").await.expect("exists");
    assert_eq!(
        condition(&got, SYNCED).expect("synced").reason,
        "ExternalResourceNotFound"
    );
    // Polls later still launch nothing, and the name stays the user's.
    env.observed_again(2).await;
    assert_eq!(env.mock().stats().calls_of("RunInstances"), 0);
    assert!(env.mock().instances().is_empty());
    assert_eq!(
        external_name(&env.get("ghost").await.expect("exists")).as_deref(),
        Some("i-doesnotexist0000000")
    );
    env.stop().await;
}
