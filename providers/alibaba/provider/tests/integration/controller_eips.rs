//! EIP and EIPAssociation against the mock: `deploy/samples/eip.yaml` (an instance, an EIP and
//! their association) applied at once in reverse order becomes Ready, the instance shows the
//! EIP's address, and deleting the EIP first waits (`WaitingToDelete`) until the association is
//! deleted, then everything is gone from the mock; an EIP's bandwidth, name, description and
//! tags change in place and a change made elsewhere is reverted; an association undone
//! elsewhere is made again, and an EIP associated with another instance is never taken; an EIP
//! created protected is released only once the spec lifts its deletion protection.

use alibaba_mock::ResourceKind;
use alibaba_sdk::vpc::{EipAddress, EipTarget, Tag, VpcClient};
use ferroplane_apis::alibabacloud::{ECSInstance, EIP, EIPAssociation};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_runtime::reasons::DELETION_WAITING;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::controller_support::{Env, NS, WAIT, cloud, condition, external_name, wait_ready};

/// The documents of `deploy/samples/eip.yaml`: ECSInstance, EIP, EIPAssociation.
fn sample() -> (ECSInstance, EIP, EIPAssociation) {
    let text = ferroplane_testkit::samples::read("eip.yaml");
    let docs: Vec<Value> = text
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("eip.yaml document"))
        .collect();
    let of = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind)
            .cloned()
            .unwrap_or_else(|| panic!("eip.yaml has a {kind}"))
    };
    (
        serde_json::from_value(of("ECSInstance")).expect("an ECSInstance"),
        serde_json::from_value(of("EIP")).expect("an EIP"),
        serde_json::from_value(of("EIPAssociation")).expect("an EIPAssociation"),
    )
}

