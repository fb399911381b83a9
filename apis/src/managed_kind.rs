//! How a managed kind is declared: [`managed_spec!`] writes the spec fields and printer columns
//! every managed kind shares, and [`impl_managed!`](crate::impl_managed) implements
//! [`Managed`](crate::common::Managed) over them. The shared types themselves live in
//! [`common`](crate::common).

/// Declares a managed kind's spec (a `#[derive(CustomResource)]` struct) with the fields and
/// printer columns every managed kind shares, so each kind writes only what is its own.
///
/// ```ignore
/// managed_spec! {
///     columns: [printcolumn(name = "CIDR", type_ = "string", json_path = ".spec.cidr")];
///     /// A virtual private cloud.
///     #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
///     #[kube(group = "...", version = "v1alpha1", kind = "VPC", status = "VPCStatus", ...)]
///     #[serde(rename_all = "camelCase")]
///     pub struct VPCSpec {
///         /// What `Delete` and `Orphan` do for this kind.
///         deletion_policy,
///         management_policies,
///         provider_config_ref,
///         /// Which keys ferroplane writes to the Secret.
///         write_connection_secret_to_ref,
///         /// The kind's own fields follow.
///         pub for_provider: VPCParameters,
///     }
/// }
/// ```
///
/// - `columns`: the kind's own printer columns, shown between READY, SYNCED, EXTERNAL-NAME and
///   AGE. `external_name_priority = 1` after the list hides EXTERNAL-NAME from the short view.
/// - The kind is namespaced and in the categories `ferroplane` and `managed`.
/// - The shared fields come first, in this order. `deletion_policy` and `management_policies`
///   are required; `provider_config_ref` is for kinds that take cloud credentials.
/// - `deletion_policy` and `write_connection_secret_to_ref` take the kind's own doc, which
///   `kubectl explain` shows (what deletion does; which keys the Secret gets);
///   `management_policies` and `provider_config_ref` have a shared doc that a doc comment
///   replaces. `deletion_policy = "function"` names a default other than `Delete`.
macro_rules! managed_spec {
    (
        columns: [$(printcolumn($($column:tt)*)),* $(,)?] $(external_name_priority = $priority:literal)?;
        $(#[$($attr:tt)*])*
        pub struct $spec:ident { $($body:tt)* }
    ) => {
        $crate::managed_kind::managed_spec!(@field [
            $(#[$($attr)*])*
            #[kube(
                namespaced,
                category = "ferroplane",
                category = "managed",
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
                    $(, priority = $priority)?
                ),
                $(printcolumn($($column)*),)*
                printcolumn(
                    name = "AGE",
                    type_ = "date",
                    json_path = ".metadata.creationTimestamp"
                )
            )]
        ] $spec [] $($body)*);
    };

    // The shared fields, one at a time, into the field list in brackets.
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*]
        $(#[doc = $doc:literal])+ deletion_policy $(= $default:literal)?, $($rest:tt)*
    ) => {
        $crate::managed_kind::managed_spec!(@field [$($head)*] $spec [$($fields)*
            $(#[doc = $doc])+
            #[serde(default $(= $default)?)]
            pub deletion_policy: $crate::common::DeletionPolicy,
        ] $($rest)*);
    };
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*] management_policies, $($rest:tt)*) => {
        $crate::managed_kind::managed_spec!(@field [$($head)*] $spec [$($fields)*]
            /// What ferroplane may do: any of Observe, Create, Update, Delete, LateInitialize, or
            /// `*`.
            management_policies, $($rest)*);
    };
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*]
        $(#[doc = $doc:literal])+ management_policies, $($rest:tt)*
    ) => {
        $crate::managed_kind::managed_spec!(@field [$($head)*] $spec [$($fields)*
            $(#[doc = $doc])+
            #[serde(default = "crate::common::default_management_policies")]
            #[schemars(length(min = 1, max = 6), extend("x-kubernetes-list-type" = "set"))]
            pub management_policies: Vec<$crate::common::ManagementAction>,
        ] $($rest)*);
    };
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*] provider_config_ref, $($rest:tt)*) => {
        $crate::managed_kind::managed_spec!(@field [$($head)*] $spec [$($fields)*]
            /// The ProviderConfig (same namespace) or ClusterProviderConfig with the credentials.
            provider_config_ref, $($rest)*);
    };
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*]
        $(#[doc = $doc:literal])+ provider_config_ref, $($rest:tt)*
    ) => {
        $crate::managed_kind::managed_spec!(@field [$($head)*] $spec [$($fields)*
            $(#[doc = $doc])+
            #[serde(default)]
            pub provider_config_ref: $crate::common::ProviderConfigReference,
        ] $($rest)*);
    };
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*]
        $(#[doc = $doc:literal])+ write_connection_secret_to_ref, $($rest:tt)*
    ) => {
        $crate::managed_kind::managed_spec!(@field [$($head)*] $spec [$($fields)*
            $(#[doc = $doc])+
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub write_connection_secret_to_ref: Option<$crate::common::LocalSecretReference>,
        ] $($rest)*);
    };
    // The kind's own fields.
    (@field [$($head:tt)*] $spec:ident [$($fields:tt)*] $($rest:tt)*) => {
        $($head)*
        pub struct $spec {
            $($fields)*
            $($rest)*
        }
    };
}

