//! What rendering takes besides the spec: the facts the controller observed or decided.

use std::collections::BTreeMap;

use super::bootstrap::Bootstrap;
use crate::version::Release;

/// What rendering needs beyond the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderInput {
    pub release: Release,
    /// StatefulSet replicas: the planner decides them, never the spec directly.
    pub replicas: u32,
    /// The member configuration files of the bootstrap ConfigMap.
    pub bootstrap: BootstrapFiles,
    /// Whether children carry an owner reference to the EtcdCluster. Without one (deletion
    /// policy Orphan), deleting the EtcdCluster leaves them running.
    pub owned: bool,
    /// The TLS trust generation ([`crate::tls::rotation`]): the pod template carries it from the
    /// first CA rotation on, so that each rotation phase restarts the members.
    pub trust_generation: u64,
}

/// Where the bootstrap ConfigMap's files come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootstrapFiles {
    /// Rendered for this membership.
    Render(Bootstrap),
    /// Kept as they are (while etcd cannot be asked who its members are): the live ConfigMap's
    /// files, or those recovered when it was deleted. The ConfigMap is still applied, so that
    /// its labels and owner reference follow the deletion policy.
    Keep(BTreeMap<String, String>),
}
