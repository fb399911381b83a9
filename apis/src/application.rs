//! Group `apps.ferroplane.io`: `Application`, a web workload (Deployment, Service, Ingress).

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Condition;
use crate::managed_kind::managed_spec;

managed_spec! {
    columns: [
        printcolumn(name = "REPLICAS", type_ = "integer", json_path = ".status.replicas"),
        printcolumn(name = "AVAILABLE", type_ = "integer", json_path = ".status.availableReplicas"),
        printcolumn(name = "URL", type_ = "string", json_path = ".status.url"),
        printcolumn(
            name = "REVISION",
            type_ = "string",
            json_path = ".status.revision",
            priority = 1
        ),
        printcolumn(name = "IMAGE", type_ = "string", json_path = ".spec.image", priority = 1),
    ];
    /// A containerised web application: a Deployment, a Service and, optionally, an Ingress.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
    #[kube(
        group = "apps.ferroplane.io",
        version = "v1alpha1",
        kind = "Application",
        plural = "applications",
        singular = "application",
        status = "ApplicationStatus",
        shortname = "fapp",
        doc = "A containerised web application: ferroplane renders a Deployment, a Service and, when set, an Ingress and a HorizontalPodAutoscaler; it is Ready once the Deployment's rollout of the current spec is complete and the Ingress has an address, and reports the URL and the revision."
    )]
    #[serde(rename_all = "camelCase")]
    #[x_kube(validation = Rule::new("!(has(self.port) && has(self.ports))").message("set either port (one HTTP port, served by the Service as port 80) or ports, not both"))]
    #[x_kube(validation = Rule::new("!has(self.ports) || self.ports.exists(p, p.expose)").message("at least one of ports must have expose: true: the Service needs a port"))]
    #[x_kube(validation = Rule::new("!has(self.ports) || self.ports.all(p, !p.expose || self.ports.filter(q, q.expose && q.protocol == p.protocol && (has(q.servicePort) ? q.servicePort : q.port) == (has(p.servicePort) ? p.servicePort : p.port)).size() == 1)").message("two exposed ports have the same servicePort and protocol: the Service would refuse them"))]
    #[x_kube(validation = Rule::new("!has(self.ingress) || !has(self.ingress.port) || (has(self.ports) ? self.ports.exists(p, p.name == self.ingress.port && p.expose && p.protocol == 'TCP') : self.ingress.port == 'http')").message("ingress.port must name an exposed TCP port of ports (or be `http` with the single `port`)"))]
    #[x_kube(validation = Rule::new("!has(self.ingress) || has(self.ingress.port) || !has(self.ports) || self.ports.exists(p, p.expose && p.protocol == 'TCP')").message("an ingress needs an exposed TCP port to route to"))]
    pub struct ApplicationSpec {
        /// `Delete` removes the Deployment, Service, Ingress and HorizontalPodAutoscaler with this
        /// object; `Orphan` leaves them running (their owner references are removed).
        deletion_policy,
        management_policies,
        /// When set, ferroplane writes the application's `url` to this Secret.
        write_connection_secret_to_ref,
        /// Container image, e.g. `nginx:1.27`.
        #[schemars(length(min = 1, max = 512))]
        pub image: String,
        /// Entrypoint of the container (the image's ENTRYPOINT when empty).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(length(max = 64))]
        pub command: Vec<String>,
        /// Arguments of the entrypoint (the image's CMD when empty).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(length(max = 256))]
        pub args: Vec<String>,
        /// Number of pods, 0 to 1000 (default 1). Ignored when `autoscaling` is set: the
        /// HorizontalPodAutoscaler (or `kubectl scale`) sets the Deployment's replicas then.
        #[serde(default = "default_replicas")]
        #[schemars(range(min = 0, max = 1000))]
        pub replicas: i32,
        /// One HTTP port the container listens on, 1 to 65535 (default 8080), named `http` and
        /// exposed by the Service as port 80. Use `ports` for several ports.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1, max = 65535))]
        pub port: Option<i32>,
        /// The ports the container listens on; those with `expose: true` are ports of the Service.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(
            length(min = 1, max = 32),
            extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
        )]
        pub ports: Vec<AppPort>,
        /// Type of the Service: `ClusterIP` (default, reachable inside the cluster), `NodePort`
        /// (also on a port of every node, allocated by the API server) or `LoadBalancer` (also
        /// through the cloud's load balancer, where the cluster has a controller for it).
        #[serde(default)]
        pub service_type: ServiceType,
        /// Environment variables of the container: literal values, or keys of Secrets and
        /// ConfigMaps (`valueFrom`; the value never appears in this object).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(
            length(max = 256),
            extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
        )]
        pub env: Vec<EnvVar>,
        /// Every key of these Secrets and ConfigMaps as environment variables.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(length(max = 32))]
        pub env_from: Vec<EnvFrom>,
        /// Volumes mounted into the container: ConfigMaps, Secrets, PersistentVolumeClaims (which
        /// must exist) and empty directories.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(
            length(max = 64),
            extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
        )]
        pub volumes: Vec<Volume>,
        /// Secrets (type `kubernetes.io/dockerconfigjson`) with credentials to pull the image.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(length(max = 16))]
        pub image_pull_secrets: Vec<String>,
        /// CPU and memory requests and limits of the container.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub resources: Option<ResourceRequirements>,
        /// Health checks of the container: startup, liveness and readiness.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub probes: Option<Probes>,
        /// Scale on CPU with a HorizontalPodAutoscaler (autoscaling/v2) instead of `replicas`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub autoscaling: Option<Autoscaling>,
        /// Seconds a rollout may go without progress before the Deployment reports
        /// `ProgressDeadlineExceeded` and the Application's Ready says so (Kubernetes' default:
        /// 600).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1))]
        pub progress_deadline_seconds: Option<i32>,
        /// Expose the application through an Ingress. Removing it removes the Ingress.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ingress: Option<IngressSpec>,
    }
}

