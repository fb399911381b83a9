//! `ProviderConfig` and `ClusterProviderConfig`: where ECSInstances get Alibaba Cloud credentials.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Condition;

/// Alibaba Cloud credentials and endpoint for the ECSInstances of one namespace.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "alibabacloud.ferroplane.io",
    version = "v1alpha1",
    kind = "ProviderConfig",
    plural = "providerconfigs",
    singular = "providerconfig",
    namespaced,
    status = "ProviderConfigStatus",
    category = "ferroplane",
    doc = "Alibaba Cloud credentials and endpoint used by the ECSInstances of this namespace that name it in providerConfigRef. It can only read Secrets in its own namespace, and only with source Secret or RamRoleArn (with a secretRef).",
    printcolumn(
        name = "SOURCE",
        type_ = "string",
        json_path = ".spec.credentials.source"
    ),
    printcolumn(
        name = "SECRET",
        type_ = "string",
        json_path = ".spec.credentials.secretRef.name"
    ),
    printcolumn(name = "USERS", type_ = "integer", json_path = ".status.users"),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.credentials.source == 'Secret' || self.credentials.source == 'RamRoleArn'").message("a namespaced ProviderConfig may only use credentials.source Secret or RamRoleArn (with a secretRef in its own namespace): Environment, RRSA and InstanceRole are the controller's own identity and are allowed only in a ClusterProviderConfig, which an administrator shares through spec.allowedNamespaces"))]
#[x_kube(validation = Rule::new("self.credentials.source != 'RamRoleArn' || has(self.credentials.secretRef)").message("a namespaced ProviderConfig with source RamRoleArn needs credentials.secretRef: without it the role would be assumed with the controller's own identity; put an AccessKey in a Secret of this namespace, or ask an administrator for a ClusterProviderConfig"))]
#[x_kube(validation = Rule::new("!has(self.credentials.rrsa) && !has(self.credentials.instanceRole)").message("credentials.rrsa and credentials.instanceRole (and with them an OIDC token file) are not allowed in a namespaced ProviderConfig; they belong in a ClusterProviderConfig"))]
pub struct ProviderConfigSpec {
    /// Where the credentials come from.
    pub credentials: ProviderCredentials,
    /// Endpoint, region and signature settings.
    #[serde(flatten)]
    pub connection: ConnectionSettings,
}

/// Cluster-wide Alibaba Cloud credentials and endpoint, set up by an administrator and usable by
/// ECSInstances in every namespace.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "alibabacloud.ferroplane.io",
    version = "v1alpha1",
    kind = "ClusterProviderConfig",
    plural = "clusterproviderconfigs",
    singular = "clusterproviderconfig",
    status = "ProviderConfigStatus",
    category = "ferroplane",
    doc = "Cluster-wide Alibaba Cloud credentials and endpoint, usable by the managed resources that name it in providerConfigRef (kind ClusterProviderConfig) in the namespaces spec.allowedNamespaces allows (all of them when it is absent).",
    printcolumn(
        name = "SOURCE",
        type_ = "string",
        json_path = ".spec.credentials.source"
    ),
    printcolumn(
        name = "SECRET",
        type_ = "string",
        json_path = ".spec.credentials.secretRef.name"
    ),
    printcolumn(name = "USERS", type_ = "integer", json_path = ".status.users"),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.credentials.secretRef) || has(self.credentials.secretRef.__namespace__)").message("a ClusterProviderConfig must name the Secret's namespace in credentials.secretRef.namespace"))]
pub struct ClusterProviderConfigSpec {
    /// Where the credentials come from.
    pub credentials: ProviderCredentials,
    /// Endpoint, region and signature settings.
    #[serde(flatten)]
    pub connection: ConnectionSettings,
    /// Which namespaces' managed resources may use this configuration. Absent: every namespace
    /// (`from: All`). A managed resource in a namespace not allowed gets Synced=False and
    /// nothing is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_namespaces: Option<AllowedNamespaces>,
}

