//! SNATEntry, DNATEntry and EIPAssociation with a NAT gateway, against the mock: the whole of
//! `deploy/samples/nat-gateway.yaml` applied at once in reverse order becomes Ready, the mock
//! has the private vSwitch's SNAT entry through the gateway's EIP and the DNAT entry to the
//! private address, an SNAT entry renamed elsewhere is named back, and deleting it all at once
//! leaves nothing in the mock; an entry someone
//! else made for the same source is never adopted (`DuplicateNATEntry`); a DNAT entry's mapping
//! changed elsewhere is reverted.

use alibaba_mock::ResourceKind;
use alibaba_sdk::vpc::{CreateSnatEntryRequest, ForwardEntry, ForwardMapping, VpcClient};
use ferroplane_apis::alibabacloud::{
    DNATEntry, EIP, EIPAssociation, NATGateway, SNATEntry, VPC, VSwitch,
};
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;

use crate::controller_support::{Env, NS, WAIT, cloud, condition, external_name, wait_ready};

/// The documents of `deploy/samples/nat-gateway.yaml`, in file order.
fn sample() -> Vec<Value> {
    ferroplane_testkit::samples::read("nat-gateway.yaml")
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("nat-gateway.yaml document"))
        .collect()
}

fn api<K>(env: &Env) -> Api<K>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    Api::namespaced(env.client.clone(), NS)
}

async fn create<K>(env: &Env, doc: &Value)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + serde::de::DeserializeOwned
        + serde::Serialize
        + Clone
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(doc.clone()).expect("a sample object");
    api::<K>(env)
        .create(&PostParams::default(), &object)
        .await
        .expect("created");
}

/// Creates the sample's documents, last first (each waits for what it references).
async fn apply(env: &Env, docs: &[Value]) {
    for doc in docs.iter().rev() {
        match doc["kind"].as_str().unwrap_or_default() {
            "VPC" => create::<VPC>(env, doc).await,
            "VSwitch" => create::<VSwitch>(env, doc).await,
            "NATGateway" => create::<NATGateway>(env, doc).await,
            "EIP" => create::<EIP>(env, doc).await,
            "EIPAssociation" => create::<EIPAssociation>(env, doc).await,
            "SNATEntry" => create::<SNATEntry>(env, doc).await,
            "DNATEntry" => create::<DNATEntry>(env, doc).await,
            other => panic!("nat-gateway.yaml: unexpected kind {other}"),
        }
    }
}

