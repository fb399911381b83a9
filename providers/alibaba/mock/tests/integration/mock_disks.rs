//! Disks over HTTP: RunInstances' system and data disks, CreateDisk with its ClientToken,
//! DescribeDisks' filters and pages, and the rules of AttachDisk, DetachDisk, ResizeDisk,
//! ModifyDiskSpec and DeleteDisk, with ECS's codes.

use std::time::Duration;

use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

const ZONE: &str = "cn-hangzhou-b";

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

async fn create_disk(s: &Signer, params: &[(&str, &str)]) -> String {
    let mut all = vec![
        ("ZoneId", ZONE),
        ("DiskCategory", "cloud_essd"),
        ("Size", "40"),
    ];
    all.extend_from_slice(params);
    let r = ecs(s, "CreateDisk", &all).await.ok();
    r["DiskId"].as_str().unwrap().to_owned()
}

async fn disk(s: &Signer, id: &str) -> Value {
    let ids = format!("[\"{id}\"]");
    let r = ecs(s, "DescribeDisks", &[("DiskIds", &ids)]).await.ok();
    assert_eq!(r["TotalCount"], 1, "{r}");
    r["Disks"]["Disk"][0].clone()
}

#[tokio::test]
async fn run_instances_creates_the_system_and_data_disks_and_release_honours_delete_with_instance()
{
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s
        .run(&[
            ("SystemDisk.Category", "cloud_essd"),
            ("SystemDisk.Size", "40"),
            ("SystemDisk.PerformanceLevel", "PL0"),
            ("DataDisk.1.Category", "cloud_essd"),
            ("DataDisk.1.Size", "100"),
            ("DataDisk.2.Category", "cloud_ssd"),
            ("DataDisk.2.Size", "50"),
            ("DataDisk.2.DeleteWithInstance", "false"),
        ])
        .await;
    let r = ecs(&s, "DescribeDisks", &[("InstanceId", &ids[0])])
        .await
        .ok();
    assert_eq!(r["TotalCount"], 3);
    let disks = r["Disks"]["Disk"].as_array().unwrap();
    assert_eq!(disks[0]["Type"], "system");
    assert_eq!(disks[0]["PerformanceLevel"], "PL0");
    assert_eq!(disks[0]["Device"], "/dev/xvda");
    assert!(disks[0]["DiskId"].as_str().unwrap().starts_with("d-"));
    assert_eq!(
        (disks[1]["Size"].as_u64(), disks[1]["Status"].as_str()),
        (Some(100), Some("In_use"))
    );
    let systems = ecs(
        &s,
        "DescribeDisks",
        &[("InstanceId", &ids[0]), ("DiskType", "system")],
    )
    .await
    .ok();
    assert_eq!(systems["TotalCount"], 1);
    let kept = disks[2]["DiskId"].as_str().unwrap().to_owned();
    // A data disk of a size its category does not offer is refused at launch.
    s.post(
        "RunInstances",
        ECS,
        &[
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
            ("DataDisk.1.Category", "cloud"),
            ("DataDisk.1.Size", "3000"),
        ],
    )
    .await
    .expect_error(400, "InvalidDataDiskSize.ValueNotSupported");
    ecs(&s, "StopInstance", &[("InstanceId", &ids[0])])
        .await
        .ok();
    ecs(&s, "DeleteInstance", &[("InstanceId", &ids[0])])
        .await
        .ok();
    let left = ecs(&s, "DescribeDisks", &[]).await.ok();
    assert_eq!(left["TotalCount"], 1, "{left}");
    assert_eq!(disk(&s, &kept).await["Status"], "Available");
}

