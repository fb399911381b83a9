//! `ferroplane plan` of the network kinds and a Disk end to end: a VPC, a vSwitch, a security
//! group with its inline rules and a disk, applied from one file and Ready, plan `no change`
//! (exit 0). The file edited (the VPC's description, in place; a rule added to the group; the
//! vSwitch's CIDR, immutable; the disk's size, a resize; a new vSwitch referencing no VPC) plans
//! exactly those six with their classes (exit 2): three updates in place with their calls, the
//! vSwitch refused by the API server's admission (a server-side dry run, which stores nothing)
//! and the new one blocked on its reference, and a VPC made outside ferroplane, imported by its
//! ID and matching its manifest, `no change` (its ownership tag is taken only right before a
//! first change, and it is left untagged); the plan makes no write to the cloud.
//! The allowed edits applied, the controllers make exactly the predicted calls, and the plan of
//! the namespace's objects (listed from the cluster, no manifest) is `no change`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use ferroplane::controllers::Kind;
use serde_json::Value;

use alibaba_sdk::vpc::{EipTarget, VpcClient};

use crate::e2e_plan::{CloudBefore, made_since, plan, plan_as};
use crate::support::{ACCESS_KEY_SECRET, E2e};

const WAIT: Duration = Duration::from_secs(180);
const GROUP: &str = "alibabacloud.ferroplane.io";

/// The edits of the file.
#[derive(Clone, Copy)]
struct Edits {
    vpc_description: &'static str,
    https_rule: bool,
    vswitch_cidr: &'static str,
    disk_size: u32,
    /// A second vSwitch whose VPC reference names no VPC.
    unresolved_vswitch: bool,
    /// A VPC object importing the VPC made outside ferroplane (untagged).
    import: bool,
}

const APPLIED: Edits = Edits {
    vpc_description: "plan e2e",
    https_rule: false,
    vswitch_cidr: "10.61.1.0/24",
    disk_size: 40,
    unresolved_vswitch: false,
    import: false,
};

/// The file of `e`; `imported` is the ID of the VPC made outside ferroplane.
fn manifest(e: Edits, imported: &str) -> String {
    let https = if e.https_rule {
        "      - ipProtocol: tcp\n        portRange: 443/443\n        sourceCidrIp: 0.0.0.0/0\n        description: https\n"
    } else {
        ""
    };
    let unresolved = if e.unresolved_vswitch {
        format!(
            "---\napiVersion: {GROUP}/v1alpha1\nkind: VSwitch\nmetadata:\n  name: plan-nowhere\nspec:\n  forProvider:\n    regionId: cn-beijing\n    zoneId: cn-beijing-h\n    cidrBlock: 10.62.0.0/24\n    vpcIdRef:\n      name: no-such-vpc\n"
        )
    } else {
        String::new()
    };
    let mut text = format!(
        r#"apiVersion: {GROUP}/v1alpha1
kind: VPC
metadata:
  name: plan-net
spec:
  forProvider:
    regionId: cn-beijing
    cidrBlock: 10.61.0.0/16
    vpcName: plan-net
    description: {description}
---
apiVersion: {GROUP}/v1alpha1
kind: VSwitch
metadata:
  name: plan-net-h
spec:
  forProvider:
    regionId: cn-beijing
    zoneId: cn-beijing-h
    cidrBlock: {cidr}
    vSwitchName: plan-net-h
    vpcIdRef:
      name: plan-net
---
apiVersion: {GROUP}/v1alpha1
kind: SecurityGroup
metadata:
  name: plan-net
spec:
  forProvider:
    regionId: cn-beijing
    securityGroupName: plan-net
    vpcIdRef:
      name: plan-net
    ingress:
      - ipProtocol: tcp
        portRange: 22/22
        sourceCidrIp: 203.0.113.0/24
        description: office SSH
{https}---
apiVersion: {GROUP}/v1alpha1
kind: Disk
metadata:
  name: plan-data
spec:
  forProvider:
    regionId: cn-beijing
    zoneId: cn-beijing-h
    category: cloud_essd
    size: {size}
    diskName: plan-data
"#,
        description = e.vpc_description,
        cidr = e.vswitch_cidr,
        size = e.disk_size,
    );
    text.push_str(&unresolved);
    if e.import {
        text.push_str(&format!(
            "---\napiVersion: {GROUP}/v1alpha1\nkind: VPC\nmetadata:\n  name: plan-imported\n  annotations:\n    ferroplane.io/external-name: {imported}\nspec:\n  forProvider:\n    regionId: cn-beijing\n    cidrBlock: {IMPORTED_CIDR}\n    vpcName: plan-imported\n"
        ));
    }
    text
}

