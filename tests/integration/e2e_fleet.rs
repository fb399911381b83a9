//! ECSFleet end to end, driven by kubectl: the sample fleet of 6 over zones a and b of
//! cn-beijing, with zone a out of stock for the first instance type, ends with 6 Ready
//! instances placed by the rules; an image change rolls with maxSurge 1 and maxUnavailable 1
//! without ever having fewer than 5 Ready members (judged from every watch event of the
//! members, not from samples); `kubectl scale` to 9 and back to 3 works; deleting the fleet
//! releases every instance; a spot member whose instance ECS reclaims is replaced.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alibaba_mock::StockLimit;
use ferroplane::controllers::Kind;
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::{ConditionStatus, Managed};
use ferroplane_testkit::samples;
use futures::StreamExt;
use kube::ResourceExt;
use kube::runtime::watcher;

use crate::support::E2e;

pub(crate) const ZONE_A: &str = "cn-beijing-a";
const ZONE_B: &str = "cn-beijing-b";
pub(crate) const FIRST_TYPE: &str = "ecs.g6.large";
const SECOND_TYPE: &str = "ecs.c6.large";
const NEW_IMAGE: &str = "ubuntu_22_04_x64_20G_alibase_20240130.vhd";

/// How long the fleet may take to settle: creates, ECS's refusals, replacements and releases,
/// each at the members' next reconcile.
const SETTLE: Duration = Duration::from_secs(240);

/// The members' Ready state as every watch event leaves it, and the fewest Ready seen once the
/// watch's initial list was complete.
#[derive(Default)]
struct ReadyLedger {
    ready: BTreeMap<String, bool>,
    listed: bool,
    fewest: Option<usize>,
}

impl ReadyLedger {
    fn count(&self) -> usize {
        self.ready.values().filter(|r| **r).count()
    }

    fn apply(&mut self, instance: &ECSInstance, gone: bool) {
        let ready = !gone
            && instance.metadata.deletion_timestamp.is_none()
            && instance
                .conditions()
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == ConditionStatus::True);
        self.ready.insert(instance.name_any(), ready);
        self.note();
    }

    fn note(&mut self) {
        let count = self.count();
        if self.listed && self.fewest.is_none_or(|f| count < f) {
            self.fewest = Some(count);
        }
    }
}

/// Watches the fleet's members and records their Ready state after every event.
fn follow_members(e2e: &E2e) -> (Arc<Mutex<ReadyLedger>>, tokio::task::JoinHandle<()>) {
    let api: kube::Api<ECSInstance> = kube::Api::namespaced(e2e.client().clone(), &e2e.namespace);
    let ledger = Arc::new(Mutex::new(ReadyLedger::default()));
    let writer = ledger.clone();
    let task = tokio::spawn(async move {
        let config = watcher::Config::default().labels("ferroplane.io/fleet=web");
        let mut events = watcher(api, config).boxed();
        while let Some(event) = events.next().await {
            let Ok(event) = event else { continue };
            let mut ledger = writer.lock().unwrap();
            match event {
                watcher::Event::Apply(o) | watcher::Event::InitApply(o) => ledger.apply(&o, false),
                watcher::Event::Delete(o) => ledger.apply(&o, true),
                watcher::Event::Init => {}
                watcher::Event::InitDone => {
                    ledger.listed = true;
                    ledger.note();
                }
            }
        }
    });
    (ledger, task)
}

/// Waits until the fleet says it is Ready with `replicas` members, all Ready and up to date.
pub(crate) async fn wait_fleet(e2e: &E2e, replicas: u32) {
    let want = format!("True {replicas} {replicas} {replicas}");
    e2e.eventually(&format!("fleet web Ready with {replicas}"), SETTLE, || async {
        let got = e2e
            .jsonpath(
                "fleet/web",
                "{.status.conditions[?(@.type=='Ready')].status} {.status.replicas} {.status.readyReplicas} {.status.updatedReplicas}",
            )
            .await;
        (got == want).then_some(())
    })
    .await;
}

