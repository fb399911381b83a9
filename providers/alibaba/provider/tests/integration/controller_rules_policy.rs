//! A SecurityGroup's `rulesPolicy`: an `Additive` group authorizes the rules it lists and
//! leaves every other rule of the group alone (a rule another team or object added survives the
//! group's own rule changes), where the default `Exclusive` revokes it
//! (`controller_network::a_rule_added_behind_ferroplanes_back_is_revoked`).

use alibaba_sdk::ecs::{Direction, EcsClient, Rule};
use ferroplane_apis::alibabacloud::{RulesPolicy, SecurityGroup, VPC};
use ferroplane_testkit::eventually;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::controller_support::{Env, NS, WAIT, cloud, external_name, wait_ready};

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
