//! Crossplane's conventions end to end, driven by kubectl: a VPC created paused by
//! `crossplane.io/paused` reaches no cloud; resumed with a `crossplane.io/reconcile-requested-at`
//! token it becomes Ready, echoes the token in `status.lastHandledReconcileAt` and carries its
//! external name under both keys; a differing `crossplane.io/external-name` is overruled and
//! reported; the ProviderConfig's `status.users` (its `USERS` column) follows the VPC.

use std::time::Duration;

use crate::support::E2e;
use alibaba_mock::{Change, ResourceKind};
use ferroplane::controllers::Kind;

const VPC: &str = "vpcs.alibabacloud.ferroplane.io/xp-net";
const CONFIG: &str = "providerconfigs.alibabacloud.ferroplane.io/default";
const READY: &str = "{.status.conditions[?(@.type=='Ready')].status}";
const SYNCED_REASON: &str = "{.status.conditions[?(@.type=='Synced')].reason}";
const SYNCED_MESSAGE: &str = "{.status.conditions[?(@.type=='Synced')].message}";
const OURS: &str = "{.metadata.annotations.ferroplane\\.io/external-name}";
const CROSSPLANES: &str = "{.metadata.annotations.crossplane\\.io/external-name}";
const WAIT: Duration = Duration::from_secs(60);

const PAUSED_VPC: &str = r#"
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: VPC
metadata:
  name: xp-net
  annotations:
    crossplane.io/paused: "true"
spec:
  forProvider:
    regionId: cn-beijing
    cidrBlock: 10.30.0.0/16
    vpcName: xp-net
"#;

/// The live VPCs a call created (the account's default VPCs, made by no call, are not).
fn vpcs(e2e: &E2e) -> usize {
    let created: Vec<String> = e2e
        .mock()
        .ledger()
        .into_iter()
        .filter(|e| e.kind == ResourceKind::Vpc && e.change == Change::Created)
        .map(|e| e.resource_id)
        .collect();
    e2e.mock()
        .resources()
        .iter()
        .filter(|r| r.kind == ResourceKind::Vpc && created.contains(&r.id))
        .count()
}

/// How many VPCs calls created, ever.
fn vpcs_created(e2e: &E2e) -> u64 {
    e2e.mock().created(ResourceKind::Vpc)
}

pub(crate) async fn crossplane_annotations_and_users_through_kubectl() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    e2e.wait_jsonpath(CONFIG, READY, "True").await;
    e2e.apply(PAUSED_VPC).await;
    e2e.wait_jsonpath(VPC, SYNCED_REASON, "ReconcilePaused")
        .await;
    assert!(
        e2e.jsonpath(VPC, SYNCED_MESSAGE)
            .await
            .contains("crossplane.io/paused"),
        "the message names the annotation that paused"
    );
    assert_eq!(vpcs_created(&e2e), 0, "nothing created while paused");

    e2e.k(&[
        "annotate",
        VPC,
        "crossplane.io/paused=false",
        "crossplane.io/reconcile-requested-at=2026-11-29T10:00:00Z",
        "--overwrite",
    ])
    .await;
    e2e.wait_jsonpath(VPC, READY, "True").await;
    e2e.wait_jsonpath(
        VPC,
        "{.status.lastHandledReconcileAt}",
        "2026-11-29T10:00:00Z",
    )
    .await;
    let id = e2e.jsonpath(VPC, OURS).await;
    assert!(id.starts_with("vpc-"), "{id:?}");
    assert_eq!(e2e.jsonpath(VPC, CROSSPLANES).await, id, "both keys");
    e2e.wait_jsonpath(CONFIG, "{.status.users}", "1").await;
    let columns = e2e.k(&["get", CONFIG]).await;
    assert!(
        columns.lines().next().is_some_and(|h| h.contains("USERS")),
        "{columns}"
    );

    // Crossplane's name disagrees: ours stands, the user's value is kept and reported.
    e2e.k(&[
        "annotate",
        VPC,
        "crossplane.io/external-name=vpc-someone-elses",
        "--overwrite",
    ])
    .await;
    e2e.eventually("a ConflictingAnnotations Warning", WAIT, || async {
        e2e.k(&[
            "get",
            "events",
            "--field-selector",
            "reason=ConflictingAnnotations",
            "-o",
            "name",
        ])
        .await
        .lines()
        .count()
            == 1
    })
    .await;
    e2e.wait_jsonpath(VPC, SYNCED_REASON, "ReconcileSuccess")
        .await;
    assert!(
        e2e.jsonpath(VPC, SYNCED_MESSAGE)
            .await
            .contains("vpc-someone-elses"),
        "Synced names the disagreement"
    );
    assert_eq!(e2e.jsonpath(VPC, OURS).await, id);
    assert_eq!(e2e.jsonpath(VPC, READY).await, "True");
    assert_eq!(vpcs(&e2e), 1, "the VPC lives on");
    assert_eq!(vpcs_created(&e2e), 1, "no second VPC");

    e2e.k(&["delete", VPC, "--wait=true"]).await;
    e2e.eventually("the VPC released", WAIT, || async { vpcs(&e2e) == 0 })
        .await;
    e2e.wait_jsonpath(CONFIG, "{.status.users}", "0").await;
    e2e.finish().await;
}
