//! `Widget` (group `test.ferroplane.io`): a managed kind that exists only in tests, with the
//! spec and status fields every managed kind shares and a small `forProvider`.

use ferroplane_apis::common::{
    Condition, DeletionPolicy, LocalSecretReference, ManagementAction, ProviderConfigReference,
    default_management_policies,
};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The namespace of the widgets the tests create.
pub const NS: &str = "default";

/// A test-only managed kind with the shared spec and status fields.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "test.ferroplane.io",
    version = "v1",
    kind = "Widget",
    plural = "widgets",
    namespaced,
    status = "WidgetStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    #[serde(default = "default_management_policies")]
    pub management_policies: Vec<ManagementAction>,
    #[serde(default)]
    pub provider_config_ref: ProviderConfigReference,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_connection_secret_to_ref: Option<LocalSecretReference>,
    pub for_provider: WidgetParameters,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetParameters {
    pub size: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Late-initialized from the cloud when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_provider: Option<WidgetObservation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

ferroplane_apis::impl_managed!(Widget, provider_config, observation_uncached);

/// A widget referencing ProviderConfig `cfg` (a ConfigMap of that name stands in for it).
pub fn widget(name: &str, size: i64) -> Widget {
    let mut w = Widget::new(
        name,
        WidgetSpec {
            deletion_policy: DeletionPolicy::Delete,
            management_policies: default_management_policies(),
            provider_config_ref: ProviderConfigReference {
                name: "cfg".into(),
                ..Default::default()
            },
            write_connection_secret_to_ref: None,
            for_provider: WidgetParameters {
                size,
                label: None,
                zone: None,
            },
        },
    );
    w.metadata.namespace = Some(NS.into());
    w
}
