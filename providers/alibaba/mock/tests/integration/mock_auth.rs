//! The mock authenticates like ECS: V1 (GET, POST, core-SDK quirks) and V3, key states, signature
//! mismatches with the server's string to sign, nonces, timestamps, missing parameters, STS.

use std::collections::BTreeMap;
use std::time::Duration;

use alibaba_mock::AccessKey;
use alibaba_sdk::signature::{v1, v3};
use ferroplane_testkit::mock_requests::*;

#[tokio::test]
async fn v1_get_post_and_v3_are_accepted() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let regions = s.get("DescribeRegions", ECS, &[]).await.ok();
    assert!(regions["Regions"]["Region"].as_array().unwrap().len() >= 25);
    let id = regex_like_request_id(regions["RequestId"].as_str().unwrap());
    assert!(id, "RequestId is an uppercase UUID");
    s.post("DescribeRegions", ECS, &[("RegionId", REGION)])
        .await
        .ok();
    s.v3("DescribeRegions", ECS, &[("RegionId", REGION)], &[])
        .await
        .ok();
    s.v3("DescribeInstances", ECS, &[], &[("RegionId", REGION)])
        .await
        .ok();
    let stats = mock.stats();
    assert_eq!(stats.calls_of("DescribeRegions"), 3);
    assert_eq!(stats.calls_of("DescribeInstances"), 1);
}

fn regex_like_request_id(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok() && id == id.to_ascii_uppercase()
}

#[tokio::test]
async fn core_sdk_quirks_work() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    // All parameters (business ones too) in the query of a POST, an empty SignatureType= that is
    // signed, and x-acs-* headers that must not switch the server to V3.
    let mut query = s.common("DescribeInstances", ECS);
    query.insert("RegionId".into(), REGION.into());
    query.insert("SignatureType".into(), String::new());
    let mut all = query.clone();
    let sts = v1::string_to_sign("POST", &all);
    all.insert("Signature".into(), v1::sign(SECRET, &sts));
    let resp = send(
        s.client
            .post(format!("{}/?{}", s.endpoint, encode_query(&all)))
            .header("x-acs-action", "DescribeInstances")
            .header("x-acs-version", ECS)
            .header("content-type", "application/x-www-form-urlencoded"),
    )
    .await;
    assert_eq!(resp.status, 200, "{}", resp.body);
}

#[tokio::test]
async fn unknown_and_disabled_keys() {
    let mock = start(Duration::ZERO).await;
    Signer::with_key(&mock, "nobody", "x")
        .get("DescribeRegions", ECS, &[])
        .await
        .expect_error(404, "InvalidAccessKeyId.NotFound");
    let mut key = AccessKey::new("off", "off-secret", "999");
    key.enabled = false;
    mock.add_access_key(key);
    let off = Signer::with_key(&mock, "off", "off-secret");
    off.get("DescribeRegions", ECS, &[])
        .await
        .expect_error(400, "InvalidAccessKeyId.Inactive");
    assert!(mock.set_access_key_enabled("off", true));
    off.get("DescribeRegions", ECS, &[]).await.ok();
    off.v3("DescribeRegions", ECS, &[], &[]).await.ok();
    Signer::with_key(&mock, "nobody", "x")
        .v3("DescribeRegions", ECS, &[], &[])
        .await
        .expect_error(404, "InvalidAccessKeyId.NotFound");
}

#[tokio::test]
async fn bad_signature_reports_the_server_string_to_sign() {
    let mock = start(Duration::ZERO).await;
    let wrong = Signer::with_key(&mock, AK, "wrong-secret");
    let mut query = wrong.common("DescribeRegions", ECS);
    query.insert("RegionId".into(), REGION.into());
    let expected = v1::string_to_sign("GET", &query);
    let resp = wrong.send_v1("GET", query, BTreeMap::new()).await;
    resp.expect_error(400, "SignatureDoesNotMatch");
    let message = resp.body["Message"].as_str().unwrap();
    assert!(
        message.ends_with(&format!("server string to sign is:{expected}")),
        "{message}"
    );
    // The core SDK splits at ':' and takes part 1: there must be no earlier colon.
    assert_eq!(message.split(':').nth(1), Some(expected.as_str()));
    for field in ["RequestId", "HostId", "Code", "Message", "Recommend"] {
        assert!(
            resp.body.get(field).is_some(),
            "{field} missing: {}",
            resp.body
        );
    }
    let v3 = wrong.v3("DescribeRegions", ECS, &[], &[]).await;
    v3.expect_error(400, "SignatureDoesNotMatch");
    assert!(
        v3.body["Message"]
            .as_str()
            .unwrap()
            .contains("server string to sign is:ACS3-HMAC-SHA256\n")
    );
}

