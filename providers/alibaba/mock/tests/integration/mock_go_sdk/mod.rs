//! Every answer of every action the mock serves, decoded into Alibaba Cloud's official Go SDK
//! models (ECS `v7.7.0`, VPC `v6.12.8`, STS `v2.0.4`, pinned by `tests/gosdk/go.mod`): a field a
//! model declares that an answer lacks, or a value of another JSON type, fails the test, as does
//! an action the checker's model table or the scenario misses.

mod checker;
mod not_served_yet;
mod scenario;

use std::collections::BTreeSet;
use std::time::Duration;

use ferroplane_testkit::mock_requests::{Signer, start};
use serde_json::Value;

/// Fields a model declares that the real API leaves out of this answer, with why; an entry that
/// no answer needs any more fails the test too, so the list stays exact.
const NOT_IN_THE_REAL_ANSWER: &[(&str, &str, &str)] = &[
    (
        "ECS/DescribeKeyPairs",
        "KeyPairs.KeyPair[].PublicKey",
        "returned only when the request sets IncludePublicKey=true (API reference)",
    ),
    (
        "ECS/RunInstances",
        "OrderId",
        "returned only when InstanceChargeType is PrePaid (API reference)",
    ),
    (
        "ECS/DescribeAvailableResource",
        "AvailableZones.AvailableZone[].AvailableResources.AvailableResource[].SupportedResources.SupportedResource[].Max",
        "returned only when DestinationResource is SystemDisk or DataDisk (API reference)",
    ),
    (
        "ECS/DescribeAvailableResource",
        "AvailableZones.AvailableZone[].AvailableResources.AvailableResource[].SupportedResources.SupportedResource[].Min",
        "returned only when DestinationResource is SystemDisk or DataDisk (API reference)",
    ),
    (
        "ECS/DescribeAvailableResource",
        "AvailableZones.AvailableZone[].AvailableResources.AvailableResource[].SupportedResources.SupportedResource[].Unit",
        "returned only when DestinationResource is SystemDisk or DataDisk (API reference)",
    ),
    (
        "VPC/AllocateEipAddress",
        "OrderId",
        "returned only when InstanceChargeType is PrePaid (API reference); the mock sells none",
    ),
];

#[tokio::test]
async fn every_answer_decodes_into_the_go_sdk_models_with_no_field_missing() {
    let mock = start(Duration::ZERO).await;
    let mut recorder = scenario::Recorder::new(Signer::new(&mock));
    scenario::drive(&mut recorder).await;
    mock.shutdown().await;
    let report = checker::check(&recorder.answers);

    let served: BTreeSet<String> = alibaba_mock::served_actions()
        .into_iter()
        .map(|(api, action)| format!("{api}/{action}"))
        .collect();
    let models: BTreeSet<String> = report["models"]
        .as_array()
        .expect("models")
        .iter()
        .map(|m| m.as_str().expect("model key").to_owned())
        .collect();
    assert_eq!(
        served.symmetric_difference(&models).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "tests/gosdk/models.go and the mock's action tables differ"
    );
    let answered: BTreeSet<String> = recorder
        .answers
        .iter()
        .map(|a| {
            format!(
                "{}/{}",
                a["api"].as_str().unwrap(),
                a["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        served.difference(&answered).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "the scenario answers no call of these served actions"
    );

    let mut failures = BTreeSet::new();
    let mut allowed_used = BTreeSet::new();
    let mut pending_used = BTreeSet::new();
    for verdict in report["answers"].as_array().expect("answers") {
        let key = format!(
            "{}/{}",
            verdict["api"].as_str().unwrap(),
            verdict["action"].as_str().unwrap()
        );
        for p in verdict["problems"].as_array().expect("problems") {
            let path = p["path"].as_str().unwrap_or_default();
            let kind = p["kind"].as_str().unwrap_or_default();
            let allowed = NOT_IN_THE_REAL_ANSWER
                .iter()
                .position(|(k, f, _)| *k == key && *f == path && kind == "missing");
            let pending = not_served_yet::FIELDS
                .iter()
                .position(|(k, f, c)| *k == key && *f == path && *c == kind);
            match (allowed, pending) {
                (Some(i), _) => {
                    allowed_used.insert(i);
                }
                (None, Some(i)) => {
                    pending_used.insert(i);
                }
                (None, None) => {
                    failures.insert(format!(
                        "{key} {path}: {kind} ({})",
                        p["detail"].as_str().unwrap_or_default()
                    ));
                }
            }
        }
    }
    let stale: Vec<_> = NOT_IN_THE_REAL_ANSWER
        .iter()
        .enumerate()
        .filter(|(i, _)| !allowed_used.contains(i))
        .map(|(_, (k, f, _))| format!("{k} {f}"))
        .collect();
    let served_now: Vec<_> = not_served_yet::FIELDS
        .iter()
        .enumerate()
        .filter(|(i, _)| !pending_used.contains(i))
        .map(|(_, (k, f, c))| format!("{k} {f} ({c})"))
        .collect();
    eprintln!(
        "{} fields still missing or mistyped (not_served_yet.rs, issue 33)",
        not_served_yet::FIELDS.len()
    );
    if let Some(never) = report["never_filled"].as_object().filter(|m| !m.is_empty()) {
        eprintln!(
            "lists no answer filled (their elements unchecked): {}",
            Value::Object(never.clone())
        );
    }
    assert!(
        failures.is_empty(),
        "{} fields the Go SDK models declare are missing or mistyped in the mock's answers:\n{}",
        failures.len(),
        failures.into_iter().collect::<Vec<_>>().join("\n")
    );
    assert!(
        stale.is_empty(),
        "allow-list entries no answer needs: {stale:?}"
    );
    assert!(
        served_now.is_empty(),
        "now served correctly, remove from not_served_yet.rs: {served_now:?}"
    );
}
