//! `ferroplane plan` end to end: an ECSInstance made Ready from a manifest plans `no change`
//! (exit 0); the manifest edited (instanceName, in place; instanceType, restart-bound, with
//! `allowRestart`) plans exactly those two with their ECS actions (exit 2), and the plan made no
//! write call to the cloud; applied, the controller makes exactly the calls the plan predicted
//! (the mock's call counts before and after), and the plan is `no change` again.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use ferroplane::controllers::Kind;
use serde_json::Value;

use crate::support::{ACCESS_KEY_SECRET, E2e};

const NAME: &str = "plan-e2e";
const WAIT: Duration = Duration::from_secs(120);

fn manifest(instance_name: &str, instance_type: &str) -> String {
    format!(
        r#"apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: {NAME}
spec:
  forProvider:
    regionId: cn-beijing
    imageId: aliyun_3_x64_20G_alibase_20240528.vhd
    instanceType: {instance_type}
    instanceName: {instance_name}
    vSwitchId: vsw-eafxvpknkjnma5xpiqaf0w
    securityGroupIds: [sg-y2fkm5jxbput7ntjcm6tbw]
    allowRestart: true
"#
    )
}

/// Calls of every action that is not a read (`Describe*`, `List*`, STS's identity).
fn writes(calls: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    calls
        .iter()
        .filter(|(action, _)| {
            !action.starts_with("Describe")
                && !action.starts_with("List")
                && *action != "GetCallerIdentity"
        })
        .map(|(a, n)| (a.clone(), *n))
        .collect()
}

/// The write calls made between two snapshots of the counts.
pub(crate) fn made_since(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    writes(after)
        .into_iter()
        .filter_map(|(action, n)| {
            let delta = n - before.get(&action).copied().unwrap_or(0);
            (delta > 0).then_some((action, delta))
        })
        .collect()
}

/// The mock's records before a plan, to show afterwards that the plan wrote nothing.
pub(crate) struct CloudBefore {
    calls: BTreeMap<String, u64>,
    ledger: usize,
}

impl CloudBefore {
    pub(crate) fn take(e2e: &E2e) -> Self {
        Self {
            calls: e2e.mock().stats().calls,
            ledger: e2e.mock().ledger().len(),
        }
    }

    /// No write call and no change in the cloud since [`CloudBefore::take`].
    pub(crate) fn assert_unchanged(&self, e2e: &E2e) {
        assert_eq!(
            made_since(&self.calls, &e2e.mock().stats().calls),
            BTreeMap::new(),
            "plan wrote to the cloud"
        );
        assert_eq!(
            e2e.mock().ledger().len(),
            self.ledger,
            "plan changed the cloud"
        );
    }
}

/// `ferroplane plan -f FILE -o FORMAT` against the test's cluster; returns the exit code and
/// stdout, after checking that the key secret is in neither output.
pub(crate) async fn plan_as(e2e: &E2e, file: &Path, format: &str) -> (i32, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferroplane"))
        .args(["plan", "-f", file.to_str().unwrap(), "-n", &e2e.namespace])
        .args(["-o", format, "--allow-endpoint", &e2e.mock().endpoint()])
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
    (code, stdout.into_owned())
}

/// `plan_as` JSON, parsed.
pub(crate) async fn plan(e2e: &E2e, file: &Path) -> (i32, Value) {
    let (code, stdout) = plan_as(e2e, file, "json").await;
    let document = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("plan printed no JSON ({e}), exit {code}: {stdout}"));
    (code, document)
}