/// (zone, type, image) of each live mock instance of the fleet's members, and how many.
async fn placements(e2e: &E2e) -> BTreeMap<(String, String, String), usize> {
    let names = e2e
        .k(&["get", "ecs", "-l", "ferroplane.io/fleet=web", "-o", "name"])
        .await;
    let mut out = BTreeMap::new();
    for name in names.lines().filter(|l| !l.is_empty()) {
        for instance in e2e.instances_of(name).await {
            *out.entry((instance.zone_id, instance.instance_type, instance.image_id))
                .or_default() += 1;
        }
    }
    out
}

pub(crate) async fn a_fleet_places_rolls_and_scales() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.mock().set_stock(&StockLimit {
        zone_id: ZONE_A.into(),
        instance_type: FIRST_TYPE.into(),
        available: Some(0),
    });
    let created_before = e2e.mock().created(alibaba_mock::ResourceKind::Instance);
    // The sample's web servers as spot instances, so that one can be reclaimed below.
    let sample = samples::without_namespace("fleet.yaml");
    let spot = sample.replace(
        "        instanceName: web\n",
        "        instanceName: web\n        spotStrategy: SpotAsPriceGo\n",
    );
    assert_ne!(
        spot, sample,
        "the sample's template changed: put spotStrategy elsewhere"
    );
    e2e.apply(&spot).await;
    wait_fleet(&e2e, 6).await;

    // Zone a could not take the first type: its members run the second; balanced 3 and 3.
    let old_image = "centos_7_9_x64_20G_alibase_20240628.vhd";
    let expected = BTreeMap::from([
        ((ZONE_A.into(), SECOND_TYPE.into(), old_image.into()), 3),
        ((ZONE_B.into(), FIRST_TYPE.into(), old_image.into()), 3),
    ]);
    assert_eq!(placements(&e2e).await, expected);
    let refused = e2e
        .jsonpath(
            "fleet/web",
            "{.status.refusedPlacements[*].zoneId}/{.status.refusedPlacements[*].instanceType}/{.status.refusedPlacements[*].reason}",
        )
        .await;
    assert_eq!(refused, format!("{ZONE_A}/{FIRST_TYPE}/NoStock"));
    // ECS refused zone a's first launches; only the 6 that run were ever created.
    assert_eq!(
        e2e.mock().created(alibaba_mock::ResourceKind::Instance) - created_before,
        6
    );

    // An image change rolls: never fewer than 5 Ready members, at every watch event.
    let (ledger, follower) = follow_members(&e2e);
    e2e.k(&[
        "patch",
        "fleet/web",
        "--type=merge",
        "-p",
        &format!(
            r#"{{"spec":{{"template":{{"spec":{{"forProvider":{{"imageId":"{NEW_IMAGE}"}}}}}}}}}}"#
        ),
    ])
    .await;
    e2e.eventually("the rollout to start", SETTLE, || async {
        let hashes = e2e
            .jsonpath(
                "ecs",
                "{range .items[*]}{.metadata.labels.ferroplane\\.io/template-hash}{\"\\n\"}{end}",
            )
            .await;
        (hashes.lines().collect::<BTreeSet<_>>().len() > 1).then_some(())
    })
    .await;
    wait_fleet(&e2e, 6).await;
    e2e.eventually("the old instances released", SETTLE, || async {
        let p = placements(&e2e).await;
        p.keys()
            .all(|(_, _, image)| image == NEW_IMAGE)
            .then_some(p)
    })
    .await;
    follower.abort();
    let fewest = ledger.lock().unwrap().fewest;
    assert!(
        fewest.is_some_and(|f| f >= 5),
        "fewest Ready members during the rollout: {fewest:?}"
    );

    // kubectl scale, up and down.
    e2e.k(&["scale", "fleet/web", "--replicas=9"]).await;
    wait_fleet(&e2e, 9).await;
    e2e.k(&["scale", "fleet/web", "--replicas=3"]).await;
    wait_fleet(&e2e, 3).await;
    e2e.eventually("3 instances left in the cloud", SETTLE, || async {
        let p = placements(&e2e).await;
        (p.values().sum::<usize>() == 3).then_some(())
    })
    .await;

    // ECS reclaims a spot instance (locked as Recycling, then released): its member is
    // replaced and counted.
    let members = e2e
        .k(&["get", "ecs", "-l", "ferroplane.io/fleet=web", "-o", "name"])
        .await;
    let mut victim = None;
    for member in members.lines().filter(|l| !l.is_empty()) {
        if let Some(instance) = e2e.instances_of(member).await.into_iter().next() {
            victim = Some(instance.instance_id);
            break;
        }
    }
    let victim = victim.expect("a live instance of the fleet");
    e2e.mock()
        .reclaim_spot(&victim, Duration::from_millis(500))
        .expect("a spot member can be reclaimed");
    e2e.eventually("the lost member replaced", SETTLE, || async {
        let got = e2e
            .jsonpath(
                "fleet/web",
                "{.status.lostReplaced} {.status.conditions[?(@.type=='Ready')].status} {.status.readyReplicas}",
            )
            .await;
        if got == "1 True 3" {
            return Ok(());
        }
        let members = e2e
            .jsonpath(
                "ecs",
                "{range .items[*]}{.metadata.name} {.metadata.annotations.ferroplane\\.io/external-name} {.metadata.deletionTimestamp} {.status.conditions[*].reason}; {end}",
            )
            .await;
        let events = e2e
            .k(&["get", "events", "-o", "jsonpath={range .items[*]}{.reason}: {.message}; {end}"])
            .await;
        let cloud: Vec<String> = e2e
            .mock()
            .resources()
            .into_iter()
            .filter(|r| r.kind == alibaba_mock::ResourceKind::Instance)
            .map(|r| format!("{r:?}"))
            .collect();
        Err(format!(
            "fleet {got}; victim {victim}; members {members}; events {events}; cloud {cloud:?}"
        ))
    })
    .await;
    let live = e2e
        .jsonpath(
            "ecs",
            "{.items[*].metadata.annotations.ferroplane\\.io/external-name}",
        )
        .await;
    assert!(!live.split_whitespace().any(|id| id == victim), "{live}");

    // Deleting the fleet deletes its members, which release their instances: nothing of the
    // fleet is left in the cloud.
    e2e.k(&["delete", "fleet/web"]).await;
    e2e.eventually("every member gone", SETTLE, || async {
        e2e.k(&["get", "ecs", "-o", "name"])
            .await
            .trim()
            .is_empty()
            .then_some(())
    })
    .await;
    let live: Vec<_> = e2e
        .mock()
        .resources()
        .into_iter()
        .filter(|r| r.kind == alibaba_mock::ResourceKind::Instance)
        .collect();
    assert!(live.is_empty(), "instances left: {live:?}");
    e2e.finish().await;
}

