//! `ferroplane import` end to end: an account made in the mock (a VPC, two vSwitches, a group
//! with rules, 50 instances of which some share a name and one is stopped, data disks, a key
//! pair, and a group ferroplane already owns) is imported by the binary (first finding the mock
//! as a running sandbox shows it, without keys in the environment); the manifests have
//! unique names and wired references, and the owned group is skipped with a note. Applied as
//! imported (`[Observe]`, `Orphan`) every object becomes Ready and the cloud sees no write at
//! all; imported again with `--manage` and applied over them, every object is Ready and Synced,
//! an object that matches its resource writes nothing, and the only writes are the groups' own
//! `ferroplane.io/rules-policy` tag with their ownership tag (`ferroplane.io/uid`) taken right
//! before it: no attribute, rule, tag of the user's or power state changes; `plan` of the
//! managed manifests then says `no change` for every object.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use alibaba_mock::{LedgerEntry, ResourceKind};
use alibaba_sdk::ecs::{
    CreateDiskRequest, CreateSecurityGroupRequest, DescribeInstancesRequest, Direction, Rule,
    RunInstancesRequest, Tag,
};
use alibaba_sdk::vpc::{CreateVSwitchRequest, CreateVpcRequest};
use ferroplane::controllers::Kind;
use ferroplane::sandbox_access::SandboxAccess;
use serde_json::Value;

use crate::support::{ACCESS_KEY_ID, ACCESS_KEY_SECRET, E2e};

const INSTANCES: usize = 50;
const ZONE: &str = "cn-beijing-h";
const WAIT: Duration = Duration::from_secs(120);
const KINDS: &str = "vpcs,vswitches,securitygroups,keypairs,ecsinstances,disks";

/// What the test made in the cloud.
struct Account {
    vpc_id: String,
    owned_group: String,
    stopped: String,
}

fn rule(protocol: &str, ports: &str, cidr: &str, description: &str) -> Rule {
    Rule {
        ip_protocol: protocol.into(),
        port_range: ports.into(),
        cidr_ip: cidr.into(),
        policy: "accept".into(),
        priority: 1,
        description: description.into(),
    }
}

