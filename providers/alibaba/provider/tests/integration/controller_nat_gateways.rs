//! NATGateway against the mock: `deploy/samples/nat-gateway.yaml` (a VPC, a vSwitch and a
//! gateway) applied at once in reverse order becomes Ready and reports the gateway's tables;
//! deleting the gateway while an SNAT entry and a bound EIP hold it waits (`WaitingToDelete`,
//! naming each in turn) and never deletes with Force, then everything is gone from the mock;
//! name, description and tags change in place and a change made elsewhere is reverted; so does
//! deletion protection, which refuses the delete (`DeletionProtection`) until the spec turns it
//! off.

use alibaba_mock::ResourceKind;
use alibaba_sdk::vpc::{
    AllocateEipAddressRequest, CreateSnatEntryRequest, EipTarget, NatGateway, Protected, Tag,
    VpcClient,
};
use ferroplane_apis::alibabacloud::{NATGateway, VPC, VSwitch};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::controller_support::{Env, NS, WAIT, cloud, condition, external_name, wait_ready};

/// The documents of `deploy/samples/nat-gateway.yaml`: VPC, VSwitch, NATGateway.
fn sample() -> (VPC, VSwitch, NATGateway) {
    let text = ferroplane_testkit::samples::read("nat-gateway.yaml");
    let docs: Vec<Value> = text
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("nat-gateway.yaml document"))
        .collect();
    let of = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind)
            .cloned()
            .unwrap_or_else(|| panic!("nat-gateway.yaml has a {kind}"))
    };
    (
        serde_json::from_value(of("VPC")).expect("a VPC"),
        serde_json::from_value(of("VSwitch")).expect("a VSwitch"),
        serde_json::from_value(of("NATGateway")).expect("a NATGateway"),
    )
}

async fn described(vpc: &VpcClient, id: &str) -> NatGateway {
    vpc.describe_nat_gateways(Some(id), &[])
        .await
        .expect("DescribeNatGateways")
        .into_iter()
        .next()
        .expect("the gateway exists")
}

/// Applies the sample, VPC last, and returns the Ready gateway's ID.
async fn apply_sample(env: &Env) -> (String, NATGateway) {
    let (vpc, vswitch, gateway) = sample();
    let pp = PostParams::default();
    let gateways: Api<NATGateway> = Api::namespaced(env.client.clone(), NS);
    gateways.create(&pp, &gateway).await.expect("gateway");
    Api::<VSwitch>::namespaced(env.client.clone(), NS)
        .create(&pp, &vswitch)
        .await
        .expect("vSwitch");
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &vpc)
        .await
        .expect("VPC");
    let ready: NATGateway = wait_ready(env, "egress").await;
    let id = external_name(&ready).expect("gateway ID").to_owned();
    (id, ready)
}