const IMPORTED_CIDR: &str = "10.70.0.0/16";

/// A VPC made outside ferroplane (no ownership tag), once DescribeVpcs lists it.
async fn vpc_made_outside(e2e: &E2e) -> String {
    let (_, vpc) = e2e.cloud();
    let request = alibaba_sdk::vpc::CreateVpcRequest {
        cidr_block: Some(IMPORTED_CIDR.to_owned()),
        vpc_name: Some("plan-imported".to_owned()),
        ..Default::default()
    };
    let id = vpc.create_vpc(&request).await.expect("CreateVpc").vpc_id;
    let listed = || {
        let (vpc, id) = (vpc.clone(), id.clone());
        async move {
            let found = vpc
                .describe_vpcs(std::slice::from_ref(&id), &[])
                .await
                .ok()?;
            found.iter().any(|v| v.vpc_id == id).then_some(())
        }
    };
    e2e.eventually("the VPC made outside listed", WAIT, listed)
        .await;
    id
}

const OBJECTS: [&str; 4] = [
    "vpcs/plan-net",
    "vswitches/plan-net-h",
    "securitygroups/plan-net",
    "disks/plan-data",
];

fn object(plural_name: &str) -> String {
    let (plural, name) = plural_name.split_once('/').unwrap();
    format!("{plural}.{GROUP}/{name}")
}

/// `(kind, action)` of every object of a plan, sorted.
fn actions(document: &Value) -> Vec<(String, String)> {
    let mut actions: Vec<(String, String)> = document["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_owned(),
                o["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    actions.sort();
    actions
}

fn of_kind<'a>(document: &'a Value, kind: &str) -> &'a Value {
    document["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {document:#}"))
}

fn named<'a>(document: &'a Value, kind: &str, name: &str) -> &'a Value {
    document["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind && o["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {document:#}"))
}

/// `(field, class, action)` of an object's changes.
fn changes(object: &Value) -> Vec<(String, String, String)> {
    object["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap().to_owned();
            (text("field"), text("class"), text("action"))
        })
        .collect()
}

fn write(file: &Path, edits: Edits, imported: &str) {
    std::fs::write(file, manifest(edits, imported)).unwrap();
}

