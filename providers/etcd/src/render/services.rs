//! The headless peer Service (stable DNS names for members, published before they are ready so
//! that a new cluster can find its peers), the client Service, and the headless metrics Service
//! a Prometheus ServiceMonitor selects (`app.kubernetes.io/component: metrics`, port `metrics`;
//! each Service has its own component so that a selector of the instance label alone does not
//! scrape members twice).

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::owner::Owner;
use kube::api::ObjectMeta;

use crate::names::{CLIENT_PORT, COMPONENT_LABEL, ClusterNames, METRICS_PORT, PEER_PORT};

fn meta(owner: &Owner, name: String, names: &ClusterNames, component: &str) -> ObjectMeta {
    let mut meta = owner.meta(name, names);
    meta.labels
        .get_or_insert_with(Default::default)
        .insert(COMPONENT_LABEL.to_owned(), component.to_owned());
    meta
}

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
        metadata: meta(owner, names.peer_service(), names, "peer"),
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
        metadata: meta(owner, names.client_service(), names, "client"),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(names.selector()),
            ports: Some(vec![port("client", CLIENT_PORT)]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

pub(super) fn metrics(names: &ClusterNames, owner: &Owner) -> Service {
    Service {
        metadata: meta(owner, names.metrics_service(), names, "metrics"),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            // A member that is not ready (no leader, NOSPACE) is the one whose metrics matter.
            publish_not_ready_addresses: Some(true),
            selector: Some(names.selector()),
            ports: Some(vec![port("metrics", METRICS_PORT)]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}
