//! The network kinds against the mock: a stack of VPC, VSwitch, SecurityGroup and an ECSInstance
//! referencing them by name, applied at once in reverse order and deleted at once; a reference
//! to a missing VSwitch; a security group rule added behind ferroplane's back; a VPC's name,
//! description and tags, and a vSwitch's, changed in place and reverted after a change made in
//! the console, and a security group's the same way; a VPC and vSwitch with IPv6.

use alibaba_sdk::ecs::{Direction, EcsClient, Rule};
use alibaba_sdk::vpc::VpcClient;
use ferroplane_apis::alibabacloud::{ECSInstance, SecurityGroup, VPC, VSwitch};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::eventually;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;

use crate::controller_support::{Env, NS, WAIT, cloud, condition, external_name, wait_ready};

/// The documents of `deploy/samples/network.yaml`.
fn stack() -> Vec<Value> {
    let text = ferroplane_testkit::samples::read("network.yaml");
    text.split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("stack document"))
        .collect()
}

fn of_kind<K: serde::de::DeserializeOwned>(docs: &[Value], kind: &str) -> K {
    let doc = docs
        .iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("the stack has a {kind}"));
    serde_json::from_value(doc.clone()).expect("fits its type")
}

async fn wait_gone<K>(env: &Env, name: &str)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let api: Api<K> = Api::namespaced(env.client.clone(), NS);
    eventually(format!("{} {name}: gone", K::kind(&())))
        .within(WAIT)
        .for_object(&api, name, |o| o.is_none())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_applied_at_once_becomes_ready_and_is_deleted_at_once() {
    let env = Env::start().await;
    let docs = stack();
    let vpc: VPC = of_kind(&docs, "VPC");
    let vswitch: VSwitch = of_kind(&docs, "VSwitch");
    let group: SecurityGroup = of_kind(&docs, "SecurityGroup");
    let instance: ECSInstance = of_kind(&docs, "ECSInstance");
    let pp = PostParams::default();
    // Dependents first: each waits for what it references.
    let instances: Api<ECSInstance> = Api::namespaced(env.client.clone(), NS);
    let groups: Api<SecurityGroup> = Api::namespaced(env.client.clone(), NS);
    let vswitches: Api<VSwitch> = Api::namespaced(env.client.clone(), NS);
    let vpcs: Api<VPC> = Api::namespaced(env.client.clone(), NS);
    instances.create(&pp, &instance).await.expect("instance");
    groups.create(&pp, &group).await.expect("group");
    vswitches.create(&pp, &vswitch).await.expect("vswitch");
    vpcs.create(&pp, &vpc).await.expect("vpc");

    let vpc: VPC = wait_ready(&env, "web").await;
    let vswitch: VSwitch = wait_ready(&env, "web-h").await;
    let group: SecurityGroup = wait_ready(&env, "web-ssh").await;
    let instance: ECSInstance = wait_ready(&env, "web-1").await;
    let vpc_id = external_name(&vpc).expect("VPC ID").to_owned();
    let vswitch_id = external_name(&vswitch).expect("vSwitch ID").to_owned();
    let group_id = external_name(&group).expect("group ID").to_owned();
    let instance_id = external_name(&instance).expect("instance ID").to_owned();
    // The references were written into the literals.
    assert_eq!(
        vswitch.spec.for_provider.vpc_id.as_deref(),
        Some(vpc_id.as_str())
    );
    assert_eq!(
        group.spec.for_provider.vpc_id.as_deref(),
        Some(vpc_id.as_str())
    );
    assert_eq!(
        instance.spec.for_provider.v_switch_id.as_deref(),
        Some(vswitch_id.as_str())
    );
    assert_eq!(
        instance.spec.for_provider.security_group_ids,
        Some(vec![group_id.clone()])
    );

    // In the cloud: the instance runs in that vSwitch and group; the group has the spec's rule.
    let (ecs, vpc_api) = cloud(&env);
    let found = ecs
        .describe_instances_by_ids(std::slice::from_ref(&instance_id))
        .await
        .expect("describe");
    let found = found.first().expect("instance exists");
    assert_eq!(found.vpc_attributes.vswitch_id, vswitch_id);
    assert_eq!(found.vpc_attributes.vpc_id, vpc_id);
    assert_eq!(found.security_group_ids.items, vec![group_id.clone()]);
    let rules = ecs
        .describe_security_group_rules(&group_id, Direction::Ingress)
        .await
        .expect("rules");
    let rules: Vec<Rule> = rules
        .permissions
        .items
        .iter()
        .map(|p| p.to_rule(Direction::Ingress))
        .collect();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(
        (rules[0].port_range.as_str(), rules[0].cidr_ip.as_str()),
        ("22/22", "203.0.113.0/24")
    );

    // One command deletes them all; each waits for its dependents in the cloud.
    let dp = DeleteParams::default();
    vpcs.delete("web", &dp).await.expect("delete vpc");
    vswitches
        .delete("web-h", &dp)
        .await
        .expect("delete vswitch");
    groups.delete("web-ssh", &dp).await.expect("delete group");
    instances
        .delete("web-1", &dp)
        .await
        .expect("delete instance");
    wait_gone::<ECSInstance>(&env, "web-1").await;
    wait_gone::<SecurityGroup>(&env, "web-ssh").await;
    wait_gone::<VSwitch>(&env, "web-h").await;
    wait_gone::<VPC>(&env, "web").await;
    assert!(
        vpc_api
            .describe_vpcs(std::slice::from_ref(&vpc_id), &[])
            .await
            .expect("describe vpcs")
            .is_empty(),
        "VPC {vpc_id} left behind"
    );
    assert!(
        vpc_api
            .describe_vswitches(Some(&vswitch_id), None, &[])
            .await
            .expect("describe vswitches")
            .is_empty(),
        "vSwitch {vswitch_id} left behind"
    );
    assert!(
        ecs.describe_security_groups(std::slice::from_ref(&group_id), &[])
            .await
            .expect("describe groups")
            .is_empty(),
        "security group {group_id} left behind"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_to_a_missing_vswitch_creates_nothing_until_it_is_ready() {
    let env = Env::start().await;
    let docs = stack();
    let instance: ECSInstance = of_kind(&docs, "ECSInstance");
    let instances: Api<ECSInstance> = Api::namespaced(env.client.clone(), NS);
    instances
        .create(&PostParams::default(), &instance)
        .await
        .expect("instance");
    let message = env
        .wait_sync_error("web-1", "vSwitchIdRef names VSwitch web-h")
        .await;
    assert!(message.contains("does not exist"), "{message}");
    assert!(env.mock().instances().is_empty(), "nothing is created");

    // The referenced objects arrive: the instance goes on by itself.
    let pp = PostParams::default();
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<VPC>(&docs, "VPC"))
        .await
        .expect("vpc");
    Api::<VSwitch>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<VSwitch>(&docs, "VSwitch"))
        .await
        .expect("vswitch");
    Api::<SecurityGroup>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<SecurityGroup>(&docs, "SecurityGroup"))
        .await
        .expect("group");
    let ready: ECSInstance = wait_ready(&env, "web-1").await;
    assert_eq!(env.mock().instances().len(), 1);
    assert!(
        condition(&ready, SYNCED).is_some_and(|c| c.status == ConditionStatus::True),
        "{ready:?}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_added_behind_ferroplanes_back_is_revoked() {
    let env = Env::start().await;
    let docs = stack();
    let pp = PostParams::default();
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<VPC>(&docs, "VPC"))
        .await
        .expect("vpc");
    Api::<SecurityGroup>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<SecurityGroup>(&docs, "SecurityGroup"))
        .await
        .expect("group");
    let group: SecurityGroup = wait_ready(&env, "web-ssh").await;
    let group_id = external_name(&group).expect("group ID").to_owned();
    let (ecs, _) = cloud(&env);
    let console = Rule {
        ip_protocol: "all".into(),
        port_range: "-1/-1".into(),
        cidr_ip: "0.0.0.0/0".into(),
        policy: "accept".into(),
        priority: 1,
        description: String::new(),
    };
    ecs.authorize_security_group(
        &group_id,
        Direction::Ingress,
        std::slice::from_ref(&console),
    )
    .await
    .expect("a rule added in the console");
    eventually(format!(
        "security group {group_id}: the console rule revoked"
    ))
    .within(WAIT)
    .until_async(|| {
        let ecs = ecs.clone();
        let group_id = group_id.clone();
        let console = console.clone();
        async move {
            let rules = ecs
                .describe_security_group_rules(&group_id, Direction::Ingress)
                .await
                .expect("rules");
            let rules: Vec<Rule> = rules
                .permissions
                .items
                .iter()
                .map(|p| p.to_rule(Direction::Ingress))
                .collect();
            rules.len() == 1 && !rules.contains(&console)
        }
    })
    .await;
    env.stop().await;
}