#[tokio::test]
async fn a_tampered_request_fails_v1_and_v3() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    // V1: sign one region, send another.
    let mut query = s.common("DescribeInstances", ECS);
    query.insert("RegionId".into(), REGION.into());
    let sig = v1::sign(SECRET, &v1::string_to_sign("GET", &query));
    query.insert("RegionId".into(), "cn-beijing".into());
    query.insert("Signature".into(), sig);
    send(
        s.client
            .get(format!("{}/?{}", s.endpoint, encode_query(&query))),
    )
    .await
    .expect_error(400, "SignatureDoesNotMatch");
    // V1 signed as GET but sent as POST.
    let mut query = s.common("DescribeRegions", ECS);
    let sig = v1::sign(SECRET, &v1::string_to_sign("GET", &query));
    query.insert("Signature".into(), sig);
    send(
        s.client
            .post(format!("{}/?{}", s.endpoint, encode_query(&query))),
    )
    .await
    .expect_error(400, "SignatureDoesNotMatch");
    // V3: body different from the one hashed.
    let mut headers = BTreeMap::new();
    headers.insert(
        "host".to_owned(),
        s.endpoint.trim_start_matches("http://").to_owned(),
    );
    headers.insert("x-acs-action".to_owned(), "DescribeRegions".to_owned());
    headers.insert("x-acs-version".to_owned(), ECS.to_owned());
    headers.insert("x-acs-date".to_owned(), now_stamp());
    headers.insert("x-acs-signature-nonce".to_owned(), nonce());
    let payload = v3::hashed_payload(b"");
    let canonical = v3::canonical_request("POST", "/", &BTreeMap::new(), &headers, &payload);
    let signature = v3::sign(SECRET, &v3::string_to_sign(&canonical));
    let mut req = s
        .client
        .post(format!("{}/", s.endpoint))
        .header(
            "authorization",
            v3::authorization_header(AK, &v3::signed_header_names(&headers), &signature),
        )
        .header("content-type", "application/x-www-form-urlencoded")
        .body("RegionId=cn-beijing");
    for (k, v) in headers.iter().filter(|(k, _)| *k != "host") {
        req = req.header(k.as_str(), v.as_str());
    }
    send(req).await.expect_error(400, "SignatureDoesNotMatch");
}