/// The Synced message of the gateway once it contains `needle`.
async fn waiting_message(gateways: &Api<NATGateway>, needle: &str) -> String {
    eventually(format!("NATGateway egress: waiting on {needle}"))
        .within(WAIT)
        .for_object(gateways, "egress", |o| {
            o.and_then(|o| condition(o, SYNCED))
                .is_some_and(|c| c.message.contains(needle))
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("a message")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sample_becomes_ready_and_the_gateway_waits_for_its_entries_and_eips() {
    let env = Env::start().await;
    let (id, ready) = apply_sample(&env).await;
    let vpc = cloud(&env).1;
    let cloud_gateway = described(&vpc, &id).await;
    let seen = ready.status.as_ref().expect("status").observed();
    assert_eq!(
        (
            seen.snat_table_id.as_deref(),
            seen.forward_table_id.as_deref()
        ),
        (
            Some(cloud_gateway.snat_table_id()),
            Some(cloud_gateway.forward_table_id())
        )
    );
    assert!(
        seen.snat_table_id
            .as_deref()
            .is_some_and(|t| t.starts_with("stb-"))
    );
    assert_eq!(cloud_gateway.network_type, "internet");
    assert_eq!(cloud_gateway.name, "egress");
    assert_eq!(cloud_gateway.tag("team"), Some("platform"));
    assert_eq!(
        cloud_gateway.tag(ferroplane_runtime::UID_TAG),
        ready.metadata.uid.as_deref()
    );

    // By hand: an EIP bound to the gateway and an SNAT entry through it.
    let eip = vpc
        .allocate_eip_address(&AllocateEipAddressRequest::default())
        .await
        .expect("AllocateEipAddress");
    let target = EipTarget {
        allocation_id: &eip.allocation_id,
        instance_id: &id,
        instance_type: "Nat",
        private_ip_address: None,
    };
    vpc.associate_eip_address(&target, None)
        .await
        .expect("AssociateEipAddress");
    let snat = eventually("an SNAT entry through the bound EIP")
        .within(WAIT)
        .until_async(|| async {
            vpc.create_snat_entry(&CreateSnatEntryRequest {
                snat_table_id: cloud_gateway.snat_table_id().to_owned(),
                source_cidr: Some("10.30.8.0/24".into()),
                snat_ip: Some(eip.eip_address.clone()),
                ..CreateSnatEntryRequest::default()
            })
            .await
            .ok()
        })
        .await;

    let gateways: Api<NATGateway> = Api::namespaced(env.client.clone(), NS);
    gateways
        .delete("egress", &DeleteParams::default())
        .await
        .expect("delete gateway");
    let message = waiting_message(&gateways, &snat).await;
    assert!(
        message.contains("SNAT entries") && message.contains(&id),
        "{message}"
    );
    assert_eq!(env.live(ResourceKind::NatGateway), vec![id.clone()]);

    eventually(format!("SNAT entry {snat} deleted by hand"))
        .within(WAIT)
        .until_async(|| async {
            vpc.delete_snat_entry(cloud_gateway.snat_table_id(), &snat)
                .await
                .is_ok()
        })
        .await;
    let message = waiting_message(&gateways, &eip.allocation_id).await;
    assert!(message.contains("bound EIPs"), "{message}");
    assert_eq!(env.live(ResourceKind::NatGateway), vec![id.clone()]);
    let refused = env.mock().stats().calls_of("DeleteNatGateway");
    assert!(refused >= 2, "each wait asked the API: {refused}");

    vpc.unassociate_eip_address(&target, None)
        .await
        .expect("UnassociateEipAddress");
    eventually("the gateway gone from the cluster and the mock")
        .within(WAIT)
        .until_async(|| async {
            gateways.get_opt("egress").await.ok().flatten().is_none()
                && env.live(ResourceKind::NatGateway).is_empty()
        })
        .await;
    // The entry went by hand, never with the gateway: no Force was sent.
    assert!(env.live(ResourceKind::Eip).contains(&eip.allocation_id));
    let vswitches: Api<VSwitch> = Api::namespaced(env.client.clone(), NS);
    let vpcs: Api<VPC> = Api::namespaced(env.client.clone(), NS);
    vswitches
        .delete("egress-public", &DeleteParams::default())
        .await
        .expect("delete vSwitch");
    vpcs.delete("egress", &DeleteParams::default())
        .await
        .expect("delete VPC");
    eventually("VPC and vSwitch deleted (their finalizers go once the cloud has them gone)")
        .within(WAIT)
        .until_async(|| async {
            vswitches
                .get_opt("egress-public")
                .await
                .ok()
                .flatten()
                .is_none()
                && vpcs.get_opt("egress").await.ok().flatten().is_none()
        })
        .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_changes_in_place_and_drift_is_reverted() {
    let env = Env::start().await;
    let (id, _) = apply_sample(&env).await;
    let vpc = cloud(&env).1;
    let gateways: Api<NATGateway> = Api::namespaced(env.client.clone(), NS);
    let patch = json!({"spec": {"forProvider": {
        "name": "egress-2", "description": "Moved", "tags": {"team": "ops"},
    }}});
    gateways
        .patch("egress", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("edited");
    let applied = |g: &NatGateway| {
        g.name == "egress-2"
            && g.description == "Moved"
            && g.tag("team") == Some("ops")
            && g.tag(ferroplane_runtime::UID_TAG).is_some()
    };
    eventually(format!("NAT gateway {id}: changed in place"))
        .within(WAIT)
        .until_async(|| async { applied(&described(&vpc, &id).await) })
        .await;
    eventually("NATGateway egress: Synced=True")
        .within(WAIT)
        .for_object(&gateways, "egress", |o| {
            o.is_some_and(|o| {
                condition(o, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                    && o.status.as_ref().and_then(|s| s.observed_generation)
                        == o.metadata.generation
            })
        })
        .await;
    let modifies = env.mock().stats().calls_of("ModifyNatGatewayAttribute");

    // Drift made elsewhere on each in-place field; the next poll reverts all of them.
    vpc.modify_nat_gateway_attribute(&id, Some("console"), Some("Console"))
        .await
        .expect("console modifies");
    vpc.untag_resource("NATGATEWAY", &id, &["team".to_owned()])
        .await
        .expect("console untags");
    vpc.tag_resource("NATGATEWAY", &id, &[Tag::new("stray", "x")])
        .await
        .expect("console tags");
    eventually(format!("NAT gateway {id}: drift reverted"))
        .within(WAIT)
        .until_async(|| async {
            let g = described(&vpc, &id).await;
            applied(&g) && g.tag("stray").is_none()
        })
        .await;
    assert!(env.mock().stats().calls_of("ModifyNatGatewayAttribute") > modifies);
    gateways
        .delete("egress", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("NAT gateway deleted")
        .within(WAIT)
        .until(|| env.live(ResourceKind::NatGateway).is_empty())
        .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_protection_is_kept_and_refuses_the_delete_until_the_spec_lifts_it() {
    let env = Env::start().await;
    let (id, _) = apply_sample(&env).await;
    let vpc = cloud(&env).1;
    let gateways: Api<NATGateway> = Api::namespaced(env.client.clone(), NS);
    let protect = |on: bool| json!({"spec": {"forProvider": {"deletionProtection": on}}});
    gateways
        .patch(
            "egress",
            &PatchParams::default(),
            &Patch::Merge(protect(true)),
        )
        .await
        .expect("protected");
    eventually(format!("NAT gateway {id}: protected"))
        .within(WAIT)
        .until_async(|| async { described(&vpc, &id).await.deletion_protection })
        .await;
    // The cloud refuses to delete it now, with its code.
    let refused = vpc.delete_nat_gateway(&id).await.expect_err("protected");
    assert_eq!(refused.code(), Some(alibaba_sdk::vpc::PROTECTED));

    // Turned off in the console: protected again at the next poll, by a call of the
    // controller's (counted after the console's own; the state alone could be read before the
    // console's change took).
    let protection_calls = env.mock().stats().calls_of("DeletionProtection");
    vpc.deletion_protection(Protected::NatGateway, &id, false)
        .await
        .expect("console unprotects");
    eventually(format!("NAT gateway {id}: protection restored"))
        .within(WAIT)
        .until_async(|| async {
            env.mock().stats().calls_of("DeletionProtection") >= protection_calls + 2
                && described(&vpc, &id).await.deletion_protection
        })
        .await;

    // Deleting the object fails with the reason while the spec keeps the protection.
    gateways
        .delete("egress", &DeleteParams::default())
        .await
        .expect("delete");
    let message = eventually("NATGateway egress: Synced=False DeletionProtection")
        .within(WAIT)
        .for_object(&gateways, "egress", |o| {
            o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                c.status == ConditionStatus::False && c.message.starts_with("DeletionProtection")
            })
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("a message");
    assert!(
        message.contains(&id) && message.contains("deletionProtection: false"),
        "{message}"
    );
    assert_eq!(
        env.live(ResourceKind::NatGateway),
        std::slice::from_ref(&id)
    );

    // The spec lifts it, during the deletion: the gateway goes.
    gateways
        .patch(
            "egress",
            &PatchParams::default(),
            &Patch::Merge(protect(false)),
        )
        .await
        .expect("unprotected");
    eventually("NAT gateway deleted")
        .within(WAIT)
        .until(|| env.live(ResourceKind::NatGateway).is_empty())
        .await;
    env.stop().await;
}
