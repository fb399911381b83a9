//! Disks and key pairs end to end, driven by kubectl against the sandbox and the ECS mock: the
//! samples `keypair.yaml` (an imported and a generated key pair), `ecsinstance.yaml` (with
//! `keyPairNameRef`) and `disk.yaml` (a disk attached by `instanceIdRef`); the disk is grown,
//! refused a shrink and a zone change at admission, detached and deleted; a disk of another
//! zone referring to the instance is never created; the imported key pair is deleted once its
//! instance is gone.

use std::time::Duration;

use crate::support::E2e;
use alibaba_mock::DEFAULT_ACCOUNT_ID;
use ferroplane::controllers::Kind;
use ferroplane_testkit::samples;

const INSTANCE: &str = "ecsinstances.alibabacloud.ferroplane.io/ins-0702";
const DISK: &str = "disks.alibabacloud.ferroplane.io/data-0702";
const LAPTOP: &str = "keypairs.alibabacloud.ferroplane.io/laptop";
const GENERATED: &str = "keypairs.alibabacloud.ferroplane.io/generated";
const FAR_DISK: &str = "disks.alibabacloud.ferroplane.io/far-0702";
const READY: &str = "{.status.conditions[?(@.type=='Ready')].status}";
const WAIT: Duration = Duration::from_secs(60);

/// The ECSInstance sample, logging in with the `laptop` KeyPair.
fn instance_with_key_pair() -> String {
    let sample = samples::without_namespace("ecsinstance.yaml");
    let with_ref = sample.replacen(
        "  forProvider:\n",
        "  forProvider:\n    keyPairNameRef:\n      name: laptop\n",
        1,
    );
    assert_ne!(with_ref, sample, "the sample has spec.forProvider");
    with_ref
}