pub(crate) async fn plan_predicts_the_network_kinds_and_a_disk() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("network.yaml");
    let imported = vpc_made_outside(&e2e).await;
    write(&file, APPLIED, &imported);
    e2e.k(&["apply", "-f", file.to_str().unwrap()]).await;
    let ready = "{.status.conditions[?(@.type=='Ready')].status}";
    for name in OBJECTS {
        e2e.wait_jsonpath(&object(name), ready, "True").await;
    }

    let (code, same) = plan(&e2e, &file).await;
    let no_change: Vec<(String, String)> = ["Disk", "SecurityGroup", "VPC", "VSwitch"]
        .iter()
        .map(|k| ((*k).to_owned(), "no-change".to_owned()))
        .collect();
    assert_eq!(actions(&same), no_change, "{same:#}");
    assert_eq!(code, 0, "{same:#}");

    let edited = Edits {
        vpc_description: "plan e2e, edited",
        https_rule: true,
        vswitch_cidr: "10.61.2.0/24",
        disk_size: 60,
        unresolved_vswitch: true,
        import: true,
    };
    write(&file, edited, &imported);
    let before_plan = CloudBefore::take(&e2e);
    let (code, changed) = plan(&e2e, &file).await;
    assert_eq!(code, 2, "{changed:#}");
    assert_eq!(
        actions(&changed),
        [
            ("Disk", "update-in-place"),
            ("SecurityGroup", "update-in-place"),
            ("VPC", "no-change"),
            ("VPC", "update-in-place"),
            ("VSwitch", "blocked"),
            ("VSwitch", "refused"),
        ]
        .map(|(k, a)| (k.to_owned(), a.to_owned())),
        "{changed:#}"
    );
    let in_place = |field: &str, action: &str| {
        vec![(field.to_owned(), "in-place".to_owned(), action.to_owned())]
    };
    let vpc = named(&changed, "VPC", "plan-net");
    assert_eq!(changes(vpc), in_place("description", "ModifyVpcAttribute"));
    let group = of_kind(&changed, "SecurityGroup");
    assert_eq!(
        changes(group),
        in_place("ingress", "AuthorizeSecurityGroup")
    );
    assert!(
        group["changes"][0]["description"]
            .as_str()
            .unwrap()
            .contains("443/443"),
        "{group:#}"
    );
    let nowhere = named(&changed, "VSwitch", "plan-nowhere");
    let import = named(&changed, "VPC", "plan-imported");
    assert_eq!(import["externalName"], imported.as_str());
    // It matches its manifest: taken over only before a first change, so nothing is written.
    assert_eq!(import["action"], "no-change", "{import:#}");
    assert!(changes(import).is_empty(), "{import:#}");
    assert_eq!(
        nowhere["blocked"]["reason"], "ReferenceNotResolved",
        "{nowhere:#}"
    );
    let disk = of_kind(&changed, "Disk");
    assert_eq!(changes(disk), in_place("size", "ResizeDisk"));
    let vswitch = named(&changed, "VSwitch", "plan-net-h");
    let vswitch_id = e2e
        .jsonpath(
            &object("vswitches/plan-net-h"),
            "{.status.atProvider.vSwitchId}",
        )
        .await;
    assert_eq!(vswitch["externalName"], vswitch_id.as_str(), "{vswitch:#}");
    assert!(
        vswitch["admission"]
            .as_str()
            .unwrap()
            .contains("cidrBlock is immutable"),
        "{vswitch:#}"
    );
    before_plan.assert_unchanged(&e2e);
    // The dry run stored nothing: the vSwitch keeps its CIDR.
    assert_eq!(
        e2e.jsonpath(
            &object("vswitches/plan-net-h"),
            "{.spec.forProvider.cidrBlock}"
        )
        .await,
        APPLIED.vswitch_cidr
    );
    let (code, table) = plan_as(&e2e, &file, "table").await;
    assert_eq!(code, 2);
    for line in [
        "description: \"plan e2e\" → \"plan e2e, edited\"  [ModifyVpcAttribute]",
        "size 40 → 60 GiB  [ResizeDisk]",
        "refused",
    ] {
        assert!(table.contains(line), "{line:?} not in\n{table}");
    }
    eprintln!("{table}");

    // The allowed edits applied: the controllers make exactly the calls the plan predicted.
    let allowed = Edits {
        vswitch_cidr: APPLIED.vswitch_cidr,
        unresolved_vswitch: false,
        ..edited
    };
    write(&file, allowed, &imported);
    let before_apply = e2e.mock().stats().calls;
    e2e.k(&["apply", "-f", file.to_str().unwrap()]).await;
    applied_as_planned(&e2e, &file, &before_apply, &[vpc, group, disk, import]).await;
    let owner_tag = e2e
        .mock()
        .resources()
        .into_iter()
        .find(|r| r.id == imported)
        .and_then(|r| r.tags.get(ferroplane_runtime::UID_TAG).cloned());
    assert_eq!(owner_tag, None, "the matching import was not written");

    // A second object importing the same VPC: created after the first importer, so the
    // reconcile would refuse it, and the plan says so (with no write).
    let again = dir.path().join("again.yaml");
    std::fs::write(
        &again,
        format!(
            "apiVersion: {GROUP}/v1alpha1\nkind: VPC\nmetadata:\n  name: plan-imported-again\n  annotations:\n    ferroplane.io/external-name: {imported}\nspec:\n  forProvider:\n    regionId: cn-beijing\n    cidrBlock: {IMPORTED_CIDR}\n    vpcName: plan-imported\n"
        ),
    )
    .unwrap();
    crate::e2e_plan::plans_owned_elsewhere(&e2e, &again).await;

    // The cluster's objects of the namespace (no manifest): every kind listed, nothing to do.
    let (code, listed) = plan_namespace(&e2e).await;
    let no_change: Vec<(String, String)> = ["Disk", "SecurityGroup", "VPC", "VPC", "VSwitch"]
        .iter()
        .map(|k| ((*k).to_owned(), "no-change".to_owned()))
        .collect();
    assert_eq!(actions(&listed), no_change, "{listed:#}");
    assert_eq!(code, 0, "{listed:#}");
    e2e.finish().await;
}