/// The namespaces allowed to use a ClusterProviderConfig, in the shape of Gateway API's
/// `allowedRoutes.namespaces`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.from != 'Selector' || has(self.selector)").message("allowedNamespaces.from Selector needs allowedNamespaces.selector (a label selector on Namespaces)"))]
pub struct AllowedNamespaces {
    /// `All` (every namespace) or `Selector` (the namespaces whose labels match `selector`).
    pub from: NamespacesFrom,
    /// Label selector on Namespace objects; required with `from: Selector`, ignored otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// How `allowedNamespaces` chooses namespaces.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum NamespacesFrom {
    /// Every namespace.
    All,
    /// The namespaces whose labels match the selector.
    Selector,
}

/// How to reach ECS; the same for both configuration kinds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionSettings {
    /// ECS endpoint to use instead of `https://ecs.<region>.aliyuncs.com`, e.g. a VPC endpoint,
    /// a proxy, or the ferroplane ECS mock (`http://127.0.0.1:PORT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^https?://[^\s/]+(/.*)?$"))]
    pub endpoint: Option<String>,
    /// Region used to pick the endpoint for calls that are not tied to an instance's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"))]
    pub region: Option<String>,
    /// Use the VPC-internal endpoints `ecs-vpc.<region>.aliyuncs.com` and, for credentials,
    /// `sts-vpc.<region>.aliyuncs.com` (only reachable from inside Alibaba Cloud; STS then needs
    /// `region`). Ignored for an endpoint that is set explicitly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_vpc_endpoint: Option<bool>,
    /// STS endpoint for the credential sources that call STS (`RamRoleArn`, `RRSA`), instead of
    /// `https://sts.<region>.aliyuncs.com` (`sts-vpc.<region>` with `useVpcEndpoint`).
    /// Takes precedence over the controller's `ALIBABA_CLOUD_STS_ENDPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(https?://)?[^\s/]+(/.*)?$"))]
    pub sts_endpoint: Option<String>,
    /// API signature algorithm: `V1` (HMAC-SHA1, the default) or `V3` (ACS3-HMAC-SHA256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_version: Option<SignatureVersion>,
}

/// Where credentials come from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.source != 'Secret' || has(self.secretRef)").message("source Secret needs secretRef"))]
#[x_kube(validation = Rule::new("self.source != 'RRSA' || has(self.rrsa)").message("source RRSA needs rrsa"))]
#[x_kube(validation = Rule::new("self.source != 'RamRoleArn' || has(self.ramRoleArn)").message("source RamRoleArn needs ramRoleArn"))]
#[x_kube(validation = Rule::new("!has(self.instanceRole) || self.source == 'InstanceRole'").message("credentials.instanceRole is used only with source InstanceRole"))]
pub struct ProviderCredentials {
    /// `Secret` (keys in a Secret), `Environment` (the provider pod's `ALIBABA_CLOUD_*`
    /// variables, else its `~/.aliyun/config.json` profile), `RRSA` (OIDC role on ACK),
    /// `InstanceRole` (the ECS instance RAM role, from the metadata service) or `RamRoleArn`
    /// (STS AssumeRole on top of the Secret when `secretRef` is set, else on top of the
    /// environment). A namespaced ProviderConfig may use only `Secret` and `RamRoleArn` with a
    /// `secretRef`: the others are the controller's own identity.
    pub source: CredentialsSource,
    /// The Secret holding the access key. Without `key` it has the keys `accessKeyId`,
    /// `accessKeySecret` and optionally `securityToken`; with `key`, that entry holds JSON
    /// `{"access_key": ..., "secret_key": ..., "security_token": ...}` (the format of
    /// Crossplane's Alibaba provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<CredentialsSecretRef>,
    /// OIDC role settings for source `RRSA`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rrsa: Option<RrsaCredentials>,
    /// Role to assume for source `RamRoleArn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_role_arn: Option<RamRoleArnCredentials>,
    /// Settings of source `InstanceRole` (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_role: Option<InstanceRoleCredentials>,
}

/// The ECS instance RAM role (source `InstanceRole`), read from the metadata service with
/// IMDSv2 tokens.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceRoleCredentials {
    /// Name of the RAM role attached to the instance. Absent: the controller's
    /// `ALIBABA_CLOUD_ECS_METADATA`, else the role the metadata service lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub role_name: Option<String>,
}

/// Credential sources.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum CredentialsSource {
    Secret,
    Environment,
    #[serde(rename = "RRSA")]
    Rrsa,
    RamRoleArn,
    InstanceRole,
}