async fn described(vpc: &VpcClient, id: &str) -> EipAddress {
    vpc.describe_eip_addresses(&[id.to_owned()], &[])
        .await
        .expect("DescribeEipAddresses")
        .into_iter()
        .next()
        .expect("the EIP exists")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eip_sample_becomes_ready_and_an_associated_eip_waits_for_its_association() {
    let env = Env::start().await;
    let (instance, eip, association) = sample();
    let pp = PostParams::default();
    let instances: Api<ECSInstance> = Api::namespaced(env.client.clone(), NS);
    let eips: Api<EIP> = Api::namespaced(env.client.clone(), NS);
    let associations: Api<EIPAssociation> = Api::namespaced(env.client.clone(), NS);
    // The association first: it waits for both references.
    associations
        .create(&pp, &association)
        .await
        .expect("association");
    eips.create(&pp, &eip).await.expect("EIP");
    instances.create(&pp, &instance).await.expect("instance");

    let eip: EIP = wait_ready(&env, "bastion").await;
    let instance: ECSInstance = wait_ready(&env, "bastion").await;
    let association: EIPAssociation = wait_ready(&env, "bastion").await;
    let eip_id = external_name(&eip).expect("allocation ID").to_owned();
    let instance_id = external_name(&instance).expect("instance ID").to_owned();
    assert_eq!(
        external_name(&association),
        Some(format!("{eip_id}:{instance_id}"))
    );
    let vpc = cloud(&env).1;
    let cloud = described(&vpc, &eip_id).await;
    assert_eq!(
        (
            cloud.status.as_str(),
            cloud.instance_id.as_str(),
            cloud.bandwidth
        ),
        ("InUse", instance_id.as_str(), 10)
    );
    assert_eq!(cloud.internet_charge_type, "PayByTraffic");
    assert_eq!(
        cloud.tag(ferroplane_runtime::UID_TAG),
        eip.metadata.uid.as_deref()
    );
    // The instance reports its EIP.
    let address = cloud.ip_address.clone();
    eventually("ECSInstance bastion: atProvider.eipAddress")
        .within(WAIT)
        .for_object(&instances, "bastion", |o| {
            o.and_then(|o| o.status.as_ref())
                .and_then(|s| s.at_provider.as_ref()?.eip_address.as_deref())
                == Some(address.as_str())
        })
        .await;

    // The EIP first: it waits, named, while it is associated.
    eips.delete("bastion", &DeleteParams::default())
        .await
        .expect("delete EIP");
    eventually("EIP bastion: WaitingToDelete")
        .within(WAIT)
        .until_async(|| async {
            env.event_reasons("bastion")
                .await
                .iter()
                .any(|r| r == DELETION_WAITING)
        })
        .await;
    let waiting = eips.get("bastion").await.expect("the EIP object waits");
    let synced = condition(&waiting, SYNCED).expect("Synced");
    assert!(
        synced.message.contains(&instance_id) && synced.message.contains("EIPAssociation"),
        "{}",
        synced.message
    );
    assert_eq!(env.live(ResourceKind::Eip), vec![eip_id.clone()]);
    assert_eq!(env.mock().stats().calls_of("ReleaseEipAddress"), 0);

    associations
        .delete("bastion", &DeleteParams::default())
        .await
        .expect("delete association");
    instances
        .delete("bastion", &DeleteParams::default())
        .await
        .expect("delete instance");
    eventually("everything gone from the cluster and the mock")
        .within(WAIT)
        .until_async(|| async {
            associations
                .get_opt("bastion")
                .await
                .ok()
                .flatten()
                .is_none()
                && eips.get_opt("bastion").await.ok().flatten().is_none()
                && instances.get_opt("bastion").await.ok().flatten().is_none()
                && env.live(ResourceKind::Eip).is_empty()
                && env.live(ResourceKind::EipAssociation).is_empty()
        })
        .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eip_changes_in_place_and_drift_is_reverted() {
    let env = Env::start().await;
    let (_, eip, _) = sample();
    let eips: Api<EIP> = Api::namespaced(env.client.clone(), NS);
    eips.create(&PostParams::default(), &eip)
        .await
        .expect("EIP");
    let ready: EIP = wait_ready(&env, "bastion").await;
    let id = external_name(&ready).expect("allocation ID").to_owned();
    let vpc = cloud(&env).1;

    let patch = json!({"spec": {"forProvider": {
        "bandwidth": 20, "name": "bastion-2", "description": "Moved", "tags": {"team": "ops"},
    }}});
    eips.patch("bastion", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("edited");
    let applied = |e: &EipAddress| {
        e.bandwidth == 20
            && e.name == "bastion-2"
            && e.description == "Moved"
            && e.tag("team") == Some("ops")
            && e.tag(ferroplane_runtime::UID_TAG).is_some()
    };
    eventually(format!("EIP {id}: changed in place"))
        .within(WAIT)
        .until_async(|| async { applied(&described(&vpc, &id).await) })
        .await;
    let synced = |o: Option<&EIP>| {
        o.is_some_and(|o| {
            condition(o, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                && o.status.as_ref().and_then(|s| s.observed_generation) == o.metadata.generation
        })
    };
    eventually("EIP bastion: Synced=True")
        .within(WAIT)
        .for_object(&eips, "bastion", synced)
        .await;
    let modifies = env.mock().stats().calls_of("ModifyEipAddressAttribute");

    // Drift made elsewhere on each in-place field; the next poll reverts all of them.
    vpc.modify_eip_address_attribute(&id, Some(50), Some("console"), Some("Console"))
        .await
        .expect("console modifies");
    vpc.untag_resource("EIP", &id, &["team".to_owned()])
        .await
        .expect("console untags");
    vpc.tag_resource("EIP", &id, &[Tag::new("stray", "x")])
        .await
        .expect("console tags");
    eventually(format!("EIP {id}: drift reverted"))
        .within(WAIT)
        .until_async(|| async {
            let e = described(&vpc, &id).await;
            applied(&e) && e.tag("stray").is_none()
        })
        .await;
    assert!(env.mock().stats().calls_of("ModifyEipAddressAttribute") > modifies);
    eips.delete("bastion", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("EIP released")
        .within(WAIT)
        .until(|| env.live(ResourceKind::Eip).is_empty())
        .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_association_undone_elsewhere_is_made_again_and_another_instances_eip_is_never_taken() {
    let env = Env::start().await;
    let (instance, eip, association) = sample();
    let pp = PostParams::default();
    let instances: Api<ECSInstance> = Api::namespaced(env.client.clone(), NS);
    let eips: Api<EIP> = Api::namespaced(env.client.clone(), NS);
    let associations: Api<EIPAssociation> = Api::namespaced(env.client.clone(), NS);
    instances.create(&pp, &instance).await.expect("instance");
    eips.create(&pp, &eip).await.expect("EIP");
    associations
        .create(&pp, &association)
        .await
        .expect("association");
    let eip: EIP = wait_ready(&env, "bastion").await;
    let instance: ECSInstance = wait_ready(&env, "bastion").await;
    wait_ready::<EIPAssociation>(&env, "bastion").await;
    let eip_id = external_name(&eip).expect("allocation ID").to_owned();
    let instance_id = external_name(&instance).expect("instance ID").to_owned();
    let vpc = cloud(&env).1;
    let target = EipTarget {
        allocation_id: &eip_id,
        instance_id: &instance_id,
        instance_type: "EcsInstance",
        private_ip_address: None,
    };

    // Undone in the console: associated again at the next poll.
    vpc.unassociate_eip_address(&target, None)
        .await
        .expect("console unassociates");
    eventually(format!("EIP {eip_id}: associated again"))
        .within(WAIT)
        .until_async(|| async {
            let e = described(&vpc, &eip_id).await;
            e.status == "InUse" && e.instance_id == instance_id
        })
        .await;
    assert!(env.mock().stats().calls_of("AssociateEipAddress") >= 2);

    // Moved to another instance in the console: never taken back, EIPInUse names it.
    let mut other = crate::controller_support::instance("other");
    other.spec.for_provider.internet_max_bandwidth_out = None;
    instances.create(&pp, &other).await.expect("other instance");
    let other: ECSInstance = wait_ready(&env, "other").await;
    let other_id = external_name(&other).expect("instance ID").to_owned();
    eventually("EIP InUse before the console moves it")
        .within(WAIT)
        .until_async(|| async { described(&vpc, &eip_id).await.status == "InUse" })
        .await;
    // The console's move happens while the object is paused, so nothing races it.
    set_paused(&associations, "true").await;
    eventually("EIPAssociation bastion: paused")
        .within(WAIT)
        .for_object(&associations, "bastion", |o| {
            o.and_then(|o| condition(o, SYNCED))
                .is_some_and(|c| c.status == ConditionStatus::False)
        })
        .await;
    vpc.unassociate_eip_address(&target, None)
        .await
        .expect("console unassociates");
    let moved = EipTarget {
        instance_id: &other_id,
        ..target
    };
    eventually(format!("EIP {eip_id}: moved to {other_id} by the console"))
        .within(WAIT)
        .until_async(|| async {
            let _ = vpc.associate_eip_address(&moved, None).await;
            let e = described(&vpc, &eip_id).await;
            e.instance_id == other_id && e.status == "InUse"
        })
        .await;
    let associates = env.mock().stats().calls_of("AssociateEipAddress");
    set_paused(&associations, "false").await;
    let message = eventually("EIPAssociation bastion: Synced=False EIPInUse")
        .within(WAIT)
        .for_object(&associations, "bastion", |o| {
            o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                c.status == ConditionStatus::False && c.message.contains("EIPInUse")
            })
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("a message");
    assert!(message.contains(&other_id), "{message}");
    // Several polls later, it is still the other instance's, and nothing tried to take it.
    let describes = env.mock().stats().calls_of("DescribeEipAddresses");
    eventually("three more polls")
        .within(WAIT)
        .until(|| env.mock().stats().calls_of("DescribeEipAddresses") >= describes + 3)
        .await;
    assert_eq!(described(&vpc, &eip_id).await.instance_id, other_id);
    assert_eq!(
        env.mock().stats().calls_of("AssociateEipAddress"),
        associates
    );
    env.stop().await;
}

async fn set_paused(api: &Api<EIPAssociation>, value: &str) {
    let patch = json!({"metadata": {"annotations": {"ferroplane.io/paused": value}}});
    api.patch("bastion", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("annotated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_eip_is_released_only_once_the_spec_lifts_the_protection() {
    let env = Env::start().await;
    let (_, mut eip, _) = sample();
    eip.spec.for_provider.deletion_protection = Some(true);
    let eips: Api<EIP> = Api::namespaced(env.client.clone(), NS);
    eips.create(&PostParams::default(), &eip)
        .await
        .expect("EIP");
    let ready: EIP = wait_ready(&env, "bastion").await;
    let id = external_name(&ready).expect("allocation ID").to_owned();
    let vpc = cloud(&env).1;
    // Allocated unprotected (AllocateEipAddress takes no protection), then protected in place.
    eventually(format!("EIP {id}: protected"))
        .within(WAIT)
        .until_async(|| async { described(&vpc, &id).await.deletion_protection })
        .await;
    eips.delete("bastion", &DeleteParams::default())
        .await
        .expect("delete");
    let message = eventually("EIP bastion: Synced=False DeletionProtection")
        .within(WAIT)
        .for_object(&eips, "bastion", |o| {
            o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                c.status == ConditionStatus::False && c.message.starts_with("DeletionProtection")
            })
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("a message");
    assert!(message.contains(&format!("EIP {id}")), "{message}");
    assert_eq!(env.live(ResourceKind::Eip), std::slice::from_ref(&id));
    eips.patch(
        "bastion",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"forProvider": {"deletionProtection": false}}})),
    )
    .await
    .expect("unprotected");
    eventually("EIP released")
        .within(WAIT)
        .until(|| env.live(ResourceKind::Eip).is_empty())
        .await;
    env.stop().await;
}