async fn forward_entry(vpc: &VpcClient, table: &str, id: &str) -> ForwardEntry {
    vpc.describe_forward_entries(table, Some(id))
        .await
        .expect("DescribeForwardTableEntries")
        .into_iter()
        .next()
        .expect("the entry exists")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_sample_becomes_ready_and_is_deleted_in_one_go() {
    let env = Env::start().await;
    apply(&env, &sample()).await;
    let gateway: NATGateway = wait_ready(&env, "egress").await;
    let eip: EIP = wait_ready(&env, "egress").await;
    let association: EIPAssociation = wait_ready(&env, "egress").await;
    let private: VSwitch = wait_ready(&env, "egress-private").await;
    let snat: SNATEntry = wait_ready(&env, "egress-private").await;
    let dnat: DNATEntry = wait_ready(&env, "ssh").await;
    let vpc_object: VPC = wait_ready(&env, "egress").await;
    let vpc_id = external_name(&vpc_object).expect("VPC ID").to_owned();
    let gateway_id = external_name(&gateway).expect("gateway ID").to_owned();
    let eip_id = external_name(&eip).expect("allocation ID").to_owned();
    assert_eq!(
        external_name(&association),
        Some(format!("{eip_id}:{gateway_id}"))
    );

    let vpc = cloud(&env).1;
    let bound = vpc
        .describe_eip_addresses(std::slice::from_ref(&eip_id), &[])
        .await
        .expect("DescribeEipAddresses")
        .remove(0);
    assert_eq!(
        (bound.instance_id.as_str(), bound.instance_type.as_str()),
        (gateway_id.as_str(), "Nat")
    );
    let at = gateway.status.as_ref().expect("status").observed();
    let snat_table = at.snat_table_id.expect("snatTableId");
    let forward_table = at.forward_table_id.expect("forwardTableId");
    let entries = vpc
        .describe_snat_entries(&snat_table, None)
        .await
        .expect("DescribeSnatTableEntries");
    let private_id = external_name(&private).expect("vSwitch ID");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(
        Some(entries[0].snat_entry_id.as_str()),
        external_name(&snat).as_deref()
    );
    assert_eq!(entries[0].source_v_switch_id, private_id);
    assert_eq!(entries[0].source_cidr, "10.30.1.0/24");
    assert_eq!(entries[0].snat_ip, bound.ip_address);
    let forward = forward_entry(
        &vpc,
        &forward_table,
        &external_name(&dnat).expect("entry ID"),
    )
    .await;
    assert_eq!(
        (
            forward.external_ip.as_str(),
            forward.external_port.as_str(),
            forward.ip_protocol.as_str(),
            forward.internal_ip.as_str(),
            forward.internal_port.as_str()
        ),
        (bound.ip_address.as_str(), "2222", "TCP", "10.30.1.10", "22")
    );

    // The console renames the SNAT entry: named back at the next poll.
    let snat_id = entries[0].snat_entry_id.clone();
    eventually(format!("SNAT entry {snat_id} renamed by the console"))
        .within(WAIT)
        .until_async(|| async {
            vpc.modify_snat_entry(&snat_table, &snat_id, None, Some("console"))
                .await
                .is_ok()
        })
        .await;
    eventually(format!("SNAT entry {snat_id}: name reverted"))
        .within(WAIT)
        .until_async(|| async {
            vpc.describe_snat_entries(&snat_table, Some(&snat_id))
                .await
                .is_ok_and(|e| {
                    e.first()
                        .is_some_and(|e| e.snat_entry_name == "egress-private")
                })
        })
        .await;

    // Everything at once, in file order: the gateway, the VPC and the vSwitches wait for what
    // holds them, and the mock ends empty of the sample.
    let dp = DeleteParams::default();
    for doc in sample() {
        let name = doc["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let deleted = match doc["kind"].as_str().unwrap_or_default() {
            "VPC" => api::<VPC>(&env).delete(&name, &dp).await.map(drop),
            "VSwitch" => api::<VSwitch>(&env).delete(&name, &dp).await.map(drop),
            "NATGateway" => api::<NATGateway>(&env).delete(&name, &dp).await.map(drop),
            "EIP" => api::<EIP>(&env).delete(&name, &dp).await.map(drop),
            "EIPAssociation" => api::<EIPAssociation>(&env)
                .delete(&name, &dp)
                .await
                .map(drop),
            "SNATEntry" => api::<SNATEntry>(&env).delete(&name, &dp).await.map(drop),
            "DNATEntry" => api::<DNATEntry>(&env).delete(&name, &dp).await.map(drop),
            other => panic!("unexpected kind {other}"),
        };
        deleted.expect("deleted");
    }
    eventually("nothing of the sample left in the mock")
        .within(WAIT * 3)
        .until(|| {
            [
                ResourceKind::NatGateway,
                ResourceKind::SnatEntry,
                ResourceKind::ForwardEntry,
                ResourceKind::Eip,
                ResourceKind::EipAssociation,
            ]
            .iter()
            .all(|k| env.live(*k).is_empty())
                && !env.live(ResourceKind::Vpc).contains(&vpc_id)
        })
        .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_made_elsewhere_is_never_adopted_and_a_mapping_changed_elsewhere_is_reverted() {
    let env = Env::start().await;
    let docs = sample();
    // Everything but the entries.
    let infrastructure: Vec<Value> = docs
        .iter()
        .filter(|d| !matches!(d["kind"].as_str(), Some("SNATEntry" | "DNATEntry")))
        .cloned()
        .collect();
    apply(&env, &infrastructure).await;
    let gateway: NATGateway = wait_ready(&env, "egress").await;
    wait_ready::<EIPAssociation>(&env, "egress").await;
    let eip: EIP = wait_ready(&env, "egress").await;
    let private: VSwitch = wait_ready(&env, "egress-private").await;
    let at = gateway.status.as_ref().expect("status").observed();
    let (snat_table, forward_table) = (
        at.snat_table_id.expect("snatTableId"),
        at.forward_table_id.expect("forwardTableId"),
    );
    let address = eip
        .status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref()?.ip_address.clone())
        .expect("the EIP's address");
    let vpc = cloud(&env).1;

    // Someone else's entry for the private vSwitch: the object is refused, the entry untouched.
    let theirs = vpc
        .create_snat_entry(&CreateSnatEntryRequest {
            snat_table_id: snat_table.clone(),
            source_vswitch_id: external_name(&private),
            snat_ip: Some(address.clone()),
            name: Some("theirs".into()),
            ..CreateSnatEntryRequest::default()
        })
        .await
        .expect("CreateSnatEntry by hand");
    let snat_doc = docs
        .iter()
        .find(|d| d["kind"] == "SNATEntry")
        .expect("an SNATEntry");
    create::<SNATEntry>(&env, snat_doc).await;
    let snat_entries = api::<SNATEntry>(&env);
    let message = eventually("SNATEntry egress-private: Synced=False DuplicateNATEntry")
        .within(WAIT)
        .for_object(&snat_entries, "egress-private", |o| {
            o.and_then(|o| condition(o, SYNCED))
                .is_some_and(|c| c.message.contains("DuplicateNATEntry"))
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("a message");
    assert!(message.contains("never adopts"), "{message}");
    let object = snat_entries
        .get("egress-private")
        .await
        .expect("the object");
    assert_eq!(external_name(&object), None, "never adopted");
    let entries = vpc
        .describe_snat_entries(&snat_table, None)
        .await
        .expect("DescribeSnatTableEntries");
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (
            entries[0].snat_entry_id.as_str(),
            entries[0].snat_entry_name.as_str()
        ),
        (theirs.as_str(), "theirs")
    );
    snat_entries
        .delete("egress-private", &DeleteParams::default())
        .await
        .expect("delete the refused object");
    eventually("the refused SNATEntry is gone, the hand-made entry stays")
        .within(WAIT)
        .until_async(|| async {
            snat_entries
                .get_opt("egress-private")
                .await
                .ok()
                .flatten()
                .is_none()
        })
        .await;
    assert_eq!(env.live(ResourceKind::SnatEntry), vec![theirs.clone()]);

    // A DNAT entry whose mapping the console changes: changed back at the next poll.
    let dnat_doc = docs
        .iter()
        .find(|d| d["kind"] == "DNATEntry")
        .expect("a DNATEntry");
    create::<DNATEntry>(&env, dnat_doc).await;
    let dnat: DNATEntry = wait_ready(&env, "ssh").await;
    let id = external_name(&dnat).expect("entry ID").to_owned();
    let console = ForwardMapping {
        external_ip: address.clone(),
        external_port: "2223".into(),
        ip_protocol: "UDP".into(),
        internal_ip: "10.30.1.11".into(),
        internal_port: "23".into(),
    };
    eventually(format!("DNAT entry {id} changed by the console"))
        .within(WAIT)
        .until_async(|| async {
            vpc.modify_forward_entry(&forward_table, &id, Some(&console), Some("console"))
                .await
                .is_ok()
        })
        .await;
    let modifies = env.mock().stats().calls_of("ModifyForwardEntry");
    eventually(format!("DNAT entry {id}: reverted"))
        .within(WAIT)
        .until_async(|| async {
            let e = forward_entry(&vpc, &forward_table, &id).await;
            e.external_port == "2222"
                && e.ip_protocol == "TCP"
                && e.internal_ip == "10.30.1.10"
                && e.internal_port == "22"
                && e.forward_entry_name == "ssh"
        })
        .await;
    assert!(env.mock().stats().calls_of("ModifyForwardEntry") > modifies);
    env.stop().await;
}