/// The VPC as the cloud describes it.
async fn described_vpc(vpc: &VpcClient, id: &str) -> alibaba_sdk::vpc::Vpc {
    vpc.describe_vpcs(&[id.to_owned()], &[])
        .await
        .expect("described")
        .into_iter()
        .next()
        .expect("the VPC exists")
}

fn tag_of<'a>(v: &'a alibaba_sdk::vpc::Vpc, key: &str) -> Option<&'a str> {
    v.tags
        .items
        .iter()
        .find(|t| t.key == key)
        .map(|t| t.value.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vpc_name_description_and_tags_change_in_place_and_drift_is_reverted() {
    let env = Env::start().await;
    let docs = stack();
    let vpcs: Api<VPC> = Api::namespaced(env.client.clone(), NS);
    vpcs.create(&PostParams::default(), &of_kind::<VPC>(&docs, "VPC"))
        .await
        .expect("vpc");
    let ready: VPC = wait_ready(&env, "web").await;
    let id = external_name(&ready).expect("VPC ID").to_owned();
    let (_, vpc_api) = cloud(&env);

    let patch = serde_json::json!({"spec": {"forProvider": {
        "vpcName": "web-renamed",
        "description": "the web tier",
        "tags": {"team": "ops"},
    }}});
    vpcs.patch(
        "web",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch),
    )
    .await
    .expect("edited");
    let applied = |v: &alibaba_sdk::vpc::Vpc| {
        v.vpc_name == "web-renamed"
            && v.description == "the web tier"
            && tag_of(v, "team") == Some("ops")
            && tag_of(v, ferroplane_runtime::UID_TAG).is_some()
    };
    eventually(format!("VPC {id}: renamed, described and tagged"))
        .within(WAIT)
        .until_async(|| async { applied(&described_vpc(&vpc_api, &id).await) })
        .await;
    let synced = |o: Option<&VPC>| {
        o.is_some_and(|o| {
            condition(o, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                && o.status.as_ref().and_then(|s| s.observed_generation) == o.metadata.generation
        })
    };
    eventually("VPC web: Synced=True")
        .within(WAIT)
        .for_object(&vpcs, "web", synced)
        .await;

    // Drift: the console renames it, drops the tag and adds one; the next poll reverts all.
    vpc_api
        .modify_vpc_attribute(&id, Some("console-name"), None)
        .await
        .expect("console renames");
    vpc_api
        .untag_resource("VPC", &id, &["team".to_owned()])
        .await
        .expect("console untags");
    vpc_api
        .tag_resource("VPC", &id, &[alibaba_sdk::vpc::Tag::new("stray", "x")])
        .await
        .expect("console tags");
    eventually(format!("VPC {id}: drift reverted"))
        .within(WAIT)
        .until_async(|| async {
            let v = described_vpc(&vpc_api, &id).await;
            applied(&v) && tag_of(&v, "stray").is_none()
        })
        .await;
    eventually("VPC web: Synced=True again")
        .within(WAIT)
        .for_object(&vpcs, "web", synced)
        .await;
    assert!(env.mock().stats().calls_of("ModifyVpcAttribute") >= 3);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vswitch_name_and_tags_change_in_place_and_drift_is_reverted() {
    let env = Env::start().await;
    let docs = stack();
    let pp = PostParams::default();
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<VPC>(&docs, "VPC"))
        .await
        .expect("vpc");
    let vswitches: Api<VSwitch> = Api::namespaced(env.client.clone(), NS);
    vswitches
        .create(&pp, &of_kind::<VSwitch>(&docs, "VSwitch"))
        .await
        .expect("vswitch");
    let ready: VSwitch = wait_ready(&env, "web-h").await;
    let id = external_name(&ready).expect("vSwitch ID").to_owned();
    let (_, vpc_api) = cloud(&env);
    let described = |vpc_api: VpcClient, id: String| async move {
        vpc_api
            .describe_vswitches(Some(&id), None, &[])
            .await
            .expect("described")
            .into_iter()
            .next()
            .expect("the vSwitch exists")
    };

    let patch = serde_json::json!({"spec": {"forProvider": {
        "vSwitchName": "web-h-renamed",
        "tags": {"tier": "web"},
    }}});
    vswitches
        .patch(
            "web-h",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .expect("edited");
    let applied = |v: &alibaba_sdk::vpc::VSwitch| {
        v.vswitch_name == "web-h-renamed" && v.tag("tier") == Some("web")
    };
    eventually(format!("vSwitch {id}: renamed and tagged"))
        .within(WAIT)
        .until_async(|| {
            let (vpc_api, id) = (vpc_api.clone(), id.clone());
            async move { applied(&described(vpc_api, id).await) }
        })
        .await;

    // Drift: the console renames it; the next poll reverts it.
    vpc_api
        .modify_vswitch_attribute(&id, Some("console-name"), None)
        .await
        .expect("console renames");
    eventually(format!("vSwitch {id}: drift reverted"))
        .within(WAIT)
        .until_async(|| {
            let (vpc_api, id) = (vpc_api.clone(), id.clone());
            async move { applied(&described(vpc_api, id).await) }
        })
        .await;
    let synced = |o: Option<&VSwitch>| {
        o.is_some_and(|o| {
            condition(o, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                && o.status.as_ref().and_then(|s| s.observed_generation) == o.metadata.generation
        })
    };
    eventually("VSwitch web-h: Synced=True")
        .within(WAIT)
        .for_object(&vswitches, "web-h", synced)
        .await;
    assert!(env.mock().stats().calls_of("ModifyVSwitchAttribute") >= 3);
    env.stop().await;
}

/// `enableIpv6` and `ipv6CidrBlock` reach CreateVpc and CreateVSwitch; the blocks ECS gives
/// show in `status.atProvider`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vpc_and_vswitch_with_ipv6_show_their_blocks() {
    let env = Env::start().await;
    let docs = stack();
    let pp = PostParams::default();
    let mut vpc: VPC = of_kind(&docs, "VPC");
    vpc.spec.for_provider.enable_ipv6 = Some(true);
    let mut vswitch: VSwitch = of_kind(&docs, "VSwitch");
    vswitch.spec.for_provider.ipv6_cidr_block = Some(7);
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &vpc)
        .await
        .expect("vpc");
    Api::<VSwitch>::namespaced(env.client.clone(), NS)
        .create(&pp, &vswitch)
        .await
        .expect("vswitch");
    let vswitch_name = vswitch.metadata.name.clone().expect("name");
    let vpc_name = vpc.metadata.name.clone().expect("name");
    let vswitches: Api<VSwitch> = Api::namespaced(env.client.clone(), NS);
    let ready = eventually("VSwitch: Ready with an IPv6 block")
        .within(WAIT)
        .for_object(&vswitches, &vswitch_name, |o| {
            o.is_some_and(|o| {
                is_ready(o)
                    && o.status
                        .as_ref()
                        .is_some_and(|s| s.observed().ipv6_cidr_block.is_some())
            })
        })
        .await
        .expect("exists");
    let vpcs: Api<VPC> = Api::namespaced(env.client.clone(), NS);
    let vpc = eventually("VPC: Ready with an IPv6 block")
        .within(WAIT)
        .for_object(&vpcs, &vpc_name, |o| {
            o.is_some_and(|o| {
                is_ready(o)
                    && o.status
                        .as_ref()
                        .is_some_and(|s| s.observed().ipv6_cidr_block.is_some())
            })
        })
        .await
        .expect("exists");
    let v6 = |s: Option<&String>| s.cloned().unwrap_or_default();
    let vpc_block = v6(vpc
        .status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref()?.ipv6_cidr_block.as_ref()));
    let vswitch_block = v6(ready
        .status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref()?.ipv6_cidr_block.as_ref()));
    assert!(vpc_block.ends_with("/56"), "{vpc_block}");
    assert!(vswitch_block.ends_with("07::/64"), "{vswitch_block}");
    let (_, vpc_api) = cloud(&env);
    let id = external_name(&ready).expect("vSwitch ID").to_owned();
    let described = vpc_api
        .describe_vswitches(Some(&id), None, &[])
        .await
        .expect("described");
    assert_eq!(described[0].ipv6_cidr_block, vswitch_block);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_security_group_name_description_and_tags_change_in_place_and_drift_is_reverted() {
    let env = Env::start().await;
    let docs = stack();
    let pp = PostParams::default();
    Api::<VPC>::namespaced(env.client.clone(), NS)
        .create(&pp, &of_kind::<VPC>(&docs, "VPC"))
        .await
        .expect("vpc");
    let groups: Api<SecurityGroup> = Api::namespaced(env.client.clone(), NS);
    groups
        .create(&pp, &of_kind::<SecurityGroup>(&docs, "SecurityGroup"))
        .await
        .expect("group");
    let ready: SecurityGroup = wait_ready(&env, "web-ssh").await;
    let id = external_name(&ready).expect("group ID").to_owned();
    let (ecs, _) = cloud(&env);
    let described = |ecs: EcsClient, id: String| async move {
        ecs.describe_security_groups(std::slice::from_ref(&id), &[])
            .await
            .expect("described")
            .into_iter()
            .next()
            .expect("the group exists")
    };

    let patch = serde_json::json!({"spec": {"forProvider": {
        "securityGroupName": "web-ssh-renamed",
        "description": "ssh to the web tier",
        "tags": {"team": "ops"},
    }}});
    groups
        .patch(
            "web-ssh",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .expect("edited");
    let applied = |g: &alibaba_sdk::ecs::SecurityGroup| {
        g.security_group_name == "web-ssh-renamed"
            && g.description == "ssh to the web tier"
            && g.tag("team") == Some("ops")
            && g.tag(ferroplane_runtime::UID_TAG).is_some()
    };
    eventually(format!("group {id}: renamed, described and tagged"))
        .within(WAIT)
        .until_async(|| {
            let (ecs, id) = (ecs.clone(), id.clone());
            async move { applied(&described(ecs, id).await) }
        })
        .await;

    // Drift: the console renames it and adds a tag; the next poll reverts both.
    ecs.modify_security_group_attribute(&id, Some("console-name"), None)
        .await
        .expect("console renames");
    ecs.tag_security_group(&id, &[alibaba_sdk::ecs::Tag::new("stray", "x")])
        .await
        .expect("console tags");
    eventually(format!("group {id}: drift reverted"))
        .within(WAIT)
        .until_async(|| {
            let (ecs, id) = (ecs.clone(), id.clone());
            async move {
                let g = described(ecs, id).await;
                applied(&g) && g.tag("stray").is_none()
            }
        })
        .await;
    let synced = |o: Option<&SecurityGroup>| {
        o.is_some_and(|o| {
            condition(o, SYNCED).is_some_and(|c| c.status == ConditionStatus::True)
                && o.status.as_ref().and_then(|s| s.observed_generation) == o.metadata.generation
        })
    };
    eventually("SecurityGroup web-ssh: Synced=True")
        .within(WAIT)
        .for_object(&groups, "web-ssh", synced)
        .await;
    assert!(env.mock().stats().calls_of("ModifySecurityGroupAttribute") >= 2);
    assert!(env.mock().stats().calls_of("UntagResources") >= 1);
    env.stop().await;
}