fn default_replicas() -> i32 {
    1
}

/// A port of the container.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppPort {
    /// Name of the port (up to 15 lowercase letters, digits and `-`, starting with a letter),
    /// also the name of the Service port.
    #[schemars(
        regex(pattern = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 15)
    )]
    pub name: String,
    /// Port the container listens on.
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
    /// Port of the Service (default: `port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub service_port: Option<i32>,
    /// `TCP` (default), `UDP` or `SCTP`.
    #[serde(default)]
    // A bound keeps the CEL rules that compare protocols within the API server's cost budget.
    #[schemars(extend("maxLength" = 4))]
    pub protocol: Protocol,
    /// Whether the Service serves this port (default true).
    #[serde(default = "default_true")]
    pub expose: bool,
}

fn default_true() -> bool {
    true
}

/// Protocol of a port.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Protocol {
    #[default]
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
    #[serde(rename = "SCTP")]
    Sctp,
}

impl Protocol {
    /// The name Kubernetes uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        }
    }
}

/// Type of the Service.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ServiceType {
    #[default]
    ClusterIP,
    NodePort,
    LoadBalancer,
}

impl ServiceType {
    /// The name Kubernetes uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceType::ClusterIP => "ClusterIP",
            ServiceType::NodePort => "NodePort",
            ServiceType::LoadBalancer => "LoadBalancer",
        }
    }
}

/// An environment variable: a literal `value`, or `valueFrom` a key of a Secret or ConfigMap.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.value) != has(self.valueFrom)").message("an env entry needs exactly one of value and valueFrom"))]
pub struct EnvVar {
    /// Variable name.
    #[schemars(
        regex(pattern = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"),
        length(min = 1, max = 256)
    )]
    pub name: String,
    /// Literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The value of a key of a Secret or ConfigMap in this namespace, read by the kubelet when
    /// the pod starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvValueFrom>,
}

