//! The ECS client's transport against scripted local servers: request shape and signatures,
//! retries (which errors, new nonce per attempt, `x-acs-retry-after`, bounds), error parsing and
//! transport failures.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::client_support::{Recorded, Reply, RetryLog, ScriptServer};
use alibaba_sdk::Error;
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::{EcsClient, EcsClientBuilder, RunInstancesRequest};
use alibaba_sdk::rpc::{HttpMethod, Params, RetryPolicy, SignatureVersion};
use alibaba_sdk::signature::{v1, v3};

const AK: &str = "test-ak";
const SK: &str = "test-secret-key";

fn fast_retries(max_attempts: usize) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        min_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_elapsed: Duration::from_secs(10),
    }
}

fn client(server: &ScriptServer) -> EcsClient {
    client_with(server, |b| b)
}

fn client_with(
    server: &ScriptServer,
    configure: impl FnOnce(EcsClientBuilder) -> EcsClientBuilder,
) -> EcsClient {
    configure(
        EcsClient::builder("cn-beijing")
            .endpoint(server.url())
            .credentials(Credentials::new(AK, SK))
            .retry(fast_retries(4)),
    )
    .build()
    .unwrap()
}

/// A client retrying up to 10 times within `budget` in total.
fn client_with_budget(server: &ScriptServer, budget: Duration) -> EcsClient {
    client_with(server, |b| {
        b.retry(RetryPolicy {
            max_elapsed: budget,
            ..fast_retries(10)
        })
    })
}

fn v1_signature_ok(request: &Recorded, secret: &str) -> bool {
    let params = request.all_params();
    let expected = v1::sign(
        secret,
        &v1::string_to_sign(request.method.as_str(), &params),
    );
    params.get("Signature") == Some(&expected)
}

fn v3_signature_ok(request: &Recorded, secret: &str) -> bool {
    let Some(auth) = request
        .header("authorization")
        .and_then(v3::parse_authorization)
    else {
        return false;
    };
    let signed: BTreeMap<String, String> = auth
        .signed_headers
        .iter()
        .map(|name| {
            (
                name.clone(),
                request.header(name).unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let canonical = v3::canonical_request(
        request.method.as_str(),
        &request.path,
        &request.query,
        &signed,
        &v3::hashed_payload(&request.body),
    );
    auth.signature == v3::sign(secret, &v3::string_to_sign(&canonical))
}

const REGIONS: &str = r#"{"RequestId":"R-1","Regions":{"Region":[{"RegionId":"cn-beijing","LocalName":"Beijing","RegionEndpoint":"ecs.cn-beijing.aliyuncs.com","Status":"available"}]}}"#;

#[tokio::test]
async fn v1_post_sends_common_parameters_in_the_query_and_business_ones_in_the_form() {
    let server = ScriptServer::start(|req, _| {
        if v1_signature_ok(req, SK) {
            Reply::ok(REGIONS)
        } else {
            Reply::error(400, "SignatureDoesNotMatch", "bad signature")
        }
    })
    .await;
    let regions = client(&server).describe_regions().await.unwrap();
    assert_eq!(regions[0].region_id, "cn-beijing");
    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.query["Action"], "DescribeRegions");
    assert_eq!(req.query["Version"], "2014-05-26");
    assert_eq!(req.query["Format"], "JSON");
    assert_eq!(req.query["AccessKeyId"], AK);
    assert_eq!(req.query["SignatureMethod"], "HMAC-SHA1");
    assert_eq!(req.form["RegionId"], "cn-beijing");
    assert!(!req.query.contains_key("RegionId"));
    assert!(req.header("user-agent").unwrap().starts_with("ferroplane/"));
}

#[tokio::test]
async fn v1_get_puts_everything_in_the_query() {
    let server = ScriptServer::start(|req, _| {
        if v1_signature_ok(req, SK) && req.form.is_empty() {
            Reply::ok(REGIONS)
        } else {
            Reply::error(400, "SignatureDoesNotMatch", "bad signature")
        }
    })
    .await;
    let client = client_with(&server, |b| b.method(HttpMethod::Get));
    let mut params = Params::new();
    params.set("InstanceName", "中文 name*~");
    client.call("DescribeRegions", &params).await.unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.method, "GET");
    assert_eq!(req.query["InstanceName"], "中文 name*~");
    assert!(req.raw_query.contains("%20name%2A~"), "{}", req.raw_query);
}

#[tokio::test]
async fn v3_signs_headers_and_sends_parameters_in_the_query() {
    let server = ScriptServer::start(|req, _| {
        if v3_signature_ok(req, SK) {
            Reply::ok(REGIONS)
        } else {
            Reply::error(400, "SignatureDoesNotMatch", "bad signature")
        }
    })
    .await;
    let client = client_with(&server, |b| {
        b.signature(SignatureVersion::V3)
            .credentials(Credentials::new(AK, SK).with_security_token("sts-token-123"))
    });
    client.describe_regions().await.unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.header("x-acs-action"), Some("DescribeRegions"));
    assert_eq!(req.header("x-acs-version"), Some("2014-05-26"));
    assert_eq!(req.header("x-acs-security-token"), Some("sts-token-123"));
    assert_eq!(req.query["RegionId"], "cn-beijing");
    let auth = v3::parse_authorization(req.header("authorization").unwrap()).unwrap();
    assert_eq!(auth.access_key_id, AK);
    assert!(auth.signed_headers.contains(&"host".to_owned()));
}