#[tokio::test]
async fn create_disk_validates_and_is_idempotent_with_a_client_token() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let a = create_disk(
        &s,
        &[
            ("ClientToken", "t-1"),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    .await;
    let b = create_disk(
        &s,
        &[
            ("ClientToken", "t-1"),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    .await;
    assert_eq!(a, b);
    ecs(
        &s,
        "CreateDisk",
        &[
            ("ZoneId", ZONE),
            ("DiskCategory", "cloud_essd"),
            ("Size", "50"),
            ("ClientToken", "t-1"),
        ],
    )
    .await
    .expect_error(400, "IdempotentParameterMismatch");
    ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", ZONE), ("DiskCategory", "nope"), ("Size", "50")],
    )
    .await
    .expect_error(400, "InvalidDiskCategory.ValueNotSupported");
    ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", ZONE), ("DiskCategory", "cloud_essd")],
    )
    .await
    .expect_error(400, "MissingParameter");
    ecs(
        &s,
        "CreateDisk",
        &[
            ("ZoneId", ZONE),
            ("DiskCategory", "cloud"),
            ("Size", "2001"),
        ],
    )
    .await
    .expect_error(400, "InvalidSize.ValueNotSupported");
    ecs(
        &s,
        "CreateDisk",
        &[
            ("ZoneId", ZONE),
            ("DiskCategory", "cloud_essd"),
            ("PerformanceLevel", "PL3"),
            ("Size", "100"),
        ],
    )
    .await
    .expect_error(403, "OperationDenied.PerformanceLevelNotMatch");
    ecs(
        &s,
        "CreateDisk",
        &[
            ("ZoneId", ZONE),
            ("DiskCategory", "cloud_ssd"),
            ("PerformanceLevel", "PL1"),
            ("Size", "100"),
        ],
    )
    .await
    .expect_error(400, "InvalidParameter.Conflict");
    ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", ZONE), ("Size", "100"), ("KMSKeyId", "k-1")],
    )
    .await
    .expect_error(400, "InvalidParameter.EncryptedIllegal");
    ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", "cn-beijing-a"), ("Size", "100")],
    )
    .await
    .expect_error(404, "InvalidZoneId.NotFound");
    ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", ZONE), ("Size", "100"), ("DiskName", "1bad")],
    )
    .await
    .expect_error(400, "InvalidDiskName.Malformed");
    let d = disk(&s, &a).await;
    assert_eq!(
        (d["Category"].as_str(), d["PerformanceLevel"].as_str()),
        (Some("cloud_essd"), Some("PL1"))
    );
    assert_eq!(d["Tags"]["Tag"][0]["TagKey"], "team");
    assert_eq!(d["Portable"], true);
}

#[tokio::test]
async fn describe_disks_filters_and_pages() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    for i in 0..5 {
        let zone = if i % 2 == 0 { ZONE } else { "cn-hangzhou-h" };
        let name = format!("disk{i}");
        ecs(
            &s,
            "CreateDisk",
            &[
                ("ZoneId", zone),
                ("Size", "20"),
                ("DiskName", &name),
                ("Tag.1.Key", "k"),
                ("Tag.1.Value", if i < 2 { "x" } else { "y" }),
            ],
        )
        .await
        .ok();
    }
    let r = ecs(&s, "DescribeDisks", &[("ZoneId", ZONE)]).await.ok();
    assert_eq!(r["TotalCount"], 3);
    let r = ecs(
        &s,
        "DescribeDisks",
        &[("Tag.1.Key", "k"), ("Tag.1.Value", "x")],
    )
    .await
    .ok();
    assert_eq!(r["TotalCount"], 2);
    let r = ecs(
        &s,
        "DescribeDisks",
        &[("PageSize", "2"), ("PageNumber", "3")],
    )
    .await
    .ok();
    assert_eq!(
        (
            r["TotalCount"].as_u64(),
            r["Disks"]["Disk"].as_array().map(Vec::len)
        ),
        (Some(5), Some(1))
    );
    assert_eq!(r["Disks"]["Disk"][0]["DiskName"], "disk4");
    let first = ecs(&s, "DescribeDisks", &[("MaxResults", "3")]).await.ok();
    let token = first["NextToken"].as_str().unwrap().to_owned();
    assert!(!token.is_empty());
    let rest = ecs(
        &s,
        "DescribeDisks",
        &[("MaxResults", "3"), ("NextToken", &token)],
    )
    .await
    .ok();
    assert_eq!(rest["Disks"]["Disk"].as_array().map(Vec::len), Some(2));
    assert_eq!(rest["NextToken"], "");
    ecs(&s, "DescribeDisks", &[("DiskIds", "not json")])
        .await
        .expect_error(400, "InvalidDiskIds.Malformed");
    // Another account sees none of them.
    mock.add_access_key(alibaba_mock::AccessKey::new("ak-2", "secret-2", "2222"));
    let other = Signer::with_key(&mock, "ak-2", "secret-2");
    assert_eq!(
        ecs(&other, "DescribeDisks", &[]).await.ok()["TotalCount"],
        0
    );
}

