//! The plan against the ECS mock, in process, with local credentials: N named instances cost
//! ceil(N/100) `DescribeInstances` and no write, and each object gets its action; and, ignored
//! by default, the time for 10,000 instances
//! (`cargo test -p ferroplane --bin ferroplane plan_of_ten_thousand -- --ignored --nocapture`).

use std::time::{Duration, Instant};

use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::EcsClient;
use ferroplane_apis::alibabacloud::{ECSInstance, ECSInstanceParameters};
use provider_alibaba::ecs_instance_imported_parameters;
use serde_json::json;

use super::access::CloudAccess;
use super::outcome::Action;
use super::plan_objects;

const REGION: &str = "cn-beijing";

async fn mock() -> (MockServer, EcsClient) {
    let mock = MockServer::start(
        MockConfig::new("LTAIplantest", "plan-test-secret")
            .with_transition_delay(Duration::ZERO)
            .with_visibility_lag(Duration::ZERO),
    )
    .await
    .unwrap();
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new("LTAIplantest", "plan-test-secret"))
        .endpoint(mock.endpoint())
        .build()
        .unwrap();
    (mock, ecs)
}

fn object(name: &str, id: Option<&str>, spec: &ECSInstanceParameters) -> ECSInstance {
    let annotations = id.map_or_else(
        || json!({}),
        |id| json!({ "ferroplane.io/external-name": id }),
    );
    serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ECSInstance",
        "metadata": { "name": name, "namespace": "shop", "annotations": annotations },
        "spec": { "forProvider": spec },
    }))
    .unwrap()
}

/// `count` instances in the mock and an object per instance whose spec matches it.
async fn matching_objects(mock: &MockServer, ecs: &EcsClient, count: usize) -> Vec<ECSInstance> {
    let launch = LaunchSpec::new(
        REGION,
        "centos_7_8_x64_20G_alibase_20200519.vhd",
        "ecs.g6.large",
    )
    .with_default_network();
    let ids = mock
        .create_instances(DEFAULT_ACCOUNT_ID, &launch, count)
        .unwrap();
    let instances = ecs.describe_instances_by_ids(&ids).await.unwrap();
    assert_eq!(instances.len(), count);
    instances
        .iter()
        .enumerate()
        .map(|(n, i)| {
            object(
                &format!("web-{n:05}"),
                Some(&i.instance_id),
                &ecs_instance_imported_parameters(i),
            )
        })
        .collect()
}

/// Calls of every action that is not a read.
fn writes(mock: &MockServer) -> Vec<String> {
    mock.stats()
        .calls
        .into_keys()
        .filter(|a| !a.starts_with("Describe"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_instances_are_read_by_the_hundred_and_each_object_gets_its_action() {
    let (mock, ecs) = mock().await;
    let mut objects = matching_objects(&mock, &ecs, 250).await;
    objects[0].spec.for_provider.instance_name = Some("renamed".into());
    objects[1].spec.for_provider.instance_type = "ecs.g6.xlarge".into();
    objects[3].spec.for_provider.instance_name = Some("renamed while paused".into());
    objects[3]
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("crossplane.io/paused".into(), "true".into());
    let spec = objects[2].spec.for_provider.clone();
    objects.push(object("new", None, &spec));
    objects.push(object("gone", Some("i-notthere"), &spec));
    let cloud = CloudAccess::local_with(REGION, ecs);
    let before = mock.stats().calls_of("DescribeInstances");

    let plans = plan_objects(&objects, None, None, &cloud).await.unwrap();

    assert_eq!(
        mock.stats().calls_of("DescribeInstances") - before,
        3,
        "251 named instances: ceil(251/100) reads"
    );
    assert_eq!(writes(&mock), Vec::<String>::new());
    assert!(mock.ledger().is_empty(), "{:?}", mock.ledger());
    let action = |name: &str| plans.iter().find(|p| p.name == name).unwrap().action;
    assert_eq!(action("web-00000"), Action::UpdateInPlace);
    assert_eq!(action("web-00001"), Action::NeedsRestart);
    assert_eq!(action("new"), Action::Create);
    assert_eq!(action("gone"), Action::Blocked);
    let paused = plans.iter().find(|p| p.name == "web-00003").unwrap();
    assert_eq!(paused.action, Action::NoChange);
    assert_eq!(paused.changes.len(), 1, "{paused:?}");
    assert!(
        paused.note.as_deref().is_some_and(
            |n| n.contains("crossplane.io/paused") && n.ends_with("then: update in place")
        ),
        "{paused:?}"
    );
    let unchanged = plans
        .iter()
        .filter(|p| p.action == Action::NoChange)
        .count();
    assert_eq!(unchanged, 248);
    let create = plans.iter().find(|p| p.name == "new").unwrap();
    assert_eq!(
        create.launch.as_ref().unwrap().instance_type,
        "ecs.g6.large"
    );
    mock.shutdown().await;
}

/// Not a test of behaviour but a figure: a plan of 10,000 matching instances.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a timing: run by hand with --ignored --nocapture"]
async fn plan_of_ten_thousand_instances() {
    let (mock, ecs) = mock().await;
    let objects = matching_objects(&mock, &ecs, 10_000).await;
    let cloud = CloudAccess::local_with(REGION, ecs);
    let before = mock.stats().calls_of("DescribeInstances");
    let started = Instant::now();
    let plans = plan_objects(&objects, None, None, &cloud).await.unwrap();
    let elapsed = started.elapsed();
    let reads = mock.stats().calls_of("DescribeInstances") - before;
    println!(
        "planned {} ECSInstances in {:.1}s with {reads} DescribeInstances calls; writes: {:?}",
        plans.len(),
        elapsed.as_secs_f64(),
        writes(&mock)
    );
    assert!(plans.iter().all(|p| p.action == Action::NoChange));
    assert_eq!(reads, 100);
    assert!(writes(&mock).is_empty());
    mock.shutdown().await;
}
