//! ECSInstance end to end, driven by kubectl exactly as a user would: apply, get, patch, delete.
//! See `support` for how the environment is started (sandbox by default, a real cluster with
//! `FERROPLANE_E2E_KUBECONFIG`).

use std::time::Duration;

use crate::support::{ACCESS_KEY_SECRET, E2e};
use ferroplane::controllers::Kind;

fn instance_yaml(name: &str, extra_for_provider: &str, extra_spec: &str) -> String {
    format!(
        r#"
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: {name}
spec:
{extra_spec}
  forProvider:
    regionId: cn-beijing
    imageId: centos_7_8_x64_20G_alibase_20200519.vhd
    instanceType: ecs.g6.large
    instanceName: {name}
    internetMaxBandwidthOut: 5
    vSwitchId: vsw-eafxvpknkjnma5xpiqaf0w
    securityGroupIds: [sg-y2fkm5jxbput7ntjcm6tbw]
{extra_for_provider}
"#
    )
}

/// `kubectl patch ecs NAME --type merge -p PATCH`.
async fn patch_ecs(e2e: &E2e, name: &str, patch: &str) {
    e2e.k(&["patch", "ecs", name, "--type", "merge", "-p", patch])
        .await;
}

/// The object's `status.pendingChanges` once one of them waits for `reason`.
async fn pending_changes(e2e: &E2e, object: &str, reason: &str) -> Vec<serde_json::Value> {
    e2e.eventually(
        &format!("a pending change waiting for {reason}"),
        Duration::from_secs(30),
        || async {
            let raw = e2e.jsonpath(object, "{.status.pendingChanges}").await;
            let changes: Vec<serde_json::Value> = serde_json::from_str(&raw).ok()?;
            changes
                .iter()
                .any(|c| c["reason"] == reason)
                .then_some(changes)
        },
    )
    .await
}

async fn wait_ready(e2e: &E2e, object: &str) {
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
}

pub(crate) async fn create_get_edit_stop_and_delete() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.apply(&instance_yaml(
        "web-1",
        "    tags:\n      team: platform",
        "  writeConnectionSecretToRef:\n    name: web-1-conn",
    ))
    .await;
    wait_ready(&e2e, "ecs/web-1").await;

    // Status carries what a user needs, and the printer columns show it.
    let id = e2e
        .jsonpath("ecs/web-1", "{.status.atProvider.instanceId}")
        .await;
    assert!(id.starts_with("i-"), "instance id {id:?}");
    assert_eq!(
        e2e.jsonpath(
            "ecs/web-1",
            "{.metadata.annotations.ferroplane\\.io/external-name}"
        )
        .await,
        id
    );
    let public_ip = e2e
        .jsonpath("ecs/web-1", "{.status.atProvider.publicIpAddress}")
        .await;
    let private_ip = e2e
        .jsonpath("ecs/web-1", "{.status.atProvider.privateIpAddress}")
        .await;
    assert!(!public_ip.is_empty() && !private_ip.is_empty());
    let table = e2e.k(&["get", "ecs"]).await;
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "SYNCED",
            "EXTERNAL-NAME",
            "STATUS",
            "PUBLIC-IP",
            "AGE"
        ]
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("web-1"))
        .expect("a row for web-1");
    for value in ["True", &id, "Running", &public_ip] {
        assert!(row.contains(value), "row {row:?} lacks {value}");
    }

    // The cloud holds exactly one instance for the object, tagged with its UID.
    let instances = e2e.instances_of("ecs/web-1").await;
    assert_eq!(instances.len(), 1);
    assert_eq!(instances[0].instance_id, id);
    assert_eq!(
        instances[0].tags.get("team").map(String::as_str),
        Some("platform")
    );

    // The connection Secret has the instance ID and the addresses.
    let conn_id = e2e
        .jsonpath("secret/web-1-conn", "{.data.instanceId}")
        .await;
    assert_eq!(base64_decode(&conn_id), id);
    assert_eq!(
        base64_decode(
            &e2e.jsonpath("secret/web-1-conn", "{.data.publicIpAddress}")
                .await
        ),
        public_ip
    );

    // Edit the name and the tags: changed in place in the cloud.
    e2e.k(&[
        "patch", "ecs", "web-1", "--type", "merge", "-p",
        r#"{"spec":{"forProvider":{"instanceName":"web-1-renamed","tags":{"team":"infra","env":"dev"}}}}"#,
    ]).await;
    e2e.eventually(
        "name and tags in the mock",
        Duration::from_secs(30),
        || async {
            let i = e2e.instance(&id)?;
            let tags_ok = i.tags.get("team").map(String::as_str) == Some("infra")
                && i.tags.get("env").map(String::as_str) == Some("dev");
            (i.instance_name == "web-1-renamed" && tags_ok).then_some(())
        },
    )
    .await;
    assert!(
        e2e.instance(&id)
            .expect("still there")
            .tags
            .contains_key("ferroplane.io/uid"),
        "the uid tag survives"
    );

    // Stop it.
    patch_ecs(
        &e2e,
        "web-1",
        r#"{"spec":{"forProvider":{"desiredStatus":"Stopped"}}}"#,
    )
    .await;
    e2e.wait_jsonpath("ecs/web-1", "{.status.atProvider.status}", "Stopped")
        .await;
    assert_eq!(e2e.instance(&id).expect("exists").status, "Stopped");

    // Delete: kubectl waits for the finalizer, which goes only once the instance is gone.
    e2e.k(&["delete", "ecs", "web-1", "--timeout=60s"]).await;
    assert!(e2e.instance(&id).is_none(), "instance {id} was released");
    let stats = e2e.mock().stats();
    assert_eq!(stats.instances_created, 1, "no duplicate: {stats:?}");
    assert_eq!(stats.instances_live, 0, "no leak: {stats:?}");
    e2e.finish().await;
}

