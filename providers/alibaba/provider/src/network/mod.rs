//! The network kinds: `VPC`, `VSwitch` and `SecurityGroup` (entry: [`network_controllers`]).
//!
//! They share one connector (`connector`: ProviderConfig → credentials → the region's ECS and
//! VPC clients, from `crate::cloud_client`), one error mapping (`crate::cloud_error`'s
//! `product_error`) and the framework's guarantees: creates carry a
//! ClientToken from the object's UID and a `ferroplane.io/uid` tag, so a lost response creates
//! nothing twice and a lost ID is found again by the tag. The VPC of a vSwitch or security group
//! comes from `vpcIdRef` / `vpcIdSelector` through the runtime's references.
//!
//! - `vpc`, `vswitch`: create, observe, delete (their settings are fixed at creation);
//! - `security_group` with `rules`: the rules are kept exactly as the spec lists them.

mod attributes;
mod connector;
mod rules;
mod security_group;
mod vpc;
mod vswitch;

use ferroplane_apis::alibabacloud::{SecurityGroup, VPC, VSwitch};
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, references};
use kube::runtime::watcher;

pub(crate) use self::connector::{NetworkClients, NetworkConnector, NetworkKind};
use crate::config_watches::watch_provider_configs;
use crate::options::Options;

/// The tags to create a resource with: the spec's, and the UID tag (which the spec may not set).
pub(crate) fn uid_tagged<T>(
    tags: Option<&ferroplane_apis::alibabacloud::Tags>,
    uid: &str,
    tag: impl Fn(&str, &str) -> T,
) -> Vec<T> {
    let mut out: Vec<T> = tags
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != ferroplane_runtime::UID_TAG)
        .map(|(k, v)| tag(k, v))
        .collect();
    out.push(tag(ferroplane_runtime::UID_TAG, uid));
    out
}

pub(crate) fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// The three controllers. A VSwitch or SecurityGroup waiting for its VPC reference is reconciled
/// as soon as that VPC changes (becomes Ready), not at its next backoff.
pub(crate) fn network_controllers(
    runtime: &Runtime,
    options: &Options,
) -> (
    ManagedController<VPC, NetworkConnector>,
    ManagedController<VSwitch, NetworkConnector>,
    ManagedController<SecurityGroup, NetworkConnector>,
) {
    let client = runtime.client().clone();
    let controller = |kind: &str| {
        let connector =
            NetworkConnector::new(client.clone(), options, runtime.external_calls(kind));
        (connector.configs(), connector)
    };
    let config = ControllerConfig {
        concurrency: options.max_concurrent_reconciles,
        requeue: options.requeue_policy(),
    };

    let (resolved, connector) = controller("VPC");
    let vpcs = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(config.clone());
    let vpcs = watch_provider_configs(vpcs, &client, options, resolved, None);

    let (resolved, connector) = controller("VSwitch");
    let vswitches = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(config.clone())
        .watches_related(
            options.api::<VPC>(&client),
            watcher::Config::default(),
            references::referencing::<VPC, VSwitch>,
        );
    let vswitches = watch_provider_configs(vswitches, &client, options, resolved, None);

    let (resolved, connector) = controller("SecurityGroup");
    let groups = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(config)
        .watches_related(
            options.api::<VPC>(&client),
            watcher::Config::default(),
            references::referencing::<VPC, SecurityGroup>,
        );
    let groups = watch_provider_configs(groups, &client, options, resolved, None);
    (vpcs, vswitches, groups)
}
