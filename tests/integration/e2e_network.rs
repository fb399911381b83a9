//! The production stack sample end to end, driven by kubectl: one `kubectl apply -f` of
//! `deploy/samples/stack.yaml` (a VPC with a public and a private vSwitch, a NAT gateway with an
//! EIP, an SNAT and a DNAT entry, a bastion with an EIP of its own, a private instance, a shared
//! group with SecurityGroupRules) becomes Ready in the order the references need; the mock then
//! holds that network as the cloud would describe it. One `kubectl delete -f` leaves nothing of
//! it in the mock, and nothing was ever created twice. This is also the root suite's EIP e2e,
//! and, before the delete, the stack's `ferroplane plan` (`e2e_plan_network::plan_of_the_stack`).

use std::collections::BTreeSet;
use std::time::Duration;

use alibaba_mock::{Change, ResourceKind};
use alibaba_sdk::ecs::{Direction, EcsClient, Instance};
use alibaba_sdk::vpc::{EipAddress, VpcClient};
use ferroplane::controllers::Kind;
use ferroplane_testkit::samples;

use crate::support::E2e;

const GROUP: &str = "alibabacloud.ferroplane.io";

/// Every object of the stack, `<plural>/<name>`, in an order where each comes after what it
/// references.
const OBJECTS: [(&str, &str); 15] = [
    ("vpcs", "prod"),
    ("vswitches", "prod-public"),
    ("vswitches", "prod-private"),
    ("securitygroups", "prod"),
    ("securitygrouprules", "ssh-from-office"),
    ("securitygrouprules", "http-from-vpc"),
    ("natgateways", "prod"),
    ("eips", "prod-nat"),
    ("eipassociations", "prod-nat"),
    ("snatentries", "prod-private"),
    ("ecsinstances", "bastion"),
    ("eips", "bastion"),
    ("eipassociations", "bastion"),
    ("ecsinstances", "app"),
    ("dnatentries", "app-ssh"),
];

/// What the stack makes in the cloud, one of each per object (an EIPAssociation is the mock's
/// association record; the plan step makes two more outside ferroplane: the bastion's EIP on
/// the app, then the bastion's association made again).
const CREATED: [(ResourceKind, u64); 10] = [
    (ResourceKind::Vpc, 1),
    (ResourceKind::VSwitch, 2),
    (ResourceKind::SecurityGroup, 1),
    (ResourceKind::SecurityGroupRule, 2),
    (ResourceKind::NatGateway, 1),
    (ResourceKind::Eip, 2),
    (ResourceKind::EipAssociation, 4),
    (ResourceKind::SnatEntry, 1),
    (ResourceKind::Instance, 2),
    (ResourceKind::ForwardEntry, 1),
];

/// How long the whole stack may take to be Ready, or to be gone: a chain of six references, each
/// resolved at the referencing object's next reconcile.
const STACK_WAIT: Duration = Duration::from_secs(180);

fn object(plural: &str, name: &str) -> String {
    format!("{plural}.{GROUP}/{name}")
}

/// The live resources of the mock that calls created (the accounts' default networks, made by
/// no call, are not), by kind and ID.
fn live_created(e2e: &E2e) -> BTreeSet<(ResourceKind, String)> {
    let created: BTreeSet<(ResourceKind, String)> = e2e
        .mock()
        .ledger()
        .into_iter()
        .filter(|e| e.change == Change::Created)
        .map(|e| (e.kind, e.resource_id))
        .collect();
    e2e.mock()
        .resources()
        .into_iter()
        .map(|r| (r.kind, r.id))
        .filter(|r| created.contains(r))
        .collect()
}

async fn external_name(e2e: &E2e, plural: &str, name: &str) -> String {
    let id = e2e
        .jsonpath(
            &object(plural, name),
            "{.metadata.annotations.ferroplane\\.io/external-name}",
        )
        .await;
    assert!(!id.is_empty(), "{plural}/{name} has no external name");
    id
}

async fn eip(vpc: &VpcClient, allocation_id: &str) -> EipAddress {
    vpc.describe_eip_addresses(&[allocation_id.to_owned()], &[])
        .await
        .expect("DescribeEipAddresses")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("EIP {allocation_id} exists"))
}

async fn instance(ecs: &EcsClient, instance_id: &str) -> Instance {
    ecs.describe_instances_by_ids(&[instance_id.to_owned()])
        .await
        .expect("DescribeInstances")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("instance {instance_id} exists"))
}

/// Waits until every object of the stack reports Ready, saying which are not on timeout.
async fn wait_all_ready(e2e: &E2e) {
    let names: Vec<String> = OBJECTS.iter().map(|(p, n)| object(p, n)).collect();
    let ready = "{.metadata.name}={.status.conditions[?(@.type=='Ready')].status}";
    e2e.eventually("every object of the stack Ready", STACK_WAIT, || async {
        let mut not_ready = Vec::new();
        for name in &names {
            let status = e2e.jsonpath(name, ready).await;
            if !status.ends_with("=True") {
                not_ready.push(name.clone());
            }
        }
        not_ready.is_empty().then_some(())
    })
    .await;
}

