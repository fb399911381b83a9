//! An Application whose rollout cannot progress: its pod asks for more CPU than any node has, so
//! the real scheduler leaves it Pending, and the real Deployment controller marks the rollout
//! `ProgressDeadlineExceeded` once `progressDeadlineSeconds` pass. The Application's Ready says
//! so with that reason; a fixed spec rolls out and the Application is Ready again. Only on the
//! real control plane: the sandbox runs no scheduler and no Deployment progress clock.

use std::time::Duration;

use ferroplane::controllers::Kind;
use serde_json::json;

use crate::support::E2e;

const WAIT: Duration = Duration::from_secs(120);

fn application(cpu: &str) -> String {
    json!({
        "apiVersion": "apps.ferroplane.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "stuck"},
        "spec": {
            "image": "nginx:1.27", "replicas": 1, "port": 80,
            "resources": {"requests": {"cpu": cpu}},
            "progressDeadlineSeconds": 5,
        },
    })
    .to_string()
}

pub(crate) async fn a_rollout_past_its_progress_deadline_is_reported() {
    let e2e = E2e::start(&[Kind::Application]).await;
    // kwok's fake nodes offer 1,000 CPUs each: this request fits none.
    e2e.apply(&application("100000")).await;
    e2e.eventually("Ready=False with reason ProgressDeadlineExceeded", WAIT, || async {
        let seen = e2e
            .jsonpath(
                "application/stuck",
                "{.status.conditions[?(@.type=='Ready')].status}/{.status.conditions[?(@.type=='Ready')].reason}",
            )
            .await;
        (seen == "False/ProgressDeadlineExceeded").then_some(())
    })
    .await;
    let message = e2e
        .jsonpath(
            "application/stuck",
            "{.status.conditions[?(@.type=='Ready')].message}",
        )
        .await;
    assert!(
        message.contains("progress deadline") || message.contains("stopped making progress"),
        "the message says what happened: {message}"
    );
    let deadline = e2e
        .jsonpath("deployment/stuck", "{.spec.progressDeadlineSeconds}")
        .await;
    assert_eq!(deadline, "5", "the Deployment carries the deadline");

    // A request a node can meet: the new rollout completes and Ready is True again.
    e2e.apply(&application("100m")).await;
    e2e.wait_jsonpath(
        "application/stuck",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    e2e.k(&["delete", "application", "stuck", "--wait=true"])
        .await;
    e2e.finish().await;
}
