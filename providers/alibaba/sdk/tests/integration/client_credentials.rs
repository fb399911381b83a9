//! Credential providers against local servers standing in for STS and the ECS metadata service.

use std::sync::Arc;
use std::time::Duration;

use crate::client_support::{Recorded, Reply, ScriptServer};
use alibaba_sdk::CredentialsError;
use alibaba_sdk::credentials::{
    CachingProvider, Credentials, CredentialsProvider, ImdsProvider, OidcRoleProvider,
    RamRoleArnProvider,
};
use alibaba_sdk::ecs::EcsClient;
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::rpc::{ClientConfig, RetryPolicy};
use alibaba_sdk::signature::v1;

const ROLE: &str = "acs:ram::1234567890123:role/ferroplane";

fn sts_reply(expires_in_secs: i64) -> Reply {
    let expiration = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(expires_in_secs))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    Reply::ok(
        serde_json::json!({
            "RequestId": "STS-1",
            "AssumedRoleUser": {"Arn": format!("{ROLE}/s"), "AssumedRoleId": "3000:s"},
            "Credentials": {
                "AccessKeyId": "STS.temporary-id",
                "AccessKeySecret": "temporary-secret-value",
                "SecurityToken": "temporary-token-value",
                "Expiration": expiration
            }
        })
        .to_string(),
    )
}

fn config() -> ClientConfig {
    ClientConfig {
        retry: RetryPolicy {
            max_attempts: 3,
            min_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(10),
            max_elapsed: Duration::from_secs(5),
        },
        ..ClientConfig::default()
    }
}

fn signed_by(request: &Recorded, secret: &str) -> bool {
    let params = request.all_params();
    params.get("Signature").map(String::as_str)
        == Some(&v1::sign(
            secret,
            &v1::string_to_sign(request.method.as_str(), &params),
        ))
}

#[tokio::test]
async fn ram_role_assumes_the_role_with_signed_source_credentials() {
    let sts = ScriptServer::start(|req, _| {
        if signed_by(req, "source-secret") {
            sts_reply(3600)
        } else {
            Reply::error(400, "SignatureDoesNotMatch", "bad")
        }
    })
    .await;
    let source = Arc::new(Credentials::new("source-ak", "source-secret"));
    let provider = RamRoleArnProvider::with_config(
        parse_endpoint(&sts.url()).unwrap(),
        source,
        ROLE,
        config(),
    )
    .unwrap()
    .session_name("ferroplane-test")
    .duration(Duration::from_secs(900))
    .external_id("ext-1");
    let credentials = provider.credentials().await.unwrap();
    assert_eq!(credentials.access_key_id, "STS.temporary-id");
    assert_eq!(
        credentials.security_token.as_ref().unwrap().expose(),
        "temporary-token-value"
    );
    assert!(credentials.expiration.is_some());
    let req = &sts.requests()[0];
    assert_eq!(req.query["Action"], "AssumeRole");
    assert_eq!(req.query["Version"], "2015-04-01");
    assert_eq!(req.query["AccessKeyId"], "source-ak");
    assert_eq!(req.form["RoleArn"], ROLE);
    assert_eq!(req.form["RoleSessionName"], "ferroplane-test");
    assert_eq!(req.form["DurationSeconds"], "900");
    assert_eq!(req.form["ExternalId"], "ext-1");
    assert!(!format!("{credentials:?}").contains("temporary-secret-value"));
}

