//! A whole network under cloud faults: one VPC, vSwitches and security groups referencing it, and
//! instances referencing those, all created at once (the VPC last) while the mock throttles and
//! fails calls and lists late; then all deleted at once (the VPC first). Nothing is created twice
//! and nothing is left behind, of any kind. `FERROPLANE_RELIABILITY_FULL=1` runs the issue's
//! sizes (10 vSwitches, 10 groups, 300 instances).

use std::time::Duration;

use alibaba_mock::{AccessKey, DEFAULT_ACCOUNT_ID, ResourceKind, defaults};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::EcsClient;
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::vpc::VpcClient;
use ferroplane_apis::alibabacloud::{ECSInstance, SecurityGroup, VPC, VSwitch};
use ferroplane_apis::common::{DeletionPolicy, Managed};
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::wait::{Seen, eventually};
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::support::daemon::{self, Daemon};
use crate::support::{ACCESS_KEY_ID, ACCESS_KEY_SECRET};

const REGION: &str = "cn-beijing";
const ZONES: [&str; 4] = [
    "cn-beijing-a",
    "cn-beijing-b",
    "cn-beijing-c",
    "cn-beijing-d",
];

fn full() -> bool {
    std::env::var_os("FERROPLANE_RELIABILITY_FULL").is_some()
}

fn object<K: DeserializeOwned>(kind: &str, name: &str, for_provider: serde_json::Value) -> K {
    serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"forProvider": for_provider},
    }))
    .expect("fits its type")
}

async fn create_all<K>(api: &Api<K>, objects: Vec<K>)
where
    K: kube::Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    futures::stream::iter(objects)
        .map(|o| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &o).await.map(drop) }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("objects created");
}

async fn delete_all<K>(api: &Api<K>)
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    api.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("objects deleted");
}

/// Waits until every object of kind `K` is Ready (`n` of them), or until none is left (`n` = 0).
async fn wait_for<K>(api: &Api<K>, n: usize, timeout: Duration)
where
    K: kube::Resource<DynamicType = ()> + Managed + Clone + DeserializeOwned + std::fmt::Debug,
{
    let kind = K::kind(&());
    eventually(format!("{kind}: {n} objects, all Ready"))
        .within(timeout)
        .every(Duration::from_millis(250))
        .until_async(|| async {
            let list = api.list(&ListParams::default()).await.expect("list").items;
            let ready = list.iter().filter(|o| is_ready(*o)).count();
            if list.len() == n && ready == n {
                return Ok(());
            }
            let stuck: Vec<String> = list
                .iter()
                .filter(|o| !is_ready(*o))
                .take(2)
                .map(|o| {
                    let name = o.meta().name.clone().unwrap_or_default();
                    format!("{name}: {:?}", o.conditions())
                })
                .collect();
            Err(Seen(format!(
                "{} objects, {ready} Ready; not Ready: {stuck:#?}",
                list.len()
            )))
        })
        .await;
}

