//! Inspection endpoints, fault injection, concurrency and malformed input.

use std::collections::HashSet;
use std::time::Duration;

use alibaba_mock::Faults;
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

async fn get_json(url: String) -> Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn stats_and_instances_endpoints() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s
        .run(&[
            ("Amount", "2"),
            ("ClientToken", "ct-1"),
            ("InstanceName", "probe"),
            ("Tag.1.Key", "k"),
            ("Tag.1.Value", "v"),
        ])
        .await;
    s.describe(&[]).await;
    s.ecs("DescribeInstanceAttribute", &[("InstanceId", "i-missing")])
        .await;
    s.ecs(
        "DeleteInstance",
        &[("InstanceId", &ids[0]), ("Force", "true")],
    )
    .await
    .ok();

    let stats = get_json(format!("{}/_mock/stats", mock.endpoint())).await;
    assert_eq!(stats["calls"]["RunInstances"], 1);
    assert_eq!(stats["calls"]["DescribeInstances"], 1);
    assert_eq!(stats["calls"]["DescribeInstanceAttribute"], 1);
    assert_eq!(stats["errors"]["InvalidInstanceId.NotFound"], 1);
    assert_eq!(stats["instancesCreated"], 2);
    assert_eq!(stats["instancesLive"], 1);
    assert_eq!(mock.stats().calls_of("DeleteInstance"), 1);

    let list = get_json(format!("{}/_mock/instances", mock.endpoint())).await;
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1);
    let i = &list[0];
    assert_eq!(i["instanceId"], ids[1].as_str());
    assert_eq!(i["instanceName"], "probe");
    assert_eq!(i["status"], "Running");
    assert_eq!(i["regionId"], REGION);
    assert_eq!(i["tags"]["k"], "v");
    assert_eq!(i["clientToken"], "ct-1");
}

#[tokio::test]
async fn faults_at_runtime_over_http_and_library() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let client = reqwest::Client::new();
    let url = format!("{}/_mock/faults", mock.endpoint());
    let set = client
        .post(&url)
        .body(r#"{"throttleRate":1.0,"retryAfterMs":1500}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    let resp = s.ecs("DescribeRegions", &[]).await;
    resp.expect_error(400, "Throttling.User");
    assert_eq!(resp.headers.get("x-acs-retry-after").unwrap(), "1500");
    client
        .post(&url)
        .body(r#"{"throttleRate":0,"errorRate":1}"#)
        .send()
        .await
        .unwrap();
    s.ecs("DescribeRegions", &[])
        .await
        .expect_error(503, "ServiceUnavailable");
    let bad = client
        .post(&url)
        .body(r#"{"errorRate":-0.5}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let bad = client.post(&url).body("not json").send().await.unwrap();
    assert_eq!(bad.status(), 400);
    let current = get_json(url.clone()).await;
    assert_eq!(current["errorRate"], 1.0);

    mock.set_faults(Faults::default()).unwrap();
    s.ecs("DescribeRegions", &[]).await.ok();
    assert!(
        mock.set_faults(Faults {
            throttle_rate: 2.0,
            ..Faults::default()
        })
        .is_err()
    );
    mock.set_faults(Faults {
        latency: Duration::from_millis(20),
        ..Faults::default()
    })
    .unwrap();
    s.ecs("DescribeRegions", &[]).await.ok();
    let stats = mock.stats();
    assert_eq!(stats.errors_of("Throttling.User"), 1);
    assert_eq!(stats.errors_of("ServiceUnavailable"), 1);

    // A fractional rate fails some requests and not others (bounded loop, 200 calls).
    mock.set_faults(Faults {
        throttle_rate: 0.5,
        ..Faults::default()
    })
    .unwrap();
    let mut throttled = 0;
    for _ in 0..200 {
        if s.ecs("DescribeRegions", &[]).await.status != 200 {
            throttled += 1;
        }
    }
    assert!(
        (40..=160).contains(&throttled),
        "throttled {throttled} of 200 at rate 0.5"
    );
}

#[tokio::test]
async fn concurrent_requests() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let mut tasks = Vec::new();
    for n in 0..20 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let token = format!("tok-{}", n % 10);
            let ids = s.run(&[("Amount", "5"), ("ClientToken", &token)]).await;
            s.describe(&[("PageSize", "100")]).await;
            ids
        }));
    }
    let mut all = HashSet::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    // 20 calls with 10 distinct tokens: 10 launches of 5, the repeats answered with the same IDs.
    assert_eq!(all.len(), 50);
    assert_eq!(mock.stats().instances_created, 50);
    assert_eq!(mock.stats().calls_of("RunInstances"), 20);
}