#[tokio::test]
async fn ecs_calls_use_assumed_credentials_and_refresh_only_near_expiry() {
    let sts = ScriptServer::start(|_, _| sts_reply(3600)).await;
    let ecs = ScriptServer::start(|req, _| {
        if signed_by(req, "temporary-secret-value") {
            Reply::ok(r#"{"RequestId":"R","Regions":{"Region":[]}}"#)
        } else {
            Reply::error(400, "SignatureDoesNotMatch", "bad")
        }
    })
    .await;
    let provider = RamRoleArnProvider::with_config(
        parse_endpoint(&sts.url()).unwrap(),
        Arc::new(Credentials::new("source-ak", "source-secret")),
        ROLE,
        config(),
    )
    .unwrap();
    let client = EcsClient::builder("cn-beijing")
        .endpoint(ecs.url())
        .credentials(provider)
        .build()
        .unwrap();
    client.describe_regions().await.unwrap();
    client.describe_regions().await.unwrap();
    assert_eq!(sts.count(), 1, "credentials with an hour left are reused");
    let requests = ecs.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].query["SecurityToken"], "temporary-token-value");
    assert_eq!(requests[0].query["AccessKeyId"], "STS.temporary-id");

    // Credentials with less than 180 s left are refreshed on the next call.
    let short = ScriptServer::start(|_, _| sts_reply(120)).await;
    let cache = CachingProvider::new(
        RamRoleArnProvider::with_config(
            parse_endpoint(&short.url()).unwrap(),
            Arc::new(Credentials::new("source-ak", "source-secret")),
            ROLE,
            config(),
        )
        .unwrap(),
    );
    cache.credentials().await.unwrap();
    cache.credentials().await.unwrap();
    assert_eq!(short.count(), 2);
}

#[tokio::test]
async fn sts_errors_are_credentials_errors_with_the_code() {
    let sts = ScriptServer::start(|_, _| {
        Reply::error(
            403,
            "NoPermission.AssumeRole",
            "You are not authorized to assume this role.",
        )
    })
    .await;
    let provider = RamRoleArnProvider::with_config(
        parse_endpoint(&sts.url()).unwrap(),
        Arc::new(Credentials::new("source-ak", "source-secret")),
        ROLE,
        config(),
    )
    .unwrap();
    let error = provider.credentials().await.unwrap_err();
    assert!(matches!(error, CredentialsError::Sts(_)));
    let text = error.to_string();
    assert!(
        text.contains("NoPermission.AssumeRole") && text.contains("AssumeRole failed"),
        "{text}"
    );
    assert_eq!(sts.count(), 1);
}

#[tokio::test]
async fn malformed_sts_bodies_never_quote_the_secret() {
    let sts = ScriptServer::start(|_, _| {
        Reply::ok(
            r#"{"RequestId":"R","Credentials":{"AccessKeyId":"id","AccessKeySecret":"leaky-secret","SecurityToken":"leaky-token","Expiration":12}}"#,
        )
    })
    .await;
    let provider = RamRoleArnProvider::with_config(
        parse_endpoint(&sts.url()).unwrap(),
        Arc::new(Credentials::new("source-ak", "source-secret")),
        ROLE,
        config(),
    )
    .unwrap();
    let error = provider.credentials().await.unwrap_err();
    let text = format!("{error} {error:?}");
    assert!(!text.contains("leaky"), "{text}");
    assert!(text.contains("not the expected JSON"), "{text}");
}

