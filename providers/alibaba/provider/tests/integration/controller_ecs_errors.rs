//! ECS error codes the controller must read as real clients do, scripted in the mock:
//! `Forbidden.InstanceNotFound` on delete means the instance is gone (a delete never stalls on
//! it; on a read it is an error of the read, so the object goes once the instance is unlisted), and `OperationConflict` is transient (retried soon, not held until the spec changes).

use alibaba_mock::ErrorInjection;
use serde_json::json;

use crate::controller_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_answered_forbidden_instance_not_found_completes() {
    let env = Env::start().await;
    env.create(&instance("gone-403")).await;
    let id = external_name(&env.wait_ready("gone-403").await).expect("id");
    // ECS answers the release of an instance it no longer has with this 403, while
    // DescribeInstances may still list it for a moment: each time the controller takes the
    // delete as done, looks again, and releases what is still listed.
    let forbidden = |action| ErrorInjection::new("Forbidden.InstanceNotFound", Some(action), 3);
    env.mock()
        .inject_error(forbidden("DeleteInstance"))
        .unwrap();
    env.delete("gone-403").await;
    // The same 403 on the read is an error of the read, not "gone": only a listing without
    // the instance removes the object.
    env.mock()
        .inject_error(forbidden("DescribeInstances"))
        .unwrap();
    env.wait_for("gone-403", "object removed", |o| o.is_none())
        .await;
    let stats = env.mock().stats();
    assert_eq!(
        stats.errors_of("Forbidden.InstanceNotFound"),
        6,
        "{stats:?}"
    );
    assert!(
        env.mock_instance(&id).is_none(),
        "the object went only once the instance was released"
    );
    let reasons = env.event_reasons("gone-403").await;
    assert!(
        !reasons.iter().any(|r| r == "CannotDeleteExternalResource"),
        "the 403 of the delete is never a failure: {reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r == "CannotObserveExternalResource"),
        "the 403 of the read is reported as a failed read: {reasons:?}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_conflict_is_retried_until_the_stop_succeeds() {
    let env = Env::start().await;
    env.create(&instance("busy")).await;
    let id = external_name(&env.wait_ready("busy").await).expect("id");
    env.mock()
        .inject_error(ErrorInjection::new(
            "OperationConflict",
            Some("StopInstance"),
            2,
        ))
        .unwrap();
    env.patch_for_provider("busy", json!({"desiredStatus": "Stopped"}))
        .await;
    env.wait_mock(&id, "stopped", |i| i.is_some_and(|i| i.status == "Stopped"))
        .await;
    let stats = env.mock().stats();
    assert_eq!(stats.errors_of("OperationConflict"), 2, "{stats:?}");
    assert_eq!(stats.calls_of("StopInstance"), 3, "{stats:?}");
    assert_eq!(stats.calls_of("RunInstances"), 1);
    assert!(
        env.event_reasons("busy")
            .await
            .iter()
            .any(|r| r == "CannotUpdateExternalResource"),
        "the conflict was reported, then retried"
    );
    env.stop().await;
}