/// A rollout to an image ECS does not have makes no progress: at the deadline it stops with
/// `ProgressDeadlineExceeded`, the old members still serving; going back to the old image
/// completes the fleet again without touching them.
pub(crate) async fn a_rollout_that_makes_no_progress_stops_at_its_deadline() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let fleet = samples::without_namespace("fleet.yaml")
        .replace(
            "  replicas: 6\n",
            "  replicas: 3\n  progressDeadlineSeconds: 15\n",
        )
        .replace("      maxUnavailable: 1\n", "      maxUnavailable: 0\n");
    assert!(
        fleet.contains("progressDeadlineSeconds: 15"),
        "the sample changed"
    );
    e2e.apply(&fleet).await;
    wait_fleet(&e2e, 3).await;
    let old_image = "centos_7_9_x64_20G_alibase_20240628.vhd";
    let set_image = |image: &str| {
        format!(r#"{{"spec":{{"template":{{"spec":{{"forProvider":{{"imageId":"{image}"}}}}}}}}}}"#)
    };
    e2e.k(&[
        "patch",
        "fleet/web",
        "--type=merge",
        "-p",
        &set_image("m-nosuchimage"),
    ])
    .await;
    e2e.eventually("the rollout stopped at its deadline", SETTLE, || async {
        let reason = e2e
            .jsonpath(
                "fleet/web",
                "{.status.conditions[?(@.type=='Progressing')].reason}",
            )
            .await;
        (reason == "ProgressDeadlineExceeded").then_some(())
    })
    .await;
    // The old members still serve: three Ready on the old image, nothing of them released.
    assert_eq!(
        e2e.jsonpath(
            "fleet/web",
            "{.status.readyReplicas} {.status.updatedReadyReplicas}"
        )
        .await,
        "3 0"
    );
    let images: Vec<String> = placements(&e2e)
        .await
        .into_iter()
        .flat_map(|((_, _, image), n)| std::iter::repeat_n(image, n))
        .collect();
    assert_eq!(images, vec![old_image.to_owned(); 3]);

    // Back to the old image: the failed member goes, the fleet is complete again.
    e2e.k(&[
        "patch",
        "fleet/web",
        "--type=merge",
        "-p",
        &set_image(old_image),
    ])
    .await;
    wait_fleet(&e2e, 3).await;
    e2e.eventually("only the three old members left", SETTLE, || async {
        let names = e2e
            .k(&["get", "ecs", "-l", "ferroplane.io/fleet=web", "-o", "name"])
            .await;
        (names.lines().filter(|l| !l.is_empty()).count() == 3).then_some(())
    })
    .await;
    assert_eq!(
        e2e.mock().stats().instances_live,
        3,
        "no instance of the old members was replaced"
    );
    e2e.finish().await;
}