pub(crate) async fn a_disk_and_a_key_pair_through_their_whole_life() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.apply(&samples::without_namespace("keypair.yaml")).await;
    e2e.apply(&instance_with_key_pair()).await;
    e2e.apply(&samples::without_namespace("disk.yaml")).await;
    for object in [LAPTOP, GENERATED, INSTANCE, DISK] {
        e2e.wait_jsonpath(object, READY, "True").await;
    }
    // The instance uses the imported key pair.
    let name = "{.metadata.annotations.ferroplane\\.io/external-name}";
    let instance_id = e2e.jsonpath(INSTANCE, name).await;
    assert_eq!(
        e2e.jsonpath(INSTANCE, "{.spec.forProvider.keyPairName}")
            .await,
        "laptop"
    );
    assert_eq!(
        e2e.mock().instance_key_pair(&instance_id).as_deref(),
        Some("laptop")
    );
    assert!(
        e2e.jsonpath(LAPTOP, "{.status.atProvider.fingerPrint}")
            .await
            .contains(':')
    );
    // The generated key's private key is in its Secret, not in the object.
    let private = e2e
        .k(&[
            "get",
            "secret",
            "generated-key",
            "-o",
            "jsonpath={.data.privateKey}",
        ])
        .await;
    assert!(!private.trim().is_empty(), "privateKey in the Secret");
    let object = e2e.k(&["get", GENERATED, "-o", "yaml"]).await;
    assert!(!object.contains(private.trim()) && !object.contains("PRIVATE KEY"));

    // The key pair changes in place on the Ready instance (DetachKeyPair, AttachKeyPair): to
    // the generated one, by its name.
    let other = e2e.jsonpath(GENERATED, name).await;
    let swap = format!(
        r#"[{{"op":"remove","path":"/spec/forProvider/keyPairNameRef"}},{{"op":"replace","path":"/spec/forProvider/keyPairName","value":"{other}"}}]"#
    );
    let swapped = e2e
        .kubectl(&["patch", INSTANCE, "--type", "json", "-p", &swap], None)
        .await;
    assert!(swapped.success(), "{}", swapped.stderr);
    e2e.eventually(
        "the mock's instance to hold the other key pair",
        WAIT,
        || async {
            (e2e.mock().instance_key_pair(&instance_id).as_deref() == Some(other.as_str()))
                .then_some(())
        },
    )
    .await;
    let generation = e2e.jsonpath(INSTANCE, "{.metadata.generation}").await;
    e2e.wait_jsonpath(
        INSTANCE,
        "{.status.conditions[?(@.type=='Synced')].observedGeneration}",
        &generation,
    )
    .await;
    e2e.wait_jsonpath(
        INSTANCE,
        "{.status.conditions[?(@.type=='Synced')].status}",
        "True",
    )
    .await;

    // The disk is attached to the instance, by reference.
    let disk_id = e2e.jsonpath(DISK, name).await;
    assert!(disk_id.starts_with("d-"), "{disk_id}");
    e2e.wait_jsonpath(DISK, "{.status.atProvider.instanceId}", &instance_id)
        .await;
    e2e.wait_jsonpath(DISK, "{.status.atProvider.status}", "In_use")
        .await;

    // Grown in place; a shrink and a zone change are refused at admission.
    let grown = e2e
        .kubectl(
            &[
                "patch",
                DISK,
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"forProvider":{"size":80}}}"#,
            ],
            None,
        )
        .await;
    assert!(grown.success(), "{}", grown.stderr);
    e2e.wait_jsonpath(DISK, "{.status.atProvider.size}", "80")
        .await;
    let mock_disk = |id: &str| e2e.mock().disks().into_iter().find(|d| d.disk_id == id);
    assert_eq!(mock_disk(&disk_id).map(|d| d.size), Some(80));
    for (patch, message) in [
        (
            r#"{"spec":{"forProvider":{"size":20}}}"#,
            "size cannot shrink",
        ),
        (
            r#"{"spec":{"forProvider":{"zoneId":"cn-beijing-b"}}}"#,
            "zoneId is immutable",
        ),
    ] {
        let refused = e2e
            .kubectl(&["patch", DISK, "--type", "merge", "-p", patch], None)
            .await;
        assert!(!refused.success(), "{patch} was admitted");
        assert!(refused.stderr.contains(message), "{}", refused.stderr);
    }

    // A disk of another zone that names the instance is refused before anything is created
    // (AttachDisk would fail with ResourcesNotInSameZone and leave a disk no one asked for).
    let far = samples::without_namespace("disk.yaml")
        .replace("name: data-0702", "name: far-0702")
        .replace("diskName: data-0702", "diskName: far-0702")
        .replace("zoneId: cn-beijing-a", "zoneId: cn-beijing-b");
    assert!(
        far.contains("far-0702") && far.contains("cn-beijing-b"),
        "{far}"
    );
    e2e.apply(&far).await;
    e2e.eventually("the far Disk refused with ZoneMismatch", WAIT, || async {
        let message = e2e
            .jsonpath(
                FAR_DISK,
                "{.status.conditions[?(@.type=='Synced')].message}",
            )
            .await;
        message.starts_with("ZoneMismatch: ").then_some(())
    })
    .await;
    let far_disks = || {
        e2e.mock()
            .disks()
            .into_iter()
            .filter(|d| d.zone_id == "cn-beijing-b")
            .count()
    };
    assert_eq!(far_disks(), 0, "a disk was created in the other zone");
    let deleted = e2e
        .kubectl(&["delete", FAR_DISK, "--wait=false"], None)
        .await;
    assert!(deleted.success(), "{}", deleted.stderr);
    e2e.eventually("the far Disk gone", WAIT, || async {
        let left = e2e
            .k(&["get", FAR_DISK, "--ignore-not-found", "-o", "name"])
            .await;
        left.trim().is_empty().then_some(())
    })
    .await;
    assert_eq!(far_disks(), 0, "a disk was created in the other zone");

    // Detached when the spec names no instance.
    let detached = e2e
        .kubectl(
            &[
                "patch",
                DISK,
                "--type",
                "json",
                "-p",
                r#"[{"op":"remove","path":"/spec/forProvider/instanceIdRef"},{"op":"remove","path":"/spec/forProvider/instanceId"}]"#,
            ],
            None,
        )
        .await;
    assert!(detached.success(), "{}", detached.stderr);
    e2e.wait_jsonpath(DISK, "{.status.atProvider.status}", "Available")
        .await;

    // Deleted: released in the cloud.
    let deleted = e2e.kubectl(&["delete", DISK, "--wait=false"], None).await;
    assert!(deleted.success(), "{}", deleted.stderr);
    e2e.eventually("the Disk gone", WAIT, || async {
        let left = e2e.k(&["get", "disks", "-o", "name"]).await;
        left.trim().is_empty().then_some(())
    })
    .await;
    assert!(mock_disk(&disk_id).is_none(), "disk {disk_id} left behind");

    // The key pairs: `laptop` waits for its instance, then every key pair is gone.
    let deleted = e2e
        .kubectl(
            &["delete", LAPTOP, GENERATED, INSTANCE, "--wait=false"],
            None,
        )
        .await;
    assert!(deleted.success(), "{}", deleted.stderr);
    e2e.eventually("the key pairs and the instance gone", WAIT, || async {
        let left = e2e.k(&["get", "keypairs,ecs", "-o", "name"]).await;
        left.trim().is_empty().then_some(())
    })
    .await;
    assert!(
        e2e.mock()
            .key_pair_names(DEFAULT_ACCOUNT_ID, "cn-beijing")
            .is_empty()
    );
    e2e.finish().await;
}
