//! The production client against the ECS mock: every typed call, V1 (POST and GET) and V3,
//! STS credentials, injected throttling and 5xx being retried until they succeed, and bad
//! credentials failing fast.

use std::sync::Arc;
use std::time::Duration;

use alibaba_mock::{DEFAULT_ACCOUNT_ID, Faults, LaunchSpec, MockConfig, MockServer};
use alibaba_sdk::credentials::{Credentials, OidcRoleProvider, RamRoleArnProvider};
use alibaba_sdk::ecs::{
    DescribeInstancesRequest, EcsClient, ModifyInstanceAttributeRequest, ModifyInstanceSpecRequest,
    RunInstancesRequest, StoppedMode, Tag,
};
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::rpc::{
    ClientConfig, HttpMethod, Params, QUOTA_EVIDENCE, RetryPolicy, SAFETY, SignatureVersion,
};
use ferroplane_testkit::eventually;

const AK: &str = "client-ak";
const SK: &str = "client-secret";
const REGION: &str = "cn-hangzhou";
const IMAGE: &str = "centos_7_8_x64_20G_alibase_20200519.vhd";
const TYPE: &str = "ecs.g6.large";

async fn mock() -> MockServer {
    MockServer::start(MockConfig::new(AK, SK).with_transition_delay(Duration::ZERO))
        .await
        .expect("mock starts")
}

fn retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 8,
        min_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(100),
        max_elapsed: Duration::from_secs(20),
    }
}

fn client(mock: &MockServer, signature: SignatureVersion, method: HttpMethod) -> EcsClient {
    EcsClient::builder(REGION)
        .endpoint(mock.endpoint())
        .credentials(Credentials::new(AK, SK))
        .signature(signature)
        .method(method)
        .retry(retries())
        .build()
        .unwrap()
}

fn run_request(name: &str) -> RunInstancesRequest {
    RunInstancesRequest {
        image_id: IMAGE.into(),
        instance_type: TYPE.into(),
        instance_name: Some(name.into()),
        internet_max_bandwidth_out: Some(5),
        tags: vec![Tag::new("ferroplane.io/uid", name)],
        vswitch_id: alibaba_mock::defaults::first_vswitch_id(REGION),
        security_group_ids: vec![alibaba_mock::defaults::security_group_id(REGION)],
        ..RunInstancesRequest::default()
    }
}