/// The write calls a plan predicts: one per ECS action of its changes (rows of one action share
/// a call) and a stop and a start around restart-bound ones that are permitted.
pub(crate) fn predicted(object: &Value) -> BTreeMap<String, u64> {
    let mut calls: BTreeMap<String, u64> = object["changes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["calls"].as_array().cloned().unwrap_or_default())
        .map(|call| (call.as_str().unwrap().to_owned(), 1))
        .collect();
    if object["restartPermitted"] == true {
        calls.insert("StopInstance".into(), 1);
        calls.insert("StartInstance".into(), 1);
    }
    calls
}

pub(crate) async fn plan_predicts_exactly_what_the_controller_does() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("instance.yaml");
    std::fs::write(&file, manifest("web", "ecs.g6.large")).unwrap();
    e2e.k(&["apply", "-f", file.to_str().unwrap()]).await;
    let ready = "{.status.conditions[?(@.type=='Ready')].status}";
    e2e.wait_jsonpath(&format!("ecs/{NAME}"), ready, "True")
        .await;
    let id = e2e
        .jsonpath(&format!("ecs/{NAME}"), "{.status.atProvider.instanceId}")
        .await;

    // The manifest as applied: nothing to do (planned over the cluster's object, which names
    // the instance).
    let (code, same) = plan(&e2e, &file).await;
    assert_eq!(same["objects"][0]["action"], "no-change", "{same:#}");
    assert_eq!(same["objects"][0]["externalName"], id.as_str());
    assert_eq!(same["schemaVersion"], 1);
    assert_eq!(code, 0, "{same:#}");

    // An in-place and a restart-bound edit of the file.
    std::fs::write(&file, manifest("web-renamed", "ecs.g6.xlarge")).unwrap();
    let before_plan = CloudBefore::take(&e2e);
    let (code, changed) = plan(&e2e, &file).await;
    assert_eq!(code, 2, "{changed:#}");
    let object = &changed["objects"][0];
    assert_eq!(object["externalName"], id.as_str());
    assert_eq!(object["action"], "needs-restart", "{object:#}");
    assert_eq!(object["restartPermitted"], true);
    let changes: Vec<(&str, &str, &str)> = object["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap(),
                c["class"].as_str().unwrap(),
                c["action"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("instanceName", "in-place", "ModifyInstanceAttribute"),
            ("instanceType", "restart", "ModifyInstanceSpec"),
        ]
    );
    before_plan.assert_unchanged(&e2e);
    let (code, table) = plan_as(&e2e, &file, "table").await;
    assert_eq!(code, 2);
    for line in [
        "needs restart (allowed)",
        "instanceName: \"web\" → \"web-renamed\"  [ModifyInstanceAttribute]",
        "instanceType: \"ecs.g6.large\" → \"ecs.g6.xlarge\"  [ModifyInstanceSpec]",
    ] {
        assert!(table.contains(line), "{line:?} not in\n{table}");
    }
    eprintln!("{table}\n{changed:#}");
    // The table's plan too.
    before_plan.assert_unchanged(&e2e);

    // Applied: the controller makes exactly the predicted calls.
    let before_apply = e2e.mock().stats().calls;
    e2e.k(&["apply", "-f", file.to_str().unwrap()]).await;
    e2e.eventually("the edits in the cloud, the instance running", WAIT, || {
        let instance = e2e.instance(&id);
        async move {
            let i = instance?;
            (i.instance_name == "web-renamed"
                && i.instance_type == "ecs.g6.xlarge"
                && i.status == "Running")
                .then_some(())
        }
    })
    .await;
    let synced = "{.status.conditions[?(@.type=='Synced')].status}";
    e2e.wait_jsonpath(&format!("ecs/{NAME}"), synced, "True")
        .await;
    let (code, after) = plan(&e2e, &file).await;
    assert_eq!(after["objects"][0]["action"], "no-change", "{after:#}");
    assert_eq!(code, 0);
    assert_eq!(
        made_since(&before_apply, &e2e.mock().stats().calls),
        predicted(object),
        "the controller's writes differ from the plan's prediction"
    );

    // Another object naming that instance: its tag names a live object, so the plan is blocked
    // as the reconcile would refuse it, and nothing is written.
    let thief = manifest("web-renamed", "ecs.g6.xlarge").replace(
        &format!("name: {NAME}"),
        &format!(
            "name: {NAME}-copy
  annotations:
    ferroplane.io/external-name: {id}"
        ),
    );
    let thief_file = dir.path().join("copy.yaml");
    std::fs::write(&thief_file, thief).unwrap();
    plans_owned_elsewhere(&e2e, &thief_file).await;
    e2e.finish().await;
}

/// The plan of `file`, one object whose resource another object owns or imports first:
/// `blocked` as the reconcile would refuse it, with no write to the cloud.
pub(crate) async fn plans_owned_elsewhere(e2e: &E2e, file: &Path) {
    let before_plan = CloudBefore::take(e2e);
    let (code, document) = plan(e2e, file).await;
    let object = &document["objects"][0];
    assert_eq!(object["action"], "blocked", "{document:#}");
    assert_eq!(
        object["blocked"]["reason"],
        ferroplane_runtime::OWNED_ELSEWHERE,
        "{document:#}"
    );
    assert_eq!(code, 2);
    before_plan.assert_unchanged(e2e);
}