pub(crate) async fn the_stack_sample_is_applied_and_deleted_in_one_command() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let before = live_created(&e2e);
    let created_before: Vec<u64> = CREATED
        .iter()
        .map(|(k, _)| e2e.mock().created(*k))
        .collect();
    let stack = samples::without_namespace("stack.yaml");
    e2e.apply(&stack).await;
    wait_all_ready(&e2e).await;

    let private_vswitch = external_name(&e2e, "vswitches", "prod-private").await;
    let group = external_name(&e2e, "securitygroups", "prod").await;
    let gateway = external_name(&e2e, "natgateways", "prod").await;
    let nat_eip = external_name(&e2e, "eips", "prod-nat").await;
    let bastion_eip = external_name(&e2e, "eips", "bastion").await;
    let bastion = external_name(&e2e, "ecsinstances", "bastion").await;
    let app = external_name(&e2e, "ecsinstances", "app").await;
    let (ecs, vpc) = e2e.cloud();

    // The NAT gateway's EIP is bound to the gateway, the bastion's to the bastion.
    let nat_address = eip(&vpc, &nat_eip).await;
    assert_eq!(
        (
            nat_address.instance_id.as_str(),
            nat_address.instance_type.as_str()
        ),
        (gateway.as_str(), "Nat")
    );
    let bastion_address = eip(&vpc, &bastion_eip).await;
    assert_eq!(
        (
            bastion_address.instance_id.as_str(),
            bastion_address.instance_type.as_str()
        ),
        (bastion.as_str(), "EcsInstance")
    );
    let bastion_described = instance(&ecs, &bastion).await;
    assert_eq!(
        bastion_described.public_ip(),
        Some(bastion_address.ip_address.as_str())
    );

    // The private instance: in the private vSwitch, no public address of any kind.
    let app_described = instance(&ecs, &app).await;
    assert_eq!(app_described.vpc_attributes.vswitch_id, private_vswitch);
    assert_eq!(app_described.public_ip(), None, "{app_described:?}");
    let app_ip = app_described
        .private_ip()
        .expect("the private instance has a private IP")
        .to_owned();
    assert!(app_ip.starts_with("10.40.1."), "{app_ip}");

    // SNAT: the private vSwitch goes out through the gateway's EIP.
    let gateway_object = object("natgateways", "prod");
    let snat_table = e2e
        .jsonpath(&gateway_object, "{.status.atProvider.snatTableId}")
        .await;
    let forward_table = e2e
        .jsonpath(&gateway_object, "{.status.atProvider.forwardTableId}")
        .await;
    let snat = vpc
        .describe_snat_entries(&snat_table, None)
        .await
        .expect("DescribeSnatTableEntries");
    assert_eq!(snat.len(), 1, "{snat:?}");
    assert_eq!(
        snat[0].snat_entry_id,
        external_name(&e2e, "snatentries", "prod-private").await
    );
    assert_eq!(
        (
            snat[0].source_v_switch_id.as_str(),
            snat[0].snat_ip.as_str()
        ),
        (private_vswitch.as_str(), nat_address.ip_address.as_str())
    );

    // DNAT: the gateway EIP's port 2222 goes to SSH on the private instance.
    let forward = vpc
        .describe_forward_entries(&forward_table, None)
        .await
        .expect("DescribeForwardTableEntries");
    assert_eq!(forward.len(), 1, "{forward:?}");
    let forward = &forward[0];
    assert_eq!(
        forward.forward_entry_id,
        external_name(&e2e, "dnatentries", "app-ssh").await
    );
    assert_eq!(
        (
            forward.external_ip.as_str(),
            forward.external_port.as_str(),
            forward.internal_ip.as_str(),
            forward.internal_port.as_str()
        ),
        (
            nat_address.ip_address.as_str(),
            "2222",
            app_ip.as_str(),
            "22"
        )
    );

    // The shared group holds both rules, each under the ID its object names; both instances
    // are in it.
    let rules = ecs
        .describe_security_group_rules(&group, Direction::Ingress)
        .await
        .expect("DescribeSecurityGroupAttribute")
        .permissions
        .items;
    for (name, ports, source) in [
        ("ssh-from-office", "22/22", "203.0.113.0/24"),
        ("http-from-vpc", "80/80", "10.40.0.0/16"),
    ] {
        let rule_id = external_name(&e2e, "securitygrouprules", name).await;
        let rule = rules
            .iter()
            .find(|r| r.security_group_rule_id == rule_id)
            .unwrap_or_else(|| panic!("rule {name} ({rule_id}) in group {group}: {rules:?}"));
        assert_eq!(
            (rule.port_range.as_str(), rule.source_cidr_ip.as_str()),
            (ports, source)
        );
    }
    assert_eq!(rules.len(), 2, "{rules:?}");
    for described in [&bastion_described, &app_described] {
        assert_eq!(described.security_group_ids.items, vec![group.clone()]);
    }

    crate::e2e_plan_network::plan_of_the_stack(&e2e, &stack, &bastion_eip, &bastion, &app).await;

    let deleted = e2e
        .kubectl(&["delete", "--wait=false", "-f", "-"], Some(&stack))
        .await;
    assert!(deleted.success(), "{}", deleted.stderr);
    let kinds: Vec<String> = OBJECTS
        .iter()
        .map(|(plural, _)| format!("{plural}.{GROUP}"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let kinds = kinds.join(",");
    e2e.eventually("every object of the stack gone", STACK_WAIT, || async {
        let left = e2e.k(&["get", &kinds, "-o", "name"]).await;
        left.trim().is_empty().then_some(())
    })
    .await;
    // Nothing of the stack is left in the cloud, and nothing was made twice.
    let after = live_created(&e2e);
    let leaked: Vec<_> = after.difference(&before).collect();
    assert!(leaked.is_empty(), "left in the mock: {leaked:?}");
    for ((kind, expected), before) in CREATED.iter().zip(created_before) {
        assert_eq!(e2e.mock().created(*kind) - before, *expected, "{kind:?}");
    }
    e2e.finish().await;
}
