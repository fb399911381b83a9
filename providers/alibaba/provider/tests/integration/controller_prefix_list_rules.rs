//! SecurityGroupRule with an ECS prefix list as its peer, against the mock: a second peer beside
//! the list is refused at admission; the rule becomes Ready naming the list, which ECS then
//! refuses to delete (`NotAllowed.AssociationExist`); a revoke behind the object's back is
//! authorized again; deleting the object revokes the rule, after which the list can go.

use alibaba_sdk::ecs::{Direction, EcsClient, Permission};
use alibaba_sdk::rpc::Params;
use ferroplane_apis::alibabacloud::SecurityGroupRule;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::controller_support::{Env, NS, REGION, WAIT, cloud, external_name, wait_ready};

async fn ingress(ecs: &EcsClient, group: &str) -> Vec<Permission> {
    ecs.describe_security_group_rules(group, Direction::Ingress)
        .await
        .expect("DescribeSecurityGroupAttribute")
        .permissions
        .items
}

/// A prefix list made by hand, as a network team would keep one.
async fn office_list(ecs: &EcsClient) -> String {
    let mut p = Params::new();
    p.set("AddressFamily", "IPv4")
        .set("MaxEntries", 5)
        .set("PrefixListName", "office")
        .set("Entry.1.Cidr", "198.51.100.0/24");
    let created = ecs
        .call("CreatePrefixList", &p)
        .await
        .expect("CreatePrefixList");
    created["PrefixListId"].as_str().expect("an ID").to_owned()
}

async fn delete_list(ecs: &EcsClient, list: &str) -> Result<(), alibaba_sdk::Error> {
    let mut p = Params::new();
    p.set("PrefixListId", list);
    ecs.call("DeletePrefixList", &p).await.map(|_| ())
}

fn rule_object(name: &str, group: &str, peer: serde_json::Value) -> SecurityGroupRule {
    let mut for_provider = json!({
        "regionId": REGION, "securityGroupId": group, "direction": "ingress",
        "ipProtocol": "tcp", "portRange": "443/443", "description": "https from the office",
    });
    for (k, v) in peer.as_object().cloned().unwrap_or_default() {
        for_provider[k] = v;
    }
    serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "SecurityGroupRule",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"forProvider": for_provider},
    }))
    .expect("a SecurityGroupRule")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_list_rule_is_kept_and_holds_its_list_until_deleted() {
    let env = Env::start().await;
    let (ecs, _) = cloud(&env);
    let list = office_list(&ecs).await;
    let group = ecs
        .create_security_group(&alibaba_sdk::ecs::CreateSecurityGroupRequest {
            vpc_id: Some(alibaba_mock::defaults::vpc_id(REGION)),
            security_group_name: Some("shared-by-hand".into()),
            ..Default::default()
        })
        .await
        .expect("CreateSecurityGroup")
        .security_group_id;
    let api: Api<SecurityGroupRule> = Api::namespaced(env.client.clone(), NS);

    // A block beside the list is a second peer: refused before anything reaches the cloud.
    let two = rule_object(
        "two-peers",
        &group,
        json!({"sourcePrefixListId": list, "sourceCidrIp": "10.0.0.0/8"}),
    );
    let refused = api
        .create(&PostParams::default(), &two)
        .await
        .expect_err("two peers are refused");
    assert!(
        refused.to_string().contains("set exactly one peer"),
        "{refused}"
    );

    let object = rule_object("office-https", &group, json!({"sourcePrefixListId": list}));
    api.create(&PostParams::default(), &object)
        .await
        .expect("created");
    let ready: SecurityGroupRule = wait_ready(&env, "office-https").await;
    let id = external_name(&ready).expect("a rule ID");
    let held = ingress(&ecs, &group).await;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].security_group_rule_id, id);
    assert_eq!(held[0].source_prefix_list_id, list);
    assert_eq!(held[0].source_cidr_ip, "");
    let refused = delete_list(&ecs, &list)
        .await
        .expect_err("a list a rule names is not deleted");
    assert_eq!(refused.code(), Some("NotAllowed.AssociationExist"));

    // Revoked behind the object's back: authorized again, naming the same list.
    ecs.revoke_rule(&group, Direction::Ingress, &id)
        .await
        .expect("the console revokes the rule");
    let restored = eventually("the rule is authorized again")
        .within(WAIT)
        .for_object(&api, "office-https", |o| {
            o.is_some_and(|o| {
                external_name(o).is_some_and(|n| n != id)
                    && ferroplane_testkit::conditions::is_ready(o)
            })
        })
        .await
        .expect("exists");
    let new_id = external_name(&restored).expect("a rule ID");
    // The rule is authorized first with the ownership marker as its description, which the
    // controller then sets to the spec's: judged once that last write has landed (a CI run read
    // the rule between the two).
    let held = eventually("the restored rule carries the spec's description")
        .within(WAIT)
        .until_async(|| async {
            let held = ingress(&ecs, &group).await;
            if held.len() == 1 && held[0].description == "https from the office" {
                Ok(held)
            } else {
                Err(held)
            }
        })
        .await;
    assert_eq!(held[0].security_group_rule_id, new_id);
    assert_eq!(held[0].source_prefix_list_id, list);

    api.delete("office-https", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually("SecurityGroupRule office-https: gone")
        .within(WAIT)
        .for_object(&api, "office-https", |o| o.is_none())
        .await;
    assert!(ingress(&ecs, &group).await.is_empty());
    delete_list(&ecs, &list)
        .await
        .expect("the list goes once no rule names it");
    env.stop().await;
}