/// Once the plan of `file` is `no change` (the applied edits are in the cloud), the controllers'
/// writes since `before` are exactly the calls the `planned` objects' changes named, one each.
async fn applied_as_planned(
    e2e: &E2e,
    file: &Path,
    before: &BTreeMap<String, u64>,
    planned: &[&Value],
) {
    e2e.eventually(
        "the edits in the cloud (plan: no change)",
        WAIT,
        || async move {
            let (code, _) = plan_as(e2e, file, "json").await;
            (code == 0).then_some(())
        },
    )
    .await;
    let predicted: BTreeMap<String, u64> = planned
        .iter()
        .flat_map(|o| changes(o))
        .map(|(_, _, action)| (action, 1))
        .collect();
    assert_eq!(
        made_since(before, &e2e.mock().stats().calls),
        predicted,
        "the controllers' writes differ from the plan's prediction"
    );
}

/// `ferroplane plan -n NAMESPACE -o json`: the cluster's objects.
async fn plan_namespace(e2e: &E2e) -> (i32, Value) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferroplane"))
        .args(["plan", "-n", &e2e.namespace, "-o", "json"])
        .args(["--allow-endpoint", &e2e.mock().endpoint()])
        .env("KUBECONFIG", e2e.kubeconfig())
        .env_remove("ALIBABA_CLOUD_ACCESS_KEY_ID")
        .env_remove("ALIBABA_CLOUD_ACCESS_KEY_SECRET")
        .output()
        .await
        .expect("ferroplane runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stdout.contains(ACCESS_KEY_SECRET) && !stderr.contains(ACCESS_KEY_SECRET),
        "the key secret leaked"
    );
    let code = output.status.code().expect("an exit code");
    assert_ne!(code, 1, "plan failed: {stderr}");
    let document = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("plan printed no JSON ({e}), exit {code}: {stdout}"));
    (code, document)
}

/// Waits until the EIP `allocation_id` is associated with `instance` (`InUse`), or with nothing
/// (`Available`) for `None`.
async fn eip_settled(e2e: &E2e, vpc: &VpcClient, allocation_id: &str, instance: Option<&str>) {
    let what = format!("EIP {allocation_id} associated with {instance:?}");
    e2e.eventually(&what, WAIT, || async move {
        let found = vpc
            .describe_eip_addresses(&[allocation_id.to_owned()], &[])
            .await
            .ok()?;
        let eip = found.iter().find(|e| e.allocation_id == allocation_id)?;
        let settled = match instance {
            Some(id) => eip.instance_id == id && eip.status == "InUse",
            None => eip.instance_id.is_empty() && eip.status == "Available",
        };
        settled.then_some(())
    })
    .await;
}

/// The stack sample's documents with `from` replaced by `to` in the one of `kind`.
fn edit_kind(stack: &str, kind: &str, from: &str, to: &str) -> String {
    let marker = format!("kind: {kind}\n");
    let edited: Vec<String> = stack
        .split("\n---\n")
        .map(|doc| {
            if doc.contains(&marker) {
                assert!(doc.contains(from), "{from:?} not in the {kind}: {doc}");
                doc.replacen(from, to, 1)
            } else {
                doc.to_owned()
            }
        })
        .collect();
    edited.join("\n---\n")
}

