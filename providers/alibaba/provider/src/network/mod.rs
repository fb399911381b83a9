//! The network kinds: `VPC`, `VSwitch` and `SecurityGroup` (entry: [`network_controllers`]),
//! `EIP` and `EIPAssociation` (entry: [`eip_controllers`]), `NATGateway`, `SNATEntry` and
//! `DNATEntry` (entry: [`nat_controllers`]), `SecurityGroupRule` (entry:
//! [`security_group_rule_controller`]).
//!
//! They share, with Disk and KeyPair, one connector (`crate::cloud_connector`: ProviderConfig →
//! credentials → the region's cached ECS and VPC clients, errors mapped by `crate::cloud_error`)
//! and the framework's guarantees: creates carry a ClientToken from the object's UID and a
//! `ferroplane.io/uid` tag, so a lost response creates nothing twice and a lost ID is found again
//! by the tag. The VPC of a vSwitch or security group
//! comes from `vpcIdRef` / `vpcIdSelector` through the runtime's references.
//!
//! - `vpc`, `vswitch`: create, observe, update name, description and tags, delete;
//! - `security_group` with `rules`: the rules are kept exactly as the spec lists them;
//! - `attributes` (pure) and `vpc_tags`: name, description and tags changed in place;
//! - `eip`, `eip_association`: an EIP, and its association with an instance (named
//!   `<allocationId>:<instanceId>`, observed through the EIP);
//! - `nat_gateway`: a NAT gateway, deleted only once its entries and EIPs are gone;
//! - `deletion_protection`: the deletion protection of EIPs and NAT gateways;
//! - `snat_entry`, `dnat_entry` with `nat_tables`: an entry of a gateway's SNAT or forward
//!   table, named by the entry's ID (entries take no tags);
//! - `security_group_rule` with `rule_spec` (pure): one rule of a group as an object, named by
//!   its rule ID and found before that by a description marker;
//! - `field_class`, `eip_fields`, `nat_fields` and `rule_fields`: the class of every property of
//!   the EIP, NAT and SecurityGroupRule kinds.

mod attributes;
mod deletion_protection;
mod dnat_entry;
mod eip;
mod eip_association;
#[cfg(test)]
mod eip_fields;
#[cfg(test)]
mod field_class;
#[cfg(test)]
mod nat_fields;
mod nat_gateway;
mod nat_tables;
#[cfg(test)]
mod rule_fields;
mod rule_spec;
mod rules;
mod security_group;
mod security_group_rule;
mod snat_entry;
mod vpc;
mod vpc_tags;
mod vswitch;

use std::fmt::Debug;

use ferroplane_apis::alibabacloud::{
    DNATEntry, ECSInstance, EIP, EIPAssociation, NATGateway, SNATEntry, SecurityGroup,
    SecurityGroupRule, VPC, VSwitch,
};
use ferroplane_runtime::{
    ControllerConfig, ExternalClient, ManagedController, ManagedResource, Runtime, references,
};
use k8s_openapi::NamespaceResourceScope;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::cloud_connector::{CloudClients, CloudConnector, CloudKind};
use crate::config_watches::watch_provider_configs;
use crate::options::Options;

/// A network kind's controller: its own connector (calls counted under the kind's name), the
/// provider's concurrency and requeue policy, `wake` (the related kinds whose changes reconcile
/// its objects at once), and the ProviderConfig watches every managed kind has.
fn cloud_controller<K>(
    runtime: &Runtime,
    options: &Options,
    wake: impl FnOnce(
        ManagedController<K, CloudConnector>,
        &kube::Client,
    ) -> ManagedController<K, CloudConnector>,
) -> ManagedController<K, CloudConnector>
where
    K: ManagedResource + CloudKind,
    CloudClients: ExternalClient<K>,
{
    let client = runtime.client();
    let connector = CloudConnector::new(
        client.clone(),
        options,
        runtime.external_calls(&K::kind(&())),
    );
    let resolved = connector.configs();
    let controller = ManagedController::new(runtime, options.api(client), connector).with_config(
        ControllerConfig {
            concurrency: options.max_concurrent_reconciles,
            requeue: options.requeue_policy(),
        },
    );
    watch_provider_configs(wake(controller, client), client, options, resolved, None)
}

/// Reconciles an object of `K` waiting for a reference to an `R` as soon as that `R` changes
/// (becomes Ready), not at its next backoff.
fn woken_by<R, K>(
    controller: ManagedController<K, CloudConnector>,
    client: &kube::Client,
    options: &Options,
) -> ManagedController<K, CloudConnector>
where
    R: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
    K: ManagedResource + CloudKind,
    CloudClients: ExternalClient<K>,
{
    controller.watches_related(
        options.api::<R>(client),
        watcher::Config::default(),
        references::referencing::<R, K>,
    )
}