async fn lifecycle(client: &EcsClient, mock: &MockServer) {
    // Create, idempotently.
    let request = RunInstancesRequest {
        client_token: Some(format!("token-{}", uuid::Uuid::new_v4())),
        ..run_request("web-1")
    };
    let created = client.run_instances(&request).await.unwrap();
    let id = created.instance_ids()[0].clone();
    let again = client.run_instances(&request).await.unwrap();
    assert_eq!(again.instance_ids(), created.instance_ids());
    let mismatch = client
        .run_instances(&RunInstancesRequest {
            instance_type: "ecs.g6.xlarge".into(),
            ..request.clone()
        })
        .await
        .unwrap_err();
    assert!(mismatch.is_idempotent_mismatch(), "{mismatch}");

    // Observe.
    let found = client
        .describe_instances_by_ids(std::slice::from_ref(&id))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].instance_name, "web-1");
    assert_eq!(found[0].tag("ferroplane.io/uid"), Some("web-1"));
    assert!(found[0].creation_time.is_some());
    assert!(found[0].public_ip().is_some());
    assert!(found[0].private_ip().is_some());
    let attribute = client.describe_instance_attribute(&id).await.unwrap();
    assert_eq!(attribute.instance_id, id);
    assert_eq!(attribute.status, "Running");

    // Power state.
    client
        .stop_instance(&id, false, Some(StoppedMode::KeepCharging))
        .await
        .unwrap();
    assert_eq!(mock.instance_status(&id).as_deref(), Some("Stopped"));
    let wrong = client.reboot_instance(&id, false).await.unwrap_err();
    assert!(wrong.is_wrong_state(), "{wrong}");
    client
        .modify_instance_spec(&ModifyInstanceSpecRequest {
            instance_id: id.clone(),
            instance_type: Some("ecs.g6.xlarge".into()),
            ..ModifyInstanceSpecRequest::default()
        })
        .await
        .unwrap();
    client.start_instance(&id).await.unwrap();
    client.reboot_instance(&id, false).await.unwrap();
    let after = client.describe_instance_attribute(&id).await.unwrap();
    assert_eq!(after.instance_type, "ecs.g6.xlarge");
    assert_eq!(after.status, "Running");

    // Attributes and tags.
    client
        .modify_instance_attribute(&ModifyInstanceAttributeRequest {
            instance_id: id.clone(),
            instance_name: Some("web-renamed".into()),
            description: Some("described".into()),
            deletion_protection: Some(true),
            ..ModifyInstanceAttributeRequest::default()
        })
        .await
        .unwrap();
    client
        .tag_resources(
            std::slice::from_ref(&id),
            &[Tag::new("env", "dev"), Tag::new("team", "a")],
        )
        .await
        .unwrap();
    client
        .untag_resources(std::slice::from_ref(&id), &["team".to_owned()])
        .await
        .unwrap();
    let mut tags: Vec<(String, String)> = client
        .list_tag_resources(std::slice::from_ref(&id))
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.tag_key, t.tag_value))
        .collect();
    tags.sort();
    assert_eq!(
        tags,
        [
            ("env".to_owned(), "dev".to_owned()),
            ("ferroplane.io/uid".to_owned(), "web-1".to_owned())
        ]
    );
    let described = client.describe_instance_attribute(&id).await.unwrap();
    assert_eq!(described.instance_name, "web-renamed");
    assert!(described.deletion_protection);

    // Delete: protection first, then forced delete of a running instance.
    let protected = client.delete_instance(&id, true).await.unwrap_err();
    assert!(protected.is_deletion_protection(), "{protected}");
    client
        .modify_instance_attribute(&ModifyInstanceAttributeRequest {
            instance_id: id.clone(),
            deletion_protection: Some(false),
            ..ModifyInstanceAttributeRequest::default()
        })
        .await
        .unwrap();
    client.delete_instance(&id, true).await.unwrap();
    assert!(
        client
            .describe_instances_by_ids(std::slice::from_ref(&id))
            .await
            .unwrap()
            .is_empty()
    );
    let gone = client.describe_instance_attribute(&id).await.unwrap_err();
    assert!(
        gone.is_instance_not_found() && gone.is_not_found(),
        "{gone}"
    );

    // DeleteInstances on a fresh pair.
    let pair = client
        .run_instances(&RunInstancesRequest {
            amount: Some(2),
            ..run_request("pair")
        })
        .await
        .unwrap();
    assert_eq!(pair.instance_ids().len(), 2);
    client
        .delete_instances(pair.instance_ids(), true, None)
        .await
        .unwrap();
    assert!(
        client
            .describe_instances_by_ids(pair.instance_ids())
            .await
            .unwrap()
            .is_empty()
    );

    let regions = client.describe_regions().await.unwrap();
    assert!(regions.iter().any(|r| r.region_id == REGION));
}

#[tokio::test]
async fn every_call_with_v1_post() {
    let mock = mock().await;
    lifecycle(
        &client(&mock, SignatureVersion::V1, HttpMethod::Post),
        &mock,
    )
    .await;
}

#[tokio::test]
async fn every_call_with_v1_get() {
    let mock = mock().await;
    lifecycle(&client(&mock, SignatureVersion::V1, HttpMethod::Get), &mock).await;
}

#[tokio::test]
async fn every_call_with_v3() {
    let mock = mock().await;
    lifecycle(
        &client(&mock, SignatureVersion::V3, HttpMethod::Post),
        &mock,
    )
    .await;
}

#[tokio::test]
async fn describe_instances_batches_by_100_and_follows_every_page() {
    let mock = mock().await;
    let spec = LaunchSpec::new(REGION, IMAGE, TYPE).with_default_network();
    let ids = mock
        .create_instances(DEFAULT_ACCOUNT_ID, &spec, 250)
        .unwrap();
    let client = client(&mock, SignatureVersion::V1, HttpMethod::Post);

    let mut wanted = ids.clone();
    wanted.push("i-doesnotexist000000".into());
    let found = client.describe_instances_by_ids(&wanted).await.unwrap();
    assert_eq!(found.len(), 250, "unknown IDs are simply absent");
    assert_eq!(
        mock.stats().calls_of("DescribeInstances"),
        3,
        "251 IDs → 3 batches"
    );

    let all = client
        .describe_instances(&DescribeInstancesRequest {
            max_results: Some(40),
            ..DescribeInstancesRequest::default()
        })
        .await
        .unwrap();
    let mut all_ids: Vec<String> = all.into_iter().map(|i| i.instance_id).collect();
    all_ids.sort();
    let mut expected = ids;
    expected.sort();
    assert_eq!(all_ids, expected, "every page, no duplicates");
    assert_eq!(
        mock.stats().calls_of("DescribeInstances"),
        3 + 7,
        "250 / 40 → 7 pages"
    );
}