/// Called by the stack e2e once the production stack sample (`stack`, without namespaces) is
/// Ready: its plan is `no change` for all 15 objects (every kind of the network, the NAT entries
/// and EIP associations included, none skipped). Then the bastion's EIPAssociation is paused
/// and its EIP unassociated outside ferroplane and associated with the app instance: the
/// association, paused, would be refused (`EIPInUse`, in the note). The EIP unassociated from
/// the app again, and the file's DNAT external port and SNAT name edited: the plan predicts `ModifyForwardEntry` and `ModifySnatEntry`, and the
/// association made again (`AssociateEipAddress`) as `no change` while paused, the pause in
/// its note, with no write of its own. Resumed and applied, the controllers make exactly those
/// three calls and the plan is `no change` again. Makes two EIP associations (the app's, the
/// bastion's again).
pub(crate) async fn plan_of_the_stack(
    e2e: &E2e,
    stack: &str,
    bastion_eip: &str,
    bastion: &str,
    app: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stack.yaml");
    std::fs::write(&file, stack).unwrap();
    let (code, same) = plan(e2e, &file).await;
    let planned = actions(&same);
    assert_eq!(planned.len(), 15, "{same:#}");
    assert!(planned.iter().all(|(_, a)| a == "no-change"), "{same:#}");
    assert_eq!(same["skipped"], serde_json::json!([]), "{same:#}");
    assert_eq!(code, 0, "{same:#}");

    let association = format!("eipassociations.{GROUP}/bastion");
    e2e.k(&["annotate", &association, "ferroplane.io/paused=true"])
        .await;
    let synced = "{.status.conditions[?(@.type=='Synced')].reason}";
    e2e.wait_jsonpath(&association, synced, "ReconcilePaused")
        .await;
    let (_, vpc) = e2e.cloud();
    let on = |instance_id| EipTarget {
        allocation_id: bastion_eip,
        instance_id,
        instance_type: "EcsInstance",
        private_ip_address: None,
    };
    vpc.unassociate_eip_address(&on(bastion), None)
        .await
        .expect("UnassociateEipAddress");
    eip_settled(e2e, &vpc, bastion_eip, None).await;

    // The EIP taken by another instance: the association would be refused (EIPInUse), which
    // the plan reads as the controller's update would.
    vpc.associate_eip_address(&on(app), None)
        .await
        .expect("AssociateEipAddress");
    eip_settled(e2e, &vpc, bastion_eip, Some(app)).await;
    let (code, taken) = plan(e2e, &file).await;
    let refused = named(&taken, "EIPAssociation", "bastion");
    assert_eq!(refused["action"], "no-change", "{refused:#}");
    assert!(
        refused["note"]
            .as_str()
            .unwrap_or_default()
            .ends_with("then: blocked (EIPInUse)"),
        "{refused:#}"
    );
    assert_eq!(code, 0, "{taken:#}");
    vpc.unassociate_eip_address(&on(app), None)
        .await
        .expect("UnassociateEipAddress");
    eip_settled(e2e, &vpc, bastion_eip, None).await;

    let edited = edit_kind(
        stack,
        "DNATEntry",
        "externalPort: 2222",
        "externalPort: 2223",
    );
    let edited = edit_kind(
        &edited,
        "SNATEntry",
        "      name: prod-nat\n    name: prod-private",
        "      name: prod-nat\n    name: prod-private-out",
    );
    std::fs::write(&file, &edited).unwrap();
    let before_plan = CloudBefore::take(e2e);
    let (code, changed) = plan(e2e, &file).await;
    assert_eq!(code, 2, "{changed:#}");
    let in_place = |field: &str, action: &str| {
        vec![(field.to_owned(), "in-place".to_owned(), action.to_owned())]
    };
    let dnat = named(&changed, "DNATEntry", "app-ssh");
    assert_eq!(dnat["action"], "update-in-place", "{dnat:#}");
    assert_eq!(
        changes(dnat),
        in_place("externalPort", "ModifyForwardEntry")
    );
    let snat = named(&changed, "SNATEntry", "prod-private");
    assert_eq!(snat["action"], "update-in-place", "{snat:#}");
    assert_eq!(changes(snat), in_place("name", "ModifySnatEntry"));
    let paused = named(&changed, "EIPAssociation", "bastion");
    assert_eq!(paused["action"], "no-change", "{paused:#}");
    assert_eq!(
        changes(paused),
        in_place("association", "AssociateEipAddress")
    );
    let note = paused["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("paused by the ferroplane.io/paused annotation")
            && note.contains("then: update in place"),
        "{paused:#}"
    );
    let edited_objects = [
        ("DNATEntry", "app-ssh"),
        ("SNATEntry", "prod-private"),
        ("EIPAssociation", "bastion"),
    ];
    let others: Vec<&Value> = changed["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| {
            !edited_objects
                .iter()
                .any(|(k, n)| o["kind"] == *k && o["name"] == *n)
        })
        .collect();
    assert_eq!(others.len(), 12, "{changed:#}");
    for other in others {
        assert_eq!(other["action"], "no-change", "{other:#}");
    }
    before_plan.assert_unchanged(e2e);
    let (_, table) = plan_as(e2e, &file, "table").await;
    eprintln!("{table}");

    // Resumed and applied: exactly the predicted calls.
    let before_apply = e2e.mock().stats().calls;
    e2e.k(&["annotate", &association, "ferroplane.io/paused-"])
        .await;
    e2e.apply(&edited).await;
    applied_as_planned(e2e, &file, &before_apply, &[dnat, snat, paused]).await;
}