/// The three controllers. A VSwitch or SecurityGroup waiting for its VPC reference is reconciled
/// as soon as that VPC changes (becomes Ready), not at its next backoff.
pub(crate) fn network_controllers(
    runtime: &Runtime,
    options: &Options,
) -> (
    ManagedController<VPC, CloudConnector>,
    ManagedController<VSwitch, CloudConnector>,
    ManagedController<SecurityGroup, CloudConnector>,
) {
    (
        cloud_controller(runtime, options, |c, _| c),
        cloud_controller(runtime, options, |c, client| {
            woken_by::<VPC, _>(c, client, options)
        }),
        cloud_controller(runtime, options, |c, client| {
            woken_by::<VPC, _>(c, client, options)
        }),
    )
}

/// The EIP and EIPAssociation controllers. An EIPAssociation waiting for its EIP, instance or
/// NAT gateway reference is reconciled as soon as that object changes (becomes Ready).
pub(crate) fn eip_controllers(
    runtime: &Runtime,
    options: &Options,
) -> (
    ManagedController<EIP, CloudConnector>,
    ManagedController<EIPAssociation, CloudConnector>,
) {
    (
        cloud_controller(runtime, options, |c, _| c),
        cloud_controller(runtime, options, |c, client| {
            let c = woken_by::<EIP, _>(c, client, options);
            let c = woken_by::<ECSInstance, _>(c, client, options);
            woken_by::<NATGateway, _>(c, client, options)
        }),
    )
}

/// The NATGateway, SNATEntry and DNATEntry controllers. An object waiting for a reference is
/// reconciled as soon as the object it names changes (becomes Ready); an entry also when its EIP
/// changes (see [`entries_using_eip`]).
pub(crate) fn nat_controllers(
    runtime: &Runtime,
    options: &Options,
) -> (
    ManagedController<NATGateway, CloudConnector>,
    ManagedController<SNATEntry, CloudConnector>,
    ManagedController<DNATEntry, CloudConnector>,
) {
    let gateways = cloud_controller(runtime, options, |c, client| {
        let c = woken_by::<VPC, _>(c, client, options);
        woken_by::<VSwitch, _>(c, client, options)
    });
    let snat = cloud_controller(runtime, options, |c, client| {
        let c = woken_by::<NATGateway, _>(c, client, options);
        let c = woken_by::<VSwitch, _>(c, client, options);
        c.watches_related(
            options.api::<EIP>(client),
            watcher::Config::default(),
            |eip: &EIP, store: &Store<SNATEntry>| {
                entries_using_eip(eip, store, |e| e.spec.for_provider.eip_id.as_deref())
            },
        )
    });
    let dnat = cloud_controller(runtime, options, |c, client| {
        let c = woken_by::<NATGateway, _>(c, client, options);
        let c = woken_by::<ECSInstance, _>(c, client, options);
        c.watches_related(
            options.api::<EIP>(client),
            watcher::Config::default(),
            |eip: &EIP, store: &Store<DNATEntry>| {
                entries_using_eip(eip, store, |e| e.spec.for_provider.eip_id.as_deref())
            },
        )
    });
    (gateways, snat, dnat)
}

impl CloudKind for DNATEntry {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for SNATEntry {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for NATGateway {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

/// The SNAT or DNAT entries to reconcile when an EIP changes: those still waiting for its
/// reference, and those that resolved it and wait for it to be bound to their gateway. An
/// EIPAssociation binds the EIP after the entry's reference resolved; the EIP's status then
/// shows the binding, and the entry's create is tried again at once instead of at the end of a
/// growing backoff.
fn entries_using_eip<K>(
    eip: &EIP,
    store: &Store<K>,
    eip_id_of: fn(&K) -> Option<&str>,
) -> Vec<ObjectRef<K>>
where
    K: ManagedResource,
{
    let mut entries = references::referencing::<EIP, K>(eip, store);
    let Some(allocation_id) = ferroplane_runtime::annotations::external_name(eip) else {
        return entries;
    };
    let namespace = eip.namespace();
    for entry in store.state() {
        let using = entry.namespace() == namespace && eip_id_of(&entry) == Some(allocation_id);
        let entry = ObjectRef::from_obj(entry.as_ref());
        if using && !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    entries
}

/// The SecurityGroupRule controller. A rule waiting for its group or peer group reference is
/// reconciled as soon as that SecurityGroup changes (becomes Ready).
pub(crate) fn security_group_rule_controller(
    runtime: &Runtime,
    options: &Options,
) -> ManagedController<SecurityGroupRule, CloudConnector> {
    cloud_controller(runtime, options, |c, client| {
        woken_by::<SecurityGroup, _>(c, client, options)
    })
}

impl CloudKind for SecurityGroupRule {
    const PRODUCT: &'static str = "ecs";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for EIP {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for EIPAssociation {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for VPC {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for VSwitch {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl CloudKind for SecurityGroup {
    const PRODUCT: &'static str = "ecs";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}
