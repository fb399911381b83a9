//! How the controllers get a membership client for a cluster ([`MembershipFactory`]): the
//! EtcdCluster and EtcdBackup controllers are generic over it, so production
//! ([`super::GatewayFactory`]), the sandbox's simulation and tests each bring their own.

use super::api::Membership;
use super::error::MembershipError;
use crate::names::ClusterNames;
use crate::tls::ClientTls;

/// Gives the controller a membership client for a cluster. The production one talks to the
/// client Service through the JSON gateway; tests inject others. `tls` is the client
/// certificate of a TLS cluster (`None` when it has no TLS, or its Secret is not there yet).
pub trait MembershipFactory: Send + Sync + 'static {
    type Client: Membership;
    fn for_cluster(
        &self,
        names: &ClusterNames,
        tls: Option<&ClientTls>,
    ) -> Result<Self::Client, MembershipError>;
}
