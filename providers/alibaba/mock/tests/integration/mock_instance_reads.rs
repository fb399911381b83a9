//! The reads of an instance Terraform's alicloud provider makes on refresh: DescribeUserData,
//! DescribeNetworkInterfaces (the primary interface), DescribeInstanceMaintenanceAttributes and
//! DescribeInstanceAttachmentAttributes, each consistent with DescribeInstances.

use std::time::Duration;

use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

fn list<'a>(value: &'a Value, wrapper: &str, inner: &str) -> &'a Vec<Value> {
    value[wrapper][inner]
        .as_array()
        .unwrap_or_else(|| panic!("{wrapper}.{inner} is not a list in {value}"))
}

#[tokio::test]
async fn user_data_is_answered_as_it_was_given() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let with = s.run(&[("UserData", "IyEvYmluL3NoCmVjaG8gaGk=")]).await;
    let without = s.run(&[]).await;
    let a = ecs(&s, "DescribeUserData", &[("InstanceId", &with[0])])
        .await
        .ok();
    assert_eq!(a["UserData"], "IyEvYmluL3NoCmVjaG8gaGk=");
    assert_eq!(a["InstanceId"], with[0].as_str());
    assert_eq!(a["RegionId"], REGION);
    let b = ecs(&s, "DescribeUserData", &[("InstanceId", &without[0])])
        .await
        .ok();
    assert_eq!(b["UserData"], "");
    ecs(&s, "DescribeUserData", &[("InstanceId", "i-nope")])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
    ecs(&s, "DescribeUserData", &[])
        .await
        .expect_error(400, "MissingParameter");
}

#[tokio::test]
async fn the_primary_interface_carries_the_instances_addresses_and_groups() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s.run(&[("InternetMaxBandwidthOut", "5")]).await;
    let other = s.run(&[]).await;
    let described = s
        .describe(&[("InstanceIds", &format!("[\"{}\"]", ids[0]))])
        .await;
    let instance = &described["Instances"]["Instance"][0];
    let answer = ecs(&s, "DescribeNetworkInterfaces", &[("InstanceId", &ids[0])])
        .await
        .ok();
    assert_eq!(answer["TotalCount"], 1);
    let eni = &list(&answer, "NetworkInterfaceSets", "NetworkInterfaceSet")[0];
    let primary = &instance["NetworkInterfaces"]["NetworkInterface"][0];
    assert_eq!(eni["NetworkInterfaceId"], primary["NetworkInterfaceId"]);
    assert_eq!(eni["MacAddress"], primary["MacAddress"]);
    assert_eq!(eni["Type"], "Primary");
    assert_eq!(eni["Status"], "InUse");
    assert_eq!(eni["InstanceId"], ids[0].as_str());
    assert_eq!(eni["Attachment"]["InstanceId"], ids[0].as_str());
    assert_eq!(
        eni["PrivateIpAddress"],
        instance["VpcAttributes"]["PrivateIpAddress"]["IpAddress"][0]
    );
    assert_eq!(
        list(eni, "PrivateIpSets", "PrivateIpSet")[0]["Primary"],
        true
    );
    assert_eq!(
        eni["AssociatedPublicIp"]["PublicIpAddress"],
        instance["PublicIpAddress"]["IpAddress"][0]
    );
    assert_eq!(
        list(eni, "SecurityGroupIds", "SecurityGroupId"),
        &[Value::from(SECURITY_GROUP)]
    );
    assert_eq!(eni["VSwitchId"], VSWITCH);
    for (wrapper, inner) in [
        ("Ipv6Sets", "Ipv6Set"),
        ("Ipv4PrefixSets", "Ipv4PrefixSet"),
        ("Ipv6PrefixSets", "Ipv6PrefixSet"),
        ("Tags", "Tag"),
    ] {
        assert!(list(eni, wrapper, inner).is_empty(), "{wrapper}");
    }
    // Filters: by interface ID, by group, by type; both paging styles.
    let id = eni["NetworkInterfaceId"].as_str().unwrap();
    let by_id = ecs(
        &s,
        "DescribeNetworkInterfaces",
        &[("NetworkInterfaceId.1", id)],
    )
    .await
    .ok();
    assert_eq!(by_id["TotalCount"], 1);
    let by_group = ecs(
        &s,
        "DescribeNetworkInterfaces",
        &[("SecurityGroupId", SECURITY_GROUP)],
    )
    .await
    .ok();
    assert_eq!(by_group["TotalCount"], 2);
    let secondary = ecs(&s, "DescribeNetworkInterfaces", &[("Type", "Secondary")])
        .await
        .ok();
    assert_eq!(secondary["TotalCount"], 0);
    let first = ecs(&s, "DescribeNetworkInterfaces", &[("MaxResults", "10")])
        .await
        .ok();
    assert_eq!(first["NextToken"], "");
    assert_eq!(
        list(&first, "NetworkInterfaceSets", "NetworkInterfaceSet").len(),
        2
    );
    assert!(other.len() == 1);
    ecs(&s, "DescribeNetworkInterfaces", &[("Type", "Bogus")])
        .await
        .expect_error(400, "InvalidParameter");
}

#[tokio::test]
async fn maintenance_and_attachment_attributes_show_ecs_defaults() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let ids = s.run(&[("Amount", "2")]).await;
    let m = ecs(
        &s,
        "DescribeInstanceMaintenanceAttributes",
        &[("InstanceId.1", &ids[1])],
    )
    .await
    .ok();
    assert_eq!(m["TotalCount"], 1);
    let a = &list(&m, "MaintenanceAttributes", "MaintenanceAttribute")[0];
    assert_eq!(a["InstanceId"], ids[1].as_str());
    assert_eq!(a["NotifyOnMaintenance"], false);
    assert!(list(a, "MaintenanceWindows", "MaintenanceWindow").is_empty());
    assert_eq!(a["ActionOnMaintenance"]["Value"], "AutoRecover");
    assert_eq!(a["ActionOnMaintenance"]["DefaultValue"], "AutoRecover");
    let all = ecs(&s, "DescribeInstanceMaintenanceAttributes", &[])
        .await
        .ok();
    assert_eq!(all["TotalCount"], 2);
    ecs(
        &s,
        "DescribeInstanceMaintenanceAttributes",
        &[("PageSize", "101")],
    )
    .await
    .expect_error(400, "InvalidParameter");

    let names = serde_json::to_string(&ids).unwrap();
    let att = ecs(
        &s,
        "DescribeInstanceAttachmentAttributes",
        &[("InstanceIds", &names)],
    )
    .await
    .ok();
    assert_eq!(att["TotalCount"], 2);
    let first = &list(&att, "Instances", "Instance")[0];
    assert_eq!(first["InstanceId"], ids[0].as_str());
    assert_eq!(first["PrivatePoolOptionsMatchCriteria"], "None");
    assert_eq!(first["PrivatePoolOptionsId"], "");
    ecs(&s, "DescribeInstanceAttachmentAttributes", &[])
        .await
        .expect_error(400, "MissingParameter");
}
