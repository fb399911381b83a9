//! HorizontalPodAutoscalers as kube-controller-manager's HPA controller runs them in a cluster
//! without a metrics API (the sandbox has no pods to measure): a target whose replicas are
//! outside `[minReplicas, maxReplicas]` is scaled into the range through its `/scale`
//! subresource; inside it the replicas are left alone (the controller cannot compute a
//! utilization), as is a target scaled to 0 (autoscaling disabled). The status and its
//! conditions are worded as a real kube-controller-manager (v1.37) words them in a cluster
//! without metrics-server. Unlike the real controller, which syncs every 15 s, it syncs when the
//! autoscaler or a workload of its namespace changes; it records no events.

use serde_json::{Value, json};

use crate::catalog::registry::keys;
use crate::meta;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::scale::{ScaleChange, scale};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

fn options() -> WriteOptions {
    WriteOptions {
        manager: "kube-controller-manager".into(),
        ..WriteOptions::default()
    }
}

/// A condition, keeping the transition time of an existing one with the same status.
fn condition(hpa: &Value, kind: &str, status: &str, reason: &str, message: &str) -> Value {
    let since = hpa
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["type"] == kind && c["status"] == status)
        })
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(meta::now_time()));
    json!({"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
}

/// The size the controller rescales a target with `current` replicas to, if it does.
fn desired(current: i64, min: i64, max: i64) -> Option<i64> {
    if current == 0 && min != 0 {
        None
    } else if current > max {
        Some(max)
    } else if current < min {
        Some(min)
    } else {
        None
    }
}

/// Why no replica count can be computed from the metrics: the sandbox serves no metrics API.
fn metrics_failure(hpa: &Value) -> String {
    let resource = hpa
        .pointer("/spec/metrics/0/resource/name")
        .and_then(Value::as_str)
        .unwrap_or("cpu");
    format!(
        "the HPA was unable to compute the replica count: failed to get {resource} utilization: \
         unable to get metrics for resource {resource}: unable to fetch metrics from resource \
         metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
    )
}

/// One sync of the autoscaler `namespace/name`.
pub fn reconcile(state: &mut State, namespace: &str, name: &str) {
    let Some(hpa) = state
        .get(&keys::horizontal_pod_autoscalers(), namespace, name)
        .cloned()
    else {
        return;
    };
    let target_kind = meta::str_at(&hpa, "/spec/scaleTargetRef/kind").to_owned();
    let target_name = meta::str_at(&hpa, "/spec/scaleTargetRef/name").to_owned();
    let target_key = match target_kind.as_str() {
        "Deployment" => keys::deployments(),
        "StatefulSet" => keys::statefulsets(),
        _ => return,
    };
    let min = hpa
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let max = hpa
        .pointer("/spec/maxReplicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let previous = |field: &str| hpa.pointer(&format!("/status/{field}")).cloned();
    let mut status = json!({
        "observedGeneration": hpa.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        "currentMetrics": null,
        "desiredReplicas": previous("desiredReplicas").unwrap_or(json!(0)),
    });
    if let Some(last) = previous("lastScaleTime") {
        status["lastScaleTime"] = last;
    }
    let not_to_zero = condition(
        &hpa,
        "ScaledToZero",
        "False",
        "NotScaledToZero",
        "the HPA controller did not scale the workload to zero",
    );
    let conditions = match state.get(&target_key, namespace, &target_name).cloned() {
        None => vec![condition(
            &hpa,
            "AbleToScale",
            "False",
            "FailedGetScale",
            &format!(
                "the HPA controller was unable to get the target's current scale: {} \"{target_name}\" not found",
                target_key.plural
            ),
        )],
        Some(target) => {
            let current = target
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            status["currentReplicas"] = json!(current);
            match desired(current, min, max) {
                Some(wanted) => {
                    if let Some(def) = state.registry.find_key(&target_key) {
                        let target = Target::main(&def, namespace, &target_name);
                        let change = || {
                            Ok(ScaleChange::MergePatch(
                                json!({"spec": {"replicas": wanted}}),
                            ))
                        };
                        if let Err(error) = scale(state, &target, change, &options()) {
                            tracing::warn!(%error, %name, "the simulated autoscaler could not scale");
                        }
                    }
                    status["desiredReplicas"] = json!(wanted);
                    status["lastScaleTime"] = json!(meta::now_time());
                    vec![
                        condition(
                            &hpa,
                            "AbleToScale",
                            "True",
                            "SucceededRescale",
                            &format!(
                                "the HPA controller was able to update the target scale to {wanted}"
                            ),
                        ),
                        not_to_zero,
                    ]
                }
                None if current == 0 && min != 0 => vec![
                    condition(
                        &hpa,
                        "AbleToScale",
                        "True",
                        "SucceededGetScale",
                        "the HPA controller was able to get the target's current scale",
                    ),
                    condition(
                        &hpa,
                        "ScalingActive",
                        "False",
                        "ScalingDisabled",
                        "scaling is disabled since the replica count of the target is zero",
                    ),
                ],
                None => {
                    status["currentMetrics"] = json!([{"type": ""}]);
                    vec![
                        condition(
                            &hpa,
                            "AbleToScale",
                            "True",
                            "SucceededGetScale",
                            "the HPA controller was able to get the target's current scale",
                        ),
                        not_to_zero,
                        condition(
                            &hpa,
                            "ScalingActive",
                            "False",
                            "FailedGetResourceMetric",
                            &metrics_failure(&hpa),
                        ),
                    ]
                }
            }
        }
    };
    status["conditions"] = json!(conditions);
    if hpa.get("status") == Some(&status) {
        return;
    }
    let Some(def) = state.registry.find_key(&keys::horizontal_pod_autoscalers()) else {
        return;
    };
    let mut next = (*hpa).clone();
    next["status"] = status;
    let target = Target {
        def: &def,
        namespace,
        name,
        subresource: "status",
    };
    if let Err(error) = update(state, &target, next, UpdateKind::Update, &options()) {
        tracing::warn!(%error, %name, "the simulated autoscaler could not write status");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_are_brought_into_the_range_and_left_alone_inside_it() {
        assert_eq!(desired(1, 2, 5), Some(2));
        assert_eq!(desired(9, 2, 5), Some(5));
        assert_eq!(desired(3, 2, 5), None);
        assert_eq!(desired(0, 2, 5), None, "a target at 0 is not autoscaled");
    }
}