pub(crate) async fn a_network_stack_under_faults_neither_duplicates_nor_leaks() {
    let (switches, groups, n) = if full() { (10, 10, 300) } else { (3, 3, 24) };
    let timeout = Duration::from_secs(if full() { 600 } else { 180 });
    let mut daemon = Daemon::start(Duration::from_millis(200)).await;
    daemon.env.mock().add_access_key(AccessKey::new(
        ACCESS_KEY_ID,
        ACCESS_KEY_SECRET,
        DEFAULT_ACCOUNT_ID,
    ));
    // A fault on the network's creates and the instances', whatever the draws.
    daemon.inject_faults(&[
        ("ServiceUnavailable", "CreateVpc", 1),
        ("ServiceUnavailable", "CreateVSwitch", 1),
        ("ServiceUnavailable", "CreateSecurityGroup", 1),
        ("ServiceUnavailable", "RunInstances", 1),
    ]);
    daemon.spawn_controller();
    let mock = daemon.env.mock();
    let client = daemon.client().clone();
    let vpcs: Api<VPC> = Api::namespaced(client.clone(), "default");
    let vswitches: Api<VSwitch> = Api::namespaced(client.clone(), "default");
    let security_groups: Api<SecurityGroup> = Api::namespaced(client.clone(), "default");
    let instances: Api<ECSInstance> = daemon.api();

    // Dependents first, the VPC last: everything waits for what it references.
    let mut fleet = Vec::new();
    for i in 0..n {
        let mut instance = daemon::instance(&format!("node-{i:04}"), DeletionPolicy::Delete);
        let p = &mut instance.spec.for_provider;
        p.v_switch_id = None;
        p.security_group_ids = None;
        p.v_switch_id_ref = Some(ferroplane_apis::references::Reference {
            name: format!("net-{}", i % switches),
        });
        p.security_group_id_refs = Some(vec![ferroplane_apis::references::Reference {
            name: format!("fw-{}", i % groups),
        }]);
        fleet.push(instance);
    }
    create_all(&instances, fleet).await;
    let fw: Vec<SecurityGroup> = (0..groups)
        .map(|g| {
            object(
                "SecurityGroup",
                &format!("fw-{g}"),
                json!({"regionId": REGION, "vpcIdRef": {"name": "main"}, "ingress": [
                    {"ipProtocol": "tcp", "portRange": "22/22", "sourceCidrIp": format!("10.{g}.0.0/16")}
                ]}),
            )
        })
        .collect();
    create_all(&security_groups, fw).await;
    let nets: Vec<VSwitch> = (0..switches)
        .map(|s| {
            object(
                "VSwitch",
                &format!("net-{s}"),
                json!({"regionId": REGION, "zoneId": ZONES[s % ZONES.len()],
                       "cidrBlock": format!("10.30.{s}.0/24"), "vpcIdRef": {"name": "main"}}),
            )
        })
        .collect();
    create_all(&vswitches, nets).await;
    create_all(
        &vpcs,
        vec![object(
            "VPC",
            "main",
            json!({"regionId": REGION, "cidrBlock": "10.30.0.0/16"}),
        )],
    )
    .await;

    wait_for(&vpcs, 1, timeout).await;
    wait_for(&vswitches, switches, timeout).await;
    wait_for(&security_groups, groups, timeout).await;
    wait_for(&instances, n, timeout).await;
    let stats = mock.stats();
    assert_eq!(stats.instances_created, n as u64, "no duplicate: {stats:?}");
    assert!(
        stats.errors_of("ServiceUnavailable") >= 4,
        "every scripted fault was answered: {stats:?}"
    );

    // Signed clients of the mock, to see the network the controllers made.
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new(ACCESS_KEY_ID, ACCESS_KEY_SECRET))
        .endpoint(mock.endpoint())
        .retry(alibaba_sdk::rpc::RetryPolicy {
            max_attempts: 20,
            min_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            max_elapsed: Duration::from_secs(30),
        })
        .build()
        .expect("ECS client");
    let vpc_api =
        VpcClient::with_settings_of(&ecs, parse_endpoint(&mock.endpoint()).unwrap()).unwrap();
    let made = || async {
        let vpcs = vpc_api.describe_vpcs(&[], &[]).await.expect("vpcs");
        let switches = vpc_api
            .describe_vswitches(None, None, &[])
            .await
            .expect("vswitches");
        let groups = ecs
            .describe_security_groups(&[], &[])
            .await
            .expect("groups");
        (
            vpcs.iter().filter(|v| !v.is_default).count(),
            switches.iter().filter(|s| !s.is_default).count(),
            groups
                .iter()
                .filter(|g| g.security_group_id != defaults::security_group_id(REGION))
                .count(),
        )
    };
    assert_eq!(
        made().await,
        (1, switches, groups),
        "one of each, no duplicate"
    );
    // Ever created, not only listed now: a duplicate made and deleted again, or not listed
    // yet, would show here.
    let created = || {
        (
            mock.created(ResourceKind::Vpc),
            mock.created(ResourceKind::VSwitch),
            mock.created(ResourceKind::SecurityGroup),
        )
    };
    let expected = (1, switches as u64, groups as u64);
    assert_eq!(
        created(),
        expected,
        "never a duplicate VPC, vSwitch or group"
    );

    // Everything at once, the VPC first.
    delete_all(&vpcs).await;
    delete_all(&vswitches).await;
    delete_all(&security_groups).await;
    delete_all(&instances).await;
    wait_for(&instances, 0, timeout).await;
    wait_for(&security_groups, 0, timeout).await;
    wait_for(&vswitches, 0, timeout).await;
    wait_for(&vpcs, 0, timeout).await;
    let stats = mock.stats();
    assert_eq!(stats.instances_created, n as u64, "{stats:?}");
    assert_eq!(stats.instances_live, 0, "no instance leaked: {stats:?}");
    assert_eq!(made().await, (0, 0, 0), "no network resource leaked");
    assert_eq!(created(), expected, "nothing made again while deleting");
    println!(
        "network stack under faults: 1 VPC, {switches} vSwitches, {groups} groups, {n} instances; {} faults answered; 0 duplicates, 0 leaks",
        stats.errors.values().sum::<u64>()
    );
    daemon.finish().await;
}