#[tokio::test]
async fn oidc_exchanges_the_token_file_unsigned() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "eyJhbGciOiJSUzI1NiJ9.oidc-token-value.sig\n").unwrap();
    let sts = ScriptServer::start(|_, _| sts_reply(3600)).await;
    let path = token_file.to_string_lossy().into_owned();
    let provider = OidcRoleProvider::from_env_lookup(
        parse_endpoint(&sts.url()).unwrap(),
        config(),
        move |name| match name {
            "ALIBABA_CLOUD_ROLE_ARN" => Some(ROLE.to_owned()),
            "ALIBABA_CLOUD_OIDC_PROVIDER_ARN" => {
                Some("acs:ram::1234567890123:oidc-provider/ack-rrsa".to_owned())
            }
            "ALIBABA_CLOUD_OIDC_TOKEN_FILE" => Some(path.clone()),
            "ALIBABA_CLOUD_ROLE_SESSION_NAME" => Some("rrsa-session".to_owned()),
            _ => None,
        },
    )
    .unwrap();
    let credentials = provider.credentials().await.unwrap();
    assert_eq!(credentials.access_key_id, "STS.temporary-id");
    let req = &sts.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.query["Action"], "AssumeRoleWithOIDC");
    assert!(!req.query.contains_key("Signature") && !req.query.contains_key("AccessKeyId"));
    assert_eq!(
        req.form["OIDCToken"],
        "eyJhbGciOiJSUzI1NiJ9.oidc-token-value.sig"
    );
    assert_eq!(
        req.form["OIDCProviderArn"],
        "acs:ram::1234567890123:oidc-provider/ack-rrsa"
    );
    assert_eq!(req.form["RoleSessionName"], "rrsa-session");
    assert_eq!(req.form["DurationSeconds"], "3600");

    std::fs::remove_file(&token_file).unwrap();
    let error = provider.credentials().await.unwrap_err();
    assert!(
        matches!(error, CredentialsError::OidcTokenFile { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("ALIBABA_CLOUD_OIDC_TOKEN_FILE"));
}

#[tokio::test]
async fn oidc_names_the_missing_variable() {
    let error = OidcRoleProvider::from_env_lookup(
        parse_endpoint("http://127.0.0.1:9").unwrap(),
        config(),
        |name| (name == "ALIBABA_CLOUD_ROLE_ARN").then(|| ROLE.to_owned()),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("ALIBABA_CLOUD_OIDC_PROVIDER_ARN"),
        "{error}"
    );
}

fn metadata_server(require_token: bool) -> impl Fn(&Recorded, usize) -> Reply + Send + Sync {
    move |req, _| {
        let has_token = req.header("x-aliyun-ecs-metadata-token") == Some("md-token");
        match (req.method.as_str(), req.path.as_str()) {
            ("PUT", "/latest/api/token") => {
                if req
                    .header("x-aliyun-ecs-metadata-token-ttl-seconds")
                    .is_some()
                    && require_token
                {
                    Reply::ok("md-token")
                } else {
                    Reply::json(403, "")
                }
            }
            (_, _) if require_token && !has_token => Reply::json(401, ""),
            ("GET", "/latest/meta-data/ram/security-credentials/") => Reply::ok("EcsRole\n"),
            ("GET", "/latest/meta-data/ram/security-credentials/EcsRole") => {
                let expiration = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(6))
                    .strftime("%Y-%m-%dT%H:%M:%SZ")
                    .to_string();
                Reply::ok(
                    serde_json::json!({
                        "AccessKeyId": "STS.instance-role",
                        "AccessKeySecret": "instance-secret",
                        "SecurityToken": "instance-token",
                        "Expiration": expiration,
                        "LastUpdated": "2024-01-01T00:00:00Z",
                        "Code": "Success"
                    })
                    .to_string(),
                )
            }
            _ => Reply::json(404, ""),
        }
    }
}

#[tokio::test]
async fn instance_role_credentials_come_from_the_metadata_service_with_an_imdsv2_token() {
    let server = ScriptServer::start(metadata_server(true)).await;
    let provider = ImdsProvider::new(parse_endpoint(&server.url()).unwrap()).unwrap();
    let credentials = provider.credentials().await.unwrap();
    assert_eq!(credentials.access_key_id, "STS.instance-role");
    assert_eq!(
        credentials.security_token.unwrap().expose(),
        "instance-token"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "token, role discovery, credentials");
    assert_eq!(
        requests[0].header("x-aliyun-ecs-metadata-token-ttl-seconds"),
        Some("21600")
    );

    let named = ImdsProvider::new(parse_endpoint(&server.url()).unwrap())
        .unwrap()
        .role_name("EcsRole");
    named.credentials().await.unwrap();
    assert_eq!(server.count(), 5, "a configured role skips discovery");
}

#[tokio::test]
async fn metadata_failures_are_explained() {
    // No token service: hardened mode fails with a clear message, v1 fallback works.
    let server = ScriptServer::start(metadata_server(false)).await;
    let endpoint = parse_endpoint(&server.url()).unwrap();
    let error = ImdsProvider::new(endpoint.clone())
        .unwrap()
        .credentials()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("metadata token"), "{error}");
    let credentials = ImdsProvider::new(endpoint.clone())
        .unwrap()
        .allow_imds_v1(true)
        .credentials()
        .await
        .unwrap();
    assert_eq!(credentials.access_key_id, "STS.instance-role");
    let error = ImdsProvider::new(endpoint)
        .unwrap()
        .allow_imds_v1(true)
        .role_name("OtherRole")
        .credentials()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("HTTP 404"), "{error}");
}
