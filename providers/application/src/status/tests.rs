use super::*;
use crate::render::fixture::app;
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentSpec, DeploymentStatus};

/// A Deployment of `wanted` replicas at generation 2, with the controller's counts.
fn deployment(
    wanted: i32,
    observed: i64,
    (total, updated, available): (i32, i32, i32),
    progressing: Option<(&str, &str)>,
) -> Deployment {
    Deployment {
        metadata: kube::api::ObjectMeta {
            generation: Some(2),
            annotations: Some([(REVISION.to_owned(), "3".to_owned())].into()),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(wanted),
            ..DeploymentSpec::default()
        }),
        status: Some(DeploymentStatus {
            observed_generation: Some(observed),
            replicas: Some(total),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
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
    }
}

fn done(wanted: i32) -> Deployment {
    deployment(
        wanted,
        2,
        (wanted, wanted, wanted),
        Some(("True", "NewReplicaSetAvailable")),
    )
}

fn ingress_with(address: Option<&str>, tls: bool) -> Ingress {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/shop", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}],
            "tls": if tls { serde_json::json!([{"hosts": ["a.example.com"], "secretName": "c"}]) } else { serde_json::json!(null) },
        },
        "status": {"loadBalancer": {"ingress": address.map(|a| vec![serde_json::json!({"ip": a})])}},
    }))
    .expect("an Ingress")
}

#[test]
fn rollout_status_follows_kubectl() {
    assert_eq!(rollout(&done(2)), Rollout::Complete);
    assert_eq!(
        rollout(&deployment(2, 1, (2, 2, 2), None)),
        Rollout::Waiting("waiting for the Deployment spec update to be observed".into())
    );
    assert_eq!(
        rollout(&deployment(3, 2, (3, 1, 3), None)),
        Rollout::Waiting("1 out of 3 new replicas have been updated".into())
    );
    assert_eq!(
        rollout(&deployment(2, 2, (3, 2, 2), None)),
        Rollout::Waiting("1 old replicas are pending termination".into())
    );
    assert_eq!(
        rollout(&deployment(2, 2, (2, 2, 1), None)),
        Rollout::Waiting("1 of 2 updated replicas are available".into())
    );
    assert!(matches!(
        rollout(&deployment(2, 2, (2, 1, 1), Some(("False", "ProgressDeadlineExceeded")))),
        Rollout::DeadlineExceeded(m) if m.contains("timed out")
    ));
    assert!(matches!(
        rollout(&Deployment::default()),
        Rollout::Waiting(_)
    ));
}

#[test]
fn available_once_rolled_out_with_the_revision() {
    let a = app(serde_json::json!({"image": "x", "replicas": 2}));
    let r = report(&a, Some(&done(2)), None, None);
    assert_eq!(r.readiness, Readiness::Available);
    assert_eq!(
        (r.replicas, r.available_replicas, r.revision.as_deref()),
        (Some(2), 2, Some("3"))
    );
    assert!(!r.in_transition);
    let partial = report(&a, Some(&deployment(2, 2, (2, 2, 1), None)), None, None);
    assert_eq!(
        partial.readiness,
        Readiness::Unavailable("rollout in progress: 1 of 2 updated replicas are available".into())
    );
    assert!(partial.in_transition);
    assert_eq!(report(&a, None, None, None).readiness, Readiness::Creating);
}

#[test]
fn children_that_differ_from_the_spec_are_not_ready() {
    let a = app(serde_json::json!({"image": "x", "replicas": 2}));
    let r = report(
        &a,
        Some(&done(2)),
        None,
        Some("Deployment/web differs at spec.replicas"),
    );
    assert!(matches!(&r.readiness, Readiness::Unavailable(m) if m.contains("spec.replicas")));
    assert!(r.in_transition);
}

#[test]
fn with_an_autoscaler_the_deployment_says_how_many() {
    let a = app(
        serde_json::json!({"image": "x", "replicas": 1, "autoscaling": {"minReplicas": 2, "maxReplicas": 5}}),
    );
    let r = report(&a, Some(&done(4)), None, None);
    assert_eq!(r.readiness, Readiness::Available);
    assert_eq!(r.replicas, Some(4));
}

