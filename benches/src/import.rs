//! `--import`: an existing account brought under management at scale. `--instances` instances
//! are made in the mock on the account's default network (no call: as if made before
//! ferroplane), then:
//! 1. the `ferroplane` binary beside this one imports the region (`import --all --manage`, the
//!    mock's keys in its environment) into a directory, timed;
//! 2. every manifest is applied (server-side apply, `--concurrency` at once, kind by kind in
//!    the order references need, as `kubectl apply` of the import's files in that order), timed;
//! 3. the controller (a child process, as for the other modes) reconciles them until every
//!    object is Ready and Synced; the cloud calls in that time, by action: the only writes are
//!    ferroplane's ownership claims (`TagResources` of `ferroplane.io/uid` on resources that
//!    carry none, one per object), no attribute, rule or power state changes;
//! 4. `ferroplane plan -n bench` over the cluster's objects: every object `no change`, with its
//!    seconds and `DescribeInstances` calls.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec};
use anyhow::{Context as _, bail};
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::controller_process::{Child, ControllerSettings};

const REGION: &str = "cn-beijing";
const FIELD_MANAGER: &str = "ferroplane-bench";

/// What the import mode is run with.
pub struct ImportBench {
    pub instances: usize,
    pub namespace: &'static str,
    pub concurrency: usize,
    pub controller: ControllerSettings,
}