#[tokio::test]
async fn throttling_is_retried_with_a_new_nonce_and_honours_retry_after() {
    let server = ScriptServer::start(|_, n| match n {
        0 | 1 => Reply::error(
            400,
            "Throttling.User",
            "Request was denied due to user flow control.",
        )
        .header("x-acs-retry-after", "150"),
        _ => Reply::ok(REGIONS),
    })
    .await;
    let (retries, _capture) = RetryLog::capture();
    let started = Instant::now();
    client(&server).describe_regions().await.unwrap();
    // The backoff alone proposes at most 20 ms; each wait is the server's 150 ms.
    assert_eq!(retries.delays(), [Duration::from_millis(150); 2]);
    // A wait is never shorter than asked, however loaded the machine.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let nonces: std::collections::HashSet<_> = requests
        .iter()
        .map(|r| r.query["SignatureNonce"].clone())
        .collect();
    assert_eq!(nonces.len(), 3, "every attempt needs a fresh nonce");
    assert!(requests.iter().all(|r| v1_signature_ok(r, SK)));
}

#[tokio::test]
async fn server_errors_nonce_reuse_and_token_processing_are_retried() {
    for (status, code) in [
        (500, "InternalError"),
        (503, "ServiceUnavailable"),
        (400, "SignatureNonceUsed"),
        (403, "LastTokenProcessing"),
    ] {
        let server = ScriptServer::start(move |_, n| {
            if n == 0 {
                Reply::error(status, code, "transient")
            } else {
                Reply::ok(REGIONS)
            }
        })
        .await;
        client(&server).describe_regions().await.unwrap();
        assert_eq!(server.count(), 2, "{code}");
    }
}

#[tokio::test]
async fn client_errors_fail_fast_with_code_message_request_id_and_status() {
    for (status, code, predicate) in [
        (
            404,
            "InvalidAccessKeyId.NotFound",
            Error::is_bad_credentials as fn(&Error) -> bool,
        ),
        (400, "SignatureDoesNotMatch", Error::is_bad_credentials),
        (404, "InvalidInstanceId.NotFound", Error::is_not_found),
        (403, "IncorrectInstanceStatus", Error::is_wrong_state),
        (403, "OperationDenied.NoStock", Error::is_quota_or_stock),
        (
            403,
            "InvalidOperation.DeletionProtection",
            Error::is_deletion_protection,
        ),
        (
            400,
            "IdempotentParameterMismatch",
            Error::is_idempotent_mismatch,
        ),
    ] {
        let server = ScriptServer::start(move |_, _| Reply::error(status, code, "explained")).await;
        let error = client(&server).describe_regions().await.unwrap_err();
        assert_eq!(server.count(), 1, "{code} must not be retried");
        assert!(predicate(&error), "{code}: {error}");
        let api = error.api().unwrap();
        assert_eq!(api.code, code);
        assert_eq!(api.http_status, status);
        // Signature codes get a hint after the server's message.
        assert!(
            api.message.starts_with("explained"),
            "{code}: {}",
            api.message
        );
        assert_eq!(
            api.request_id.as_deref(),
            Some("6D2C4B1A-0000-4000-8000-000000000001")
        );
        assert!(!error.is_retryable());
    }
}

