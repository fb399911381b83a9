//! provider-alibaba: the controllers of the Alibaba Cloud kinds, on the managed-resource
//! framework of ferroplane-runtime. Entry point: [`run`] with [`Options`]. How the crate is laid
//! out and where each step of a reconcile lives is in the repository's `ARCHITECTURE.md`.
//!
//! - one folder per kind: `ecs_instance` (with the observation batcher and owner search),
//!   `fleet` (ECSFleet, whose instances are ECSInstance objects it owns),
//!   `network` (VPC, VSwitch, SecurityGroup, SecurityGroupRule, EIP, EIPAssociation, NATGateway,
//!   SNATEntry, DNATEntry), `disk`, `key_pair`, `provider_config`
//!   (ProviderConfig and ClusterProviderConfig);
//! - shared by the kinds: `config_resolution` and `config_watches` (a `providerConfigRef` →
//!   credentials and endpoint, and the watches that requeue its users), `cloud_client` (the
//!   signed clients per configuration version and region), `cloud_connector` (the connector of
//!   every kind but ECSInstance), `cloud_preview` (that connector and the kinds' observe, read-only,
//!   for `ferroplane plan`), `cloud_error` (cloud errors → reasons), `cloud_fields` (owner
//!   tag, empty fields), `reasons` (every reason a user sees), `call_metrics`, `options`.
//!
//! Every cloud call goes through alibaba-sdk. This crate must not depend on the mock
//! (alibaba-mock is a dev-dependency of its tests only), on an HTTP server framework, or on
//! another provider.
//!
//! ```no_run
//! # async fn demo(runtime: ferroplane_runtime::Runtime) -> Result<(), ferroplane_runtime::RunError> {
//! let options = provider_alibaba::Options::default(); // all namespaces, batching on
//! provider_alibaba::run(&runtime, options, async {
//!     let _ = tokio::signal::ctrl_c().await;
//! })
//! .await
//! # }
//! ```
//!
//! # Requeues and permissions
//! A change to a ProviderConfig's or ClusterProviderConfig's spec, to its credentials Secret, to
//! an instance's `passwordSecretRef` Secret, or to the labels of a Namespace whose objects use a
//! ClusterProviderConfig reconciles the objects concerned at once; status writes to
//! configurations do not. The process needs get/list/watch on Secrets in every
//! namespace (a ClusterProviderConfig may name any namespace), get/list/watch/patch on the
//! managed kinds and their `/status`, create/patch on Secrets for connection details, create on
//! events, get/list/watch on ECSFleets with patch on their `/status` and create/delete on
//! ECSInstances (a fleet's members), and get/list/watch on Namespaces (a ClusterProviderConfig
//! with `allowedNamespaces.from: Selector` is checked against the managed resource's Namespace
//! labels on every reconcile).

mod account;
mod call_metrics;
mod cloud_client;
mod cloud_connector;
mod cloud_error;
mod cloud_fields;
mod cloud_preview;
mod config_resolution;
mod config_watches;
mod disk;
mod ecs_instance;
mod fleet;
mod key_pair;
mod network;
mod options;
mod plan_access;
mod provider_config;
mod reasons;

use std::future::Future;

use ferroplane_runtime::{RunError, Runtime};
use futures::FutureExt;

// The integration tests check the resolved-config cache against a live API server.
pub use config_resolution::{ConfigResolver, EndpointAllowList, EndpointRefusal, ResolvedConfigs};
pub use ecs_instance::field_classes as ecs_instance_field_classes;
// `ferroplane import`: an existing instance as a spec its first reconcile leaves alone.
pub use ecs_instance::imported_parameters as ecs_instance_imported_parameters;
// `ferroplane plan`: the next reconcile's changes, computed by the observe step's own diff.
pub use ecs_instance::{
    ChangeClass, ExtraReads as EcsInstanceExtraReads, InstancePreview, PlannedChange,
    launch_refusal as ecs_instance_launch_refusal, preview as ecs_instance_preview,
    preview_with as ecs_instance_preview_with, read_extras as ecs_instance_extra_reads,
};
pub use fleet::{FleetPreview, preview as ecs_fleet_preview};
pub use options::{ClientOverrides, Options};
pub use plan_access::{PlanAccess, PlanBlocked, PlanClient};
/// The reason a fleet reports for a spec it cannot reconcile.
pub use reasons::INVALID_FLEET;
// `ferroplane plan` of the other cloud kinds: their controllers' connect and observe, read-only.
pub use cloud_preview::{
    CloudPreviews, KindPreview, Ownership, PlannableKind, PreviewBlocked, external_name,
};

use crate::disk::disk_controller;
use crate::ecs_instance::ecs_instance_controller;
use crate::key_pair::key_pair_controller;
use crate::network::{
    eip_controllers, nat_controllers, network_controllers, security_group_rule_controller,
};

/// Runs the fifteen controllers (ECSInstance, ECSFleet, VPC, VSwitch, SecurityGroup, SecurityGroupRule,
/// Disk, KeyPair, EIP, EIPAssociation, NATGateway, SNATEntry, DNATEntry, ProviderConfig,
/// ClusterProviderConfig) with the Kubernetes client of `runtime` until
/// `shutdown` completes, then lets running reconciles finish.
///
/// Nothing at start can fail (configurations and credentials are resolved per reconcile, and
/// their failures go to the objects' conditions), so this returns `Ok` once the controllers stop.
pub async fn run(
    runtime: &Runtime,
    options: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let shutdown = shutdown.boxed().shared();
    let ecs = ecs_instance_controller(runtime, &options);
    let (vpcs, vswitches, groups) = network_controllers(runtime, &options);
    let disks = disk_controller(runtime, &options);
    let key_pairs = key_pair_controller(runtime, &options);
    let rules = security_group_rule_controller(runtime, &options);
    let (eips, eip_associations) = eip_controllers(runtime, &options);
    let (nat_gateways, snat_entries, dnat_entries) = nat_controllers(runtime, &options);
    let fleets = fleet::run(runtime, &options, &ecs, shutdown.clone());
    // Every managed kind uses a configuration: each is followed for `status.users` and for the
    // in-use finalizer.
    let mut users = provider_config::ConfigUsers::default();
    users.follow(&ecs);
    users.follow(&vpcs);
    users.follow(&vswitches);
    users.follow(&groups);
    users.follow(&disks);
    users.follow(&key_pairs);
    users.follow(&rules);
    users.follow(&eips);
    users.follow(&eip_associations);
    users.follow(&nat_gateways);
    users.follow(&snat_entries);
    users.follow(&dnat_entries);
    let configs = provider_config::run(runtime, options, users, shutdown.clone());
    futures::join!(
        ecs.run(shutdown.clone()),
        vpcs.run(shutdown.clone()),
        vswitches.run(shutdown.clone()),
        groups.run(shutdown.clone()),
        disks.run(shutdown.clone()),
        key_pairs.run(shutdown.clone()),
        rules.run(shutdown.clone()),
        eips.run(shutdown.clone()),
        eip_associations.run(shutdown.clone()),
        nat_gateways.run(shutdown.clone()),
        snat_entries.run(shutdown.clone()),
        dnat_entries.run(shutdown),
        fleets,
        configs
    );
    Ok(())
}