#[tokio::test]
async fn injected_throttling_is_retried_until_it_succeeds() {
    let mock = mock().await;
    let client = client(&mock, SignatureVersion::V1, HttpMethod::Post);
    mock.set_faults(Faults {
        throttle_rate: 1.0,
        retry_after_ms: Some(150),
        ..Faults::default()
    })
    .unwrap();
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.describe_regions().await }
    });
    eventually("two throttled answers")
        .within(Duration::from_secs(10))
        .until(|| mock.stats().errors_of("Throttling.User") >= 2)
        .await;
    assert!(
        !call.is_finished(),
        "the call ended while every answer was throttled"
    );
    mock.set_faults(Faults::default()).unwrap();
    let regions = call.await.unwrap().unwrap();
    assert!(!regions.is_empty());
    assert!(
        mock.stats().calls_of("DescribeRegions") >= 3,
        "retried past the throttling"
    );

    // A create under throttling still makes exactly one instance.
    mock.set_faults(Faults {
        throttle_rate: 1.0,
        ..Faults::default()
    })
    .unwrap();
    let throttled = mock.stats().errors_of("Throttling.User");
    let create = tokio::spawn({
        let client = client.clone();
        async move { client.run_instances(&run_request("throttled")).await }
    });
    eventually("RunInstances throttled")
        .within(Duration::from_secs(10))
        .until(|| mock.stats().errors_of("Throttling.User") > throttled)
        .await;
    mock.set_faults(Faults::default()).unwrap();
    create.await.unwrap().unwrap();
    assert!(
        mock.stats().calls_of("RunInstances") >= 2,
        "the create was retried"
    );
    assert_eq!(mock.stats().instances_created, 1);
}

#[tokio::test]
async fn a_spent_quota_makes_the_client_pace_that_action() {
    let mock = mock().await;
    let client = EcsClient::builder(REGION)
        .endpoint(mock.endpoint())
        .credentials(Credentials::new(AK, SK))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let rpc = client.rpc().clone();
    let call = || {
        let rpc = rpc.clone();
        async move {
            rpc.call_json_in::<serde_json::Value>(REGION, "DescribeRegions", &Params::new())
                .await
        }
    };
    for _ in 0..30 {
        call().await.expect("passes");
    }
    // The quota runs out: every call in flight is refused.
    mock.set_faults(Faults {
        throttle_rate: 1.0,
        ..Faults::default()
    })
    .unwrap();
    let refused = futures::future::join_all((0..QUOTA_EVIDENCE).map(|_| call())).await;
    assert!(
        refused
            .iter()
            .all(|r| r.as_ref().is_err_and(|e| e.is_throttling()))
    );
    mock.set_faults(Faults::default()).unwrap();
    // The next call is the lane's probe, sent after its pause; it passes and the lane learns
    // the rate that passed in the minute before.
    call().await.expect("the probe passes");
    let rate = rpc
        .paced_rate(REGION, "DescribeRegions")
        .expect("the action is paced");
    assert!((rate - 30.0 / 60.0 * SAFETY).abs() < 1e-9, "{rate}");
    assert_eq!(
        mock.stats().errors_of("Throttling.User"),
        u64::from(QUOTA_EVIDENCE),
        "no call but the refused ones was throttled"
    );
    assert_eq!(rpc.paced_rate(REGION, "DescribeInstances"), None);
}

#[tokio::test]
async fn injected_server_errors_are_retried_until_they_succeed() {
    let mock = mock().await;
    let client = client(&mock, SignatureVersion::V3, HttpMethod::Post);
    mock.set_faults(Faults {
        error_rate: 1.0,
        ..Faults::default()
    })
    .unwrap();
    let create = tokio::spawn({
        let client = client.clone();
        async move { client.run_instances(&run_request("flaky")).await }
    });
    eventually("RunInstances answered ServiceUnavailable")
        .within(Duration::from_secs(10))
        .until(|| mock.stats().errors_of("ServiceUnavailable") >= 1)
        .await;
    mock.set_faults(Faults::default()).unwrap();
    let created = create.await.unwrap().unwrap();
    assert_eq!(created.instance_ids().len(), 1);
    assert!(
        mock.stats().calls_of("RunInstances") >= 2,
        "the create was retried"
    );
    assert_eq!(
        mock.stats().instances_created,
        1,
        "a retried create is not a second instance"
    );

    // Retries give up after the configured attempts.
    mock.set_faults(Faults {
        error_rate: 1.0,
        ..Faults::default()
    })
    .unwrap();
    let before = mock.stats().calls_of("DescribeRegions");
    let error = client.describe_regions().await.unwrap_err();
    assert_eq!(error.code(), Some("ServiceUnavailable"));
    assert_eq!(mock.stats().calls_of("DescribeRegions") - before, 8);
}