#[test]
fn a_stuck_rollout_is_not_ready_with_the_deployment_reason() {
    let a = app(serde_json::json!({"image": "x", "replicas": 2}));
    let r = report(
        &a,
        Some(&deployment(
            2,
            2,
            (2, 1, 1),
            Some(("False", "ProgressDeadlineExceeded")),
        )),
        None,
        None,
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
    assert!(!r.in_transition, "nothing will change until the spec does");
}

#[test]
fn with_an_ingress_ready_waits_for_its_address_and_says_so() {
    let a = app(
        serde_json::json!({"image": "x", "ingress": {"host": "a.example.com", "path": "/shop"}}),
    );
    let waiting = report(&a, Some(&done(1)), Some(&ingress_with(None, false)), None);
    let ready = waiting
        .conditions
        .iter()
        .find(|c| c.type_ == names::READY)
        .expect("Ready override");
    assert_eq!(ready.reason, "WaitingForIngressAddress");
    assert!(
        ready.message.contains("ingress controller")
            && ready.message.contains("default IngressClass"),
        "{}",
        ready.message
    );
    assert!(matches!(waiting.readiness, Readiness::Unavailable(_)));
    let served = report(
        &a,
        Some(&done(1)),
        Some(&ingress_with(Some("10.0.0.7"), false)),
        None,
    );
    assert_eq!(served.readiness, Readiness::Available);
    assert_eq!(served.ingress_address.as_deref(), Some("10.0.0.7"));
    assert_eq!(served.url, "http://a.example.com/shop");
}

#[test]
fn urls() {
    assert_eq!(
        url(&app(serde_json::json!({"image": "x"})), None),
        "http://web.shop.svc.cluster.local"
    );
    assert_eq!(
        url(
            &app(serde_json::json!({"image": "x", "ports": [{"name": "api", "port": 8443}]})),
            None
        ),
        "http://web.shop.svc.cluster.local:8443"
    );
    let a = app(
        serde_json::json!({"image": "x", "ingress": {"host": "a.example.com", "path": "/shop"}}),
    );
    assert_eq!(
        url(&a, Some(&ingress_with(Some("1.2.3.4"), true))),
        "https://a.example.com/shop"
    );
}

#[test]
fn zero_replicas_is_ready() {
    let a = app(serde_json::json!({"image": "x", "replicas": 0}));
    let zero = deployment(0, 2, (0, 0, 0), None);
    assert_eq!(
        report(&a, Some(&zero), None, None).readiness,
        Readiness::Available
    );
}

#[test]
fn a_missing_reference_keeps_a_rolled_out_application_not_ready() {
    let a = app(serde_json::json!({"image": "x", "replicas": 2,
        "env": [{"name": "DB", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
        "envFrom": [{"configMapRef": {"name": "cfg"}}]}));
    let needed = crate::references::needed(&a);
    let ready = report(&a, Some(&done(2)), None, None);
    assert_eq!(ready.readiness, Readiness::Available);
    assert_eq!(with_missing_references(&a, ready.clone(), &[]), ready);

    let config_map_only = vec![Missing::Object(needed[1].clone())];
    let r = with_missing_references(&a, ready.clone(), &config_map_only);
    let last = r.conditions.last().expect("a Ready condition");
    assert_eq!(
        (last.type_, last.reason),
        (names::READY, REFERENCED_CONFIG_MAP_MISSING)
    );
    assert!(matches!(r.readiness, Readiness::Unavailable(ref m) if m.contains("ConfigMap cfg")));

    let both = vec![
        Missing::Object(needed[1].clone()),
        Missing::Key(needed[0].clone()),
    ];
    let r = with_missing_references(&a, ready, &both);
    let last = r.conditions.last().expect("a Ready condition");
    assert_eq!(last.reason, REFERENCED_SECRET_MISSING);
    assert_eq!(last.status, ConditionStatus::False);
    assert!(
        last.message
            .contains("Secret db has no key password (env DB)"),
        "{}",
        last.message
    );
}
