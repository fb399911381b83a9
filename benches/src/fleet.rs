//! `--fleet`: one ECSFleet of N instances over four zones of which two have no stock at all,
//! measured: the time until every replica is Ready (and the floor the RunInstances quota sets),
//! ECS calls per created instance, refused launches; then a rolling image change with the
//! fewest Ready members seen at any watch event, and ECS calls per replaced instance; duplicates
//! (instances created beyond the fleet's needs) and leaks (instances left beyond N).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use ferroplane_apis::alibabacloud::{ECSFleet, ECSInstance};
use ferroplane_apis::common::ConditionStatus;
use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;

use crate::cluster::Cluster;
use crate::controller_process::{Child, ControllerSettings};

const NAMESPACE: &str = "bench";
const FLEET: &str = "bench";
const REGION: &str = "cn-beijing";
/// Zones of the fleet, in order; the first two have no stock of any of its types.
const ZONES: [&str; 4] = [
    "cn-beijing-a",
    "cn-beijing-b",
    "cn-beijing-c",
    "cn-beijing-d",
];
const SOLD_OUT_ZONES: usize = 2;
const TYPES: [&str; 2] = ["ecs.g6.large", "ecs.c6.large"];
const IMAGE: &str = "centos_7_9_x64_20G_alibase_20240628.vhd";
const NEW_IMAGE: &str = "ubuntu_22_04_x64_20G_alibase_20240130.vhd";

/// What the fleet benchmark runs with.
pub struct FleetBench {
    pub replicas: usize,
    pub max_surge: String,
    pub max_unavailable: String,
    pub controller: ControllerSettings,
    /// The account's RunInstances quota per minute, if one was set.
    pub run_instances_per_minute: Option<u32>,
}

