//! Protobuf request bodies encoded by kube-rs's k8s-pb types (what client-go and kubectl's
//! generators send for built-in kinds) read by the sandbox as the JSON kube-apiserver would
//! store: a Deployment with maps, lists, quantities, int-or-strings and times, a Role, a
//! CronJob and an Ingress, each created over HTTP and read back.

use crate::common;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::core::v1 as core;
use k8s_pb::api::networking::v1 as networking;
use k8s_pb::api::rbac::v1 as rbac;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{Value, json};

fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

fn meta(name: &str) -> Option<ObjectMeta> {
    Some(ObjectMeta {
        name: some(name),
        labels: [("app".to_owned(), "web".to_owned())].into(),
        ..ObjectMeta::default()
    })
}

/// The `k8s\0` envelope around an encoded object.
fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: some(api_version),
            kind: some(kind),
        }),
        raw: Some(raw),
        content_encoding: some(""),
        content_type: some(""),
    };
    [b"k8s\0".to_vec(), unknown.encode_to_vec()].concat()
}

async fn create(url: &str, path: &str, body: Vec<u8>) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .header("Content-Type", "application/vnd.kubernetes.protobuf")
        .header("Accept", "application/json")
        .body(body)
        .send()
        .await
        .expect("an answer");
    let status = response.status();
    let object: Value = response.json().await.expect("JSON");
    assert_eq!(status.as_u16(), 201, "{object}");
    object
}

fn deployment() -> apps::Deployment {
    let container = core::Container {
        name: some("nginx"),
        image: some("nginx:1"),
        args: vec!["-g".into(), "daemon off;".into()],
        ports: vec![core::ContainerPort {
            name: some("http"),
            container_port: Some(80),
            ..core::ContainerPort::default()
        }],
        env: vec![core::EnvVar {
            name: some("MODE"),
            value: some("fast"),
            ..core::EnvVar::default()
        }],
        resources: Some(core::ResourceRequirements {
            requests: [(
                "cpu".to_owned(),
                Quantity {
                    string: some("250m"),
                },
            )]
            .into(),
            ..core::ResourceRequirements::default()
        }),
        ..core::Container::default()
    };
    apps::Deployment {
        metadata: meta("web"),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(2),
            selector: Some(LabelSelector {
                match_labels: [("app".to_owned(), "web".to_owned())].into(),
                ..LabelSelector::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: meta(""),
                spec: Some(core::PodSpec {
                    containers: vec![container],
                    ..core::PodSpec::default()
                }),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: some("RollingUpdate"),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(1),
                        str_val: None,
                    }),
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: None,
                        str_val: some("50%"),
                    }),
                }),
            }),
            ..apps::DeploymentSpec::default()
        }),
        status: None,
    }
}

#[tokio::test]
async fn built_in_kinds_arrive_as_their_json() {
    let harness = common::start().await;
    let url = harness.url();

    let stored = create(
        &url,
        "/apis/apps/v1/namespaces/default/deployments",
        envelope("apps/v1", "Deployment", deployment().encode_to_vec()),
    )
    .await;
    assert_eq!(stored["metadata"]["labels"], json!({"app": "web"}));
    let spec = &stored["spec"];
    assert_eq!(spec["replicas"], 2);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "50%"}})
    );
    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(container["args"], json!(["-g", "daemon off;"]));
    assert_eq!(container["ports"][0]["containerPort"], 80);
    assert_eq!(container["env"], json!([{"name": "MODE", "value": "fast"}]));
    assert_eq!(container["resources"], json!({"requests": {"cpu": "250m"}}));

    let role = rbac::Role {
        metadata: meta("reader"),
        rules: vec![rbac::PolicyRule {
            verbs: vec!["get".into(), "list".into()],
            api_groups: vec![String::new()],
            resources: vec!["pods".into()],
            ..rbac::PolicyRule::default()
        }],
    };
    let stored = create(
        &url,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        envelope("rbac.authorization.k8s.io/v1", "Role", role.encode_to_vec()),
    )
    .await;
    assert_eq!(
        stored["rules"],
        json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}])
    );

    let cronjob = batch::CronJob {
        metadata: meta("tick"),
        spec: Some(batch::CronJobSpec {
            schedule: some("*/5 * * * *"),
            job_template: Some(batch::JobTemplateSpec {
                metadata: None,
                spec: Some(batch::JobSpec {
                    template: Some(core::PodTemplateSpec {
                        metadata: None,
                        spec: Some(core::PodSpec {
                            restart_policy: some("OnFailure"),
                            containers: vec![core::Container {
                                name: some("tick"),
                                image: some("busybox"),
                                ..core::Container::default()
                            }],
                            ..core::PodSpec::default()
                        }),
                    }),
                    ..batch::JobSpec::default()
                }),
            }),
            ..batch::CronJobSpec::default()
        }),
        status: None,
    };
    let stored = create(
        &url,
        "/apis/batch/v1/namespaces/default/cronjobs",
        envelope("batch/v1", "CronJob", cronjob.encode_to_vec()),
    )
    .await;
    assert_eq!(stored["spec"]["schedule"], "*/5 * * * *");
    assert_eq!(
        stored["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"],
        "busybox"
    );

    let ingress = networking::Ingress {
        metadata: meta("simple"),
        spec: Some(networking::IngressSpec {
            rules: vec![networking::IngressRule {
                host: some("foo.com"),
                ingress_rule_value: Some(networking::IngressRuleValue {
                    http: Some(networking::HttpIngressRuleValue {
                        paths: vec![networking::HttpIngressPath {
                            path: some("/bar"),
                            path_type: some("Exact"),
                            backend: Some(networking::IngressBackend {
                                service: Some(networking::IngressServiceBackend {
                                    name: some("svc1"),
                                    port: Some(networking::ServiceBackendPort {
                                        name: None,
                                        number: Some(8080),
                                    }),
                                }),
                                resource: None,
                            }),
                        }],
                    }),
                }),
            }],
            ..networking::IngressSpec::default()
        }),
        status: None,
    };
    let stored = create(
        &url,
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
        envelope("networking.k8s.io/v1", "Ingress", ingress.encode_to_vec()),
    )
    .await;
    assert_eq!(
        stored["spec"]["rules"][0]["http"]["paths"][0],
        json!({"path": "/bar", "pathType": "Exact",
               "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}})
    );
    harness.shutdown().await;
}
