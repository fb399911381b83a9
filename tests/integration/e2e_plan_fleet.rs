//! `ferroplane plan` of an ECSFleet, held to what the fleet controller then does: the sample
//! fleet settled, a plan from the cluster says `no change`; a manifest scaling it from 6 to 8
//! is planned as two named creates in named zones, and after the apply exactly those members
//! appear there. The rollout's own decisions are unit tests of the decision the plan and the
//! controller share (`provider-alibaba` `fleet::decision`).

use std::collections::BTreeSet;

use alibaba_mock::StockLimit;
use ferroplane::controllers::Kind;
use ferroplane_testkit::samples;
use serde_json::Value;

use crate::e2e_fleet::{FIRST_TYPE, ZONE_A, wait_fleet};
use crate::e2e_plan::{plan, plan_as};
use crate::support::E2e;

async fn member_names(e2e: &E2e) -> BTreeSet<String> {
    e2e.k(&[
        "get",
        "ecs",
        "-l",
        "ferroplane.io/fleet=web",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}",
    ])
    .await
    .lines()
    .filter(|l| !l.is_empty())
    .map(str::to_owned)
    .collect()
}

fn fleet_plan(document: &Value) -> &Value {
    document["objects"]
        .as_array()
        .and_then(|objects| objects.iter().find(|o| o["kind"] == "ECSFleet"))
        .unwrap_or_else(|| panic!("no fleet in the plan: {document}"))
}

pub(crate) async fn plan_predicts_the_members_a_fleet_creates() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.mock().set_stock(&StockLimit {
        zone_id: ZONE_A.into(),
        instance_type: FIRST_TYPE.into(),
        available: Some(0),
    });
    let sample = samples::without_namespace("fleet.yaml");
    e2e.apply(&sample).await;
    wait_fleet(&e2e, 6).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("fleet.yaml");

    // Settled: the manifest as applied changes nothing.
    std::fs::write(&file, &sample).expect("write");
    let (code, document) = plan(&e2e, &file).await;
    assert_eq!(fleet_plan(&document)["action"], "no-change", "{document}");
    assert_eq!(code, 0, "{document}");

    // Scaled to 8: two creates, named, in the zones the placement picks.
    let scaled = sample.replace("replicas: 6", "replicas: 8");
    assert_ne!(
        scaled, sample,
        "the sample's replicas changed: update the test"
    );
    std::fs::write(&file, &scaled).expect("write");
    let (code, document) = plan(&e2e, &file).await;
    let fleet = fleet_plan(&document);
    assert_eq!(code, 2, "{document}");
    assert_eq!(fleet["action"], "update-in-place", "{fleet}");
    let predicted: BTreeSet<String> = fleet["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            assert_eq!(c["class"], "create", "{c}");
            c["description"].as_str().expect("text").to_owned()
        })
        .collect();
    assert_eq!(predicted.len(), 2, "{fleet}");
    let (_, table) = plan_as(&e2e, &file, "table").await;
    assert!(table.contains("ECSFleet"), "{table}");

    let before = member_names(&e2e).await;
    e2e.apply(&scaled).await;
    wait_fleet(&e2e, 8).await;
    let after = member_names(&e2e).await;
    let mut made = BTreeSet::new();
    for name in after.difference(&before) {
        let zone = e2e
            .jsonpath(&format!("ecs/{name}"), "{.spec.forProvider.zoneId}")
            .await;
        let instance_type = e2e
            .jsonpath(&format!("ecs/{name}"), "{.spec.forProvider.instanceType}")
            .await;
        made.insert(format!("create {name} in {zone} ({instance_type})"));
    }
    assert_eq!(
        made, predicted,
        "the plan named the members the controller made"
    );
    e2e.finish().await;
}
