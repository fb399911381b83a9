//! Capacity: stock per (zone, instance type) that runs out with `OperationDenied.NoStock`, and
//! spot reclaims that lock an instance as `Recycling` before releasing it.

use std::time::Duration;

use ferroplane_testkit::eventually;
use ferroplane_testkit::mock_requests::*;
use serde_json::{Value, json};

const ZONE: &str = "cn-hangzhou-b";

async fn post(url: String, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// RunInstances of `amount` instances of the test type in the default zone, refused for stock.
async fn refused_for_stock(s: &Signer, amount: &str) {
    s.ecs(
        "RunInstances",
        &[
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
            ("Amount", amount),
        ],
    )
    .await
    .expect_error(403, "OperationDenied.NoStock");
}

#[tokio::test]
async fn stock_runs_out_per_zone_and_type_with_no_stock() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (status, _) = post(
        format!("{}/_mock/stock", mock.endpoint()),
        json!({"zoneId": ZONE, "instanceType": TYPE, "available": 2}),
    )
    .await;
    assert_eq!(status, 200);
    // A call for more than is left launches nothing (ECS launches all of a call or none).
    refused_for_stock(&s, "3").await;
    assert_eq!(s.run(&[("Amount", "2")]).await.len(), 2);
    refused_for_stock(&s, "1").await;
    let listed: Value = reqwest::get(format!("{}/_mock/stock", mock.endpoint()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed,
        json!([{"zoneId": ZONE, "instanceType": TYPE, "available": 0}])
    );
    // Another type in the zone is not limited; removing the limit sells the type again.
    assert_eq!(s.run(&[("InstanceType", "ecs.c6.large")]).await.len(), 1);
    post(
        format!("{}/_mock/stock", mock.endpoint()),
        json!({"zoneId": ZONE, "instanceType": TYPE, "available": null}),
    )
    .await;
    assert_eq!(s.run(&[]).await.len(), 1);
    assert_eq!(mock.stats().instances_live, 4);
    let (status, body) = post(
        format!("{}/_mock/stock", mock.endpoint()),
        json!({"zone": ZONE}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
}

fn locks(described: &Value, id: &str) -> Value {
    described["Instances"]["Instance"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["InstanceId"] == id)
        .map(|i| i["OperationLocks"]["LockReason"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_reclaimed_spot_instance_is_locked_recycling_then_released() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let on_demand = s.run(&[]).await.remove(0);
    let spot = s
        .run(&[("SpotStrategy", "SpotAsPriceGo"), ("Amount", "2")])
        .await;
    // ECS reclaims only spot instances.
    let (status, body) = post(
        format!("{}/_mock/reclaim", mock.endpoint()),
        json!({"instanceId": on_demand}),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("not a spot instance")
    );

    // Locked for the whole notice, with DescribeInstances' shape of the lock.
    let (status, _) = post(
        format!("{}/_mock/reclaim", mock.endpoint()),
        json!({"instanceId": spot[0], "noticeMs": 3_600_000}),
    )
    .await;
    assert_eq!(status, 200);
    let described = s.describe(&[]).await;
    assert_eq!(
        locks(&described, &spot[0]),
        json!([{"LockReason": "Recycling"}])
    );
    assert_eq!(locks(&described, &spot[1]), json!([]));
    assert_eq!(locks(&described, &on_demand), json!([]));

    // Released once the notice is over.
    mock.reclaim_spot(&spot[1], Duration::ZERO).unwrap();
    eventually("the reclaimed instance released")
        .within(Duration::from_secs(10))
        .every(Duration::from_millis(50))
        .until(|| (mock.stats().instances_live == 2).then_some(()))
        .await;
    let described = s.describe(&[]).await;
    assert_eq!(locks(&described, &spot[1]), Value::Null, "{described}");
    assert!(mock.reclaim_spot(&spot[1], Duration::ZERO).is_err());
}
