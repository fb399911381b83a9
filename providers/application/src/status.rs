//! Status of an Application from its live Deployment: available replicas, the URL, readiness,
//! and a `Progressing` condition. A rollout past its progress deadline (the Deployment's
//! `Progressing` condition with reason `ProgressDeadlineExceeded`) makes `Ready` False with that
//! reason. Pure.

use ferroplane_apis::application::Application;
use ferroplane_apis::common::{ConditionStatus, names};
use ferroplane_runtime::Readiness;
use ferroplane_runtime::conditions::Desired;
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;

/// Condition type and reasons besides `Ready` and `Synced`.
pub mod conditions {
    pub const PROGRESSING: &str = "Progressing";
    pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
    pub const ROLLING_OUT: &str = "RollingOut";
    pub const ROLLED_OUT: &str = "RolledOut";
}

#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub available_replicas: i32,
    pub url: String,
    pub readiness: Readiness,
    pub conditions: Vec<Desired>,
    pub in_transition: bool,
}

/// Where the application is reachable: through the Ingress when there is one, else the
/// Service's cluster DNS name.
pub fn url(app: &Application) -> String {
    match &app.spec.ingress {
        Some(ingress) => {
            let scheme = if ingress.tls.is_some() {
                "https"
            } else {
                "http"
            };
            format!("{scheme}://{}{}", ingress.host, ingress.path)
        }
        None => format!(
            "http://{}.{}.svc.cluster.local",
            app.name_any(),
            app.namespace().unwrap_or_default()
        ),
    }
}

pub fn report(app: &Application, deployment: Option<&Deployment>) -> Report {
    use conditions::*;
    let status = deployment.and_then(|d| d.status.as_ref());
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    let wanted = app.spec.replicas;
    let observed_current = match (
        deployment.and_then(|d| d.metadata.generation),
        status.and_then(|s| s.observed_generation),
    ) {
        (Some(g), Some(o)) => o >= g,
        _ => status.is_some(),
    };
    let progressing = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Progressing"));
    let deadline_exceeded = progressing
        .filter(|c| c.status == "False" && c.reason.as_deref() == Some(PROGRESS_DEADLINE_EXCEEDED))
        .map(|c| c.message.clone().unwrap_or_default());

    let mut conditions = Vec::new();
    let rolled_out = observed_current && available >= wanted && updated >= wanted;
    let readiness = if deployment.is_none() {
        Readiness::Creating
    } else if let Some(message) = &deadline_exceeded {
        // Refines the framework's Ready=False/Unavailable: later conditions of a type win.
        conditions.push(Desired::new(
            names::READY,
            ConditionStatus::False,
            PROGRESS_DEADLINE_EXCEEDED,
            format!("the rollout stopped making progress: {message}; check the pods' events and the image"),
        ));
        Readiness::Unavailable(format!("rollout exceeded its progress deadline: {message}"))
    } else if rolled_out {
        Readiness::Available
    } else {
        Readiness::Unavailable(format!("{available} of {wanted} replicas available"))
    };
    conditions.push(match (&deadline_exceeded, rolled_out) {
        (Some(message), _) => Desired::new(
            PROGRESSING,
            ConditionStatus::False,
            PROGRESS_DEADLINE_EXCEEDED,
            message.clone(),
        ),
        (None, true) => Desired::new(
            PROGRESSING,
            ConditionStatus::False,
            ROLLED_OUT,
            format!("{available} of {wanted} replicas available"),
        ),
        (None, false) => Desired::new(
            PROGRESSING,
            ConditionStatus::True,
            ROLLING_OUT,
            format!("{updated} of {wanted} replicas updated, {available} available"),
        ),
    });
    Report {
        available_replicas: available,
        url: url(app),
        in_transition: readiness != Readiness::Available && deadline_exceeded.is_none(),
        readiness,
        conditions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::app;
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};

    fn deployment(available: i32, updated: i32, progressing: Option<(&str, &str)>) -> Deployment {
        Deployment {
            metadata: kube::api::ObjectMeta {
                generation: Some(2),
                ..Default::default()
            },
            status: Some(DeploymentStatus {
                observed_generation: Some(2),
                available_replicas: Some(available),
                updated_replicas: Some(updated),
                conditions: progressing.map(|(status, reason)| {
                    vec![DeploymentCondition {
                        type_: "Progressing".into(),
                        status: status.into(),
                        reason: Some(reason.into()),
                        message: Some("ReplicaSet \"web-1\" has timed out progressing.".into()),
                        ..DeploymentCondition::default()
                    }]
                }),
                ..DeploymentStatus::default()
            }),
            ..Deployment::default()
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            url(&app(serde_json::json!({"image": "x"}))),
            "http://web.shop.svc.cluster.local"
        );
        assert_eq!(
            url(&app(
                serde_json::json!({"image": "x", "ingress": {"host": "a.example.com", "path": "/shop"}})
            )),
            "http://a.example.com/shop"
        );
        assert_eq!(
            url(&app(
                serde_json::json!({"image": "x", "ingress": {"host": "a.example.com", "tls": {"secretName": "c"}}})
            )),
            "https://a.example.com/"
        );
    }

    #[test]
    fn available_when_every_replica_is_available() {
        let a = app(serde_json::json!({"image": "x", "replicas": 2}));
        let r = report(
            &a,
            Some(&deployment(2, 2, Some(("True", "NewReplicaSetAvailable")))),
        );
        assert_eq!(r.readiness, Readiness::Available);
        assert_eq!(r.available_replicas, 2);
        assert!(!r.in_transition);
        let partial = report(
            &a,
            Some(&deployment(1, 2, Some(("True", "ReplicaSetUpdated")))),
        );
        assert_eq!(
            partial.readiness,
            Readiness::Unavailable("1 of 2 replicas available".into())
        );
        assert!(partial.in_transition);
        assert_eq!(report(&a, None).readiness, Readiness::Creating);
    }

    #[test]
    fn a_stuck_rollout_is_not_ready_with_the_deployment_reason() {
        let a = app(serde_json::json!({"image": "x", "replicas": 2}));
        let r = report(
            &a,
            Some(&deployment(
                1,
                1,
                Some(("False", "ProgressDeadlineExceeded")),
            )),
        );
        let ready = r
            .conditions
            .iter()
            .find(|c| c.type_ == names::READY)
            .expect("Ready override");
        assert_eq!(
            (ready.status, ready.reason),
            (ConditionStatus::False, "ProgressDeadlineExceeded")
        );
        assert!(ready.message.contains("timed out"));
        assert!(matches!(r.readiness, Readiness::Unavailable(_)));
    }

    #[test]
    fn zero_replicas_is_ready() {
        let a = app(serde_json::json!({"image": "x", "replicas": 0}));
        assert_eq!(
            report(&a, Some(&deployment(0, 0, None))).readiness,
            Readiness::Available
        );
    }
}
