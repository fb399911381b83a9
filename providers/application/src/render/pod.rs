//! The Deployment: one container with the spec's image, command, args, ports, env (literal
//! values and references to Secret and ConfigMap keys: the values stay in those objects),
//! envFrom, volumes, probes, resources, and the pod's image pull secrets. `replicas` only
//! without `autoscaling`: with it the field is the autoscaler's (and `kubectl scale`'s). Pure.

use std::collections::BTreeMap;

use ferroplane_apis::application::{self as api, Application};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMapEnvSource, ConfigMapKeySelector, ConfigMapVolumeSource, Container, ContainerPort,
    EmptyDirVolumeSource, EnvFromSource, EnvVar, EnvVarSource, ExecAction, GRPCAction,
    HTTPGetAction, LocalObjectReference, PersistentVolumeClaimVolumeSource, PodSpec,
    PodTemplateSpec, Probe, SecretEnvSource, SecretKeySelector, SecretVolumeSource,
    TCPSocketAction, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::labels::selector;
use super::ports::ports;

/// Name of the application's container.
pub const CONTAINER: &str = "app";

/// `Some(v)` unless `v` is empty: the API server stores an empty list as absent.
fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

pub fn deployment(
    app: &Application,
    metadata: ObjectMeta,
    pod_labels: BTreeMap<String, String>,
) -> Deployment {
    let spec = &app.spec;
    let image_pull_secrets = spec
        .image_pull_secrets
        .iter()
        .map(|name| LocalObjectReference { name: name.clone() })
        .collect();
    Deployment {
        metadata,
        spec: Some(DeploymentSpec {
            replicas: spec.autoscaling.is_none().then_some(spec.replicas),
            progress_deadline_seconds: spec.progress_deadline_seconds,
            selector: LabelSelector {
                match_labels: Some(selector(app)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container(app)],
                    volumes: non_empty(spec.volumes.iter().map(volume).collect()),
                    image_pull_secrets: non_empty(image_pull_secrets),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}

fn container(app: &Application) -> Container {
    let spec = &app.spec;
    let container_ports = ports(app)
        .into_iter()
        .map(|p| ContainerPort {
            name: Some(p.name),
            container_port: p.container_port,
            protocol: Some(p.protocol.as_str().to_owned()),
            ..ContainerPort::default()
        })
        .collect();
    let first_port = ports(app)
        .first()
        .map(|p| p.container_port)
        .unwrap_or(super::ports::DEFAULT_PORT);
    let probes = spec.probes.as_ref();
    let probe = |p: Option<&api::Probe>| p.map(|p| probe(p, first_port));
    Container {
        name: CONTAINER.to_owned(),
        image: Some(spec.image.clone()),
        command: non_empty(spec.command.clone()),
        args: non_empty(spec.args.clone()),
        ports: Some(container_ports),
        env: non_empty(spec.env.iter().map(env_var).collect()),
        env_from: non_empty(spec.env_from.iter().map(env_from).collect()),
        volume_mounts: non_empty(spec.volumes.iter().map(volume_mount).collect()),
        resources: spec.resources.clone(),
        startup_probe: probe(probes.and_then(|p| p.startup.as_ref())),
        liveness_probe: probe(probes.and_then(|p| p.liveness.as_ref())),
        readiness_probe: probe(probes.and_then(|p| p.readiness.as_ref())),
        ..Container::default()
    }
}

fn env_var(e: &api::EnvVar) -> EnvVar {
    let from = e.value_from.as_ref();
    EnvVar {
        name: e.name.clone(),
        value: e.value.clone(),
        value_from: from.map(|from| EnvVarSource {
            secret_key_ref: from.secret_key_ref.as_ref().map(|r| SecretKeySelector {
                name: r.name.clone(),
                key: r.key.clone(),
                optional: r.optional,
            }),
            config_map_key_ref: from
                .config_map_key_ref
                .as_ref()
                .map(|r| ConfigMapKeySelector {
                    name: r.name.clone(),
                    key: r.key.clone(),
                    optional: r.optional,
                }),
            ..EnvVarSource::default()
        }),
    }
}

fn env_from(e: &api::EnvFrom) -> EnvFromSource {
    EnvFromSource {
        prefix: e.prefix.clone(),
        secret_ref: e.secret_ref.as_ref().map(|r| SecretEnvSource {
            name: r.name.clone(),
            optional: r.optional,
        }),
        config_map_ref: e.config_map_ref.as_ref().map(|r| ConfigMapEnvSource {
            name: r.name.clone(),
            optional: r.optional,
        }),
    }
}

fn volume(v: &api::Volume) -> Volume {
    Volume {
        name: v.name.clone(),
        config_map: v.config_map.as_ref().map(|c| ConfigMapVolumeSource {
            name: c.name.clone(),
            optional: c.optional,
            ..ConfigMapVolumeSource::default()
        }),
        secret: v.secret.as_ref().map(|s| SecretVolumeSource {
            secret_name: Some(s.secret_name.clone()),
            optional: s.optional,
            ..SecretVolumeSource::default()
        }),
        persistent_volume_claim: v.persistent_volume_claim.as_ref().map(|c| {
            PersistentVolumeClaimVolumeSource {
                claim_name: c.claim_name.clone(),
                read_only: v.read_only,
            }
        }),
        empty_dir: v.empty_dir.as_ref().map(|e| EmptyDirVolumeSource {
            medium: e.medium.clone(),
            size_limit: e.size_limit.clone(),
        }),
        ..Volume::default()
    }
}

fn volume_mount(v: &api::Volume) -> VolumeMount {
    VolumeMount {
        name: v.name.clone(),
        mount_path: v.mount_path.clone(),
        sub_path: v.sub_path.clone(),
        read_only: v.read_only,
        ..VolumeMount::default()
    }
}

fn probe(p: &api::Probe, first_port: i32) -> Probe {
    let port = |named: &Option<IntOrString>| named.clone().unwrap_or(IntOrString::Int(first_port));
    Probe {
        http_get: p.http_get.as_ref().map(|h| HTTPGetAction {
            path: Some(h.path.clone()),
            port: port(&h.port),
            scheme: h.scheme.clone(),
            ..HTTPGetAction::default()
        }),
        tcp_socket: p.tcp_socket.as_ref().map(|t| TCPSocketAction {
            port: port(&t.port),
            ..TCPSocketAction::default()
        }),
        exec: p.exec.as_ref().map(|e| ExecAction {
            command: Some(e.command.clone()),
        }),
        grpc: p.grpc.as_ref().map(|g| GRPCAction {
            port: g.port,
            service: g.service.clone(),
        }),
        initial_delay_seconds: p.initial_delay_seconds,
        period_seconds: p.period_seconds,
        timeout_seconds: p.timeout_seconds,
        failure_threshold: p.failure_threshold,
        success_threshold: p.success_threshold,
        ..Probe::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::app;

    fn rendered(spec: serde_json::Value) -> (Option<i32>, PodSpec) {
        let d = deployment(&app(spec), ObjectMeta::default(), BTreeMap::new());
        let spec = d.spec.expect("spec");
        (spec.replicas, spec.template.spec.expect("pod"))
    }

    #[test]
    fn image_command_args_ports_and_resources() {
        let (replicas, pod) = rendered(serde_json::json!({
            "image": "nginx:1.27", "replicas": 2, "command": ["/bin/server"], "args": ["--v", "2"],
            "ports": [{"name": "web", "port": 8080}, {"name": "dns", "port": 53, "protocol": "UDP", "expose": false}],
            "resources": {"limits": {"memory": "64Mi"}}}));
        assert_eq!(replicas, Some(2));
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some("nginx:1.27"));
        assert_eq!(c.command.as_deref(), Some(&["/bin/server".to_owned()][..]));
        assert_eq!(c.args.as_ref().map(Vec::len), Some(2));
        let ports: Vec<_> = c
            .ports
            .as_ref()
            .expect("ports")
            .iter()
            .map(|p| {
                (
                    p.name.clone().unwrap_or_default(),
                    p.container_port,
                    p.protocol.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            ports,
            [
                ("web".into(), 8080, "TCP".into()),
                ("dns".into(), 53, "UDP".into())
            ],
            "an unexposed port is still the container's"
        );
        assert!(c.resources.is_some());
    }

    #[test]
    fn with_autoscaling_replicas_are_not_rendered() {
        let (replicas, _) = rendered(serde_json::json!({"image": "x", "replicas": 4,
            "autoscaling": {"minReplicas": 2, "maxReplicas": 5}}));
        assert_eq!(replicas, None);
    }

    #[test]
    fn the_progress_deadline_is_the_deployments_or_kubernetes_default() {
        let deadline = |spec| {
            deployment(&app(spec), ObjectMeta::default(), BTreeMap::new())
                .spec
                .expect("spec")
                .progress_deadline_seconds
        };
        assert_eq!(
            deadline(serde_json::json!({"image": "x", "progressDeadlineSeconds": 30})),
            Some(30)
        );
        assert_eq!(deadline(serde_json::json!({"image": "x"})), None);
    }

    #[test]
    fn env_refers_to_secret_and_config_map_keys_without_their_values() {
        let (_, pod) = rendered(serde_json::json!({"image": "x",
            "env": [{"name": "MODE", "value": "prod"},
                {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "level", "optional": true}}}],
            "envFrom": [{"secretRef": {"name": "api-keys"}}, {"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}]}));
        let c = &pod.containers[0];
        let env = c.env.as_ref().expect("env");
        assert_eq!(env[0].value.as_deref(), Some("prod"));
        let secret = env[1]
            .value_from
            .as_ref()
            .and_then(|f| f.secret_key_ref.as_ref())
            .expect("a Secret key");
        assert_eq!(
            (secret.name.as_str(), secret.key.as_str()),
            ("db", "password")
        );
        assert_eq!(env[1].value, None);
        let config = env[2]
            .value_from
            .as_ref()
            .and_then(|f| f.config_map_key_ref.as_ref())
            .expect("a ConfigMap key");
        assert_eq!(
            (config.key.as_str(), config.optional),
            ("level", Some(true))
        );
        let from = c.env_from.as_ref().expect("envFrom");
        assert_eq!(
            from[0].secret_ref.as_ref().map(|s| s.name.as_str()),
            Some("api-keys")
        );
        assert_eq!(
            (
                from[1].config_map_ref.as_ref().map(|s| s.name.as_str()),
                from[1].prefix.as_deref()
            ),
            (Some("cfg"), Some("CFG_"))
        );
    }

    #[test]
    fn volumes_of_each_source_are_mounted() {
        let (_, pod) = rendered(serde_json::json!({"image": "x", "volumes": [
            {"name": "conf", "mountPath": "/etc/app", "configMap": {"name": "cfg"}},
            {"name": "certs", "mountPath": "/certs", "readOnly": true, "secret": {"secretName": "tls"}},
            {"name": "data", "mountPath": "/data", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "tmp", "mountPath": "/tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}]}));
        let volumes = pod.volumes.as_ref().expect("volumes");
        assert_eq!(
            volumes[0].config_map.as_ref().map(|c| c.name.as_str()),
            Some("cfg")
        );
        assert_eq!(
            volumes[1]
                .secret
                .as_ref()
                .and_then(|s| s.secret_name.as_deref()),
            Some("tls")
        );
        assert_eq!(
            volumes[2]
                .persistent_volume_claim
                .as_ref()
                .map(|c| c.claim_name.as_str()),
            Some("data")
        );
        assert_eq!(
            volumes[3]
                .empty_dir
                .as_ref()
                .and_then(|e| e.medium.as_deref()),
            Some("Memory")
        );
        let mounts = pod.containers[0].volume_mounts.as_ref().expect("mounts");
        assert_eq!(
            mounts
                .iter()
                .map(|m| (m.name.as_str(), m.mount_path.as_str()))
                .collect::<Vec<_>>(),
            [
                ("conf", "/etc/app"),
                ("certs", "/certs"),
                ("data", "/data"),
                ("tmp", "/tmp")
            ]
        );
        assert_eq!(mounts[1].read_only, Some(true));
    }

    #[test]
    fn probes_of_each_kind_default_to_the_first_port() {
        let (_, pod) = rendered(serde_json::json!({"image": "x", "port": 3000, "probes": {
            "startup": {"tcpSocket": {}, "failureThreshold": 30},
            "liveness": {"exec": {"command": ["cat", "/tmp/healthy"]}},
            "readiness": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5}}}));
        let c = &pod.containers[0];
        let startup = c.startup_probe.as_ref().expect("startup");
        assert_eq!(
            startup.tcp_socket.as_ref().map(|t| t.port.clone()),
            Some(IntOrString::Int(3000))
        );
        assert_eq!(startup.failure_threshold, Some(30));
        assert_eq!(
            c.liveness_probe
                .as_ref()
                .and_then(|p| p.exec.as_ref())
                .and_then(|e| e.command.clone()),
            Some(vec!["cat".to_owned(), "/tmp/healthy".to_owned()])
        );
        let readiness = c.readiness_probe.as_ref().expect("readiness");
        let http = readiness.http_get.as_ref().expect("httpGet");
        assert_eq!(
            (http.path.as_deref(), http.port.clone()),
            (Some("/ready"), IntOrString::String("http".into()))
        );
        assert_eq!(readiness.period_seconds, Some(5));
        let (_, grpc) = rendered(serde_json::json!({"image": "x", "probes": {
            "readiness": {"grpc": {"port": 9090, "service": "shop"}}}}));
        let g = grpc.containers[0]
            .readiness_probe
            .as_ref()
            .and_then(|p| p.grpc.as_ref())
            .expect("grpc");
        assert_eq!((g.port, g.service.as_deref()), (9090, Some("shop")));
    }

    #[test]
    fn image_pull_secrets_name_the_secrets() {
        let (_, pod) = rendered(
            serde_json::json!({"image": "registry.example.com/x", "imagePullSecrets": ["regcred"]}),
        );
        assert_eq!(pod.image_pull_secrets.expect("secrets")[0].name, "regcred");
        let (_, plain) = rendered(serde_json::json!({"image": "x"}));
        assert!(plain.image_pull_secrets.is_none() && plain.volumes.is_none());
    }
}
