//! Error codes clients check, each provoked under its real condition: DeleteInstances' own
//! `InvalidInstanceIds.NotFound`, DetachDisk's `InvalidDisk.AlreadyDetached` and
//! `InvalidOperation.DiskDetachingFromThisEcs`; and every code of the table of codes the mock
//! does not produce by itself that it can inject, answered when injected.

use std::time::Duration;

use alibaba_mock::ErrorInjection;
use alibaba_mock::unproduced_codes::UNPRODUCED_CODES;
use ferroplane_testkit::mock_requests::*;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

#[tokio::test]
async fn delete_instances_names_unknown_instances_with_its_own_code() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    ecs(
        &s,
        "DeleteInstances",
        &[
            ("InstanceId.1", &id),
            ("InstanceId.2", "i-nope"),
            ("Force", "true"),
        ],
    )
    .await
    .expect_error(404, "InvalidInstanceIds.NotFound");
    assert_eq!(mock.stats().instances_live, 1, "all or nothing");
    // DeleteInstance (one) keeps InvalidInstanceId.NotFound.
    s.ecs("DeleteInstance", &[("InstanceId", "i-nope")])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
}

#[tokio::test]
async fn detaching_a_detached_or_detaching_disk_answers_ecs_codes() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    let disk = ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", "cn-hangzhou-b"), ("Size", "20")],
    )
    .await
    .ok()["DiskId"]
        .as_str()
        .unwrap()
        .to_owned();
    ecs(&s, "DetachDisk", &[("DiskId", &disk), ("InstanceId", &id)])
        .await
        .expect_error(404, "InvalidDisk.AlreadyDetached");
    ecs(&s, "AttachDisk", &[("DiskId", &disk), ("InstanceId", &id)])
        .await
        .ok();
    // From now on, detaching lasts ten minutes.
    mock.set_transition_delay(Duration::from_secs(600));
    ecs(&s, "DetachDisk", &[("DiskId", &disk), ("InstanceId", &id)])
        .await
        .ok();
    ecs(&s, "DetachDisk", &[("DiskId", &disk), ("InstanceId", &id)])
        .await
        .expect_error(403, "InvalidOperation.DiskDetachingFromThisEcs");
}

#[tokio::test]
async fn every_injectable_unproduced_code_is_answered_when_injected() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    for row in UNPRODUCED_CODES.iter().filter(|r| r.injectable) {
        mock.inject_error(ErrorInjection::new(row.code, Some("DescribeRegions"), 1))
            .unwrap();
        let answer = s.ecs("DescribeRegions", &[]).await;
        assert!(answer.status >= 400, "{}: {}", row.code, answer.body);
        assert_eq!(answer.code(), row.code);
        s.ecs("DescribeRegions", &[]).await.ok();
    }
}
