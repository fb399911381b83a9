//! The optional visibility lag: listings (DescribeInstances, tag searches) show a new instance only
//! after the lag, and a released one for the lag after its release; reads by ID are not delayed.

use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer};
use ferroplane_testkit::eventually;
use ferroplane_testkit::mock_requests::*;

/// Long enough that the calls right after a create or release all fall inside it.
const LAG: Duration = Duration::from_secs(5);

/// How many instances each listing shows (all, by ID, by tag, tag resources), and the full
/// listing. Taken one after the other, so near the end of a lag they may disagree for a moment;
/// the checks wait for them to agree.
async fn listed(s: &Signer, id: &str) -> ([usize; 4], Vec<serde_json::Value>) {
    let all = instances(&s.describe(&[]).await);
    let by_id = instances(&s.describe(&[("InstanceIds", &format!("[\"{id}\"]"))]).await);
    let by_tag = instances(
        &s.describe(&[("Tag.1.Key", "app"), ("Tag.1.Value", "lag")])
            .await,
    );
    let tagged = s
        .ecs(
            "ListTagResources",
            &[
                ("RegionId", REGION),
                ("ResourceType", "instance"),
                ("Tag.1.Key", "app"),
                ("Tag.1.Value", "lag"),
            ],
        )
        .await
        .ok();
    let tag_hits = tagged["TagResources"]["TagResource"]
        .as_array()
        .map_or(0, Vec::len);
    ([all.len(), by_id.len(), by_tag.len(), tag_hits], all)
}

#[tokio::test]
async fn creates_and_releases_show_in_listings_after_the_lag() {
    let mock = MockServer::start(
        MockConfig::new(AK, SECRET)
            .with_transition_delay(Duration::ZERO)
            .with_visibility_lag(LAG),
    )
    .await
    .unwrap();
    let s = Signer::new(&mock);
    let id = s
        .run(&[("Tag.1.Key", "app"), ("Tag.1.Value", "lag")])
        .await
        .remove(0);
    assert_eq!(
        listed(&s, &id).await.0,
        [0; 4],
        "not listed right after the create"
    );
    // A read by ID sees it at once.
    s.ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    eventually("the new instance is listed")
        .within(LAG * 3)
        .until_async(|| {
            let (s, id) = (s.clone(), id.clone());
            async move { listed(&s, &id).await.0 == [1; 4] }
        })
        .await;

    s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .ok();
    assert!(mock.instances().is_empty(), "released at once");
    s.ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
    let (counts, still) = listed(&s, &id).await;
    assert_eq!(counts, [1; 4], "still listed right after the release");
    assert_eq!(
        still[0]["Status"], "Stopping",
        "it was released while running"
    );
    eventually("the released instance leaves the listings")
        .within(LAG * 3)
        .until_async(|| {
            let (s, id) = (s.clone(), id.clone());
            async move { listed(&s, &id).await.0 == [0; 4] }
        })
        .await;

    // Off again: consistent at once.
    mock.set_visibility_lag(Duration::ZERO);
    let next = s
        .run(&[("Tag.1.Key", "app"), ("Tag.1.Value", "lag")])
        .await
        .remove(0);
    assert_eq!(listed(&s, &next).await.0, [1; 4]);
}