#[tokio::test]
async fn malformed_input_gets_errors_not_panics() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let base = mock.endpoint();
    let client = reqwest::Client::new();
    let raw = [
        format!("{base}/?%zz=%FF&Action=%"),
        format!("{base}/?Action=DescribeRegions&Version=2014-05-26&AccessKeyId=%FF%FE"),
        format!("{base}/?{}", "A".repeat(60_000)),
        format!("{base}/?Action=RunInstances&Version=2014-05-26&Tag.x.Key=1"),
        format!("{base}/?&&&==&"),
        format!("{base}/nowhere"),
    ];
    for url in &raw {
        let resp = send(client.get(url)).await;
        assert!(
            (400..500).contains(&resp.status),
            "{url}: {} {}",
            resp.status,
            resp.body
        );
        if resp.status != 414 && resp.status != 431 {
            assert!(!resp.code().is_empty(), "{url}: {}", resp.body);
        }
    }
    let garbage = send(
        client
            .post(format!("{base}/"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(vec![0xff, 0x00, 0x25, 0x26, 0x3d]),
    )
    .await;
    assert_eq!(garbage.status, 400);
    let bad_auth = send(
        client
            .post(format!("{base}/"))
            .header("x-acs-action", "DescribeRegions")
            .header("x-acs-version", ECS)
            .header("authorization", "ACS3-HMAC-SHA256 garbage"),
    )
    .await;
    bad_auth.expect_error(400, "IncompleteSignature");
    let no_headers = send(
        client
            .post(format!("{base}/"))
            .header("x-acs-action", "DescribeRegions")
            .header("x-acs-version", ECS)
            .header(
                "authorization",
                "ACS3-HMAC-SHA256 Credential=a,SignedHeaders=host,Signature=00",
            ),
    )
    .await;
    no_headers.expect_error(400, "MissingParameter");

    // Signed but nonsensical business input.
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("InstanceIds", &"[".repeat(10_000))],
    )
    .await
    .expect_error(400, "InvalidInstanceIds.Malformed");
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("Tag.99999999999.Key", "x")],
    )
    .await
    .expect_error(400, "InvalidParameter");
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("PageNumber", "18446744073709551616")],
    )
    .await
    .expect_error(400, "InvalidParameter");
    s.ecs(
        "RunInstances",
        &[
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
            ("InstanceName", &"x".repeat(100_000)),
        ],
    )
    .await
    .expect_error(400, "InvalidInstanceName.Malformed");
    s.ecs("DescribeInstanceAttribute", &[("InstanceId", "中文\u{0}")])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
    // Still serving.
    s.ecs("DescribeRegions", &[]).await.ok();
}

#[tokio::test]
async fn shutdown_releases_the_port() {
    let mock = start(Duration::ZERO).await;
    let addr = mock.addr();
    Signer::new(&mock).ecs("DescribeRegions", &[]).await.ok();
    mock.shutdown().await;
    let rebound = tokio::net::TcpListener::bind(addr).await;
    assert!(rebound.is_ok(), "port is free after shutdown");
}

#[tokio::test]
async fn dropped_responses_still_take_effect() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    mock.set_faults(Faults {
        drop_rate: 1.0,
        ..Faults::default()
    })
    .unwrap();
    let mut query = s.common("RunInstances", ECS);
    for (k, v) in [
        ("RegionId", REGION),
        ("ImageId", IMAGE),
        ("InstanceType", TYPE),
        ("VSwitchId", VSWITCH),
        ("SecurityGroupId", SECURITY_GROUP),
        ("ClientToken", "lost-1"),
    ] {
        query.insert(k.into(), v.into());
    }
    let outcome = s.build_v1("POST", query, Default::default()).send().await;
    let failed = match outcome {
        Err(_) => true,
        Ok(resp) => resp.text().await.is_err(),
    };
    assert!(failed, "the client must not get an answer");
    assert_eq!(mock.stats().dropped_responses, 1);
    assert_eq!(mock.stats().instances_created, 1, "the call took effect");
    // The retry with the same ClientToken finds the same instance.
    mock.set_faults(Faults::default()).unwrap();
    let ids = s.run(&[("ClientToken", "lost-1")]).await;
    assert_eq!(ids, vec![mock.instances()[0].instance_id.clone()]);
    assert_eq!(mock.stats().instances_created, 1);
}

#[tokio::test]
async fn per_action_api_rate_limits_override_the_all_actions_one() {
    let mock = start(Duration::ZERO).await;
    mock.set_api_rate_limit("DescribeInstances", Some(2));
    let s = Signer::new(&mock);
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(s.describe_status().await);
    }
    // A minute boundary in between would reset the window: allow one extra success then.
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert!((2..=3).contains(&ok), "{statuses:?}");
    assert_eq!(mock.stats().errors_of("Throttling.User"), (4 - ok) as u64);
    // DescribeRegions has no limit of its own and there is no all-actions one.
    for _ in 0..4 {
        assert_eq!(s.ecs("DescribeRegions", &[]).await.status, 200);
    }
    mock.set_api_rate_limit("DescribeInstances", None);
    assert_eq!(s.describe_status().await, 200);
}

#[tokio::test]
async fn per_minute_api_rate_limit() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let client = reqwest::Client::new();
    let set = client
        .post(format!("{}/_mock/faults", mock.endpoint()))
        .body(r#"{"apiRateLimitPerMinute":3}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    // Three calls fit in a minute, the fourth is throttled; a minute boundary in between would
    // reset the window, so allow one extra success in that rare case.
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(s.describe_status().await);
    }
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert!((3..=4).contains(&ok), "{statuses:?}");
    assert_eq!(mock.stats().errors_of("Throttling.User"), (5 - ok) as u64);
    // Other actions and regions have their own budget.
    s.ecs("DescribeRegions", &[]).await.ok();
    s.ecs("DescribeInstances", &[("RegionId", "cn-beijing")])
        .await
        .ok();
    client
        .post(format!("{}/_mock/faults", mock.endpoint()))
        .body(r#"{"apiRateLimitPerMinute":0}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(s.describe_status().await, 200);
}
