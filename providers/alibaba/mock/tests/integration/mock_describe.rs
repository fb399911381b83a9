//! DescribeInstances (filters, both pagination styles, response shape), tags and DescribeRegions.

use std::collections::HashSet;
use std::time::Duration;

use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

fn json_ids(ids: &[String]) -> String {
    serde_json::to_string(ids).unwrap()
}

#[tokio::test]
async fn response_shape_matches_ecs() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s
        .run(&[
            ("Tag.1.Key", "env"),
            ("Tag.1.Value", "dev"),
            ("InstanceName", "shape"),
        ])
        .await
        .remove(0);
    let body = s
        .describe(&[("InstanceIds", &json_ids(std::slice::from_ref(&id)))])
        .await;
    for field in [
        "RequestId",
        "TotalCount",
        "PageNumber",
        "PageSize",
        "NextToken",
    ] {
        assert!(body.get(field).is_some(), "{field} missing");
    }
    let i = &instances(&body)[0];
    for field in [
        "InstanceId",
        "InstanceName",
        "Description",
        "HostName",
        "Status",
        "InstanceType",
        "ImageId",
        "RegionId",
        "ZoneId",
        "Cpu",
        "Memory",
        "OSType",
        "OSName",
        "InstanceChargeType",
        "InternetChargeType",
        "InternetMaxBandwidthOut",
        "CreationTime",
        "StartTime",
        "DeletionProtection",
    ] {
        assert!(i.get(field).is_some(), "{field} missing in {i}");
    }
    assert!(
        i["VpcAttributes"]["PrivateIpAddress"]["IpAddress"][0]
            .as_str()
            .unwrap()
            .starts_with("172.")
    );
    assert!(
        i["VpcAttributes"]["VpcId"]
            .as_str()
            .unwrap()
            .starts_with("vpc-")
    );
    assert_eq!(
        i["PublicIpAddress"]["IpAddress"],
        serde_json::json!([]),
        "no public IP without bandwidth"
    );
    assert!(i["EipAddress"].get("AllocationId").is_some());
    assert!(i["SecurityGroupIds"]["SecurityGroupId"].is_array());
    assert!(i["OperationLocks"]["LockReason"].is_array());
    assert_eq!(
        i["Tags"]["Tag"],
        serde_json::json!([{"TagKey": "env", "TagValue": "dev"}])
    );
    let created = i["CreationTime"].as_str().unwrap();
    assert_eq!(
        created.len(),
        "2017-12-10T04:04Z".len(),
        "minute precision: {created}"
    );
    assert!(created.ends_with('Z'));
    assert_eq!(i["Status"], "Running");
}

#[tokio::test]
async fn instance_ids_filter_rules() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s.run(&[("Amount", "5")]).await;
    let mut asked = vec![ids[3].clone(), ids[1].clone(), "i-doesnotexist".to_owned()];
    let body = s
        .describe(&[("InstanceIds", &json_ids(&asked)), ("PageSize", "100")])
        .await;
    let got: HashSet<String> = instances(&body)
        .iter()
        .map(|i| i["InstanceId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        got,
        HashSet::from([ids[1].clone(), ids[3].clone()]),
        "unknown IDs are simply absent"
    );
    assert_eq!(body["TotalCount"], 2);
    asked = (0..101).map(|n| format!("i-{n}")).collect();
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("InstanceIds", &json_ids(&asked))],
    )
    .await
    .expect_error(400, "InvalidInstanceIds.Malformed");
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("InstanceIds", "i-1,i-2")],
    )
    .await
    .expect_error(400, "InvalidInstanceIds.Malformed");
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("Status", "Exploded")],
    )
    .await
    .expect_error(400, "InvalidParameter");
}