#[tokio::test]
async fn bad_credentials_fail_fast() {
    let mock = mock().await;
    let with = |credentials: Credentials| {
        EcsClient::builder(REGION)
            .endpoint(mock.endpoint())
            .credentials(credentials)
            .retry(retries())
            .build()
            .unwrap()
    };
    let error = with(Credentials::new(AK, "wrong-secret"))
        .describe_regions()
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some("SignatureDoesNotMatch"));
    assert!(error.is_bad_credentials() && !error.is_retryable());
    assert!(!error.to_string().contains("wrong-secret"));
    let error = with(Credentials::new("unknown-ak", SK))
        .describe_regions()
        .await
        .unwrap_err();
    assert!(
        error.code().unwrap().starts_with("InvalidAccessKeyId"),
        "{error}"
    );
    assert!(error.is_bad_credentials());
    mock.set_access_key_enabled(AK, false);
    let error = with(Credentials::new(AK, SK))
        .describe_regions()
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some("InvalidAccessKeyId.Inactive"));
    assert_eq!(
        mock.stats().calls_of("DescribeRegions"),
        3,
        "one attempt each"
    );
}

#[tokio::test]
async fn sts_credentials_from_the_mock_work_for_ecs_calls() {
    let mock = mock().await;
    let endpoint = parse_endpoint(&mock.endpoint()).unwrap();
    let role = format!("acs:ram::{DEFAULT_ACCOUNT_ID}:role/ferroplane");
    let ram_role = RamRoleArnProvider::with_config(
        endpoint.clone(),
        Arc::new(Credentials::new(AK, SK)),
        role.clone(),
        ClientConfig::default(),
    )
    .unwrap()
    .session_name("ferroplane-test");
    for signature in [SignatureVersion::V1, SignatureVersion::V3] {
        let client = EcsClient::builder(REGION)
            .endpoint(mock.endpoint())
            .credentials(ram_role.clone())
            .signature(signature)
            .build()
            .unwrap();
        let created = client.run_instances(&run_request("via-sts")).await.unwrap();
        let found = client
            .describe_instances_by_ids(created.instance_ids())
            .await
            .unwrap();
        assert_eq!(found.len(), 1);
        assert!(
            client
                .describe_instances_by_ids(&[])
                .await
                .unwrap()
                .is_empty()
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln").unwrap();
    let oidc = OidcRoleProvider::new(
        endpoint,
        role,
        format!("acs:ram::{DEFAULT_ACCOUNT_ID}:oidc-provider/ack-rrsa"),
        &token_file,
        ClientConfig::default(),
    )
    .unwrap();
    let client = EcsClient::builder(REGION)
        .endpoint(mock.endpoint())
        .credentials(oidc)
        .build()
        .unwrap();
    let listed = client
        .describe_instances(&DescribeInstancesRequest::default())
        .await
        .unwrap();
    assert_eq!(
        listed.len(),
        2,
        "both instances created through AssumeRole are visible"
    );
}

#[tokio::test]
async fn a_create_whose_answer_is_lost_is_retried_without_a_second_instance() {
    let mock = mock().await;
    let client = EcsClient::builder(REGION)
        .endpoint(mock.endpoint())
        .credentials(Credentials::new(AK, SK))
        .request_timeout(Duration::from_millis(150))
        .retry(retries())
        .build()
        .unwrap();
    mock.set_faults(Faults {
        latency: Duration::from_millis(400),
        ..Faults::default()
    })
    .unwrap();
    let create = tokio::spawn({
        let client = client.clone();
        async move { client.run_instances(&run_request("lost-answer")).await }
    });
    // Each attempt's answer comes after the client gave up on it: the create is retried.
    eventually("a retried RunInstances")
        .within(Duration::from_secs(10))
        .until(|| mock.stats().calls_of("RunInstances") >= 2)
        .await;
    mock.set_faults(Faults::default()).unwrap();
    let created = create.await.unwrap().unwrap();
    assert_eq!(created.instance_ids().len(), 1);
    assert!(
        mock.stats().calls_of("RunInstances") >= 2,
        "the first attempts timed out and were retried"
    );
    assert_eq!(mock.stats().instances_created, 1);
    assert_eq!(mock.instances().len(), 1);
}