/// Where an environment variable's value comes from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.secretKeyRef) != has(self.configMapKeyRef)").message("valueFrom needs exactly one of secretKeyRef and configMapKeyRef"))]
pub struct EnvValueFrom {
    /// A key of a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeyRef>,
    /// A key of a ConfigMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeyRef>,
}

/// A key of a Secret or ConfigMap in this namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyRef {
    /// Name of the Secret or ConfigMap.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The key.
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: String,
    /// When true the pod starts without it when it is missing; otherwise the pod waits for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// Every key of a Secret or ConfigMap as environment variables.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.secretRef) != has(self.configMapRef)").message("an envFrom entry needs exactly one of secretRef and configMapRef"))]
pub struct EnvFrom {
    /// A Secret in this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<NameRef>,
    /// A ConfigMap in this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<NameRef>,
    /// Prepended to every variable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub prefix: Option<String>,
}

/// A Secret or ConfigMap in this namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NameRef {
    /// Its name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// When true the pod starts without it when it is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// A volume and where the container mounts it; exactly one source.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("(has(self.configMap) ? 1 : 0) + (has(self.secret) ? 1 : 0) + (has(self.persistentVolumeClaim) ? 1 : 0) + (has(self.emptyDir) ? 1 : 0) == 1").message("a volume needs exactly one of configMap, secret, persistentVolumeClaim and emptyDir"))]
pub struct Volume {
    /// Name of the volume (a DNS label).
    #[schemars(
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    )]
    pub name: String,
    /// Absolute path in the container.
    #[schemars(regex(pattern = r"^/"), length(min = 1, max = 4096))]
    pub mount_path: String,
    /// Path within the volume to mount instead of its root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_path: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The keys of a ConfigMap as files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<NameRef>,
    /// The keys of a Secret as files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretVolume>,
    /// An existing PersistentVolumeClaim of this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimVolume>,
    /// A directory that lives as long as the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDirVolume>,
}

/// A Secret volume.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretVolume {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub secret_name: String,
    /// When true the pod starts without it when it is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// A PersistentVolumeClaim volume.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimVolume {
    /// Name of the claim.
    #[schemars(length(min = 1, max = 253))]
    pub claim_name: String,
}

/// An emptyDir volume.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmptyDirVolume {
    /// `Memory` for a tmpfs; the node's disk when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(Memory)?$"))]
    pub medium: Option<String>,
    /// Largest size, e.g. `64Mi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_limit: Option<Quantity>,
}

/// Startup, liveness and readiness checks.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.liveness) || !has(self.liveness.successThreshold) || self.liveness.successThreshold == 1").message("liveness.successThreshold must be 1"))]
#[x_kube(validation = Rule::new("!has(self.startup) || !has(self.startup.successThreshold) || self.startup.successThreshold == 1").message("startup.successThreshold must be 1"))]
pub struct Probes {
    /// Until it succeeds, the other checks wait; when it fails, the container is restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<Probe>,
    /// When it fails, the container is restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<Probe>,
    /// While it fails, the pod receives no traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Probe>,
}

/// A health check: exactly one of `httpGet`, `tcpSocket`, `exec` and `grpc`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("(has(self.httpGet) ? 1 : 0) + (has(self.tcpSocket) ? 1 : 0) + (has(self.exec) ? 1 : 0) + (has(self.grpc) ? 1 : 0) == 1").message("a probe needs exactly one of httpGet, tcpSocket, exec and grpc"))]
pub struct Probe {
    /// An HTTP GET that must answer 200–399.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HttpGetProbe>,
    /// A TCP connection that must open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TcpSocketProbe>,
    /// A command run in the container that must exit 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecProbe>,
    /// A gRPC health check (grpc.health.v1) that must answer SERVING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcProbe>,
    /// Seconds before the first check (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 3600))]
    pub initial_delay_seconds: Option<i32>,
    /// Seconds between checks (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub period_seconds: Option<i32>,
    /// Seconds before a check times out (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_seconds: Option<i32>,
    /// Consecutive failures that count as failed (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub failure_threshold: Option<i32>,
    /// Consecutive successes that count as passed after a failure (default 1; must be 1 for
    /// startup and liveness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub success_threshold: Option<i32>,
}

