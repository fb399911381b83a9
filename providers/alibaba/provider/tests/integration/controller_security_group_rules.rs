//! SecurityGroupRule against the mock: `deploy/samples/securitygrouprule.yaml` applied at once in
//! reverse order becomes Ready with each rule named by its ID and carrying its description, and
//! deleting the rules revokes exactly them; policy, priority and description changed elsewhere
//! are reverted and a rule revoked elsewhere is authorized again; a rule authorized before a
//! crash lost its ID is adopted by its marker, never authorized twice; an identical rule of
//! another owner is never adopted nor revoked; a group kept Exclusive by its SecurityGroup (which
//! tags it) is refused until it is Additive.

use alibaba_sdk::ecs::{Direction, EcsClient, PeerRule, Permission, RuleChange, RulePeer};
use ferroplane_apis::alibabacloud::{SecurityGroup, SecurityGroupRule, VPC};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::controller_support::{
    Env, NS, REGION, WAIT, cloud, condition, external_name, wait_ready,
};

/// The documents of `deploy/samples/securitygrouprule.yaml`, in their order.
fn sample() -> Vec<Value> {
    ferroplane_testkit::samples::read("securitygrouprule.yaml")
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("securitygrouprule.yaml document"))
        .collect()
}

async fn rules(ecs: &EcsClient, group: &str, direction: Direction) -> Vec<Permission> {
    ecs.describe_security_group_rules(group, direction)
        .await
        .expect("DescribeSecurityGroupAttribute")
        .permissions
        .items
}

/// A group made by hand in the region's default VPC: no SecurityGroup object keeps its rules.
async fn hand_made_group(ecs: &EcsClient) -> String {
    let request = alibaba_sdk::ecs::CreateSecurityGroupRequest {
        vpc_id: Some(alibaba_mock::defaults::vpc_id(REGION)),
        security_group_name: Some("shared-by-hand".into()),
        ..Default::default()
    };
    ecs.create_security_group(&request)
        .await
        .expect("CreateSecurityGroup")
        .security_group_id
}

fn rule_object(name: &str, group: &str, extra: Value) -> SecurityGroupRule {
    let mut for_provider = json!({
        "regionId": REGION, "securityGroupId": group, "direction": "ingress",
        "ipProtocol": "tcp", "portRange": "5432/5432", "sourceCidrIp": "10.1.0.0/16",
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
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

/// The rule `rule_object` asks for, as another owner would authorize it.
fn postgres(description: &str) -> PeerRule {
    PeerRule {
        direction: Direction::Ingress,
        ip_protocol: "tcp".into(),
        port_range: "5432/5432".into(),
        peer: RulePeer::Cidr("10.1.0.0/16".into()),
        policy: "accept".into(),
        priority: 1,
        description: description.into(),
    }
}

async fn wait_sync_failed(api: &Api<SecurityGroupRule>, name: &str, reason: &str) -> String {
    let object = eventually(format!("SecurityGroupRule {name}: Synced=False/{reason}"))
        .within(WAIT)
        .for_object(api, name, |o| {
            o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                c.status == ConditionStatus::False && c.message.starts_with(&format!("{reason}:"))
            })
        })
        .await
        .expect("exists");
    condition(&object, SYNCED).expect("Synced").message.clone()
}

async fn create<K>(env: &Env, doc: Value)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(doc).expect("fits its type");
    Api::<K>::namespaced(env.client.clone(), NS)
        .create(&PostParams::default(), &object)
        .await
        .expect("created");
}

