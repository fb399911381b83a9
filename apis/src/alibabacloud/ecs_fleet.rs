//! `ECSFleet`: `replicas` ECS instances from one template, placed over an ordered list of zones
//! and instance types. Its instances are ECSInstance objects it owns (as a Deployment owns its
//! pods), so every guarantee of an ECSInstance holds for them unchanged.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ecs_instance::ECSInstanceParameters;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::common::{Condition, DeletionPolicy, ProviderConfigReference};
use crate::references::{Reference, Selector};

/// The label every instance of a fleet carries, with the fleet's name as its value.
pub const FLEET_LABEL: &str = "ferroplane.io/fleet";
/// The label with the hash of the template an instance was made from.
pub const TEMPLATE_HASH_LABEL: &str = "ferroplane.io/template-hash";

/// Properties of `forProvider` that the fleet's placement sets for each instance, and that a
/// template therefore does not carry.
pub const PLACEMENT_PROPERTIES: [&str; 5] = [
    "zoneId",
    "vSwitchId",
    "vSwitchIdRef",
    "vSwitchIdSelector",
    "instanceType",
];

/// A fleet of ECS instances made from one template.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "alibabacloud.ferroplane.io",
    version = "v1alpha1",
    kind = "ECSFleet",
    plural = "ecsfleets",
    singular = "ecsfleet",
    status = "ECSFleetStatus",
    shortname = "fleet",
    namespaced,
    category = "ferroplane",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    printcolumn(name = "DESIRED", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "READY", type_ = "integer", json_path = ".status.readyReplicas"),
    printcolumn(
        name = "UP-TO-DATE",
        type_ = "integer",
        json_path = ".status.updatedReplicas"
    ),
    printcolumn(
        name = "PROGRESSING",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Progressing')].reason"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    doc = "Replicas ECS instances from one template, placed over ordered zones and instance types. ferroplane makes one ECSInstance object per instance (named <fleet>-<template hash>-<n>, owned by the fleet), moves on to the next placement when ECS has no stock, replaces instances within maxSurge/maxUnavailable when the template changes what only a new instance can take, and applies the other changes in place."
)]
#[serde(rename_all = "camelCase")]
pub struct ECSFleetSpec {
    /// How many instances the fleet keeps. `kubectl scale fleet NAME --replicas=N` changes it.
    #[schemars(range(min = 0, max = 10000))]
    pub replicas: u32,
    /// What each instance is made from.
    pub template: FleetTemplate,
    /// Where instances go: zones with their vSwitches, instance types, and how to spread.
    pub placement: FleetPlacement,
    /// How instances are replaced when the template changes what only a new instance can take
    /// (a restart-bound or immutable property, such as imageId, userData or dataDisks).
    #[serde(default)]
    pub update_strategy: FleetUpdateStrategy,
    /// How long a rollout may go without a new instance becoming Ready before it stops with
    /// `ProgressDeadlineExceeded` (the old instances keep serving). Default 600.
    #[serde(default = "default_progress_deadline")]
    #[schemars(range(min = 1))]
    pub progress_deadline_seconds: u32,
    /// What happens to the fleet's ECS instances when their objects are deleted (by the fleet's
    /// deletion, a scale-down or a replacement): `Delete` releases them, `Orphan` leaves them
    /// running in the cloud.
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
}

fn default_progress_deadline() -> u32 {
    600
}

/// The template of every instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetTemplate {
    /// Labels and annotations each ECSInstance object gets (besides the fleet's own labels).
    #[serde(default, skip_serializing_if = "FleetTemplateMetadata::is_empty")]
    pub metadata: FleetTemplateMetadata,
    /// The ECSInstance spec each instance gets, but for its placement.
    pub spec: FleetInstanceSpec,
}

/// Labels and annotations of the instances' objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetTemplateMetadata {
    /// Labels of each ECSInstance object. `ferroplane.io/fleet` and
    /// `ferroplane.io/template-hash` are the fleet's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations of each ECSInstance object.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl FleetTemplateMetadata {
    fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty()
    }
}

/// The ECSInstance spec of each instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetInstanceSpec {
    /// The ProviderConfig (same namespace) or ClusterProviderConfig of every instance.
    /// Defaults to the ProviderConfig named `default`.
    #[serde(default)]
    pub provider_config_ref: ProviderConfigReference,
    /// ECSInstance's `forProvider` without the placement properties (`zoneId`, `vSwitchId` and
    /// its reference and selector, `instanceType`), which `placement` sets per instance.
    pub for_provider: FleetInstanceParameters,
}

/// ECSInstance's `forProvider` properties, less the placement ones. The schema is ECSInstance's
/// own, less the placement properties and the rules that compare with the object's previous
/// state (a template may change anything: the fleet decides whether a change is applied in
/// place or by new instances).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(transparent)]
pub struct FleetInstanceParameters(pub Map<String, Value>);

impl JsonSchema for FleetInstanceParameters {
    fn schema_name() -> Cow<'static, str> {
        "FleetInstanceParameters".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = ECSInstanceParameters::json_schema(generator);
        let object = schema.ensure_object();
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            for name in PLACEMENT_PROPERTIES {
                properties.remove(name);
            }
        }
        if let Some(Value::Array(required)) = object.get_mut("required") {
            required.retain(|name| !PLACEMENT_PROPERTIES.iter().any(|p| name == *p));
        }
        object.insert(
            "description".into(),
            Value::String(
                "ECSInstance's spec.forProvider without zoneId, vSwitchId (and its reference and selector) and instanceType, which placement sets per instance (`kubectl explain ecsinstance.spec.forProvider` documents every property).".into(),
            ),
        );
        strip_rules(object);
        schema
    }
}