/// Signature algorithm for ECS calls.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SignatureVersion {
    #[default]
    V1,
    V3,
}

/// A Secret with Alibaba Cloud credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsSecretRef {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Namespace of the Secret. Required for a ClusterProviderConfig; a ProviderConfig may only
    /// name its own namespace (or leave this empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub namespace: Option<String>,
    /// A single key holding the credentials as JSON (Crossplane's format). Leave empty for
    /// separate `accessKeyId` / `accessKeySecret` / `securityToken` keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub key: Option<String>,
}

/// OIDC role (RRSA) settings; unset fields come from the pod's `ALIBABA_CLOUD_ROLE_ARN`,
/// `ALIBABA_CLOUD_OIDC_PROVIDER_ARN` and `ALIBABA_CLOUD_OIDC_TOKEN_FILE` variables.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RrsaCredentials {
    /// RAM role to assume, `acs:ram::<account>:role/<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^acs:ram::[0-9]+:role/.+$"))]
    pub role_arn: Option<String>,
    /// OIDC provider, `acs:ram::<account>:oidc-provider/<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^acs:ram::[0-9]+:oidc-provider/.+$"))]
    pub oidc_provider_arn: Option<String>,
    /// Path of the projected service account token file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc_token_file: Option<String>,
    /// Session name shown in ActionTrail (default `ferroplane`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 64))]
    pub role_session_name: Option<String>,
}

/// STS AssumeRole settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RamRoleArnCredentials {
    /// RAM role to assume, `acs:ram::<account>:role/<name>`.
    #[schemars(regex(pattern = r"^acs:ram::[0-9]+:role/.+$"))]
    pub role_arn: String,
    /// Session name shown in ActionTrail (default `ferroplane`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 64))]
    pub role_session_name: Option<String>,
    /// External ID the role's trust policy requires, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Lifetime of the temporary credentials in seconds, 900 to 43200 (default 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 900, max = 43200))]
    pub duration_seconds: Option<i32>,
}

/// Observed state of a ProviderConfig or ClusterProviderConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigStatus {
    /// How many managed resources use this configuration. It cannot be deleted while in use.
    #[serde(default)]
    pub users: i64,
    /// `Ready`: whether the credentials could be loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The parts of both configuration kinds that the provider uses.
pub trait ProviderConfigSettings {
    fn credentials(&self) -> &ProviderCredentials;
    fn endpoint(&self) -> Option<&str>;
    fn region(&self) -> Option<&str>;
    fn use_vpc_endpoint(&self) -> bool;
    fn sts_endpoint(&self) -> Option<&str>;
    fn signature_version(&self) -> SignatureVersion;
    /// The namespaces allowed to use the configuration: `None` for a namespaced ProviderConfig
    /// (only its own namespace can name it) and for a ClusterProviderConfig open to all.
    fn allowed_namespaces(&self) -> Option<&AllowedNamespaces>;
}

macro_rules! impl_settings {
    ($kind:ty, $allowed:path) => {
        impl ProviderConfigSettings for $kind {
            fn credentials(&self) -> &ProviderCredentials {
                &self.spec.credentials
            }
            fn endpoint(&self) -> Option<&str> {
                self.spec.connection.endpoint.as_deref()
            }
            fn region(&self) -> Option<&str> {
                self.spec.connection.region.as_deref()
            }
            fn use_vpc_endpoint(&self) -> bool {
                self.spec.connection.use_vpc_endpoint.unwrap_or(false)
            }
            fn sts_endpoint(&self) -> Option<&str> {
                self.spec.connection.sts_endpoint.as_deref()
            }
            fn signature_version(&self) -> SignatureVersion {
                self.spec.connection.signature_version.unwrap_or_default()
            }
            fn allowed_namespaces(&self) -> Option<&AllowedNamespaces> {
                $allowed(self)
            }
        }
    };
}

fn open_to_own_namespace(_: &ProviderConfig) -> Option<&AllowedNamespaces> {
    None
}

fn cluster_allowed_namespaces(config: &ClusterProviderConfig) -> Option<&AllowedNamespaces> {
    config.spec.allowed_namespaces.as_ref()
}

impl_settings!(ProviderConfig, open_to_own_namespace);
impl_settings!(ClusterProviderConfig, cluster_allowed_namespaces);