pub async fn run(env: &mut Cluster, bench: &ImportBench) -> anyhow::Result<Value> {
    let n = bench.instances;
    let ferroplane = sibling_binary("ferroplane")?;
    let client = env.client();
    println!(
        "ferroplane-bench --import: {n} instances on the default network, on {}",
        env.describe()
    );
    let spec = LaunchSpec::new(
        REGION,
        "centos_7_8_x64_20G_alibase_20200519.vhd",
        "ecs.g6.large",
    )
    .with_default_network();
    // Made long before: listed at once (the lag applies again to what the controller makes).
    let lag = Duration::from_secs(1);
    env.mock().set_visibility_lag(Duration::ZERO);
    env.mock()
        .create_instances(DEFAULT_ACCOUNT_ID, &spec, n)
        .context("cannot make the account's instances in the mock")?;
    env.mock().set_visibility_lag(lag);
    let (key_id, key_secret) = credentials(&client).await?;

    // 1. Import.
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let output = tokio::process::Command::new(&ferroplane)
        .args(["import", "--region", REGION, "--all", "--manage"])
        .args(["-n", bench.namespace, "--endpoint", &env.ecs_endpoint()])
        .arg("-o")
        .arg(dir.path())
        .env("ALIBABA_CLOUD_ACCESS_KEY_ID", &key_id)
        .env("ALIBABA_CLOUD_ACCESS_KEY_SECRET", &key_secret)
        .output()
        .await
        .context("cannot run ferroplane import")?;
    let import_seconds = started.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!(
            "ferroplane import failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let documents = read_manifests(dir.path())?;
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for doc in &documents {
        *by_kind
            .entry(doc["kind"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
    }
    println!(
        "import: {} manifests in {import_seconds:.1} s: {by_kind:?}",
        documents.len()
    );
    if by_kind.get("ECSInstance").copied() != Some(n) {
        bail!("expected {n} ECSInstance manifests, the import wrote {by_kind:?}");
    }

    // 2. The controller, then every manifest applied.
    let child = Child::spawn(
        &bench.controller,
        &env.kubeconfig(),
        &env.ecs_endpoint(),
        true,
    )?;
    let calls_before = env.mock().stats().calls;
    let started = Instant::now();
    apply_all(&client, bench.namespace, &documents, bench.concurrency).await?;
    let apply_seconds = started.elapsed().as_secs_f64();
    println!("apply: {} objects in {apply_seconds:.1} s", documents.len());

    // 3. Every object Ready and Synced.
    let timeout = Duration::from_secs(600).max(Duration::from_millis(60) * n as u32);
    wait_all_reconciled(&client, bench.namespace, &by_kind, timeout, started).await?;
    let reconciled_seconds = started.elapsed().as_secs_f64();
    let calls = since(&calls_before, &env.mock().stats().calls);
    let writes: BTreeMap<&String, &u64> = calls
        .iter()
        .filter(|(action, _)| !is_read(action))
        .collect();
    println!(
        "reconciled: every object Ready and Synced {reconciled_seconds:.1} s after the apply began"
    );
    println!("ECS calls of the first reconciles:");
    for (action, count) in &calls {
        println!("  {action}: {count}");
    }
    let peak_rss = child.peak_rss_mib().unwrap_or(f64::NAN);
    child.stop().await;

    // 4. The plan of the namespace.
    let before_plan = env.mock().stats().calls;
    let started = Instant::now();
    let output = tokio::process::Command::new(&ferroplane)
        .args(["plan", "-n", bench.namespace, "-o", "json"])
        .args(["--allow-endpoint", &env.ecs_endpoint()])
        .env("KUBECONFIG", env.kubeconfig())
        .env_remove("ALIBABA_CLOUD_ACCESS_KEY_ID")
        .env_remove("ALIBABA_CLOUD_ACCESS_KEY_SECRET")
        .output()
        .await
        .context("cannot run ferroplane plan")?;
    let plan_seconds = started.elapsed().as_secs_f64();
    let plan: Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "ferroplane plan printed no JSON: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let plan_calls = since(&before_plan, &env.mock().stats().calls);
    let plan_writes: Vec<&String> = plan_calls.keys().filter(|a| !is_read(a)).collect();
    println!(
        "plan: exit {:?} in {plan_seconds:.1} s, summary {}, DescribeInstances {}, writes {plan_writes:?}",
        output.status.code(),
        plan["summary"],
        plan_calls.get("DescribeInstances").copied().unwrap_or(0)
    );
    let planned = plan["objects"].as_array().map_or(0, Vec::len);
    if planned != documents.len() || output.status.code() != Some(0) {
        bail!(
            "expected every one of the {} objects `no change`, the plan says {} (exit {:?}) over {planned}",
            documents.len(),
            plan["summary"],
            output.status.code()
        );
    }
    if !plan_writes.is_empty() {
        bail!("the plan wrote to the cloud: {plan_writes:?}");
    }

    let tag_calls = calls.get("TagResources").copied().unwrap_or(0);
    let other_writes: u64 = writes
        .iter()
        .filter(|(action, _)| action.as_str() != "TagResources")
        .map(|(_, n)| **n)
        .sum();
    Ok(serde_json::json!({
        "mode": "import",
        "instances": n,
        "objects": documents.len(),
        "import_seconds": round1(import_seconds),
        "apply_seconds": round1(apply_seconds),
        "seconds_to_reconciled": round1(reconciled_seconds),
        "ownership_tag_calls": tag_calls,
        "other_write_calls": other_writes,
        "plan_seconds": round1(plan_seconds),
        "plan_describe_instances": plan_calls.get("DescribeInstances").copied().unwrap_or(0),
        "controller_peak_rss_mib": round1(peak_rss),
    }))
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn is_read(action: &str) -> bool {
    ["Describe", "List", "Get"]
        .iter()
        .any(|prefix| action.starts_with(prefix))
}

fn since(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(action, n)| {
            let delta = n - before.get(action).copied().unwrap_or(0);
            (delta > 0).then(|| (action.clone(), delta))
        })
        .collect()
}

/// A program built beside this one (`cargo build --release -p ferroplane -p ferroplane-bench`).
fn sibling_binary(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this program")?;
    let path = exe
        .parent()
        .context("this program has no directory")?
        .join(name);
    if !path.exists() {
        bail!(
            "{} is missing: build it beside the bench (cargo build --release -p ferroplane -p ferroplane-bench)",
            path.display()
        );
    }
    Ok(path)
}

/// The mock's keys, from the credentials Secret the environment made (never printed).
async fn credentials(client: &kube::Client) -> anyhow::Result<(String, String)> {
    use ferroplane::environment::CREDENTIALS_SECRET;
    use k8s_openapi::api::core::v1::Secret;
    let secret = Api::<Secret>::namespaced(client.clone(), "default")
        .get(CREDENTIALS_SECRET)
        .await?;
    let field = |key: &str| -> anyhow::Result<String> {
        let bytes = secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .with_context(|| format!("the credentials Secret has no {key}"))?;
        Ok(String::from_utf8(bytes.0.clone())?)
    };
    Ok((field("accessKeyId")?, field("accessKeySecret")?))
}

/// Every document of the import's files.
fn read_manifests(dir: &Path) -> anyhow::Result<Vec<Value>> {
    let mut documents = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let docs: Vec<Value> = ferroplane::manifest_yaml::documents(&text)
            .with_context(|| format!("{} is not YAML", file.display()))?;
        documents.extend(docs.into_iter().filter(|d| d.is_object()));
    }
    Ok(documents)
}

fn api_resource(doc: &Value) -> anyhow::Result<ApiResource> {
    let api_version = doc["apiVersion"].as_str().context("no apiVersion")?;
    let kind = doc["kind"].as_str().context("no kind")?;
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    // The kinds' plurals are their lowercase names with `es` after `s`/`ch`, `s` otherwise
    // (`vswitches`, `ecsinstances`), as the CRDs declare them.
    let lower = kind.to_lowercase();
    let plural = if lower.ends_with('s') || lower.ends_with("ch") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    };
    Ok(ApiResource::from_gvk_with_plural(&gvk, &plural))
}

/// The kinds in the order their references need (what a kind references is applied before it).
const APPLY_ORDER: [&str; 6] = [
    "VPC",
    "VSwitch",
    "SecurityGroup",
    "KeyPair",
    "ECSInstance",
    "Disk",
];

/// Applies every document, kind by kind in [`APPLY_ORDER`], `concurrency` at once.
async fn apply_all(
    client: &kube::Client,
    namespace: &str,
    documents: &[Value],
    concurrency: usize,
) -> anyhow::Result<()> {
    let rank = |doc: &Value| {
        APPLY_ORDER
            .iter()
            .position(|k| doc["kind"] == *k)
            .unwrap_or(APPLY_ORDER.len())
    };
    let mut ordered: Vec<&Value> = documents.iter().collect();
    ordered.sort_by_key(|doc| rank(doc));
    for group in ordered.chunk_by(|a, b| rank(a) == rank(b)) {
        apply_group(client, namespace, group, concurrency).await?;
    }
    Ok(())
}

async fn apply_group(
    client: &kube::Client,
    namespace: &str,
    documents: &[&Value],
    concurrency: usize,
) -> anyhow::Result<()> {
    let params = PatchParams::apply(FIELD_MANAGER);
    futures::stream::iter(documents.iter().copied())
        .map(|doc| {
            let params = params.clone();
            async move {
                let resource = api_resource(doc)?;
                let name = doc["metadata"]["name"].as_str().context("no name")?;
                let api: Api<DynamicObject> =
                    Api::namespaced_with(client.clone(), namespace, &resource);
                api.patch(name, &params, &Patch::Apply(doc))
                    .await
                    .with_context(|| format!("cannot apply {} {name}", resource.kind))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

fn condition_true(object: &DynamicObject, type_: &str) -> bool {
    object.data["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == type_ && c["status"] == "True")
        })
}

/// Waits until every object of every kind of `by_kind` is Ready and Synced, following a watch
/// per kind.
async fn wait_all_reconciled(
    client: &kube::Client,
    namespace: &str,
    by_kind: &BTreeMap<String, usize>,
    timeout: Duration,
    started: Instant,
) -> anyhow::Result<()> {
    use kube::runtime::{WatchStreamExt, watcher};
    let waits = by_kind.iter().map(|(kind, expected)| async move {
        let doc = serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": kind,
        });
        let resource = api_resource(&doc)?;
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
        let mut done = std::collections::HashSet::new();
        let events = watcher(api, watcher::Config::default()).applied_objects();
        futures::pin_mut!(events);
        let deadline = tokio::time::Instant::now() + timeout;
        while done.len() < *expected {
            let Ok(Some(event)) = tokio::time::timeout_at(deadline, events.next()).await else {
                bail!(
                    "only {} of {expected} {kind} objects were Ready and Synced within {timeout:?}",
                    done.len()
                );
            };
            let object = event.with_context(|| format!("watch of {kind} failed"))?;
            let name = object.metadata.name.clone().unwrap_or_default();
            if condition_true(&object, "Ready") && condition_true(&object, "Synced") {
                done.insert(name);
            } else {
                done.remove(&name);
            }
        }
        println!(
            "  every {kind} Ready and Synced after {:.1} s",
            started.elapsed().as_secs_f64()
        );
        anyhow::Ok(())
    });
    futures::future::try_join_all(waits).await?;
    Ok(())
}
