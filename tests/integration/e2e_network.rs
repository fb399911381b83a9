//! The network stack sample end to end, driven by kubectl: one `kubectl apply -f` of
//! `deploy/samples/stack.yaml` (a VPC, a VSwitch and a SecurityGroup referencing it, an
//! ECSInstance referencing both) becomes Ready in the order the references need, and one
//! `kubectl delete -f` leaves nothing in the cloud.

use std::time::Duration;

use crate::support::E2e;
use ferroplane::controllers::Kind;
use ferroplane_testkit::samples;

const OBJECTS: [&str; 4] = [
    "vpcs.alibabacloud.ferroplane.io/web",
    "vswitches.alibabacloud.ferroplane.io/web-h",
    "securitygroups.alibabacloud.ferroplane.io/web-ssh",
    "ecsinstances.alibabacloud.ferroplane.io/web-1",
];

pub(crate) async fn the_stack_sample_is_applied_and_deleted_in_one_command() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let stack = samples::without_namespace("stack.yaml");
    e2e.apply(&stack).await;
    for object in OBJECTS {
        e2e.wait_jsonpath(
            object,
            "{.status.conditions[?(@.type=='Ready')].status}",
            "True",
        )
        .await;
    }
    let name = "{.metadata.annotations.ferroplane\\.io/external-name}";
    let vswitch = e2e.jsonpath(OBJECTS[1], name).await;
    let group = e2e.jsonpath(OBJECTS[2], name).await;
    assert!(vswitch.starts_with("vsw-") && group.starts_with("sg-"));
    assert_eq!(
        e2e.jsonpath(OBJECTS[3], "{.spec.forProvider.vSwitchId}")
            .await,
        vswitch
    );
    assert_eq!(
        e2e.jsonpath(OBJECTS[3], "{.spec.forProvider.securityGroupIds[0]}")
            .await,
        group
    );
    assert_eq!(e2e.instances_of(OBJECTS[3]).await.len(), 1);

    let deleted = e2e
        .kubectl(&["delete", "--wait=false", "-f", "-"], Some(&stack))
        .await;
    assert!(deleted.success(), "{}", deleted.stderr);
    e2e.eventually(
        "every object of the stack gone",
        Duration::from_secs(60),
        || async {
            let left = e2e.k(&["get", "vpc,vsw,sg,ecs", "-o", "name"]).await;
            left.trim().is_empty().then_some(())
        },
    )
    .await;
    let stats = e2e.mock().stats();
    assert_eq!(stats.instances_created, 1, "{stats:?}");
    assert_eq!(stats.instances_live, 0, "{stats:?}");
    e2e.finish().await;
}
