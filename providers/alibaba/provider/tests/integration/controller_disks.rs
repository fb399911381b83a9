//! The Disk kind against the mock: created and attached to an ECSInstance named by
//! `instanceIdRef`, grown and given another performance level in place, re-attached after a
//! detach behind ferroplane's back, detached when the spec stops naming an instance, and
//! detached then released when deleted.

use alibaba_mock::DiskSummary;
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::EcsClient;
use ferroplane_apis::alibabacloud::{Disk, DiskParameters, DiskSpec};
use ferroplane_apis::common::names::{READY, SYNCED};
use ferroplane_apis::common::{ConditionStatus, DeletionPolicy, default_management_policies};
use ferroplane_apis::references::Reference;
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::controller_support::{
    AK, Env, NS, REGION, SK, WAIT, condition, external_name, instance,
};

fn disk(name: &str, zone: &str, instance: &str) -> Disk {
    let mut obj = Disk::new(
        name,
        DiskSpec {
            deletion_policy: DeletionPolicy::Delete,
            management_policies: default_management_policies(),
            provider_config_ref: Default::default(),
            write_connection_secret_to_ref: None,
            for_provider: DiskParameters {
                region_id: REGION.into(),
                zone_id: zone.into(),
                category: Some("cloud_essd".into()),
                size: Some(40),
                disk_name: Some("data".into()),
                instance_id_ref: Some(Reference {
                    name: instance.into(),
                }),
                ..DiskParameters::default()
            },
        },
    );
    obj.metadata.namespace = Some(NS.into());
    obj
}

fn mock_disk(env: &Env, id: &str) -> Option<DiskSummary> {
    env.mock().disks().into_iter().find(|d| d.disk_id == id)
}

async fn wait_mock_disk(
    env: &Env,
    id: &str,
    what: &str,
    check: impl Fn(Option<&DiskSummary>) -> bool,
) {
    eventually(format!("mock disk {id}: {what}"))
        .within(WAIT)
        .until(|| {
            let found = mock_disk(env, id);
            if check(found.as_ref()) {
                Ok(())
            } else {
                Err(Box::new(found))
            }
        })
        .await;
}

async fn patch(api: &Api<Disk>, name: &str, for_provider: serde_json::Value) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"forProvider": for_provider}})),
    )
    .await
    .expect("Disk patched");
}