async fn wait_gone(api: &Api<SecurityGroupRule>, name: &str) {
    eventually(format!("SecurityGroupRule {name}: gone"))
        .within(WAIT)
        .for_object(api, name, |o| o.is_none())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sample_becomes_ready_and_deleting_the_rules_revokes_exactly_them() {
    let env = Env::start().await;
    let (ecs, _) = cloud(&env);
    let docs = sample();
    // Rules first: they wait for their groups, the groups for the VPC.
    for doc in docs.iter().rev() {
        let doc = doc.clone();
        match doc["kind"].as_str() {
            Some("VPC") => create::<VPC>(&env, doc).await,
            Some("SecurityGroup") => create::<SecurityGroup>(&env, doc).await,
            Some("SecurityGroupRule") => create::<SecurityGroupRule>(&env, doc).await,
            other => panic!("unexpected kind {other:?}"),
        }
    }
    let shared: SecurityGroup = wait_ready(&env, "shared").await;
    let group_id = external_name(&shared).expect("group ID");
    let bastions: SecurityGroup = wait_ready(&env, "bastions").await;
    let bastions_id = external_name(&bastions).expect("group ID");
    let names = ["ssh-from-bastions", "https", "https-v6", "no-smtp-out"];
    let mut ids = Vec::new();
    for name in names {
        let rule: SecurityGroupRule = wait_ready(&env, name).await;
        let id = external_name(&rule).expect("a rule ID");
        assert_eq!(
            rule.status
                .as_ref()
                .unwrap()
                .observed()
                .security_group_rule_id
                .as_deref(),
            Some(id.as_str())
        );
        ids.push(id);
    }
    let tagged = ecs
        .describe_security_groups(std::slice::from_ref(&group_id), &[])
        .await
        .expect("DescribeSecurityGroups");
    assert_eq!(
        tagged[0].tag("ferroplane.io/rules-policy"),
        Some("Additive")
    );
    // Each rule is in the group under its ID with the spec's description, the marker replaced.
    let described = |id: &str, perms: &[Permission]| {
        perms
            .iter()
            .find(|p| p.security_group_rule_id == id)
            .cloned()
            .unwrap_or_else(|| panic!("rule {id} in the group: {perms:?}"))
    };
    let wanted_descriptions = eventually("every rule carries its spec's description")
        .within(WAIT)
        .until_async(|| async {
            let inbound = rules(&ecs, &group_id, Direction::Ingress).await;
            ids[..3].iter().all(|id| {
                !described(id, &inbound)
                    .description
                    .starts_with("ferroplane:")
            })
        });
    wanted_descriptions.await;
    let inbound = rules(&ecs, &group_id, Direction::Ingress).await;
    assert_eq!(inbound.len(), 3, "{inbound:?}");
    let ssh = described(&ids[0], &inbound);
    assert_eq!(ssh.source_group_id, bastions_id);
    assert_eq!(ssh.description, "SSH from the bastions");
    let v6 = described(&ids[2], &inbound);
    assert_eq!(v6.ipv6_source_cidr_ip, "::/0");
    assert_eq!(v6.priority, 10);
    let outbound = rules(&ecs, &group_id, Direction::Egress).await;
    let smtp = described(&ids[3], &outbound);
    assert_eq!(
        (smtp.policy.as_str(), smtp.dest_cidr_ip.as_str()),
        ("Drop", "0.0.0.0/0")
    );
    // Without a description the marker stays: it names the object.
    let rule_api: Api<SecurityGroupRule> = Api::namespaced(env.client.clone(), NS);
    let no_smtp = rule_api.get("no-smtp-out").await.expect("exists");
    assert_eq!(
        smtp.description,
        format!("ferroplane:{}", no_smtp.metadata.uid.unwrap())
    );

    // A rule of another owner in the same group survives the deletion of every object.
    ecs.authorize_rule(&group_id, &postgres("another team"))
        .await
        .expect("another owner's rule");
    for name in names {
        rule_api
            .delete(name, &DeleteParams::default())
            .await
            .expect("deleted");
    }
    for name in names {
        wait_gone(&rule_api, name).await;
    }
    let left = rules(&ecs, &group_id, Direction::Ingress).await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].description, "another team");
    assert!(rules(&ecs, &group_id, Direction::Egress).await.is_empty());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_reverted_and_a_rule_revoked_elsewhere_is_authorized_again() {
    let env = Env::start().await;
    let (ecs, _) = cloud(&env);
    let group = hand_made_group(&ecs).await;
    let api: Api<SecurityGroupRule> = Api::namespaced(env.client.clone(), NS);
    let object = rule_object(
        "db",
        &group,
        json!({"policy": "accept", "priority": 5, "description": "postgres from the app"}),
    );
    api.create(&PostParams::default(), &object)
        .await
        .expect("created");
    let ready: SecurityGroupRule = wait_ready(&env, "db").await;
    let id = external_name(&ready).expect("a rule ID");
    let settled = |want_id: String| {
        let ecs = ecs.clone();
        let group = group.clone();
        move || {
            let ecs = ecs.clone();
            let group = group.clone();
            let want_id = want_id.clone();
            async move {
                rules(&ecs, &group, Direction::Ingress)
                    .await
                    .iter()
                    .any(|p| {
                        (want_id.is_empty() || p.security_group_rule_id == want_id)
                            && p.policy == "Accept"
                            && p.priority == 5
                            && p.description == "postgres from the app"
                    })
            }
        }
    };
    eventually("the rule carries its spec's settings")
        .within(WAIT)
        .until_async(settled(id.clone()))
        .await;
    let modifies = env.mock().stats().calls_of("ModifySecurityGroupRule");
    ecs.modify_rule(
        &group,
        Direction::Ingress,
        &id,
        &RuleChange {
            policy: Some("drop"),
            priority: Some(50),
            description: Some("changed in the console"),
        },
    )
    .await
    .expect("the console changes the rule");
    eventually("policy, priority and description reverted")
        .within(WAIT)
        .until_async(settled(id.clone()))
        .await;
    assert_eq!(
        env.mock().stats().calls_of("ModifySecurityGroupRule"),
        modifies + 2,
        "one change by the console, one revert"
    );

    ecs.revoke_rule(&group, Direction::Ingress, &id)
        .await
        .expect("the console revokes the rule");
    let renamed = eventually("the object names the rule authorized again")
        .within(WAIT)
        .for_object(&api, "db", |o| {
            o.is_some_and(|o| {
                external_name(o).is_some_and(|n| n != id)
                    && ferroplane_testkit::conditions::is_ready(o)
            })
        })
        .await
        .expect("exists");
    let new_id = external_name(&renamed).expect("a rule ID");
    eventually("the new rule carries its spec's settings")
        .within(WAIT)
        .until_async(settled(new_id.clone()))
        .await;
    let inbound = rules(&ecs, &group, Direction::Ingress).await;
    assert_eq!(inbound.len(), 1, "{inbound:?}");
    api.delete("db", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&api, "db").await;
    assert!(rules(&ecs, &group, Direction::Ingress).await.is_empty());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_authorized_before_its_id_was_stored_is_adopted_by_its_marker() {
    let env = Env::start().await;
    let (ecs, _) = cloud(&env);
    let group = hand_made_group(&ecs).await;
    let api: Api<SecurityGroupRule> = Api::namespaced(env.client.clone(), NS);
    // Paused, the object is not reconciled: the rule below stands for an Authorize whose process
    // died before it stored the ID.
    let mut object = rule_object("db", &group, json!({}));
    object.metadata.annotations =
        Some([("ferroplane.io/paused".to_owned(), "true".to_owned())].into());
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .expect("created");
    let uid = created.metadata.uid.expect("a UID");
    ecs.authorize_rule(&group, &postgres(&format!("ferroplane:{uid}")))
        .await
        .expect("the lost create");
    let authorized = rules(&ecs, &group, Direction::Ingress).await;
    let authorizes = env.mock().stats().calls_of("AuthorizeSecurityGroup");
    api.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"ferroplane.io/paused": "false"}}})),
    )
    .await
    .expect("unpaused");
    let ready: SecurityGroupRule = wait_ready(&env, "db").await;
    assert_eq!(
        external_name(&ready).as_deref(),
        Some(authorized[0].security_group_rule_id.as_str())
    );
    assert_eq!(
        env.mock().stats().calls_of("AuthorizeSecurityGroup"),
        authorizes
    );
    assert_eq!(rules(&ecs, &group, Direction::Ingress).await.len(), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identical_rule_of_another_owner_is_never_adopted_nor_revoked() {
    let env = Env::start().await;
    let (ecs, _) = cloud(&env);
    let group = hand_made_group(&ecs).await;
    ecs.authorize_rule(&group, &postgres("the database team"))
        .await
        .expect("another owner's rule");
    let theirs = rules(&ecs, &group, Direction::Ingress).await[0]
        .security_group_rule_id
        .clone();
    let api: Api<SecurityGroupRule> = Api::namespaced(env.client.clone(), NS);
    api.create(
        &PostParams::default(),
        &rule_object("db", &group, json!({})),
    )
    .await
    .expect("created");
    let message = wait_sync_failed(&api, "db", "RuleExists").await;
    assert!(
        message.contains(&group) && message.contains(&theirs),
        "{message}"
    );
    let object = api.get("db").await.expect("exists");
    assert_eq!(external_name(&object), None);
    api.delete("db", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&api, "db").await;
    let left = rules(&ecs, &group, Direction::Ingress).await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        (
            left[0].security_group_rule_id.as_str(),
            left[0].description.as_str()
        ),
        (theirs.as_str(), "the database team")
    );
    assert_eq!(env.mock().stats().calls_of("RevokeSecurityGroup"), 0);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_kept_exclusive_is_refused_until_it_is_additive() {
    let env = Env::start().await;
    let (ecs, _) = cloud(&env);
    let pp = PostParams::default();
    let docs = sample();
    let vpc: VPC = serde_json::from_value(docs[0].clone()).expect("the sample's VPC");
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &vpc)
        .await
        .expect("vpc");
    let mut group: SecurityGroup = serde_json::from_value(docs[1].clone()).expect("a group");
    group.spec.for_provider.rules_policy = None;
    let groups: Api<SecurityGroup> = Api::namespaced(env.client.clone(), NS);
    groups.create(&pp, &group).await.expect("group");
    let ready: SecurityGroup = wait_ready(&env, "shared").await;
    let group_id = external_name(&ready).expect("group ID");
    let tagged = ecs
        .describe_security_groups(std::slice::from_ref(&group_id), &[])
        .await
        .expect("DescribeSecurityGroups");
    assert_eq!(
        tagged[0].tag("ferroplane.io/rules-policy"),
        Some("Exclusive")
    );

    let api: Api<SecurityGroupRule> = Api::namespaced(env.client.clone(), NS);
    let mut rule = rule_object("db", "sg-unused", json!({}));
    rule.spec.for_provider.security_group_id = None;
    rule.spec.for_provider.security_group_id_ref = Some(ferroplane_apis::references::Reference {
        name: "shared".into(),
    });
    api.create(&pp, &rule).await.expect("created");
    let message = wait_sync_failed(&api, "db", "RulesPolicyExclusive").await;
    assert!(
        message.contains(&group_id) && message.contains("Additive"),
        "{message}"
    );
    assert_eq!(env.mock().stats().calls_of("AuthorizeSecurityGroup"), 0);

    groups
        .patch(
            "shared",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"rulesPolicy": "Additive"}}})),
        )
        .await
        .expect("the group made Additive");
    let ready: SecurityGroupRule = wait_ready(&env, "db").await;
    let id = external_name(&ready).expect("a rule ID");
    let inbound = rules(&ecs, &group_id, Direction::Ingress).await;
    assert!(
        inbound.iter().any(|p| p.security_group_rule_id == id),
        "{inbound:?}"
    );
    env.stop().await;
}