pub async fn run(env: &mut Cluster, bench: &FleetBench) -> anyhow::Result<serde_json::Value> {
    let n = bench.replicas;
    for zone in &ZONES[..SOLD_OUT_ZONES] {
        for instance_type in TYPES {
            env.mock().set_stock(&alibaba_mock::StockLimit {
                zone_id: (*zone).to_owned(),
                instance_type: instance_type.to_owned(),
                available: Some(0),
            });
        }
    }
    println!(
        "fleet: {n} replicas over {} zones ({} with no stock of {}), maxSurge {}, maxUnavailable {}",
        ZONES.len(),
        SOLD_OUT_ZONES,
        TYPES.join(" or "),
        bench.max_surge,
        bench.max_unavailable
    );
    let client = env.client();
    let child = Child::spawn(
        &bench.controller,
        &env.kubeconfig(),
        &env.ecs_endpoint(),
        true,
    )?;
    let fleets: Api<ECSFleet> = Api::namespaced(client.clone(), NAMESPACE);

    // 1. Up to N Ready.
    let started = Instant::now();
    fleets
        .create(&PostParams::default(), &fleet(bench)?)
        .await
        .context("cannot create the fleet")?;
    let timeout = Duration::from_secs(600).max(Duration::from_millis(100) * n as u32);
    let ready = wait_fleet(&fleets, n, timeout).await;
    let to_ready = started.elapsed();
    let stats = env.mock().stats();
    let created = stats.instances_created;
    let calls: u64 = stats.calls.values().sum();
    let refused = stats
        .errors
        .iter()
        .filter(|(code, _)| code.contains("NoStock"))
        .map(|(_, count)| *count)
        .sum::<u64>();
    let ready_count = ready.as_ref().map_or_else(|got| *got, |()| n);
    println!(
        "ready: {ready_count} of {n} Ready after {:.2} s; {created} instances created, {refused} launches refused for lack of stock",
        to_ready.as_secs_f64()
    );
    print_calls("ECS calls until Ready", &stats.calls);
    let calls_per_create = calls as f64 / (created as f64).max(1.0);
    println!("  => {calls_per_create:.2} ECS calls per created instance");
    let quota_floor = bench
        .run_instances_per_minute
        .map(|per_minute| n as f64 / (f64::from(per_minute) / 60.0));
    if let Some(floor) = quota_floor {
        println!(
            "quota floor: {floor:.1} s for {n} RunInstances; Ready after {:.2}x that",
            to_ready.as_secs_f64() / floor
        );
    }
    if let Err(got) = ready {
        bail!("only {got} of {n} replicas Ready within {timeout:?}");
    }

    // 2. A rolling image change, followed at every watch event of the members.
    let before_roll = env.mock().stats();
    let members: Api<ECSInstance> = Api::namespaced(client.clone(), NAMESPACE);
    let fewest_seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let follower = tokio::spawn(fewest_ready(members, fewest_seen.clone()));
    let rolled = Instant::now();
    fleets
        .patch(
            FLEET,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"template": {"spec": {"forProvider": {"imageId": NEW_IMAGE}}}}}),
            ),
        )
        .await
        .context("cannot change the fleet's image")?;
    // The change must be seen before "Ready with N up to date" can mean the new template.
    wait_hash_change(&fleets, timeout).await?;
    let rolled_ready = wait_fleet(&fleets, n, timeout).await;
    let live_after = wait_live(env, n, timeout).await;
    let roll_time = rolled.elapsed();
    follower.abort();
    let fewest: Option<usize> = *fewest_seen.lock().unwrap_or_else(|e| e.into_inner());
    let after = env.mock().stats();
    let replaced = after.instances_created - before_roll.instances_created;
    let roll_calls: u64 =
        after.calls.values().sum::<u64>() - before_roll.calls.values().sum::<u64>();
    let calls_per_replaced = roll_calls as f64 / (replaced as f64).max(1.0);
    let unavailable = resolve(&bench.max_unavailable, n, false);
    println!(
        "rolling image change: {replaced} instances replaced in {:.2} s; fewest Ready members at any event: {} (replicas - maxUnavailable = {})",
        roll_time.as_secs_f64(),
        fewest.map_or_else(|| "unknown".into(), |f| f.to_string()),
        n.saturating_sub(unavailable)
    );
    let roll_only: BTreeMap<String, u64> = after
        .calls
        .iter()
        .map(|(action, count)| {
            let was = before_roll.calls.get(action).copied().unwrap_or(0);
            (action.clone(), count - was)
        })
        .filter(|(_, count)| *count > 0)
        .collect();
    print_calls("ECS calls during the rollout", &roll_only);
    println!("  => {calls_per_replaced:.2} ECS calls per replaced instance");
    let duplicates = after.instances_created as i64 - (2 * n) as i64;
    let leaks = after.instances_live as i64 - n as i64;
    println!(
        "instances created {} (expected {}), live {} (expected {n}): {duplicates} duplicates, {leaks} leaks",
        after.instances_created,
        2 * n,
        after.instances_live
    );
    child.stop().await;
    if let Err(got) = rolled_ready {
        bail!("only {got} of {n} replicas Ready and up to date after the rollout");
    }
    live_after?;
    Ok(json!({
        "fleet_replicas": n,
        "fleet_seconds_to_ready": round2(to_ready.as_secs_f64()),
        "fleet_quota_floor_seconds": quota_floor.map(round2),
        "fleet_refused_launches": refused,
        "fleet_ecs_calls_per_create": round2(calls_per_create),
        "fleet_rollout_seconds": round2(roll_time.as_secs_f64()),
        "fleet_fewest_ready_during_rollout": fewest,
        "fleet_min_ready_allowed": n.saturating_sub(unavailable),
        "fleet_ecs_calls_per_replaced": round2(calls_per_replaced),
        "fleet_duplicates": duplicates,
        "fleet_leaks": leaks,
    }))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn print_calls(title: &str, calls: &BTreeMap<String, u64>) {
    println!("{title}:");
    for (action, count) in calls {
        println!("  {action}: {count}");
    }
}

/// A number or a percentage of `n`, as the fleet resolves maxSurge (up) and maxUnavailable
/// (down).
fn resolve(value: &str, n: usize, round_up: bool) -> usize {
    match value
        .strip_suffix('%')
        .and_then(|p| p.parse::<usize>().ok())
    {
        Some(percent) if round_up => (n * percent).div_ceil(100),
        Some(percent) => n * percent / 100,
        None => value.parse().unwrap_or(0),
    }
}

fn int_or_percent(value: &str) -> serde_json::Value {
    value
        .parse::<i64>()
        .map_or_else(|_| json!(value), |n| json!(n))
}