async fn wait_synced(api: &Api<Disk>, name: &str) {
    eventually(format!("Disk {name}: Ready and Synced for its generation"))
        .within(WAIT)
        .for_object(api, name, |o| {
            o.is_some_and(|d| {
                is_ready(d)
                    && condition(d, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                    && d.status.as_ref().and_then(|s| s.observed_generation)
                        == d.metadata.generation
            })
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_is_attached_by_reference_grown_detached_and_released() {
    let env = Env::start().await;
    env.create(&instance("vm-1")).await;
    let vm = env.wait_ready("vm-1").await;
    let instance_id = external_name(&vm).expect("instance ID");
    let zone = vm
        .status
        .as_ref()
        .map(|s| s.observed())
        .and_then(|a| a.zone_id.clone())
        .expect("zone");
    let disks: Api<Disk> = Api::namespaced(env.client.clone(), NS);
    disks
        .create(&PostParams::default(), &disk("data-1", &zone, "vm-1"))
        .await
        .expect("Disk created");
    let ready = eventually("Disk data-1: Ready with its external name")
        .within(WAIT)
        .for_object(&disks, "data-1", |o| {
            o.is_some_and(|d| is_ready(d) && external_name(d).is_some())
        })
        .await
        .expect("exists");
    let id = external_name(&ready).expect("disk ID");
    assert!(id.starts_with("d-"), "{id}");
    wait_mock_disk(&env, &id, "attached to vm-1", |d| {
        d.is_some_and(|d| d.instance_id.as_deref() == Some(instance_id.as_str()))
    })
    .await;
    let d = mock_disk(&env, &id).expect("in the mock");
    assert_eq!(
        (d.category.as_str(), d.size, d.performance_level.as_deref()),
        ("cloud_essd", 40, Some("PL1"))
    );
    // The reference was written into the literal.
    let obj = disks.get("data-1").await.expect("get");
    assert_eq!(
        obj.spec.for_provider.instance_id.as_deref(),
        Some(instance_id.as_str())
    );

    // Grown and given another level in place.
    patch(
        &disks,
        "data-1",
        json!({"size": 80, "performanceLevel": "PL0"}),
    )
    .await;
    wait_mock_disk(&env, &id, "80 GiB at PL0", |d| {
        d.is_some_and(|d| d.size == 80 && d.performance_level.as_deref() == Some("PL0"))
    })
    .await;
    wait_synced(&disks, "data-1").await;
    // A shrink, and a level outside cloud_essd, are refused at admission.
    let shrink = disks
        .patch(
            "data-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"size": 20}}})),
        )
        .await
        .expect_err("a shrink is refused");
    assert!(
        shrink.to_string().contains("size cannot shrink"),
        "{shrink}"
    );
    let mut ssd = disk("ssd", &zone, "vm-1");
    ssd.spec.for_provider.category = Some("cloud_ssd".into());
    ssd.spec.for_provider.performance_level = Some("PL1".into());
    let refused = disks
        .create(&PostParams::default(), &ssd)
        .await
        .expect_err("a performance level on cloud_ssd is refused");
    assert!(
        refused
            .to_string()
            .contains("performanceLevel applies to category cloud_essd only"),
        "{refused}"
    );

    // Detached behind ferroplane's back: attached again at the next poll.
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new(AK, SK))
        .endpoint(env.mock().endpoint())
        .build()
        .expect("ECS client");
    ecs.detach_disk(&id, &instance_id).await.expect("detach");
    wait_mock_disk(&env, &id, "attached again", |d| {
        d.is_some_and(|d| d.instance_id.as_deref() == Some(instance_id.as_str()))
    })
    .await;

    // No instance in the spec: detached.
    patch(
        &disks,
        "data-1",
        json!({"instanceId": null, "instanceIdRef": null}),
    )
    .await;
    wait_mock_disk(&env, &id, "detached", |d| {
        d.is_some_and(|d| d.status == "Available")
    })
    .await;
    wait_synced(&disks, "data-1").await;

    // Attached again, then deleted: detached first, then released.
    patch(&disks, "data-1", json!({"instanceId": instance_id})).await;
    wait_mock_disk(&env, &id, "attached", |d| {
        d.is_some_and(|d| d.status == "In_use")
    })
    .await;
    disks
        .delete("data-1", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("Disk data-1: gone")
        .within(WAIT)
        .for_object(&disks, "data-1", |o| o.is_none())
        .await;
    assert!(mock_disk(&env, &id).is_none(), "disk {id} left behind");
    env.stop().await;
}

/// The zone of a Ready ECSInstance, and another zone of the region.
fn zones(vm: &ferroplane_apis::alibabacloud::ECSInstance) -> (String, &'static str) {
    let zone = vm
        .status
        .as_ref()
        .map(|s| s.observed())
        .and_then(|a| a.zone_id.clone())
        .expect("zone");
    let other = if zone == "cn-beijing-a" {
        "cn-beijing-b"
    } else {
        "cn-beijing-a"
    };
    (zone, other)
}

fn at_provider(d: &Disk) -> ferroplane_apis::alibabacloud::DiskObservation {
    d.status.as_ref().map(|s| s.observed()).unwrap_or_default()
}

// Issue 32, defect 9: a disk that could never attach is never created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_in_another_zone_than_its_instance_is_refused_before_it_is_created() {
    let env = Env::start().await;
    env.create(&instance("vm-2")).await;
    let vm = env.wait_ready("vm-2").await;
    let instance_id = external_name(&vm).expect("instance ID");
    let (zone, other) = zones(&vm);
    let disks: Api<Disk> = Api::namespaced(env.client.clone(), NS);
    disks
        .create(&PostParams::default(), &disk("far", other, "vm-2"))
        .await
        .expect("Disk created");
    let obj = eventually("Disk far: Synced=False with ZoneMismatch")
        .within(WAIT)
        .for_object(&disks, "far", |o| {
            o.and_then(|d| condition(d, SYNCED)).is_some_and(|c| {
                c.status == ConditionStatus::False && c.message.contains("ZoneMismatch")
            })
        })
        .await
        .expect("exists");
    let message = condition(&obj, SYNCED).expect("Synced").message.clone();
    for needle in [zone.as_str(), other, instance_id.as_str(), "zoneId"] {
        assert!(message.contains(needle), "{needle} in: {message}");
    }
    assert!(!is_ready(&obj), "never Ready");
    assert_eq!(external_name(&obj), None, "nothing was created");
    assert_eq!(env.mock().stats().calls_of("CreateDisk"), 0);
    assert!(env.mock().disks().iter().all(|d| d.zone_id != other));
    // The Warning event is recorded beside the condition, not before it: wait for it.
    eventually("a CannotCreateExternalResource event")
        .within(WAIT)
        .until_async(|| async {
            let reasons = env.event_reasons("far").await;
            if reasons.iter().any(|r| r == "CannotCreateExternalResource") {
                Ok(())
            } else {
                Err(reasons)
            }
        })
        .await;

    // The zone is immutable, so the fix is a Disk in the instance's zone: created and attached.
    disks
        .create(&PostParams::default(), &disk("near", &zone, "vm-2"))
        .await
        .expect("Disk created");
    let near = eventually("Disk near: Ready, attached")
        .within(WAIT)
        .for_object(&disks, "near", |o| {
            o.is_some_and(|d| {
                is_ready(d) && at_provider(d).instance_id.as_deref() == Some(instance_id.as_str())
            })
        })
        .await
        .expect("exists");
    assert_eq!(at_provider(&near).zone_id.as_deref(), Some(zone.as_str()));
    assert_eq!(env.mock().stats().calls_of("CreateDisk"), 1);
    env.stop().await;
}

// Issue 32, defect 9: moving an attached disk to an instance of another zone is refused before it
// is detached, so it stays where it works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_is_not_detached_for_an_instance_of_another_zone() {
    let env = Env::start().await;
    env.create(&instance("vm-4")).await;
    let vm = env.wait_ready("vm-4").await;
    let here = external_name(&vm).expect("instance ID");
    let (zone, other) = zones(&vm);
    let mut elsewhere = instance("vm-5");
    elsewhere.spec.for_provider.v_switch_id = Some(alibaba_mock::defaults::vswitch_id(other));
    env.create(&elsewhere).await;
    let there = external_name(&env.wait_ready("vm-5").await).expect("instance ID");
    let disks: Api<Disk> = Api::namespaced(env.client.clone(), NS);
    disks
        .create(&PostParams::default(), &disk("mover", &zone, "vm-4"))
        .await
        .expect("Disk created");
    let attached = eventually("Disk mover: attached to vm-4")
        .within(WAIT)
        .for_object(&disks, "mover", |o| {
            o.is_some_and(|d| at_provider(d).instance_id.as_deref() == Some(here.as_str()))
        })
        .await
        .expect("exists");
    let id = external_name(&attached).expect("disk ID");

    patch(
        &disks,
        "mover",
        json!({"instanceIdRef": {"name": "vm-5"}, "instanceId": there}),
    )
    .await;
    let refused = eventually("Disk mover: Synced=False with ZoneMismatch")
        .within(WAIT)
        .for_object(&disks, "mover", |o| {
            o.and_then(|d| condition(d, SYNCED)).is_some_and(|c| {
                c.status == ConditionStatus::False && c.message.contains("ZoneMismatch")
            })
        })
        .await
        .expect("exists");
    let message = &condition(&refused, SYNCED).expect("Synced").message;
    assert!(
        message.contains(&there) && message.contains(other),
        "{message}"
    );
    assert_eq!(env.mock().stats().calls_of("DetachDisk"), 0);
    assert_eq!(
        mock_disk(&env, &id).and_then(|d| d.instance_id),
        Some(here.clone())
    );
    env.stop().await;
}

// Issue 32, defect 7: a failed update does not leave the status of an earlier observation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_whose_instance_is_released_says_so_even_when_its_resize_is_refused() {
    let env = Env::start().await;
    env.create(&instance("vm-3")).await;
    let vm = env.wait_ready("vm-3").await;
    let instance_id = external_name(&vm).expect("instance ID");
    let (zone, _) = zones(&vm);
    let disks: Api<Disk> = Api::namespaced(env.client.clone(), NS);
    // A basic disk holds at most 2,000 GiB: ECS refuses to grow it beyond.
    let mut basic = disk("stale", &zone, "vm-3");
    basic.spec.for_provider.category = Some("cloud".into());
    disks
        .create(&PostParams::default(), &basic)
        .await
        .expect("Disk created");
    eventually("Disk stale: Ready, Synced, In_use on vm-3")
        .within(WAIT)
        .for_object(&disks, "stale", |o| {
            o.is_some_and(|d| {
                let seen = at_provider(d);
                is_ready(d)
                    && condition(d, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                    && seen.status.as_deref() == Some("In_use")
                    && seen.instance_id.as_deref() == Some(instance_id.as_str())
            })
        })
        .await;

    // Released outside ferroplane (ECS detaches its data disks), then a resize ECS refuses.
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new(AK, SK))
        .endpoint(env.mock().endpoint())
        .build()
        .expect("ECS client");
    ecs.delete_instance(&instance_id, true)
        .await
        .expect("released");
    patch(&disks, "stale", json!({"size": 2500})).await;

    let obj = eventually("Disk stale: the refused resize beside what ECS says now")
        .within(WAIT)
        .for_object(&disks, "stale", |o| {
            o.is_some_and(|d| {
                let seen = at_provider(d);
                condition(d, SYNCED).is_some_and(|c| {
                    c.status == ConditionStatus::False
                        && c.message.contains("InvalidDataDiskSize.ValueNotSupported")
                }) && seen.status.as_deref() == Some("Available")
                    && seen.instance_id.is_none()
            })
        })
        .await
        .expect("exists");
    let ready = condition(&obj, READY).expect("Ready");
    assert_eq!(
        ready.status,
        ConditionStatus::False,
        "not Ready while detached from the instance the spec names: {ready:?}"
    );
    assert!(ready.message.contains(&instance_id), "{}", ready.message);
    assert_eq!(at_provider(&obj).size, Some(40));
    env.stop().await;
}