/// Removes every CEL rule that reads `oldSelf` or a placement property, at any depth.
fn strip_rules(map: &mut Map<String, Value>) {
    if let Some(Value::Array(rules)) = map.get_mut("x-kubernetes-validations") {
        rules.retain(|rule| {
            let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default();
            !text.contains("oldSelf")
                && !PLACEMENT_PROPERTIES
                    .iter()
                    .any(|p| text.contains(&format!("self.{p}")))
        });
        if rules.is_empty() {
            map.remove("x-kubernetes-validations");
        }
    }
    for value in map.values_mut() {
        strip_value(value);
    }
}

fn strip_value(value: &mut Value) {
    match value {
        Value::Object(map) => strip_rules(map),
        Value::Array(items) => items.iter_mut().for_each(strip_value),
        _ => {}
    }
}

/// Where the fleet's instances go.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetPlacement {
    /// Zones in order of preference, each with the vSwitch instances there launch into.
    #[schemars(length(min = 1, max = 20))]
    pub zones: Vec<FleetZone>,
    /// Instance types in order of preference: the first one with stock in a zone is used there.
    #[schemars(length(min = 1, max = 20))]
    pub instance_types: Vec<String>,
    /// `Balanced` (default) spreads instances evenly over the zones that have stock;
    /// `Priority` fills the first zone that has stock before the next.
    #[serde(default)]
    pub spread: FleetSpread,
    /// How long a (zone, instance type) that ECS refused for lack of stock is skipped before it
    /// is tried again. Default 300.
    #[serde(default = "default_refusal_seconds")]
    #[schemars(range(min = 10))]
    pub retry_refused_after_seconds: u32,
}

fn default_refusal_seconds() -> u32 {
    300
}

/// A zone of the fleet and its vSwitch (exactly one of `vSwitchId`, `vSwitchIdRef`,
/// `vSwitchIdSelector`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "[has(self.vSwitchId), has(self.vSwitchIdRef), has(self.vSwitchIdSelector)].filter(x, x).size() == 1",
    "message": "a zone needs exactly one of vSwitchId, vSwitchIdRef and vSwitchIdSelector"
}]))]
pub struct FleetZone {
    /// The zone, e.g. `cn-hangzhou-b`.
    #[schemars(length(min = 4, max = 64))]
    pub zone_id: String,
    /// The vSwitch in that zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id: Option<String>,
    /// A VSwitch object of this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id_ref: Option<Reference>,
    /// VSwitch objects of this namespace by labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id_selector: Option<Selector>,
}

/// How instances spread over zones.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum FleetSpread {
    #[default]
    Balanced,
    Priority,
}

/// How a template change that needs new instances is rolled out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetUpdateStrategy {
    /// `RollingUpdate` (default): new instances replace old ones within `rollingUpdate`'s
    /// bounds. `OnDelete`: an old instance is replaced only once its object is deleted.
    #[serde(default, rename = "type")]
    pub type_: FleetUpdateStrategyType,
    /// Bounds of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<FleetRollingUpdate>,
}

/// The kinds of update strategy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum FleetUpdateStrategyType {
    #[default]
    RollingUpdate,
    OnDelete,
}

/// How far a rolling update may go above and below `replicas`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetRollingUpdate {
    /// Instances beyond `replicas` during a rollout: a number or a percentage of `replicas`
    /// (rounded up). Default 25%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Ready instances below `replicas` a rollout may go: a number or a percentage (rounded
    /// down). Default 25%. When both resolve to 0, one instance may be unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

/// What the fleet observed of its instances.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ECSFleetStatus {
    /// Instance objects of the fleet that are not being deleted.
    #[serde(default)]
    pub replicas: u32,
    /// Of those, the Ready ones.
    #[serde(default)]
    pub ready_replicas: u32,
    /// Of those, the ones made from the current template.
    #[serde(default)]
    pub updated_replicas: u32,
    /// Of those, the ones made from the current template that are Ready.
    #[serde(default)]
    pub updated_ready_replicas: u32,
    /// Members replaced because their instance was gone from the cloud (a reclaimed spot
    /// instance, a release outside ferroplane), since the fleet was created.
    #[serde(default)]
    pub lost_replaced: u32,
    /// The label selector of the fleet's instances (for the `/scale` subresource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The hash of the current template (the `ferroplane.io/template-hash` label of its
    /// instances).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_hash: Option<String>,
    /// Instances per zone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<FleetCount>,
    /// Instances per instance type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instance_types: Vec<FleetCount>,
    /// Placements ECS refused for lack of stock, skipped until `retryAfter`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_placements: Vec<RefusedPlacement>,
    /// When the rollout last made progress (an instance of the current template became Ready,
    /// or the template changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_progress_time: Option<Time>,
    /// `Ready` (every replica Ready and up to date) and `Progressing`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// A count of instances under one name (a zone or an instance type).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetCount {
    pub name: String,
    pub replicas: u32,
}

/// A (zone, instance type) ECS refused.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefusedPlacement {
    pub zone_id: String,
    pub instance_type: String,
    /// The instance's reason (`NoStock`, `PlacementNotOffered`).
    pub reason: String,
    /// When it was refused.
    pub refused_at: Time,
    /// When it is tried again.
    pub retry_after: Time,
}
