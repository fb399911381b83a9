//! A SecurityGroup's `rulesPolicy`: an `Additive` group authorizes the rules it lists and
//! leaves every other rule of the group alone (a rule another team or object added survives the
//! group's own rule changes), where the default `Exclusive` revokes it
//! (`controller_network::a_rule_added_behind_ferroplanes_back_is_revoked`), whatever its peer:
//! a group, an IPv6 block or an IPv4 block, each revoked by its rule ID.

use alibaba_sdk::ecs::{
    CreateSecurityGroupRequest, Direction, EcsClient, PeerRule, Permission, Rule, RulePeer,
};
use ferroplane_apis::alibabacloud::{RulesPolicy, SecurityGroup, VPC};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::eventually;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::controller_support::{Env, NS, WAIT, cloud, condition, external_name, wait_ready};

fn stack_object<K: serde::de::DeserializeOwned>(kind: &str) -> K {
    let text = ferroplane_testkit::samples::read("network.yaml");
    let doc = text
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str::<Value>(doc).expect("stack document"))
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("the stack has a {kind}"));
    serde_json::from_value(doc).expect("fits its type")
}

async fn ingress(ecs: &EcsClient, group_id: &str) -> Vec<Rule> {
    ecs.describe_security_group_rules(group_id, Direction::Ingress)
        .await
        .expect("rules")
        .permissions
        .items
        .iter()
        .map(|p| p.to_rule(Direction::Ingress))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_additive_group_keeps_rules_it_does_not_list() {
    let env = Env::start().await;
    let pp = PostParams::default();
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &stack_object::<VPC>("VPC"))
        .await
        .expect("vpc");
    let mut group: SecurityGroup = stack_object("SecurityGroup");
    group.spec.for_provider.rules_policy = Some(RulesPolicy::Additive);
    let groups: Api<SecurityGroup> = Api::namespaced(env.client.clone(), NS);
    groups.create(&pp, &group).await.expect("group");
    let name = group.metadata.name.clone().expect("a name");
    let ready: SecurityGroup = wait_ready(&env, &name).await;
    let group_id = external_name(&ready).expect("group ID").to_owned();
    let listed = ready.spec.for_provider.ingress.len();
    let (ecs, _) = cloud(&env);
    let theirs = Rule {
        ip_protocol: "tcp".into(),
        port_range: "443/443".into(),
        cidr_ip: "0.0.0.0/0".into(),
        policy: "accept".into(),
        priority: 1,
        description: "another team's rule".into(),
    };
    ecs.authorize_security_group(&group_id, Direction::Ingress, std::slice::from_ref(&theirs))
        .await
        .expect("a rule added outside the group's object");
    // The group changes its own rules after that: an Exclusive group would revoke theirs in the
    // same pass.
    let mut rules = serde_json::to_value(&ready.spec.for_provider.ingress).expect("rules");
    rules.as_array_mut().expect("a list").push(json!({
        "ipProtocol": "tcp", "portRange": "8080/8080", "sourceCidrIp": "10.0.0.0/8",
        "policy": "accept", "priority": 1,
    }));
    groups
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"ingress": rules}}})),
        )
        .await
        .expect("a rule added to the spec");
    eventually(format!(
        "security group {group_id}: the new listed rule authorized"
    ))
    .within(WAIT)
    .until_async(|| {
        let ecs = ecs.clone();
        let group_id = group_id.clone();
        async move {
            ingress(&ecs, &group_id)
                .await
                .iter()
                .any(|r| r.port_range == "8080/8080")
        }
    })
    .await;
    let now = ingress(&ecs, &group_id).await;
    assert!(now.contains(&theirs), "the other rule was revoked: {now:?}");
    assert_eq!(now.len(), listed + 2, "{now:?}");
    env.stop().await;
}

async fn permissions(ecs: &EcsClient, group_id: &str, direction: Direction) -> Vec<Permission> {
    ecs.describe_security_group_rules(group_id, direction)
        .await
        .expect("rules")
        .permissions
        .items
        .into_iter()
        .filter(|p| p.direction.is_empty() || p.direction == direction.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_group_revokes_group_and_ipv6_peers_it_does_not_list() {
    let env = Env::start().await;
    let pp = PostParams::default();
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &stack_object::<VPC>("VPC"))
        .await
        .expect("vpc");
    let group: SecurityGroup = stack_object("SecurityGroup");
    assert_eq!(
        group.spec.for_provider.rules_policy, None,
        "Exclusive by default"
    );
    let groups: Api<SecurityGroup> = Api::namespaced(env.client.clone(), NS);
    groups.create(&pp, &group).await.expect("group");
    let name = group.metadata.name.clone().expect("a name");
    let ready: SecurityGroup = wait_ready(&env, &name).await;
    let group_id = external_name(&ready).expect("group ID").to_owned();
    let vpc_id = ready
        .spec
        .for_provider
        .vpc_id
        .clone()
        .expect("vpcId resolved");
    let (ecs, _) = cloud(&env);
    // The rules follow the group's creation in its first update.
    let listed = eventually(format!("security group {group_id}: the spec's one rule"))
        .within(WAIT)
        .until_async(|| async {
            let listed = permissions(&ecs, &group_id, Direction::Ingress).await;
            (listed.len() == 1).then_some(listed)
        })
        .await;

    // Rules of every peer but an IPv4 block, added in the console: same protocol, ports, policy
    // and priority as the listed rule, in both directions.
    let peer_group = ecs
        .create_security_group(&CreateSecurityGroupRequest {
            vpc_id: Some(vpc_id),
            security_group_name: Some("peer".into()),
            ..CreateSecurityGroupRequest::default()
        })
        .await
        .expect("a peer group made outside ferroplane")
        .security_group_id;
    for direction in [Direction::Ingress, Direction::Egress] {
        for peer in [
            RulePeer::Group(peer_group.clone()),
            RulePeer::Ipv6Cidr("2001:db8::/32".into()),
        ] {
            let rule = PeerRule {
                direction,
                ip_protocol: "tcp".into(),
                port_range: "22/22".into(),
                peer,
                policy: "accept".into(),
                priority: 1,
                description: "added in the console".into(),
            };
            ecs.authorize_rule(&group_id, &rule)
                .await
                .expect("a rule added outside ferroplane");
        }
    }

    eventually(format!(
        "security group {group_id}: only the listed rule left"
    ))
    .within(WAIT)
    .until_async(|| async {
        permissions(&ecs, &group_id, Direction::Ingress).await == listed
            && permissions(&ecs, &group_id, Direction::Egress)
                .await
                .is_empty()
    })
    .await;
    // Every pass succeeded: no revoke the API refused left the group out of sync.
    eventually(format!("SecurityGroup {name}: Synced=True"))
        .within(WAIT)
        .for_object(&groups, &name, |o| {
            o.and_then(|o| condition(o, SYNCED))
                .is_some_and(|c| c.status == ConditionStatus::True)
        })
        .await;
    env.stop().await;
}
