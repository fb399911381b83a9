//! DescribeAvailableResource and DescribeImages answer from the catalogue RunInstances accepts:
//! what they list launches, what they mark sold out is refused as sold out.

use std::time::Duration;

use alibaba_mock::{OUT_OF_STOCK_TYPE, defaults};
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

fn zones(answer: &Value) -> &Vec<Value> {
    answer["AvailableZones"]["AvailableZone"]
        .as_array()
        .unwrap()
}

fn supported(zone: &Value) -> &Vec<Value> {
    zone["AvailableResources"]["AvailableResource"][0]["SupportedResources"]["SupportedResource"]
        .as_array()
        .unwrap()
}

#[tokio::test]
async fn available_resources_are_what_run_instances_accepts() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let by_zone = ecs(
        &s,
        "DescribeAvailableResource",
        &[("DestinationResource", "Zone")],
    )
    .await
    .ok();
    let ids: Vec<&str> = zones(&by_zone)
        .iter()
        .map(|z| z["ZoneId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "cn-hangzhou-b",
            "cn-hangzhou-g",
            "cn-hangzhou-h",
            "cn-hangzhou-i",
            "cn-hangzhou-j",
            "cn-hangzhou-k"
        ]
    );
    assert_eq!(supported(&zones(&by_zone)[0])[0]["Value"], "cn-hangzhou-b");
    let types = ecs(
        &s,
        "DescribeAvailableResource",
        &[
            ("DestinationResource", "InstanceType"),
            ("ZoneId", "cn-hangzhou-h"),
        ],
    )
    .await
    .ok();
    assert_eq!(zones(&types).len(), 1);
    let zone = &zones(&types)[0];
    assert_eq!(
        zone["AvailableResources"]["AvailableResource"][0]["Type"],
        "InstanceType"
    );
    let vswitch = defaults::vswitch_id("cn-hangzhou-h");
    for t in supported(zone) {
        let id = t["Value"].as_str().unwrap();
        let params = [
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", id),
            ("VSwitchId", vswitch.as_str()),
            ("SecurityGroupId", SECURITY_GROUP),
        ];
        let answer = s.ecs("RunInstances", &params).await;
        if id == OUT_OF_STOCK_TYPE {
            assert_eq!(t["Status"], "SoldOut");
            assert_eq!(t["StatusCategory"], "WithoutStock");
            answer.expect_error(403, "OperationDenied.NoStock");
        } else {
            assert_eq!(t["Status"], "Available", "{id}");
            answer.ok();
        }
    }
    // Filters by cores and memory; disk categories with sizes; unknown destinations refused.
    let two_by_eight = ecs(
        &s,
        "DescribeAvailableResource",
        &[
            ("DestinationResource", "InstanceType"),
            ("ZoneId", "cn-hangzhou-h"),
            ("Cores", "2"),
            ("Memory", "8"),
        ],
    )
    .await
    .ok();
    let values: Vec<&str> = supported(&zones(&two_by_eight)[0])
        .iter()
        .map(|t| t["Value"].as_str().unwrap())
        .collect();
    assert!(values.contains(&"ecs.g6.large") && !values.contains(&"ecs.c6.large"));
    let disks = ecs(
        &s,
        "DescribeAvailableResource",
        &[
            ("DestinationResource", "DataDisk"),
            ("ZoneId", "cn-hangzhou-h"),
            ("DataDiskCategory", "cloud_essd"),
        ],
    )
    .await
    .ok();
    let essd = &supported(&zones(&disks)[0])[0];
    assert_eq!(
        (
            essd["Value"].as_str(),
            essd["Min"].as_u64(),
            essd["Max"].as_u64(),
            essd["Unit"].as_str()
        ),
        (Some("cloud_essd"), Some(20), Some(65536), Some("GiB"))
    );
    let nothing = ecs(
        &s,
        "DescribeAvailableResource",
        &[
            ("DestinationResource", "InstanceType"),
            ("InstanceType", "ecs.nope"),
        ],
    )
    .await
    .ok();
    assert!(zones(&nothing).is_empty());
    ecs(&s, "DescribeAvailableResource", &[])
        .await
        .expect_error(400, "MissingParameter");
    ecs(
        &s,
        "DescribeAvailableResource",
        &[("DestinationResource", "Moon")],
    )
    .await
    .expect_error(400, "InvalidParameter");
}

#[tokio::test]
async fn describe_images_lists_the_images_run_instances_accepts() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let all = ecs(&s, "DescribeImages", &[("PageSize", "100")]).await.ok();
    let images = all["Images"]["Image"].as_array().unwrap();
    assert_eq!(all["TotalCount"].as_u64(), Some(images.len() as u64));
    assert!(images.len() >= 9);
    for image in images {
        let id = image["ImageId"].as_str().unwrap();
        assert_eq!(image["ImageOwnerAlias"], "system");
        assert_eq!(image["Status"], "Available");
        assert!(
            image["CreationTime"].as_str().unwrap().ends_with('Z'),
            "{id}"
        );
        assert_eq!(
            image["DiskDeviceMappings"]["DiskDeviceMapping"][0]["Type"],
            "system"
        );
        assert!(image["Tags"]["Tag"].as_array().unwrap().is_empty());
        let mut params = vec![("ImageId", id), ("InstanceType", TYPE)];
        if image["OSType"] == "windows" {
            params.push(("SystemDisk.Size", "40"));
        }
        s.run(&params).await;
    }
    let one = ecs(&s, "DescribeImages", &[("ImageId", IMAGE)]).await.ok();
    assert_eq!(one["TotalCount"], 1);
    assert_eq!(one["Images"]["Image"][0]["OSType"], "linux");
    assert_eq!(
        one["Images"]["Image"][0]["CreationTime"],
        "2020-05-19T00:00:00Z"
    );
    let windows = ecs(&s, "DescribeImages", &[("OSType", "windows")])
        .await
        .ok();
    assert_eq!(windows["TotalCount"], 2);
    let named = ecs(&s, "DescribeImages", &[("ImageName", "ubuntu_*")])
        .await
        .ok();
    assert_eq!(named["TotalCount"], 2);
    let own = ecs(&s, "DescribeImages", &[("ImageOwnerAlias", "self")])
        .await
        .ok();
    assert_eq!(own["TotalCount"], 0);
    assert!(own["Images"]["Image"].as_array().unwrap().is_empty());
    ecs(&s, "DescribeImages", &[("PageSize", "101")])
        .await
        .expect_error(400, "InvalidParameter");
}