/// A fleet placed in zone b alone while zone a had no stock moves back to an even spread once
/// a has stock again: after the refusal expires, one member at a time is created in a and a
/// member of b deleted only once it is Ready, so the fleet never has fewer Ready members than
/// `replicas` (judged from every watch event of the members).
pub(crate) async fn a_fleet_moves_back_to_a_zone_with_stock_again() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    for instance_type in [FIRST_TYPE, SECOND_TYPE] {
        e2e.mock().set_stock(&StockLimit {
            zone_id: ZONE_A.into(),
            instance_type: instance_type.into(),
            available: Some(0),
        });
    }
    let fleet = samples::without_namespace("fleet.yaml")
        .replace("  replicas: 6\n", "  replicas: 4\n")
        .replace(
            "    spread: Balanced\n",
            "    spread: Balanced\n    retryRefusedAfterSeconds: 10\n",
        );
    assert!(
        fleet.contains("replicas: 4") && fleet.contains("retryRefusedAfterSeconds: 10"),
        "the sample changed"
    );
    e2e.apply(&fleet).await;
    wait_fleet(&e2e, 4).await;
    let old_image = "centos_7_9_x64_20G_alibase_20240628.vhd";
    assert_eq!(
        placements(&e2e).await,
        BTreeMap::from([((ZONE_B.into(), FIRST_TYPE.into(), old_image.into()), 4)])
    );

    let (ledger, follower) = follow_members(&e2e);
    e2e.eventually("the members' watch listed", SETTLE, || async {
        ledger.lock().unwrap().listed.then_some(())
    })
    .await;
    for instance_type in [FIRST_TYPE, SECOND_TYPE] {
        e2e.mock().set_stock(&StockLimit {
            zone_id: ZONE_A.into(),
            instance_type: instance_type.into(),
            available: None,
        });
    }
    let even = BTreeMap::from([
        ((ZONE_A.into(), FIRST_TYPE.into(), old_image.into()), 2),
        ((ZONE_B.into(), FIRST_TYPE.into(), old_image.into()), 2),
    ]);
    e2e.eventually("two members moved to zone a", SETTLE, || async {
        let p = placements(&e2e).await;
        if p == even {
            Ok(())
        } else {
            Err(format!("placements {p:?}"))
        }
    })
    .await;
    wait_fleet(&e2e, 4).await;
    follower.abort();
    let fewest = ledger.lock().unwrap().fewest;
    assert!(
        fewest.is_some_and(|f| f >= 4),
        "fewest Ready members while moving: {fewest:?}"
    );
    let reasons = e2e
        .k(&[
            "get",
            "events",
            "-o",
            "jsonpath={range .items[*]}{.reason} {end}",
        ])
        .await;
    assert!(
        reasons.split_whitespace().any(|r| r == "Rebalancing"),
        "{reasons}"
    );
    e2e.finish().await;
}
