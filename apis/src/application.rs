//! Group `apps.ferroplane.io`: `Application`, a web workload (Deployment, Service, Ingress).

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{
    Condition, DeletionPolicy, LocalSecretReference, ManagementAction, default_management_policies,
};

/// A containerised web application: a Deployment, a Service and, optionally, an Ingress.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "apps.ferroplane.io",
    version = "v1alpha1",
    kind = "Application",
    plural = "applications",
    singular = "application",
    namespaced,
    status = "ApplicationStatus",
    shortname = "fapp",
    category = "ferroplane",
    category = "managed",
    doc = "A containerised web application: ferroplane renders a Deployment, a Service and, when ingress is set, an Ingress, and reports availability and the URL.",
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status"
    ),
    printcolumn(
        name = "SYNCED",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Synced')].status"
    ),
    printcolumn(
        name = "EXTERNAL-NAME",
        type_ = "string",
        json_path = ".metadata.annotations.ferroplane\\.io/external-name"
    ),
    printcolumn(name = "REPLICAS", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(
        name = "AVAILABLE",
        type_ = "integer",
        json_path = ".status.availableReplicas"
    ),
    printcolumn(name = "URL", type_ = "string", json_path = ".status.url"),
    printcolumn(
        name = "IMAGE",
        type_ = "string",
        json_path = ".spec.image",
        priority = 1
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSpec {
    /// `Delete` removes the Deployment, Service and Ingress with this object; `Orphan` leaves
    /// them running (their owner references are removed).
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    /// What ferroplane may do: any of Observe, Create, Update, Delete, LateInitialize, or `*`.
    #[serde(default = "default_management_policies")]
    #[schemars(length(min = 1, max = 6), extend("x-kubernetes-list-type" = "set"))]
    pub management_policies: Vec<ManagementAction>,
    /// When set, ferroplane writes the application's `url` to this Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_connection_secret_to_ref: Option<LocalSecretReference>,
    /// Container image, e.g. `nginx:1.27`.
    #[schemars(length(min = 1, max = 512))]
    pub image: String,
    /// Number of pods, 0 to 1000 (default 1).
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0, max = 1000))]
    pub replicas: i32,
    /// Port the container listens on, 1 to 65535 (default 8080). The Service exposes it as
    /// port 80.
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
    /// Environment variables of the container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 256))]
    pub env: Vec<EnvVar>,
    /// CPU and memory requests and limits of the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// HTTP health checks of the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<Probes>,
    /// Expose the application through an Ingress. Removing it removes the Ingress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<IngressSpec>,
}

fn default_replicas() -> i32 {
    1
}

fn default_port() -> i32 {
    8080
}

/// An environment variable.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    /// Variable name, a C identifier.
    #[schemars(
        regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"),
        length(min = 1, max = 256)
    )]
    pub name: String,
    /// Value.
    #[serde(default)]
    pub value: String,
}

/// Liveness and readiness checks.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Probes {
    /// When it fails, the container is restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<HttpProbe>,
    /// While it fails, the pod receives no traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<HttpProbe>,
}

/// An HTTP GET health check against the application's port.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpProbe {
    /// Path to GET, e.g. `/healthz`.
    #[schemars(regex(pattern = r"^/"))]
    pub path: String,
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
    /// Pods available to serve.
    #[serde(default)]
    pub available_replicas: i32,
    /// Where the application is reachable: `http(s)://<ingress host><path>` or the Service's
    /// cluster DNS name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `Ready` and `Synced`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

crate::impl_managed!(Application, in_cluster);
