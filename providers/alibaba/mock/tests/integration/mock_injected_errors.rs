//! ECS error codes the mock answers only when asked (scripted per action and for N calls) or by
//! a real rule, seen through alibaba-sdk's client: their HTTP status and code, which the client
//! retries (throttling) and how it classifies the rest.

use std::time::Duration;

use alibaba_mock::{ErrorInjection, MockConfig, MockServer};
use alibaba_sdk::Error;
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::{EcsClient, RunInstancesRequest};
use alibaba_sdk::rpc::RetryPolicy;

const AK: &str = "inject-ak";
const SK: &str = "inject-secret";

async fn mock(delay: Duration) -> MockServer {
    MockServer::start(MockConfig::new(AK, SK).with_transition_delay(delay))
        .await
        .expect("mock starts")
}

fn client(mock: &MockServer) -> EcsClient {
    EcsClient::builder("cn-hangzhou")
        .endpoint(mock.endpoint())
        .credentials(Credentials::new(AK, SK))
        .retry(RetryPolicy {
            max_attempts: 5,
            min_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_elapsed: Duration::from_secs(10),
        })
        .build()
        .unwrap()
}

async fn launch(client: &EcsClient) -> String {
    let request = RunInstancesRequest {
        image_id: "centos_7_8_x64_20G_alibase_20200519.vhd".into(),
        instance_type: "ecs.g6.large".into(),
        vswitch_id: alibaba_mock::defaults::first_vswitch_id("cn-hangzhou"),
        security_group_ids: vec![alibaba_mock::defaults::security_group_id("cn-hangzhou")],
        ..RunInstancesRequest::default()
    };
    client.run_instances(&request).await.unwrap().instance_ids()[0].clone()
}

fn api_error(result: Result<impl std::fmt::Debug, Error>) -> Error {
    let error = result.expect_err("the injected error is answered");
    assert!(error.api().is_some(), "{error}");
    error
}

#[tokio::test]
async fn bare_throttling_and_api_throttling_are_retried_with_backoff() {
    let mock = mock(Duration::ZERO).await;
    let client = client(&mock);
    for code in ["Throttling", "Throttling.Api"] {
        mock.inject_error(ErrorInjection::new(code, Some("DescribeRegions"), 2))
            .unwrap();
        let before = mock.stats().calls_of("DescribeRegions");
        assert!(
            !client.describe_regions().await.unwrap().is_empty(),
            "{code}"
        );
        assert_eq!(
            mock.stats().calls_of("DescribeRegions") - before,
            3,
            "{code}"
        );
        assert_eq!(mock.stats().errors_of(code), 2, "{code}");
    }
}

#[tokio::test]
async fn permission_and_billing_errors_fail_at_once_with_their_status() {
    let mock = mock(Duration::ZERO).await;
    let client = client(&mock);
    let id = launch(&client).await;

    mock.inject_error(ErrorInjection::new(
        "Forbidden.RAM",
        Some("StopInstance"),
        1,
    ))
    .unwrap();
    let e = api_error(client.stop_instance(&id, false, None).await);
    let api = e.api().unwrap();
    assert_eq!((api.http_status, api.code.as_str()), (403, "Forbidden.RAM"));
    assert_eq!(api.action, "StopInstance", "names the missing permission");
    assert!(e.is_forbidden() && e.is_ram_denied() && !e.is_retryable());
    assert_eq!(mock.stats().calls_of("StopInstance"), 1, "not retried");

    mock.inject_error(ErrorInjection::new(
        "ChargeTypeViolation",
        Some("DeleteInstance"),
        1,
    ))
    .unwrap();
    let e = api_error(client.delete_instance(&id, true).await);
    assert_eq!(e.http_status(), Some(403));
    assert!(e.is_charge_type_violation() && !e.is_retryable() && !e.is_not_found());
    assert_eq!(mock.instances().len(), 1, "nothing released");
}

#[tokio::test]
async fn forbidden_instance_not_found_reads_as_gone() {
    let mock = mock(Duration::ZERO).await;
    let client = client(&mock);
    let id = launch(&client).await;
    mock.inject_error(ErrorInjection::new(
        "Forbidden.InstanceNotFound",
        Some("DescribeInstanceAttribute"),
        1,
    ))
    .unwrap();
    let e = api_error(client.describe_instance_attribute(&id).await);
    assert_eq!(e.http_status(), Some(403));
    assert!(e.is_instance_not_found() && e.is_not_found() && !e.is_forbidden());
    // The injection is used up: the next call is processed.
    assert_eq!(
        client
            .describe_instance_attribute(&id)
            .await
            .unwrap()
            .instance_id,
        id
    );
}

#[tokio::test]
async fn conflicts_and_initializing_are_transient_wrong_states() {
    let mock = mock(Duration::from_secs(30)).await;
    let client = client(&mock);
    let id = launch(&client).await;
    assert_eq!(mock.instance_status(&id).as_deref(), Some("Pending"));

    // Real rule: ECS refuses to release an instance that is still initializing.
    let e = api_error(client.delete_instance(&id, true).await);
    let api = e.api().unwrap();
    assert_eq!(
        (api.http_status, api.code.as_str()),
        (403, "IncorrectInstanceStatus.Initializing")
    );
    assert!(e.is_wrong_state());
    assert_eq!(mock.instances().len(), 1);

    mock.inject_error(ErrorInjection::new("OperationConflict", None, 1))
        .unwrap();
    let e = api_error(client.describe_instance_attribute(&id).await);
    assert_eq!(e.http_status(), Some(409));
    assert!(e.is_wrong_state() && !e.is_retryable());
    client.describe_instance_attribute(&id).await.unwrap();
}

#[tokio::test]
async fn errors_are_scripted_over_http_and_unknown_codes_refused() {
    let mock = mock(Duration::ZERO).await;
    let http = reqwest::Client::new();
    let url = format!("{}/_mock/errors", mock.endpoint());
    let refused = http
        .post(&url)
        .body(r#"{"code":"NoSuchCode"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("Forbidden.RAM"));
    let pending: serde_json::Value = http
        .post(&url)
        .body(r#"{"code":"Throttling.Api","action":"DescribeRegions","times":3}"#)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(pending[0]["times"], 3);
    let client = client(&mock);
    client.describe_regions().await.unwrap();
    assert_eq!(mock.stats().errors_of("Throttling.Api"), 3);
    let pending: serde_json::Value = http.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(pending, serde_json::json!([]));
}