fn fleet(bench: &FleetBench) -> anyhow::Result<ECSFleet> {
    let zones: Vec<serde_json::Value> = ZONES
        .iter()
        .map(|z| json!({"zoneId": z, "vSwitchId": alibaba_mock::defaults::vswitch_id(z)}))
        .collect();
    Ok(serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ECSFleet",
        "metadata": {"name": FLEET, "namespace": NAMESPACE},
        "spec": {
            "replicas": bench.replicas,
            "placement": {"zones": zones, "instanceTypes": TYPES, "spread": "Balanced"},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "maxSurge": int_or_percent(&bench.max_surge),
                "maxUnavailable": int_or_percent(&bench.max_unavailable),
            }},
            "template": {"spec": {"forProvider": {
                "regionId": REGION,
                "imageId": IMAGE,
                "securityGroupIds": [alibaba_mock::defaults::security_group_id(REGION)],
                "internetMaxBandwidthOut": 1,
            }}},
        }
    }))?)
}

/// Waits until the fleet reports `n` replicas Ready and up to date; `Err` with how many were.
async fn wait_fleet(fleets: &Api<ECSFleet>, n: usize, timeout: Duration) -> Result<(), usize> {
    let config = watcher::Config::default().fields(&format!("metadata.name={FLEET}"));
    let events = watcher(fleets.clone(), config);
    futures::pin_mut!(events);
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = 0;
    loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(Ok(watcher::Event::Apply(f) | watcher::Event::InitApply(f)))) => {
                let status = f.status.unwrap_or_default();
                last = status.updated_ready_replicas as usize;
                let ready = status
                    .conditions
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == ConditionStatus::True);
                if ready && status.replicas as usize == n && last == n {
                    return Ok(());
                }
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return Err(last),
        }
    }
}

/// Waits until the fleet's status names a template other than the one it had.
async fn wait_hash_change(fleets: &Api<ECSFleet>, timeout: Duration) -> anyhow::Result<()> {
    let first = fleets
        .get_status(FLEET)
        .await?
        .status
        .unwrap_or_default()
        .template_hash;
    let deadline = tokio::time::Instant::now() + timeout;
    let config = watcher::Config::default().fields(&format!("metadata.name={FLEET}"));
    let events = watcher(fleets.clone(), config);
    futures::pin_mut!(events);
    loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(Ok(watcher::Event::Apply(f) | watcher::Event::InitApply(f)))) => {
                if f.status.unwrap_or_default().template_hash != first {
                    return Ok(());
                }
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => bail!("the fleet never reported its new template"),
        }
    }
}

/// Waits until the mock has exactly `n` live instances (the replaced ones released).
async fn wait_live(env: &Cluster, n: usize, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let live = env.mock().stats().instances_live;
        if live == n as u64 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{live} instances live in the mock, {n} expected, after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Keeps in `fewest` the fewest Ready members (not being deleted) after any watch event, once
/// the initial list is complete, until aborted.
async fn fewest_ready(
    members: Api<ECSInstance>,
    fewest: std::sync::Arc<std::sync::Mutex<Option<usize>>>,
) {
    let mut ready: BTreeMap<String, bool> = BTreeMap::new();
    let mut listed = false;
    let events = watcher(members, watcher::Config::default());
    futures::pin_mut!(events);
    while let Some(event) = events.next().await {
        let Ok(event) = event else { continue };
        match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => {
                let is_ready = o.metadata.deletion_timestamp.is_none()
                    && o.status.as_ref().is_some_and(|s| {
                        s.conditions
                            .iter()
                            .any(|c| c.type_ == "Ready" && c.status == ConditionStatus::True)
                    });
                ready.insert(o.metadata.name.unwrap_or_default(), is_ready);
            }
            watcher::Event::Delete(o) => {
                ready.insert(o.metadata.name.unwrap_or_default(), false);
            }
            watcher::Event::Init => {}
            watcher::Event::InitDone => listed = true,
        }
        let count = ready.values().filter(|r| **r).count();
        let mut fewest = fewest.lock().unwrap_or_else(|e| e.into_inner());
        if listed && fewest.is_none_or(|f| count < f) {
            *fewest = Some(count);
        }
    }
}