#[tokio::test]
async fn filters_by_status_name_tag_zone_vpc() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let web = s
        .run(&[
            ("Amount", "3"),
            ("InstanceName", "web"),
            ("Tag.1.Key", "tier"),
            ("Tag.1.Value", "front"),
            ("ZoneId", "cn-hangzhou-h"),
            ("VSwitchId", "vsw-k3l5df6vk6n7t4iwvwm2ox"),
        ])
        .await;
    let db = s
        .run(&[
            ("Amount", "2"),
            ("InstanceName", "db"),
            ("Tag.1.Key", "tier"),
            ("Tag.1.Value", "back"),
            ("Tag.2.Key", "backup"),
        ])
        .await;
    s.ecs("StopInstance", &[("InstanceId", &db[0])]).await.ok();
    let count = |body: Value| body["TotalCount"].as_u64().unwrap();
    assert_eq!(count(s.describe(&[("Status", "Stopped")]).await), 1);
    assert_eq!(count(s.describe(&[("Status", "Running")]).await), 4);
    assert_eq!(count(s.describe(&[("InstanceName", "web")]).await), 3);
    assert_eq!(count(s.describe(&[("InstanceName", "d*")]).await), 2);
    assert_eq!(
        count(
            s.describe(&[("Tag.1.Key", "tier"), ("Tag.1.Value", "front")])
                .await
        ),
        3
    );
    assert_eq!(count(s.describe(&[("Tag.1.Key", "tier")]).await), 5);
    assert_eq!(
        count(
            s.describe(&[("Tag.1.Key", "tier"), ("Tag.2.Key", "backup")])
                .await
        ),
        2
    );
    assert_eq!(count(s.describe(&[("ZoneId", "cn-hangzhou-h")]).await), 3);
    assert_eq!(
        count(
            s.describe(&[("VpcId", &alibaba_mock::defaults::vpc_id(REGION))])
                .await
        ),
        5
    );
    assert_eq!(count(s.describe(&[("VpcId", "vpc-other")]).await), 0);
    let both = s
        .describe(&[
            ("InstanceIds", &json_ids(&[web[0].clone(), db[1].clone()])),
            ("InstanceName", "web"),
        ])
        .await;
    assert_eq!(count(both), 1);
}

#[tokio::test]
async fn page_number_pagination() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s.run(&[("Amount", "25")]).await;
    let first = s.describe(&[]).await;
    assert_eq!(
        (
            first["TotalCount"].as_u64(),
            first["PageSize"].as_u64(),
            first["PageNumber"].as_u64()
        ),
        (Some(25), Some(10), Some(1))
    );
    let mut seen = Vec::new();
    for page in 1..=3 {
        let body = s
            .describe(&[("PageNumber", &page.to_string()), ("PageSize", "10")])
            .await;
        seen.extend(
            instances(&body)
                .iter()
                .map(|i| i["InstanceId"].as_str().unwrap().to_owned()),
        );
    }
    assert_eq!(
        seen, ids,
        "pages cover every instance once, in creation order"
    );
    let beyond = s.describe(&[("PageNumber", "4"), ("PageSize", "10")]).await;
    assert!(instances(&beyond).is_empty());
    for bad in [
        ("PageSize", "101"),
        ("PageSize", "0"),
        ("PageNumber", "0"),
        ("PageNumber", "-1"),
    ] {
        s.ecs("DescribeInstances", &[("RegionId", REGION), bad])
            .await
            .expect_error(400, "InvalidParameter");
    }
}

#[tokio::test]
async fn next_token_pagination() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s.run(&[("Amount", "25")]).await;
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut calls = 0;
    loop {
        let mut params = vec![("MaxResults", "10")];
        if !token.is_empty() {
            params.push(("NextToken", token.as_str()));
        }
        let body = s.describe(&params).await;
        calls += 1;
        seen.extend(
            instances(&body)
                .iter()
                .map(|i| i["InstanceId"].as_str().unwrap().to_owned()),
        );
        token = body["NextToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
        assert!(calls < 10);
    }
    assert_eq!(calls, 3);
    assert_eq!(seen, ids);
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("NextToken", "not-a-token")],
    )
    .await
    .expect_error(400, "InvalidParameter");
    s.ecs(
        "DescribeInstances",
        &[("RegionId", REGION), ("MaxResults", "101")],
    )
    .await
    .expect_error(400, "InvalidParameter");
}