pub(crate) async fn instance_type_change_waits_for_allow_restart() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.apply(&instance_yaml("resize", "", "")).await;
    wait_ready(&e2e, "ecs/resize").await;
    let id = e2e
        .jsonpath("ecs/resize", "{.status.atProvider.instanceId}")
        .await;

    patch_ecs(
        &e2e,
        "resize",
        r#"{"spec":{"forProvider":{"instanceType":"ecs.g6.xlarge"}}}"#,
    )
    .await;
    let conditions = e2e
        .eventually(
            "a condition naming allowRestart",
            Duration::from_secs(30),
            || async {
                let c = e2e.jsonpath("ecs/resize", "{.status.conditions}").await;
                c.contains("allowRestart").then_some(c)
            },
        )
        .await;
    assert!(conditions.contains("instanceType"), "{conditions}");
    assert_eq!(
        e2e.instance(&id).expect("exists").instance_type,
        "ecs.g6.large",
        "not restarted without consent"
    );
    assert_eq!(e2e.instance(&id).expect("exists").status, "Running");
    // The status says what waits and why, as `ferroplane plan` would.
    let waiting = pending_changes(&e2e, "ecs/resize", "RestartNotAllowed").await;
    assert_eq!(waiting.len(), 1, "{waiting:#?}");
    assert_eq!(waiting[0]["field"], "instanceType");
    assert_eq!(waiting[0]["action"], "ModifyInstanceSpec");
    let message = waiting[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("allowRestart: true"), "{message}");

    // With consent, but the zone has no stock of the new type: ECS refuses the change and the
    // status says so with ECS's answer.
    let zone = e2e
        .jsonpath("ecs/resize", "{.status.atProvider.zoneId}")
        .await;
    let sold_out = |available| alibaba_mock::StockLimit {
        zone_id: zone.clone(),
        instance_type: "ecs.g6.xlarge".to_owned(),
        available,
    };
    e2e.mock().set_stock(&sold_out(Some(0)));
    patch_ecs(
        &e2e,
        "resize",
        r#"{"spec":{"forProvider":{"allowRestart":true}}}"#,
    )
    .await;
    let refused = pending_changes(&e2e, "ecs/resize", "RefusedByCloud").await;
    assert_eq!(refused[0]["field"], "instanceType", "{refused:#?}");
    let message = refused[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ModifyInstanceSpec") && message.contains("NoStock"),
        "{message}"
    );

    e2e.mock().set_stock(&sold_out(None));
    e2e.eventually(
        "the new type, running again",
        Duration::from_secs(45),
        || async {
            let i = e2e.instance(&id)?;
            (i.instance_type == "ecs.g6.xlarge" && i.status == "Running").then_some(())
        },
    )
    .await;
    wait_ready(&e2e, "ecs/resize").await;
    e2e.eventually(
        "no pending change once applied",
        Duration::from_secs(30),
        || async {
            e2e.jsonpath("ecs/resize", "{.status.pendingChanges}")
                .await
                .is_empty()
                .then_some(())
        },
    )
    .await;
    e2e.k(&["delete", "ecs", "resize", "--timeout=60s"]).await;
    assert_eq!(e2e.mock().stats().instances_live, 0);
    e2e.finish().await;
}

