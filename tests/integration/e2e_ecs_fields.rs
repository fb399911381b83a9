//! ECSInstance field classes end to end, through kubectl as a user would: a Ready instance takes
//! several in-place edits in one `kubectl apply` (the mock's instance changes, Synced is True
//! after), and `kubectl apply` refuses an edit of each immutable field with its message.

use std::time::Duration;

use alibaba_mock::resource_groups;
use ferroplane::controllers::Kind;

use crate::support::E2e;

/// The object as the user keeps it in a file; `extra` goes under forProvider.
fn manifest(extra: &str) -> String {
    format!(
        r#"
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: fields-e2e
spec:
  forProvider:
    regionId: cn-beijing
    imageId: aliyun_3_x64_20G_alibase_20240528.vhd
    instanceType: ecs.g6.large
    internetMaxBandwidthOut: 5
    vSwitchId: vsw-eafxvpknkjnma5xpiqaf0w
    securityGroupIds: [sg-y2fkm5jxbput7ntjcm6tbw]
    spotStrategy: SpotAsPriceGo
    spotDuration: 1
    spotInterruptionBehavior: Terminate
    securityEnhancementStrategy: Active
    systemDisk:
      category: cloud_essd
      size: 40
{extra}"#
    )
}

pub(crate) async fn in_place_edits_apply_and_immutable_edits_are_refused() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.apply(&manifest("")).await;
    e2e.wait_jsonpath(
        "ecs/fields-e2e",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    let id = e2e
        .jsonpath("ecs/fields-e2e", "{.status.atProvider.instanceId}")
        .await;
    assert_eq!(
        e2e.jsonpath("ecs/fields-e2e", "{.status.atProvider.spotStrategy}")
            .await,
        "SpotAsPriceGo"
    );

    // Several in-place fields edited in the file and applied at once.
    let deployment_set = alibaba_mock::defaults::deployment_set_id("cn-beijing", 1);
    let edited = format!(
        "    internetChargeType: PayByBandwidth\n    httpTokens: required\n    httpPutResponseHopLimit: 2\n    ramRoleName: app-role\n    resourceGroupId: {}\n    deploymentSetId: {deployment_set}\n    tags:\n      team: data\n",
        resource_groups::OTHERS[1]
    );
    e2e.apply(&manifest(&edited)).await;
    e2e.eventually(
        "the in-place edits in the mock",
        Duration::from_secs(30),
        || async {
            let i = e2e.instance(&id)?;
            (i.internet_charge_type == "PayByBandwidth"
                && i.http_tokens == "required"
                && i.http_put_response_hop_limit == 2
                && i.ram_role_name.as_deref() == Some("app-role")
                && i.resource_group_id == resource_groups::OTHERS[1]
                && i.deployment_set_id.as_deref() == Some(deployment_set.as_str())
                && i.tags.get("team").map(String::as_str) == Some("data"))
            .then_some(())
        },
    )
    .await;
    e2e.wait_jsonpath(
        "ecs/fields-e2e",
        "{.status.atProvider.metadataOptions.httpTokens}",
        "required",
    )
    .await;
    e2e.wait_jsonpath(
        "ecs/fields-e2e",
        "{.status.conditions[?(@.type=='Synced')].status}",
        "True",
    )
    .await;

    // Each immutable field: the edited file is refused, saying what to do instead.
    let refusals = [
        (
            "spotStrategy: SpotAsPriceGo",
            "spotStrategy: NoSpot",
            "spotStrategy is immutable",
        ),
        (
            "spotDuration: 1",
            "spotDuration: 2",
            "spotDuration is immutable",
        ),
        (
            "spotInterruptionBehavior: Terminate",
            "spotInterruptionBehavior: Stop",
            "spotInterruptionBehavior is immutable",
        ),
        (
            "securityEnhancementStrategy: Active",
            "securityEnhancementStrategy: Deactive",
            "securityEnhancementStrategy is immutable",
        ),
        ("size: 40", "size: 30", "systemDisk.size cannot shrink"),
        (
            "category: cloud_essd",
            "category: cloud_ssd",
            "systemDisk.category is immutable",
        ),
    ];
    let mut refused = 0;
    for (from, to, message) in refusals {
        let yaml = manifest(&edited).replace(from, to);
        assert_ne!(yaml, manifest(&edited), "{from} is in the manifest");
        let out = e2e.kubectl(&["apply", "-f", "-"], Some(&yaml)).await;
        assert!(!out.success(), "{to}: kubectl apply should fail");
        assert!(
            out.stderr.contains(message),
            "{to}: expected {message:?} in:\n{}",
            out.stderr
        );
        refused += 1;
    }
    // Adding a spot price limit after creation is refused too (no silent ignore).
    let out = e2e
        .kubectl(
            &["apply", "-f", "-"],
            Some(&manifest(&format!("{edited}    spotPriceLimit: 0.5\n"))),
        )
        .await;
    assert!(
        !out.success()
            && out
                .stderr
                .contains("spotPriceLimit cannot be added or removed after creation"),
        "{}",
        out.stderr
    );
    println!("{refused} immutable-field edits refused by kubectl apply with their message");
    e2e.k(&["delete", "ecs", "fields-e2e", "--wait=true"]).await;
    assert!(e2e.instance(&id).is_none());
    e2e.finish().await;
}