#[tokio::test]
async fn tags_add_remove_list_and_limits() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s
        .run(&[("Amount", "2"), ("Tag.1.Key", "a"), ("Tag.1.Value", "1")])
        .await;
    let base = [("RegionId", REGION), ("ResourceType", "instance")];
    let mut p = base.to_vec();
    p.extend([
        ("ResourceId.1", ids[0].as_str()),
        ("ResourceId.2", ids[1].as_str()),
        ("Tag.1.Key", "a"),
        ("Tag.1.Value", "2"),
        ("Tag.2.Key", "b"),
        ("Tag.2.Value", "x"),
    ]);
    s.ecs("TagResources", &p).await.ok();
    let mut list = base.to_vec();
    list.push(("ResourceId.1", ids[0].as_str()));
    let body = s.ecs("ListTagResources", &list).await.ok();
    let tags = body["TagResources"]["TagResource"].as_array().unwrap();
    assert_eq!(tags.len(), 2);
    assert!(tags.contains(&serde_json::json!({"ResourceType": "instance", "ResourceId": ids[0], "TagKey": "a", "TagValue": "2"})));

    let mut untag = base.to_vec();
    untag.extend([("ResourceId.1", ids[0].as_str()), ("TagKey.1", "a")]);
    s.ecs("UntagResources", &untag).await.ok();
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &ids[0])])
        .await
        .ok();
    assert_eq!(
        i["Tags"]["Tag"],
        serde_json::json!([{"TagKey": "b", "TagValue": "x"}])
    );
    let mut by_tag = base.to_vec();
    by_tag.extend([("Tag.1.Key", "a"), ("Tag.1.Value", "2")]);
    let body = s.ecs("ListTagResources", &by_tag).await.ok();
    assert!(
        body["TagResources"]["TagResource"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["ResourceId"] == ids[1].as_str())
    );

    // DescribeInstances' tag filter follows tag changes (values, untags) too.
    let tagged = |body: Value| -> Vec<String> {
        body["Instances"]["Instance"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["InstanceId"].as_str().unwrap().to_owned())
            .collect()
    };
    let now_a2 = tagged(
        s.describe(&[("Tag.1.Key", "a"), ("Tag.1.Value", "2")])
            .await,
    );
    assert_eq!(now_a2, vec![ids[1].clone()]);
    let was_a1 = tagged(
        s.describe(&[("Tag.1.Key", "a"), ("Tag.1.Value", "1")])
            .await,
    );
    assert!(was_a1.is_empty(), "{was_a1:?}");
    let added_b = tagged(
        s.describe(&[("Tag.1.Key", "b"), ("Tag.1.Value", "x")])
            .await,
    );
    assert_eq!(added_b, ids);

    let mut bad = base.to_vec();
    bad.extend([
        ("ResourceId.1", ids[0].as_str()),
        ("Tag.1.Key", "aliyun-owned"),
        ("Tag.1.Value", "v"),
    ]);
    s.ecs("TagResources", &bad)
        .await
        .expect_error(400, "InvalidTagKey.Malformed");
    let keys: Vec<(String, String)> = (0..20)
        .map(|n| (format!("Tag.{}.Key", n + 1), format!("k{n}")))
        .collect();
    let mut full = base.to_vec();
    full.push(("ResourceId.1", ids[0].as_str()));
    full.extend(keys.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    s.ecs("TagResources", &full)
        .await
        .expect_error(400, "InvalidTagCount");
    let mut other_type = base.to_vec();
    other_type[1] = ("ResourceType", "snapshot");
    other_type.extend([("ResourceId.1", ids[0].as_str()), ("Tag.1.Key", "x")]);
    s.ecs("TagResources", &other_type)
        .await
        .expect_error(400, "InvalidResourceType.NotSupported");
    // Disks are tagged too: an instance ID is no disk.
    let mut as_disk = base.to_vec();
    as_disk[1] = ("ResourceType", "disk");
    as_disk.extend([("ResourceId.1", ids[0].as_str()), ("Tag.1.Key", "x")]);
    s.ecs("TagResources", &as_disk)
        .await
        .expect_error(404, "InvalidDiskId.NotFound");
    let mut missing = base.to_vec();
    missing.extend([("ResourceId.1", "i-missing"), ("Tag.1.Key", "x")]);
    s.ecs("TagResources", &missing)
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
}

#[tokio::test]
async fn describe_regions_lists_the_catalogue() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let body = s.ecs("DescribeRegions", &[]).await.ok();
    let regions = body["Regions"]["Region"].as_array().unwrap();
    let hz = regions
        .iter()
        .find(|r| r["RegionId"] == "cn-hangzhou")
        .unwrap();
    assert_eq!(hz["RegionEndpoint"], "ecs-cn-hangzhou.aliyuncs.com");
    assert_eq!(hz["Status"], "available");
    assert!(regions.iter().any(|r| r["RegionId"] == "me-central-1"));
}