pub(crate) async fn orphan_keeps_the_instance_and_observe_only_imports_it() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.apply(&instance_yaml("keeper", "", "  deletionPolicy: Orphan"))
        .await;
    wait_ready(&e2e, "ecs/keeper").await;
    let id = e2e
        .jsonpath("ecs/keeper", "{.status.atProvider.instanceId}")
        .await;
    e2e.k(&["delete", "ecs", "keeper", "--timeout=60s"]).await;
    assert!(
        e2e.instance(&id).is_some(),
        "Orphan leaves the instance in the cloud"
    );

    // Import it read-only by its ID.
    e2e.apply(&format!(
        r#"
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: imported
  annotations:
    ferroplane.io/external-name: {id}
spec:
  managementPolicies: ["Observe"]
  forProvider:
    regionId: cn-beijing
    imageId: centos_7_8_x64_20G_alibase_20200519.vhd
    instanceType: ecs.g6.large
"#
    ))
    .await;
    wait_ready(&e2e, "ecs/imported").await;
    assert_eq!(
        e2e.jsonpath("ecs/imported", "{.status.atProvider.instanceId}")
            .await,
        id
    );
    assert_eq!(
        e2e.mock().stats().instances_created,
        1,
        "importing creates nothing"
    );
    // An edit of an observed-only instance waits for the management policies, and says so.
    patch_ecs(
        &e2e,
        "imported",
        r#"{"spec":{"forProvider":{"instanceName":"renamed"}}}"#,
    )
    .await;
    let waiting = pending_changes(&e2e, "ecs/imported", "UpdateNotAllowed").await;
    assert_eq!(waiting.len(), 1, "{waiting:#?}");
    assert_eq!(waiting[0]["field"], "instanceName");
    assert_eq!(waiting[0]["action"], "ModifyInstanceAttribute");
    assert_eq!(e2e.instance(&id).expect("exists").instance_name, "keeper");
    e2e.k(&["delete", "ecs", "imported", "--timeout=60s"]).await;
    assert!(e2e.instance(&id).is_some(), "Observe-only never deletes");
    e2e.finish().await;
}

pub(crate) async fn failures_are_reported_and_secret_rotation_recovers() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;

    // An image the region does not have: the cloud's code, in a condition the user can act on.
    e2e.apply(&instance_yaml("bad-image", "", "").replace(
        "centos_7_8_x64_20G_alibase_20200519.vhd",
        "no_such_image.vhd",
    ))
    .await;
    let message = e2e
        .eventually(
            "Synced=False naming the image error",
            Duration::from_secs(30),
            || async {
                let m = e2e
                    .jsonpath(
                        "ecs/bad-image",
                        "{.status.conditions[?(@.type=='Synced')].message}",
                    )
                    .await;
                m.contains("InvalidImageId.NotFound").then_some(m)
            },
        )
        .await;
    assert!(
        message.contains("imageId") || message.contains("image"),
        "{message}"
    );
    let events = e2e
        .k(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=bad-image",
        ])
        .await;
    assert!(events.contains("Warning"), "a Warning event: {events}");
    e2e.k(&["delete", "ecs", "bad-image", "--timeout=60s"])
        .await;

    // Wrong secret: the signature fails; the message says so without showing any secret.
    e2e.apply(
        r#"
apiVersion: v1
kind: Secret
metadata:
  name: alibabacloud-credentials
stringData:
  accessKeySecret: wrong-secret-value-123
"#,
    )
    .await;
    e2e.apply(&instance_yaml("rotated", "", "")).await;
    let message = e2e
        .eventually(
            "Synced=False naming the signature error",
            Duration::from_secs(30),
            || async {
                let m = e2e
                    .jsonpath(
                        "ecs/rotated",
                        "{.status.conditions[?(@.type=='Synced')].message}",
                    )
                    .await;
                m.contains("SignatureDoesNotMatch").then_some(m)
            },
        )
        .await;
    assert!(!message.contains("wrong-secret-value-123") && !message.contains(ACCESS_KEY_SECRET));

    // Rotating the Secret back is picked up without touching the ECSInstance.
    e2e.apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: alibabacloud-credentials\nstringData:\n  accessKeySecret: {ACCESS_KEY_SECRET}\n"
    )).await;
    wait_ready(&e2e, "ecs/rotated").await;
    let described = e2e.k(&["describe", "ecs", "rotated"]).await;
    assert!(!described.contains(ACCESS_KEY_SECRET));
    e2e.k(&["delete", "ecs", "rotated", "--timeout=60s"]).await;
    assert_eq!(e2e.mock().stats().instances_live, 0);
    e2e.finish().await;
}

fn base64_decode(text: &str) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .unwrap_or_else(|e| panic!("{text:?} is not base64: {e}"));
    String::from_utf8(bytes).expect("utf-8")
}