/// An HTTP GET check.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpGetProbe {
    /// Path to GET, e.g. `/healthz`.
    #[schemars(regex(pattern = r"^/"))]
    pub path: String,
    /// Port number or name (default: the first port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
    /// `HTTP` (default) or `HTTPS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(HTTP|HTTPS)$"))]
    pub scheme: Option<String>,
}

/// A TCP connection check.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TcpSocketProbe {
    /// Port number or name (default: the first port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
}

/// A command check.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecProbe {
    /// The command and its arguments (no shell unless you run one).
    #[schemars(length(min = 1, max = 64))]
    pub command: Vec<String>,
}

/// A gRPC health check.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrpcProbe {
    /// Port number of the gRPC server.
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
    /// Service name sent in the HealthCheckRequest (the server's overall health when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

/// CPU-based autoscaling with a HorizontalPodAutoscaler.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.minReplicas <= self.maxReplicas").message("autoscaling.minReplicas must not exceed autoscaling.maxReplicas"))]
pub struct Autoscaling {
    /// Fewest pods (default 1).
    #[serde(default = "default_min_replicas")]
    #[schemars(range(min = 1, max = 1000))]
    pub min_replicas: i32,
    /// Most pods.
    #[schemars(range(min = 1, max = 1000))]
    pub max_replicas: i32,
    /// Average CPU use, in percent of the pods' CPU request, that the autoscaler aims at
    /// (default 80). The container needs a CPU request (`resources.requests.cpu`) for it.
    #[serde(default = "default_cpu_target")]
    #[schemars(range(min = 1, max = 1000))]
    #[serde(rename = "targetCPUUtilizationPercentage")]
    pub target_cpu_utilization_percentage: i32,
}

fn default_min_replicas() -> i32 {
    1
}

fn default_cpu_target() -> i32 {
    80
}

/// How the application is exposed outside the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.tls) || self.tls.secretName != ''").message("ingress.tls.secretName must not be empty"))]
pub struct IngressSpec {
    /// Host name, e.g. `shop.example.com`.
    #[schemars(
        regex(
            pattern = r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
        ),
        length(max = 253)
    )]
    pub host: String,
    /// Path prefix routed to the application (default `/`).
    #[serde(default = "default_path")]
    #[schemars(regex(pattern = r"^/"))]
    pub path: String,
    /// IngressClass to use; the cluster default when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
    /// Name of the exposed TCP port the Ingress routes to (default: the first exposed TCP
    /// port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 15))]
    pub port: Option<String>,
    /// Serve HTTPS with the certificate in this Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<IngressTls>,
}

fn default_path() -> String {
    "/".to_owned()
}

/// TLS settings of the Ingress.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressTls {
    /// Secret of type `kubernetes.io/tls` in this namespace holding the certificate.
    pub secret_name: String,
}

/// Observed state of an Application.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationStatus {
    /// Pods the Deployment asks for: `spec.replicas`, or what the autoscaler (or `kubectl
    /// scale`) set when `autoscaling` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Pods available to serve.
    #[serde(default)]
    pub available_replicas: i32,
    /// Pods that run the current pod template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    /// The Deployment's current revision (`deployment.kubernetes.io/revision`, as
    /// `kubectl rollout history` numbers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Where the application is reachable: `http(s)://<ingress host><path>` from the Ingress, or
    /// the Service's cluster DNS name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The address the ingress controller wrote on the Ingress (IP or host name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress_address: Option<String>,
    /// `Ready`, `Synced` and `Progressing`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The token of `ferroplane.io/reconcile-requested-at` (or `crossplane.io/…`) the last
    /// reconcile handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

crate::impl_managed!(Application, in_cluster);