/// Waits until `status` says `Available` (the VPC API's resources are `Pending` first).
async fn available<F, Fut>(e2e: &E2e, what: &str, mut status: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<String>>,
{
    e2e.eventually(&format!("{what} Available"), WAIT, || {
        let status = status();
        async move { (status.await.as_deref() == Some("Available")).then_some(()) }
    })
    .await;
}

async fn make_account(e2e: &E2e) -> Account {
    let (ecs, vpc) = e2e.cloud();
    let env = || vec![Tag::new("env", "prod")];
    let vpc_id = vpc
        .create_vpc(&CreateVpcRequest {
            cidr_block: Some("10.0.0.0/8".into()),
            vpc_name: Some("prod".into()),
            description: Some("the production network".into()),
            tags: vec![alibaba_sdk::vpc::Tag::new("env", "prod")],
            ..CreateVpcRequest::default()
        })
        .await
        .expect("CreateVpc")
        .vpc_id;
    available(e2e, "the VPC", || {
        let (vpc, id) = (vpc.clone(), vpc_id.clone());
        async move {
            Some(
                vpc.describe_vpcs(&[id], &[])
                    .await
                    .ok()?
                    .first()?
                    .status
                    .clone(),
            )
        }
    })
    .await;
    let mut vswitches = Vec::new();
    for (n, cidr) in [(1, "10.1.0.0/16"), (2, "10.2.0.0/16")] {
        vswitches.push(
            vpc.create_vswitch(&CreateVSwitchRequest {
                vpc_id: vpc_id.clone(),
                zone_id: ZONE.into(),
                cidr_block: cidr.into(),
                vswitch_name: Some(format!("prod-{n}")),
                tags: vec![alibaba_sdk::vpc::Tag::new("env", "prod")],
                ..CreateVSwitchRequest::default()
            })
            .await
            .expect("CreateVSwitch")
            .vswitch_id,
        );
    }
    for id in &vswitches {
        available(e2e, "a vSwitch", || {
            let (vpc, id) = (vpc.clone(), id.clone());
            async move {
                let found = vpc.describe_vswitches(Some(&id), None, &[]).await.ok()?;
                Some(found.first()?.status.clone())
            }
        })
        .await;
    }
    let group = |name: &str, tags: Vec<Tag>| CreateSecurityGroupRequest {
        vpc_id: Some(vpc_id.clone()),
        security_group_name: Some(name.into()),
        description: Some(format!("{name} group")),
        tags,
        ..CreateSecurityGroupRequest::default()
    };
    let web = ecs
        .create_security_group(&group("web", env()))
        .await
        .expect("CreateSecurityGroup")
        .security_group_id;
    ecs.authorize_security_group(
        &web,
        Direction::Ingress,
        &[
            rule("tcp", "22/22", "10.0.0.0/8", "ssh from the office"),
            rule("tcp", "443/443", "0.0.0.0/0", ""),
        ],
    )
    .await
    .expect("AuthorizeSecurityGroup");
    ecs.authorize_security_group(
        &web,
        Direction::Egress,
        &[rule("all", "-1/-1", "0.0.0.0/0", "")],
    )
    .await
    .expect("AuthorizeSecurityGroupEgress");
    let owned_group = ecs
        .create_security_group(&group(
            "managed",
            vec![Tag::new(ferroplane_runtime::UID_TAG, "a-live-object")],
        ))
        .await
        .expect("CreateSecurityGroup")
        .security_group_id;
    ecs.create_key_pair("deploy", &env())
        .await
        .expect("CreateKeyPair");
    let mut ids = Vec::new();
    for (n, vswitch) in vswitches.iter().enumerate() {
        let launched = ecs
            .run_instances(&RunInstancesRequest {
                image_id: "centos_7_8_x64_20G_alibase_20200519.vhd".into(),
                instance_type: "ecs.g6.large".into(),
                vswitch_id: Some(vswitch.clone()),
                security_group_ids: vec![web.clone()],
                // The first half share a name: their object names must still differ.
                instance_name: Some(if n == 0 { "web".into() } else { "api".into() }),
                key_pair_name: Some("deploy".into()),
                internet_max_bandwidth_out: Some(5),
                tags: env(),
                amount: Some(u32::try_from(INSTANCES / 2).unwrap()),
                ..RunInstancesRequest::default()
            })
            .await
            .expect("RunInstances");
        ids.extend(launched.instance_ids().iter().cloned());
    }
    assert_eq!(ids.len(), INSTANCES);
    let running = |id: String| {
        let mock = e2e.mock();
        async move { (mock.instance_status(&id).as_deref() == Some("Running")).then_some(()) }
    };
    for id in &ids[..3] {
        e2e.eventually("a new instance running", WAIT, || running(id.clone()))
            .await;
    }
    let stopped = ids[0].clone();
    ecs.stop_instance(&stopped, false, None)
        .await
        .expect("StopInstance");
    e2e.eventually("the stopped instance", WAIT, || {
        let mock = e2e.mock();
        let id = stopped.clone();
        async move { (mock.instance_status(&id).as_deref() == Some("Stopped")).then_some(()) }
    })
    .await;
    for id in &ids[1..3] {
        let disk = ecs
            .create_disk(&CreateDiskRequest {
                zone_id: ZONE.into(),
                disk_category: Some("cloud_essd".into()),
                size: Some(40),
                disk_name: Some("data".into()),
                tags: env(),
                ..CreateDiskRequest::default()
            })
            .await
            .expect("CreateDisk")
            .disk_id;
        ecs.attach_disk(&disk, id, None).await.expect("AttachDisk");
    }
    // The cloud lists new instances late: import once it lists them all.
    e2e.eventually("every instance listed", WAIT, || {
        let ecs = ecs.clone();
        let vpc_id = vpc_id.clone();
        async move {
            let listed = ecs
                .describe_instances(&DescribeInstancesRequest {
                    vpc_id: Some(vpc_id),
                    ..DescribeInstancesRequest::default()
                })
                .await
                .ok()?;
            (listed.len() == INSTANCES).then_some(())
        }
    })
    .await;
    Account {
        vpc_id,
        owned_group,
        stopped,
    }
}

/// How the binary finds the cloud.
enum Access<'a> {
    /// `ALIBABA_CLOUD_*` variables and `--endpoint`.
    Environment,
    /// Nothing given: the sandbox's access file in this directory (`FERROPLANE_SANDBOX_DIR`).
    SandboxFile(&'a Path),
}

/// `ferroplane ARGS` finding the cloud as `access` says; returns stdout and stderr, after
/// checking that it succeeded and that the key secret appears in neither.
async fn ferroplane(e2e: &E2e, args: &[&str], access: &Access<'_>) -> (String, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferroplane"));
    command
        .args(args)
        .env_remove("ALIBABA_CLOUD_SECURITY_TOKEN")
        .env_remove("ALIBABA_CLOUD_REGION_ID");
    match access {
        Access::Environment => {
            command
                .args(["--endpoint", &e2e.mock().endpoint()])
                .env("ALIBABA_CLOUD_ACCESS_KEY_ID", ACCESS_KEY_ID)
                .env("ALIBABA_CLOUD_ACCESS_KEY_SECRET", ACCESS_KEY_SECRET);
        }
        Access::SandboxFile(dir) => {
            SandboxAccess {
                endpoint: e2e.mock().endpoint(),
                access_key_id: ACCESS_KEY_ID.into(),
                access_key_secret: ACCESS_KEY_SECRET.into(),
            }
            .write(dir)
            .expect("the sandbox access file");
            command
                .env_remove("ALIBABA_CLOUD_ACCESS_KEY_ID")
                .env_remove("ALIBABA_CLOUD_ACCESS_KEY_SECRET")
                .env("FERROPLANE_SANDBOX_DIR", dir);
        }
    }
    let output = command.output().await.expect("ferroplane runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "ferroplane {args:?} failed: {stderr}"
    );
    assert!(
        !stdout.contains(ACCESS_KEY_SECRET) && !stderr.contains(ACCESS_KEY_SECRET),
        "the key secret leaked"
    );
    (stdout, stderr)
}

/// Runs `ferroplane import` of the VPC into `dir`; returns its stderr.
async fn import(e2e: &E2e, vpc_id: &str, dir: &Path, manage: bool, access: &Access<'_>) -> String {
    let dir = dir.to_str().unwrap();
    let mut args = vec!["import", "--region", "cn-beijing", "--vpc-id", vpc_id];
    args.extend(["-n", &e2e.namespace, "-o", dir]);
    if manage {
        args.push("--manage");
    }
    ferroplane(e2e, &args, access).await.1
}

/// The objects of a directory the import wrote, by kind.
fn manifests(dir: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut by_kind: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("the output directory") {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for doc in serde_saphyr::from_multiple::<Value>(&text).expect("YAML") {
            let kind = doc["kind"].as_str().unwrap().to_owned();
            by_kind.entry(kind).or_default().push(doc);
        }
    }
    by_kind
}

fn names(objects: &[Value]) -> BTreeSet<String> {
    objects
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Checks what the observe-only import wrote.
fn check_manifests(by_kind: &BTreeMap<String, Vec<Value>>, account: &Account) {
    let count = |kind: &str| by_kind.get(kind).map_or(0, Vec::len);
    assert_eq!(count("VPC"), 1);
    assert_eq!(count("VSwitch"), 2);
    assert_eq!(count("SecurityGroup"), 1, "the owned group is skipped");
    assert_eq!(count("KeyPair"), 1);
    assert_eq!(count("ECSInstance"), INSTANCES);
    assert_eq!(count("Disk"), 2);
    let instances = &by_kind["ECSInstance"];
    assert_eq!(
        names(instances).len(),
        INSTANCES,
        "instance names are unique"
    );
    let vswitches = names(&by_kind["VSwitch"]);
    let groups = names(&by_kind["SecurityGroup"]);
    let vpc = by_kind["VPC"][0]["metadata"]["name"].as_str().unwrap();
    for instance in instances {
        let spec = &instance["spec"];
        assert_eq!(spec["managementPolicies"], serde_json::json!(["Observe"]));
        assert_eq!(spec["deletionPolicy"], "Orphan");
        let p = &spec["forProvider"];
        assert!(vswitches.contains(p["vSwitchIdRef"]["name"].as_str().unwrap()));
        assert!(p.get("vSwitchId").is_none());
        assert!(groups.contains(p["securityGroupIdRefs"][0]["name"].as_str().unwrap()));
        assert_eq!(p["keyPairNameRef"]["name"], "deploy");
        let id = instance["metadata"]["annotations"]["ferroplane.io/external-name"]
            .as_str()
            .unwrap();
        let want = if id == account.stopped {
            "Stopped"
        } else {
            "Running"
        };
        assert_eq!(p["desiredStatus"], want, "{id}");
        assert!(p.get("password").is_none() && p.get("passwordSecretRef").is_none());
    }
    for switch in &by_kind["VSwitch"] {
        assert_eq!(switch["spec"]["forProvider"]["vpcIdRef"]["name"], vpc);
    }
    let group = &by_kind["SecurityGroup"][0]["spec"]["forProvider"];
    assert_eq!(group["vpcIdRef"]["name"], vpc);
    assert_eq!(group["ingress"].as_array().unwrap().len(), 2);
    assert_eq!(group["egress"].as_array().unwrap().len(), 1);
    let instance_names = names(instances);
    for disk in &by_kind["Disk"] {
        let reference = disk["spec"]["forProvider"]["instanceIdRef"]["name"]
            .as_str()
            .unwrap();
        assert!(instance_names.contains(reference));
    }
    assert!(
        !by_kind
            .values()
            .flatten()
            .any(|o| o.to_string().contains(&account.owned_group)),
        "nothing refers to the owned group"
    );
}

/// Every object of the namespace's kinds is Ready and Synced for its current generation.
async fn all_settled(e2e: &E2e, expected: usize) {
    e2e.eventually("every imported object Ready and Synced", WAIT, || async {
        let out = e2e.kubectl(&["get", KINDS, "-o", "json"], None).await;
        let list: Value = serde_json::from_str(&out.stdout).ok()?;
        let items = list["items"].as_array()?;
        let settled = items.iter().all(|o| {
            let generation = &o["metadata"]["generation"];
            ["Ready", "Synced"].iter().all(|t| {
                o["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        c["type"] == *t
                            && c["status"] == "True"
                            && c["observedGeneration"] == *generation
                    })
            })
        });
        (items.len() == expected && settled).then_some(())
    })
    .await;
}

/// Keys that are ferroplane's own bookkeeping on a cloud resource.
fn ours(key: &str) -> bool {
    key.starts_with("ferroplane.io/")
}

pub(crate) async fn an_imported_account_is_adopted_without_a_change() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let account = make_account(&e2e).await;
    let dir = tempfile::tempdir().unwrap();

    // While a sandbox runs, the CLI finds its mock without keys in the environment.
    let sandbox_dir = dir.path().join("sandbox");
    std::fs::create_dir(&sandbox_dir).unwrap();
    let sandbox = Access::SandboxFile(&sandbox_dir);
    let args = [
        "ecs",
        "call",
        "--product",
        "vpc",
        "--region",
        "cn-beijing",
        "DescribeVpcs",
    ];
    let (vpcs, note) = ferroplane(&e2e, &args, &sandbox).await;
    assert!(vpcs.contains(&account.vpc_id), "{vpcs}");
    assert!(note.contains("using the sandbox's mock"), "{note}");

    let observe_dir = dir.path().join("observe");
    let notes = import(&e2e, &account.vpc_id, &observe_dir, false, &sandbox).await;
    assert!(
        notes.contains(&format!("skipped SecurityGroup {}", account.owned_group)),
        "{notes}"
    );
    let by_kind = manifests(&observe_dir);
    check_manifests(&by_kind, &account);
    let total: usize = by_kind.values().map(Vec::len).sum();

    let before = e2e.mock().ledger().len();
    e2e.k(&["apply", "-f", observe_dir.to_str().unwrap()]).await;
    all_settled(&e2e, total).await;
    let writes: Vec<LedgerEntry> = e2e.mock().ledger().split_off(before);
    assert!(writes.is_empty(), "observe-only objects wrote: {writes:#?}");

    // Switched to full management: an object that matches its resource writes nothing (the
    // ownership tag is taken right before a first change). The imported security group's
    // `rulesPolicy` is recorded in its `ferroplane.io/rules-policy` tag, a change of its own:
    // it is claimed, then tagged, and nothing else is written.
    let tags_before: BTreeMap<String, BTreeMap<String, String>> = e2e
        .mock()
        .resources()
        .into_iter()
        .map(|r| (r.id, r.tags))
        .collect();
    let manage_dir = dir.path().join("manage");
    import(
        &e2e,
        &account.vpc_id,
        &manage_dir,
        true,
        &Access::Environment,
    )
    .await;
    let before = e2e.mock().ledger().len();
    e2e.k(&["apply", "-f", manage_dir.to_str().unwrap()]).await;
    all_settled(&e2e, total).await;
    let writes: Vec<LedgerEntry> = e2e.mock().ledger().split_off(before);
    for entry in &writes {
        assert_eq!(entry.action, "TagResources", "{entry:#?}");
        assert_eq!(entry.kind, ResourceKind::SecurityGroup, "{entry:#?}");
        let user = |tags: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            tags.iter()
                .filter(|(k, _)| !ours(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        assert_eq!(
            user(&entry.tags),
            user(&tags_before[&entry.resource_id]),
            "only ferroplane's tags change: {entry:#?}"
        );
    }
    let groups: BTreeSet<String> = by_kind["SecurityGroup"]
        .iter()
        .map(|g| {
            g["metadata"]["annotations"]["ferroplane.io/external-name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let written: BTreeSet<String> = writes.iter().map(|e| e.resource_id.clone()).collect();
    assert_eq!(written, groups, "only the groups were written: {writes:#?}");
    // And once settled, `plan` of the managed manifests says no change for every object.
    let plan = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferroplane"))
        .args([
            "plan",
            "-f",
            manage_dir.to_str().unwrap(),
            "-n",
            &e2e.namespace,
        ])
        .args(["-o", "json", "--allow-endpoint", &e2e.mock().endpoint()])
        .env("KUBECONFIG", e2e.kubeconfig())
        .output()
        .await
        .expect("ferroplane runs");
    let document: Value = serde_json::from_slice(&plan.stdout).expect("a JSON plan");
    let not_steady: Vec<&Value> = document["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .filter(|o| o["action"] != "no-change")
        .collect();
    assert!(not_steady.is_empty(), "{not_steady:#?}");
    assert_eq!(plan.status.code(), Some(0), "{document:#}");
    assert_eq!(
        e2e.mock().instance_status(&account.stopped).as_deref(),
        Some("Stopped")
    );
    e2e.finish().await;
}
