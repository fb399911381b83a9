//! EIPAssociation with `instanceType: NetworkInterface` against the mock:
//! `deploy/samples/eip-eni.yaml` (an instance, an EIP and an association naming the instance's
//! primary network interface through `networkInterfaceIdRef`) applied association first becomes
//! Ready, mapped to the interface's primary private IP, which is written into the spec;
//! the interface reports the EIP's address; an association undone elsewhere is made again on the
//! same private IP; deleting the association unassociates the EIP, which is then released.

use alibaba_mock::ResourceKind;
use alibaba_sdk::ecs::{EcsClient, NetworkInterfaceSet};
use alibaba_sdk::vpc::{EipAddress, EipTarget, VpcClient};
use ferroplane_apis::alibabacloud::{ECSInstance, EIP, EIPAssociation};
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;

use crate::controller_support::{Env, NS, WAIT, cloud, external_name, wait_ready};

/// The documents of `deploy/samples/eip-eni.yaml`: ECSInstance, EIP, EIPAssociation.
fn sample() -> (ECSInstance, EIP, EIPAssociation) {
    let text = ferroplane_testkit::samples::read("eip-eni.yaml");
    let docs: Vec<Value> = text
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("eip-eni.yaml document"))
        .collect();
    let of = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind)
            .cloned()
            .unwrap_or_else(|| panic!("eip-eni.yaml has a {kind}"))
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

async fn interface(ecs: &EcsClient, eni: &str) -> NetworkInterfaceSet {
    ecs.describe_network_interfaces(&[eni.to_owned()])
        .await
        .expect("DescribeNetworkInterfaces")
        .into_iter()
        .next()
        .expect("the interface exists")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eip_on_an_instances_primary_interface_is_kept_and_undone_on_delete() {
    let env = Env::start().await;
    let (instance, eip, association) = sample();
    let pp = PostParams::default();
    let instances: Api<ECSInstance> = Api::namespaced(env.client.clone(), NS);
    let eips: Api<EIP> = Api::namespaced(env.client.clone(), NS);
    let associations: Api<EIPAssociation> = Api::namespaced(env.client.clone(), NS);
    // The association first: it waits for the EIP and for the instance's interface.
    associations
        .create(&pp, &association)
        .await
        .expect("association");
    eips.create(&pp, &eip).await.expect("EIP");
    instances.create(&pp, &instance).await.expect("instance");

    let eip: EIP = wait_ready(&env, "web").await;
    let instance: ECSInstance = wait_ready(&env, "web").await;
    let association: EIPAssociation = wait_ready(&env, "web").await;
    let eip_id = external_name(&eip).expect("allocation ID").to_owned();
    let observed = instance.status.as_ref().map(|s| s.observed());
    let primary = observed
        .and_then(|a| {
            a.network_interfaces
                .into_iter()
                .find(|n| n.interface_type.as_deref() == Some("Primary"))
        })
        .expect("the instance reports its primary interface");
    let eni = primary.network_interface_id.clone().expect("its ID");
    let private_ip = primary.primary_ip_address.clone().expect("its private IP");
    assert_eq!(external_name(&association), Some(format!("{eip_id}:{eni}")));
    let p = &association.spec.for_provider;
    assert_eq!(
        (p.instance_id.as_deref(), p.private_ip_address.as_deref()),
        (Some(eni.as_str()), Some(private_ip.as_str())),
        "the interface from the reference, its primary IP written back"
    );
    assert_eq!(
        association.status.as_ref().and_then(|s| s
            .at_provider
            .as_ref()?
            .private_ip_address
            .as_deref()),
        Some(private_ip.as_str())
    );

    let (ecs, vpc) = cloud(&env);
    let e = described(&vpc, &eip_id).await;
    assert_eq!(
        (
            e.status.as_str(),
            e.instance_type.as_str(),
            e.instance_id.as_str(),
            e.private_ip_address.as_str(),
            e.mode.as_str()
        ),
        (
            "InUse",
            "NetworkInterface",
            eni.as_str(),
            private_ip.as_str(),
            "NAT"
        )
    );
    // The interface reports the address.
    let nic = interface(&ecs, &eni).await;
    assert_eq!(nic.associated_public_ip.public_ip_address, e.ip_address);
    assert_eq!(nic.associated_public_ip.allocation_id, eip_id);

    // Undone in the console: associated again at the next poll, on the same private IP.
    let target = EipTarget {
        allocation_id: &eip_id,
        instance_id: &eni,
        instance_type: "NetworkInterface",
        private_ip_address: Some(&private_ip),
    };
    let associates = env.mock().stats().calls_of("AssociateEipAddress");
    vpc.unassociate_eip_address(&target, None)
        .await
        .expect("console unassociates");
    eventually(format!("EIP {eip_id}: associated again"))
        .within(WAIT)
        .until_async(|| async {
            let e = described(&vpc, &eip_id).await;
            e.status == "InUse" && e.instance_id == eni && e.private_ip_address == private_ip
        })
        .await;
    assert!(env.mock().stats().calls_of("AssociateEipAddress") > associates);

    // Deleting the association unassociates the EIP; then the EIP is released.
    associations
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete association");
    eventually("EIPAssociation web gone, the EIP Available")
        .within(WAIT)
        .until_async(|| async {
            associations.get_opt("web").await.ok().flatten().is_none()
                && described(&vpc, &eip_id).await.status == "Available"
        })
        .await;
    assert!(env.mock().stats().calls_of("UnassociateEipAddress") >= 2);
    assert_eq!(
        interface(&ecs, &eni)
            .await
            .associated_public_ip
            .public_ip_address,
        ""
    );
    eips.delete("web", &DeleteParams::default())
        .await
        .expect("delete EIP");
    instances
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete instance");
    eventually("everything gone from the cluster and the mock")
        .within(WAIT)
        .until_async(|| async {
            eips.get_opt("web").await.ok().flatten().is_none()
                && instances.get_opt("web").await.ok().flatten().is_none()
                && env.live(ResourceKind::Eip).is_empty()
                && env.live(ResourceKind::EipAssociation).is_empty()
        })
        .await;
    env.stop().await;
}
