//! 100,000 live instances created through the library API, then described in batches of 100 IDs
//! over HTTP, plus a scan of a whole region with NextToken pages.

use std::collections::HashSet;
use std::time::Duration;

use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec};
use ferroplane_testkit::mock_requests::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_thousand_instances() {
    let mock = start(Duration::from_secs(600)).await;
    let spec = LaunchSpec {
        tags: vec![("fleet".into(), "scale".into())],
        ..LaunchSpec::new(REGION, IMAGE, TYPE).with_default_network()
    };
    let mut ids = Vec::with_capacity(100_000);
    for _ in 0..10 {
        ids.extend(
            mock.create_instances(DEFAULT_ACCOUNT_ID, &spec, 10_000)
                .unwrap(),
        );
    }
    // A few in another region must not show up in this region's listings.
    mock.create_instances(
        DEFAULT_ACCOUNT_ID,
        &LaunchSpec::new("cn-beijing", IMAGE, TYPE).with_default_network(),
        10,
    )
    .unwrap();
    let stats = mock.stats();
    assert_eq!(
        (stats.instances_created, stats.instances_live),
        (100_010, 100_010)
    );
    assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        100_000,
        "IDs are unique"
    );

    let s = Signer::new(&mock);
    // Every 10th batch of 100 IDs, over HTTP (100 calls cover 10,000 instances).
    for batch in ids.chunks(100).step_by(10) {
        let body = s
            .describe(&[
                ("InstanceIds", &serde_json::to_string(batch).unwrap()),
                ("MaxResults", "100"),
            ])
            .await;
        let found = instances(&body);
        assert_eq!(found.len(), batch.len());
        assert!(
            found.iter().all(|i| i["Status"] == "Pending"
                && batch.iter().any(|id| i["InstanceId"] == id.as_str()))
        );
    }
    // The first NextToken pages of the full region.
    let first = s.describe(&[("MaxResults", "100")]).await;
    assert_eq!(first["TotalCount"], 100_000);
    let token = first["NextToken"].as_str().unwrap();
    let second = s
        .describe(&[("MaxResults", "100"), ("NextToken", token)])
        .await;
    assert_eq!(instances(&second)[0]["InstanceId"], ids[100].as_str());
    let tagged = s
        .describe(&[("Tag.1.Key", "fleet"), ("PageSize", "1")])
        .await;
    // ECS resolves a tag filter to at most 1,000 tagged instances (its reference for
    // `Tag.N.Key`): the 100,000 tagged ones are listed as 1,000.
    assert_eq!(tagged["TotalCount"], 1_000);
    assert_eq!(mock.stats().calls_of("DescribeInstances"), 103);
}