#[tokio::test]
async fn reused_nonce_expired_and_malformed_timestamps() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let query = s.common("DescribeRegions", ECS);
    s.send_v1("GET", query.clone(), BTreeMap::new()).await.ok();
    s.send_v1("GET", query, BTreeMap::new())
        .await
        .expect_error(400, "SignatureNonceUsed");

    let mut old = s.common("DescribeRegions", ECS);
    let stale = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(16);
    old.insert(
        "Timestamp".into(),
        stale.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    s.send_v1("GET", old, BTreeMap::new())
        .await
        .expect_error(400, "InvalidTimeStamp.Expired");
    let mut future = s.common("DescribeRegions", ECS);
    let ahead = jiff::Timestamp::now() + jiff::SignedDuration::from_mins(16);
    future.insert(
        "Timestamp".into(),
        ahead.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    s.send_v1("GET", future, BTreeMap::new())
        .await
        .expect_error(400, "InvalidTimeStamp.Expired");
    let mut fine = s.common("DescribeRegions", ECS);
    let recent = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(14);
    fine.insert(
        "Timestamp".into(),
        recent.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    s.send_v1("GET", fine, BTreeMap::new()).await.ok();
    let mut bad = s.common("DescribeRegions", ECS);
    bad.insert("Timestamp".into(), "2024-13-45 25:00".into());
    s.send_v1("GET", bad, BTreeMap::new())
        .await
        .expect_error(400, "InvalidTimeStamp.Format");
    // A request that failed its signature did not use up its nonce.
    let q = s.common("DescribeRegions", ECS);
    Signer::with_key(&mock, AK, "wrong")
        .send_v1("GET", q.clone(), BTreeMap::new())
        .await
        .expect_error(400, "SignatureDoesNotMatch");
    s.send_v1("GET", q, BTreeMap::new()).await.ok();
}

#[tokio::test]
async fn missing_parameters_are_named() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    for name in [
        "Timestamp",
        "SignatureNonce",
        "AccessKeyId",
        "Action",
        "Version",
        "SignatureMethod",
    ] {
        let mut q = s.common("DescribeRegions", ECS);
        q.remove(name);
        let resp = s.send_v1("GET", q, BTreeMap::new()).await;
        resp.expect_error(400, "MissingParameter");
        assert!(
            resp.body["Message"]
                .as_str()
                .unwrap()
                .contains(&format!("\"{name}\"")),
            "{}",
            resp.body
        );
    }
    let no_sig = send(s.client.get(format!(
        "{}/?{}",
        s.endpoint,
        encode_query(&s.common("DescribeRegions", ECS))
    )))
    .await;
    no_sig.expect_error(400, "MissingParameter");
    let resp = s.ecs("DescribeInstances", &[]).await;
    resp.expect_error(400, "MissingParameter");
    assert!(
        resp.body["Message"]
            .as_str()
            .unwrap()
            .contains("\"RegionId\"")
    );
    let resp = s
        .ecs("RunInstances", &[("RegionId", REGION), ("ImageId", IMAGE)])
        .await;
    assert!(
        resp.body["Message"]
            .as_str()
            .unwrap()
            .contains("\"InstanceType\""),
        "{}",
        resp.body
    );
}

#[tokio::test]
async fn unknown_action_version_and_method() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    s.get("CreateInstance", ECS, &[])
        .await
        .expect_error(404, "InvalidAction.NotFound");
    s.get("DescribeRegions", "2099-01-01", &[])
        .await
        .expect_error(400, "InvalidVersion");
    let resp = send(s.client.put(format!("{}/", s.endpoint))).await;
    assert_eq!(resp.status, 405);
    assert_eq!(mock.stats().calls_of("Unknown"), 1);
}

#[tokio::test]
async fn sts_assume_role_and_tokens_for_ecs() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let body = s
        .post(
            "AssumeRole",
            STS,
            &[
                ("RoleArn", "acs:ram::5550001:role/ferroplane"),
                ("RoleSessionName", "test"),
                ("DurationSeconds", "900"),
            ],
        )
        .await
        .ok();
    let creds = &body["Credentials"];
    let (ak, secret, token) = (
        creds["AccessKeyId"].as_str().unwrap(),
        creds["AccessKeySecret"].as_str().unwrap(),
        creds["SecurityToken"].as_str().unwrap(),
    );
    assert!(ak.starts_with("STS."));
    assert!(creds["Expiration"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        body["AssumedRoleUser"]["Arn"],
        "acs:ram::5550001:role/ferroplane/test"
    );

    let temp = Signer::with_key(&mock, ak, secret).with_token(token);
    let ids = temp.run(&[]).await;
    assert_eq!(
        mock.instances()[0].account_id,
        "5550001",
        "role's account owns the instance"
    );
    temp.v3(
        "DescribeInstanceAttribute",
        ECS,
        &[("InstanceId", &ids[0])],
        &[],
    )
    .await
    .ok();
    // The key owner's account does not see it.
    s.ecs("DescribeInstanceAttribute", &[("InstanceId", &ids[0])])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");

    Signer::with_key(&mock, ak, secret)
        .get("DescribeRegions", ECS, &[])
        .await
        .expect_error(400, "InvalidSecurityToken.Malformed");
    let other = mock.issue_sts_credentials("5550001", Duration::from_secs(900));
    Signer::with_key(&mock, ak, secret)
        .with_token(&other.security_token)
        .get("DescribeRegions", ECS, &[])
        .await
        .expect_error(400, "InvalidSecurityToken.MismatchWithAccessKey");
    let expired = mock.issue_sts_credentials("5550001", Duration::ZERO);
    Signer::with_key(&mock, &expired.access_key_id, &expired.access_key_secret)
        .with_token(&expired.security_token)
        .get("DescribeRegions", ECS, &[])
        .await
        .expect_error(400, "InvalidSecurityToken.Expired");
    s.post(
        "AssumeRole",
        STS,
        &[("RoleArn", "not-an-arn"), ("RoleSessionName", "x1")],
    )
    .await
    .expect_error(400, "InvalidParameter.RoleArn");
    s.post("AssumeRole", STS, &[("RoleArn", "acs:ram::1:role/r")])
        .await
        .expect_error(400, "MissingParameter");
}