#[tokio::test]
async fn attach_detach_resize_spec_and_delete_follow_ecs_rules() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let instance = s.run(&[]).await.remove(0);
    let id = create_disk(&s, &[]).await;
    let far = ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", "cn-hangzhou-h"), ("Size", "20")],
    )
    .await
    .ok();
    let far = far["DiskId"].as_str().unwrap();
    ecs(
        &s,
        "AttachDisk",
        &[("DiskId", far), ("InstanceId", &instance)],
    )
    .await
    .expect_error(403, "ResourcesNotInSameZone");
    ecs(
        &s,
        "AttachDisk",
        &[("DiskId", "d-nope"), ("InstanceId", &instance)],
    )
    .await
    .expect_error(404, "InvalidDiskId.NotFound");
    ecs(
        &s,
        "AttachDisk",
        &[("DiskId", &id), ("InstanceId", "i-nope")],
    )
    .await
    .expect_error(404, "InvalidInstanceId.NotFound");
    ecs(
        &s,
        "AttachDisk",
        &[("DiskId", &id), ("InstanceId", &instance)],
    )
    .await
    .ok();
    let d = disk(&s, &id).await;
    assert_eq!(
        (d["Status"].as_str(), d["InstanceId"].as_str()),
        (Some("In_use"), Some(instance.as_str()))
    );
    ecs(
        &s,
        "AttachDisk",
        &[("DiskId", &id), ("InstanceId", &instance)],
    )
    .await
    .expect_error(403, "IncorrectDiskStatus");
    ecs(&s, "DeleteDisk", &[("DiskId", &id)])
        .await
        .expect_error(403, "DiskStillAttached");
    // Disks never shrink; online resizing of an attached disk of a Running instance.
    ecs(&s, "ResizeDisk", &[("DiskId", &id), ("NewSize", "30")])
        .await
        .expect_error(403, "InvalidDiskSize.TooSmall");
    ecs(
        &s,
        "ResizeDisk",
        &[("DiskId", &id), ("NewSize", "40"), ("Type", "online")],
    )
    .await
    .expect_error(403, "InvalidDiskSize.TooSmall");
    ecs(
        &s,
        "ResizeDisk",
        &[("DiskId", &id), ("NewSize", "80"), ("Type", "online")],
    )
    .await
    .ok();
    assert_eq!(disk(&s, &id).await["Size"], 80);
    ecs(
        &s,
        "ResizeDisk",
        &[("DiskId", far), ("NewSize", "80"), ("Type", "online")],
    )
    .await
    .expect_error(403, "IncorrectDiskStatus");
    // Performance levels for cloud_essd only, within the size each level needs.
    ecs(
        &s,
        "ModifyDiskSpec",
        &[("DiskId", &id), ("PerformanceLevel", "PL2")],
    )
    .await
    .expect_error(403, "OperationDenied.PerformanceLevelNotMatch");
    ecs(
        &s,
        "ModifyDiskSpec",
        &[("DiskId", &id), ("PerformanceLevel", "PL0")],
    )
    .await
    .ok();
    assert_eq!(disk(&s, &id).await["PerformanceLevel"], "PL0");
    ecs(
        &s,
        "ModifyDiskSpec",
        &[("DiskId", far), ("PerformanceLevel", "PL1")],
    )
    .await
    .expect_error(403, "OperationDenied");
    // The system disk leaves only a Stopped instance.
    let system = ecs(
        &s,
        "DescribeDisks",
        &[("InstanceId", &instance), ("DiskType", "system")],
    )
    .await
    .ok();
    let system = system["Disks"]["Disk"][0]["DiskId"]
        .as_str()
        .unwrap()
        .to_owned();
    ecs(
        &s,
        "DetachDisk",
        &[("DiskId", &system), ("InstanceId", &instance)],
    )
    .await
    .expect_error(403, "IncorrectInstanceStatus");
    // A disk attached nowhere is already detached, with ECS's own code.
    ecs(
        &s,
        "DetachDisk",
        &[("DiskId", far), ("InstanceId", &instance)],
    )
    .await
    .expect_error(404, "InvalidDisk.AlreadyDetached");
    ecs(
        &s,
        "DetachDisk",
        &[("DiskId", &id), ("InstanceId", &instance)],
    )
    .await
    .ok();
    assert_eq!(disk(&s, &id).await["Status"], "Available");
    ecs(&s, "DeleteDisk", &[("DiskId", &id)]).await.ok();
    assert_eq!(
        ecs(&s, "DescribeDisks", &[("DiskIds", &format!("[\"{id}\"]"))])
            .await
            .ok()["TotalCount"],
        0
    );
    // Releasing a disk that is gone is ignored, as ECS documents.
    ecs(&s, "DeleteDisk", &[("DiskId", &id)]).await.ok();
    // Disk tags through TagResources / UntagResources.
    ecs(
        &s,
        "TagResources",
        &[
            ("ResourceType", "disk"),
            ("ResourceId.1", far),
            ("Tag.1.Key", "a"),
            ("Tag.1.Value", "1"),
        ],
    )
    .await
    .ok();
    assert_eq!(disk(&s, far).await["Tags"]["Tag"][0]["TagValue"], "1");
    ecs(
        &s,
        "UntagResources",
        &[
            ("ResourceType", "disk"),
            ("ResourceId.1", far),
            ("TagKey.1", "a"),
        ],
    )
    .await
    .ok();
    assert_eq!(
        disk(&s, far).await["Tags"]["Tag"].as_array().map(Vec::len),
        Some(0)
    );
}
