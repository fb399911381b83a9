//! What rendering takes besides the spec: the facts the controller observed or decided.

use super::bootstrap::Bootstrap;
use crate::version::Release;

/// What rendering needs beyond the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderInput {
    pub release: Release,
    /// StatefulSet replicas: the planner decides them, never the spec directly.
    pub replicas: u32,
    /// Member configuration to write; `None` leaves the live ConfigMap as it is (while etcd
    /// cannot be asked who its members are).
    pub bootstrap: Option<Bootstrap>,
    /// Whether children carry an owner reference to the EtcdCluster. Without one (deletion
    /// policy Orphan), deleting the EtcdCluster leaves them running.
    pub owned: bool,
}