#[tokio::test]
async fn sts_oidc_is_unsigned() {
    let mock = start(Duration::ZERO).await;
    let client = reqwest::Client::new();
    let form = [
        ("Action", "AssumeRoleWithOIDC"),
        ("Version", STS),
        ("Format", "JSON"),
        ("Timestamp", &now_stamp()),
        ("RoleArn", "acs:ram::777:role/rrsa"),
        ("OIDCProviderArn", "acs:ram::777:oidc-provider/ack-rrsa"),
        (
            "OIDCToken",
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln",
        ),
        ("RoleSessionName", "ferroplane"),
    ];
    let resp = send(client.post(format!("{}/", mock.endpoint())).form(&form)).await;
    let body = resp.ok();
    let c = &body["Credentials"];
    let signer = Signer::with_key(
        &mock,
        c["AccessKeyId"].as_str().unwrap(),
        c["AccessKeySecret"].as_str().unwrap(),
    )
    .with_token(c["SecurityToken"].as_str().unwrap());
    signer.describe(&[]).await;
    let mut bad = form;
    bad[6] = ("OIDCToken", "garbage");
    send(client.post(format!("{}/", mock.endpoint())).form(&bad))
        .await
        .expect_error(400, "AuthenticationFail.OIDCToken.Invalid");
}

/// `GetCallerIdentity` answers the signing key's account, as STS does, through the SDK's client.
#[tokio::test]
async fn sts_get_caller_identity_names_the_keys_account() {
    use alibaba_sdk::credentials::Credentials;
    use alibaba_sdk::credentials::SharedCredentialsProvider;
    use alibaba_sdk::rpc::ClientConfig;
    use alibaba_sdk::sts::StsClient;

    let mock = start(Duration::ZERO).await;
    mock.add_access_key(AccessKey::new("LTAIother", "other-secret", "5550002"));
    let identity = |ak: &str, sk: &str| {
        let client = StsClient::new(
            url::Url::parse(&mock.endpoint()).expect("url"),
            Some(std::sync::Arc::new(Credentials::new(ak, sk)) as SharedCredentialsProvider),
            ClientConfig::default(),
        )
        .expect("STS client");
        async move { client.get_caller_identity().await.expect("identity") }
    };
    let default = identity(AK, SECRET).await;
    assert_eq!(default.account_id, alibaba_mock::DEFAULT_ACCOUNT_ID);
    assert_eq!(default.identity_type, "RAMUser");
    assert!(
        default.arn.starts_with(&format!(
            "acs:ram::{}:user/",
            alibaba_mock::DEFAULT_ACCOUNT_ID
        )),
        "{}",
        default.arn
    );
    let other = identity("LTAIother", "other-secret").await;
    assert_eq!(other.account_id, "5550002");
    // Unsigned, it is refused by the client before any call.
    let unsigned = StsClient::new(
        url::Url::parse(&mock.endpoint()).expect("url"),
        None,
        ClientConfig::default(),
    )
    .expect("STS client");
    assert!(unsigned.get_caller_identity().await.is_err());
}

/// `GetCallerIdentity`'s answer has every field STS's answer has, the one that does not apply
/// empty.
#[tokio::test]
async fn sts_get_caller_identity_answers_every_field() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let answer = s.post("GetCallerIdentity", STS, &[]).await.ok();
    for key in [
        "AccountId",
        "Arn",
        "IdentityType",
        "PrincipalId",
        "RequestId",
        "RoleId",
        "UserId",
    ] {
        assert!(answer[key].is_string(), "{key} missing in {answer}");
    }
    assert_eq!(answer["RoleId"], "");
    assert_eq!(answer["UserId"], answer["PrincipalId"]);
}