pub(crate) use managed_spec;

/// Implements [`Managed`](crate::common::Managed) for a kind whose spec and status carry the
/// shared fields under their usual names, and
/// [`HasReferences`](crate::references::HasReferences) (empty unless `references = &[...]` is
/// given). `provider_config` selects whether the kind has a
/// `providerConfigRef`; a trailing `observation_uncached` makes
/// [`Managed::shed_observation`](crate::common::Managed::shed_observation) take
/// `status.atProvider` out of cached copies.
#[macro_export]
macro_rules! impl_managed {
    (@managed $kind:ty, provider_config $(, $shed:ident)?) => {
        $crate::impl_managed!(@common $kind, fn provider_config_ref(&self) -> Option<&$crate::common::ProviderConfigReference> {
            Some(&self.spec.provider_config_ref)
        } $(, $shed)?);
    };
    (@managed $kind:ty, in_cluster) => {
        $crate::impl_managed!(@common $kind, fn provider_config_ref(&self) -> Option<&$crate::common::ProviderConfigReference> {
            None
        });
    };
    (@shed) => {};
    (@shed observation_uncached) => {
        fn shed_observation(&mut self) -> Option<serde_json::Value> {
            let observed = self.status.as_mut()?.at_provider.take()?;
            $crate::common::observation_json(&observed)
        }
    };
    (@common $kind:ty, $pcr:item $(, $shed:ident)?) => {
        impl $crate::common::Managed for $kind {
            fn deletion_policy(&self) -> $crate::common::DeletionPolicy {
                self.spec.deletion_policy
            }
            fn management_policies(&self) -> &[$crate::common::ManagementAction] {
                &self.spec.management_policies
            }
            $pcr
            fn write_connection_secret_to_ref(&self) -> Option<&$crate::common::LocalSecretReference> {
                self.spec.write_connection_secret_to_ref.as_ref()
            }
            fn conditions(&self) -> &[$crate::common::Condition] {
                self.status.as_ref().map(|s| s.conditions.as_slice()).unwrap_or_default()
            }
            fn observed_generation(&self) -> Option<i64> {
                self.status.as_ref().and_then(|s| s.observed_generation)
            }
            $crate::impl_managed!(@shed $($shed)?);
        }
    };
    ($kind:ty, $scope:ident, references = $refs:expr $(, $shed:ident)?) => {
        $crate::impl_managed!(@managed $kind, $scope $(, $shed)?);
        impl $crate::references::HasReferences for $kind {
            fn reference_fields() -> &'static [$crate::references::ReferenceField] {
                $refs
            }
        }
    };
    ($kind:ty, $scope:ident $(, $shed:ident)?) => {
        $crate::impl_managed!(@managed $kind, $scope $(, $shed)?);
        impl $crate::references::HasReferences for $kind {}
    };
}