#[tokio::test]
async fn retries_are_bounded_in_attempts() {
    let server = ScriptServer::start(|_, _| Reply::error(503, "ServiceUnavailable", "down")).await;
    let error = client(&server).describe_regions().await.unwrap_err();
    assert_eq!(server.count(), 4);
    assert_eq!(error.code(), Some("ServiceUnavailable"));
}

#[tokio::test]
async fn retries_are_bounded_in_total_time() {
    let server = ScriptServer::start(|_, _| {
        Reply::error(400, "Throttling", "slow down").header("x-acs-retry-after", "5000")
    })
    .await;
    let client = client_with_budget(&server, Duration::from_secs(1));
    let (retries, _capture) = RetryLog::capture();
    let error = client.describe_regions().await.unwrap_err();
    assert!(error.is_throttling());
    assert_eq!(error.retry_after(), Some(Duration::from_secs(5)));
    assert_eq!(server.count(), 1, "a 5 s wait does not fit a 1 s budget");
    assert_eq!(
        retries.delays(),
        [],
        "the client scheduled a wait it could not afford before giving up"
    );
}

#[tokio::test]
async fn a_retry_that_fits_the_budget_waits_what_the_server_asked() {
    let server = ScriptServer::start(|_, n| {
        if n == 0 {
            Reply::error(400, "Throttling", "slow down").header("x-acs-retry-after", "200")
        } else {
            Reply::ok(REGIONS)
        }
    })
    .await;
    let client = client_with_budget(&server, Duration::from_secs(30));
    let (retries, _capture) = RetryLog::capture();
    client.describe_regions().await.unwrap();
    assert_eq!(server.count(), 2);
    assert_eq!(retries.delays(), [Duration::from_millis(200)]);
}

#[tokio::test]
async fn a_retried_create_sends_the_same_client_token() {
    let server = ScriptServer::start(|_, n| {
        if n < 2 {
            Reply::error(503, "ServiceUnavailable", "busy")
        } else {
            Reply::ok(r#"{"RequestId":"R","InstanceIdSets":{"InstanceIdSet":["i-new"]}}"#)
        }
    })
    .await;
    let request = RunInstancesRequest {
        image_id: "img-1".into(),
        instance_type: "ecs.g7.large".into(),
        ..RunInstancesRequest::default()
    };
    let response = client(&server).run_instances(&request).await.unwrap();
    assert_eq!(response.instance_ids(), ["i-new"]);
    let tokens: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.param("ClientToken").unwrap().to_owned())
        .collect();
    assert_eq!(tokens.len(), 3);
    assert!(tokens.iter().all(|t| t == &tokens[0] && !t.is_empty()));

    let given = RunInstancesRequest {
        client_token: Some("caller-token-1".into()),
        ..request
    };
    let server = ScriptServer::start(|_, _| {
        Reply::ok(r#"{"RequestId":"R","InstanceIdSets":{"InstanceIdSet":["i-1"]}}"#)
    })
    .await;
    client(&server).run_instances(&given).await.unwrap();
    assert_eq!(
        server.requests()[0].param("ClientToken"),
        Some("caller-token-1")
    );
}

#[tokio::test]
async fn connection_refused_is_a_retryable_connect_error_with_actionable_text() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = EcsClient::builder("cn-beijing")
        .endpoint(format!("http://{addr}"))
        .credentials(Credentials::new(AK, SK))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = client.describe_regions().await.unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
    assert!(error.is_retryable());
    let text = error.to_string();
    assert!(
        text.contains(&addr.to_string()) && text.contains("check the endpoint"),
        "{text}"
    );
    assert!(
        !text.contains("Signature"),
        "no URL with query in the message: {text}"
    );
}

