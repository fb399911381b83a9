//! [`EtcdClient`]: one reconcile's view of one EtcdCluster, what every step of the controller
//! works with. Its steps are in the sibling modules; the order they run in is in `mod.rs`.

use ferroplane_runtime::children::Children;
use ferroplane_runtime::events::Events;
use kube::Client;

use crate::auth::Passwords;
use crate::names::ClusterNames;
use crate::restore::RestoreSetup;
use crate::tls;
use crate::tls::certs::CaPolicy;

/// One reconcile's view of one EtcdCluster's children and members.
pub struct EtcdClient<M> {
    pub(super) kube: Client,
    pub(super) children: Children,
    pub(super) membership: M,
    pub(super) events: Events,
    pub(super) names: ClusterNames,
    /// The TLS Secrets, for a TLS cluster.
    pub(super) tls: Option<tls::SecretNames>,
    pub(super) ca_policy: CaPolicy,
    pub(super) restore: RestoreSetup,
    /// Root's passwords (`spec.auth`'s Secret and the one in effect).
    pub(super) passwords: Passwords,
}
