//! The headless peer Service (stable DNS names for members, published before they are ready so
//! that a new cluster can find its peers) and the client Service.

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::owner::Owner;
use crate::names::{CLIENT_PORT, ClusterNames, PEER_PORT};

fn port(name: &str, port: i32) -> ServicePort {
    ServicePort {
        name: Some(name.to_owned()),
        port,
        target_port: Some(IntOrString::Int(port)),
        protocol: Some("TCP".to_owned()),
        ..ServicePort::default()
    }
}

pub(super) fn peer(names: &ClusterNames, owner: &Owner) -> Service {
    Service {
        metadata: owner.meta(names.peer_service(), names),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            // Members must resolve each other before any of them is ready: readiness needs a
            // leader, and a leader needs peers.
            publish_not_ready_addresses: Some(true),
            selector: Some(names.selector()),
            ports: Some(vec![port("peer", PEER_PORT), port("client", CLIENT_PORT)]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

pub(super) fn client(names: &ClusterNames, owner: &Owner) -> Service {
    Service {
        metadata: owner.meta(names.client_service(), names),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(names.selector()),
            ports: Some(vec![port("client", CLIENT_PORT)]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}