#[tokio::test]
async fn a_slow_server_is_a_timeout() {
    let server =
        ScriptServer::start(|_, _| Reply::ok(REGIONS).delayed(Duration::from_secs(3))).await;
    let client = client_with(&server, |b| {
        b.request_timeout(Duration::from_millis(200))
            .retry(RetryPolicy::none())
    });
    let error = client.describe_regions().await.unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    assert!(
        error.to_string().contains("timed out after 200ms"),
        "{error}"
    );
}

#[tokio::test]
async fn bodies_that_are_not_the_documented_json_are_errors() {
    let server = ScriptServer::start(|_, n| match n {
        0 => Reply::ok("<?xml version=\"1.0\"?><DescribeRegionsResponse/>"),
        1 => Reply::ok(r#"{"RequestId":"R-9","Regions":{"Region":"not-a-list"}}"#),
        _ => Reply::json(502, "<html>Bad Gateway</html>"),
    })
    .await;
    let client = client_with(&server, |b| b.retry(RetryPolicy::none()));
    let error = client.describe_regions().await.unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error}");
    let error = client.describe_regions().await.unwrap_err();
    assert_eq!(error.request_id(), Some("R-9"));
    let error = client.describe_regions().await.unwrap_err();
    assert_eq!(error.http_status(), Some(502));
    assert!(error.is_retryable());
}

#[tokio::test]
async fn the_security_token_never_reaches_an_error_message() {
    let token = "sts-token/abc+==";
    let server = ScriptServer::start(|req, _| {
        let to_sign = v1::string_to_sign(req.method.as_str(), &req.all_params());
        Reply::error(
            400,
            "SignatureDoesNotMatch",
            &format!("Specified signature is not matched with our calculation. server string to sign is:{to_sign}"),
        )
    })
    .await;
    let client = client_with(&server, |b| {
        b.credentials(Credentials::new(AK, SK).with_security_token(token))
            .method(HttpMethod::Get)
    });
    let error = client.describe_regions().await.unwrap_err();
    assert_eq!(server.requests()[0].query["SecurityToken"], token);
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("sts-token"), "{shown}");
    assert!(!shown.contains(SK));
    // Nor the string to sign, nor the AccessKeyId it quotes: the code and a hint remain.
    assert!(!shown.contains("server string to sign is:"), "{shown}");
    assert!(!shown.contains(AK), "{shown}");
    assert!(shown.contains("SignatureDoesNotMatch"), "{shown}");
    assert!(
        shown.contains("AccessKeySecret belongs to the AccessKeyId"),
        "{shown}"
    );
}

#[tokio::test]
async fn region_defaults_to_the_clients_and_can_be_overridden() {
    let server = ScriptServer::start(|_, _| Reply::ok(r#"{"RequestId":"R"}"#)).await;
    let client = client(&server);
    let value = client.call("DescribeZones", &Params::new()).await.unwrap();
    assert_eq!(value["RequestId"], "R");
    let mut params = Params::new();
    params.set("RegionId", "cn-shanghai");
    client.call("DescribeZones", &params).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].param("RegionId"), Some("cn-beijing"));
    assert_eq!(requests[1].param("RegionId"), Some("cn-shanghai"));
}

#[tokio::test]
async fn debug_output_of_a_used_client_shows_no_secret() {
    let server = ScriptServer::start(|_, _| Reply::ok(REGIONS)).await;
    let client = client_with(&server, |b| {
        b.credentials(Credentials::new(AK, SK).with_security_token("token-value-xyz"))
    });
    client.describe_regions().await.unwrap();
    let debug = format!("{client:?}");
    assert!(debug.contains(AK), "the key ID is not secret: {debug}");
    assert!(
        !debug.contains(SK) && !debug.contains("token-value-xyz"),
        "{debug}"
    );
}
