//! The Service (the exposed ports, of the spec's type) and the Ingress (one rule: host, path
//! prefix, the Service port it routes to, TLS when asked). Pure.

use ferroplane_apis::application::Application;
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule,
    IngressServiceBackend, IngressSpec, IngressTLS, ServiceBackendPort,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;

use super::labels::selector;
use super::ports::{ingress_port, ports};

pub fn service(app: &Application, metadata: ObjectMeta) -> Service {
    let service_ports = ports(app)
        .into_iter()
        .filter(|p| p.expose)
        .map(|p| ServicePort {
            name: Some(p.name),
            port: p.service_port,
            // By number: a named target port would resolve per pod, a number is what the
            // Deployment renders.
            target_port: Some(IntOrString::Int(p.container_port)),
            protocol: Some(p.protocol.as_str().to_owned()),
            ..ServicePort::default()
        })
        .collect();
    Service {
        metadata,
        spec: Some(ServiceSpec {
            type_: Some(app.spec.service_type.as_str().to_owned()),
            selector: Some(selector(app)),
            ports: Some(service_ports),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

pub fn ingress(app: &Application, metadata: ObjectMeta) -> Option<Ingress> {
    let spec = app.spec.ingress.as_ref()?;
    let port = ingress_port(app)?;
    Some(Ingress {
        metadata,
        spec: Some(IngressSpec {
            ingress_class_name: spec.class_name.clone(),
            rules: Some(vec![IngressRule {
                host: Some(spec.host.clone()),
                http: Some(HTTPIngressRuleValue {
                    paths: vec![HTTPIngressPath {
                        path: Some(spec.path.clone()),
                        path_type: "Prefix".to_owned(),
                        backend: IngressBackend {
                            service: Some(IngressServiceBackend {
                                name: app.name_any(),
                                port: Some(ServiceBackendPort {
                                    number: Some(port.service_port),
                                    ..ServiceBackendPort::default()
                                }),
                            }),
                            ..IngressBackend::default()
                        },
                    }],
                }),
            }]),
            tls: spec.tls.as_ref().map(|tls| {
                vec![IngressTLS {
                    hosts: Some(vec![spec.host.clone()]),
                    secret_name: Some(tls.secret_name.clone()),
                }]
            }),
            ..IngressSpec::default()
        }),
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::app;

    #[test]
    fn the_shorthand_port_is_served_as_80_on_a_cluster_ip() {
        let s = service(
            &app(serde_json::json!({"image": "x", "port": 3000})),
            ObjectMeta::default(),
        );
        let spec = s.spec.expect("spec");
        assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
        let port = &spec.ports.expect("ports")[0];
        assert_eq!(
            (port.name.as_deref(), port.port, port.target_port.clone()),
            (Some("http"), 80, Some(IntOrString::Int(3000)))
        );
    }

    #[test]
    fn only_exposed_ports_with_their_protocol_and_the_service_type() {
        let a = app(
            serde_json::json!({"image": "x", "serviceType": "NodePort", "ports": [
            {"name": "web", "port": 8080, "servicePort": 80},
            {"name": "dns", "port": 5353, "protocol": "UDP"},
            {"name": "debug", "port": 6060, "expose": false}]}),
        );
        let spec = service(&a, ObjectMeta::default()).spec.expect("spec");
        assert_eq!(spec.type_.as_deref(), Some("NodePort"));
        let ports: Vec<_> = spec
            .ports
            .expect("ports")
            .into_iter()
            .map(|p| {
                (
                    p.name.unwrap_or_default(),
                    p.port,
                    p.protocol.unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            ports,
            [
                ("web".to_owned(), 80, "TCP".to_owned()),
                ("dns".to_owned(), 5353, "UDP".to_owned())
            ]
        );
    }

    #[test]
    fn ingress_only_when_asked_with_prefix_path_tls_and_the_chosen_port() {
        assert!(
            ingress(
                &app(serde_json::json!({"image": "x"})),
                ObjectMeta::default()
            )
            .is_none()
        );
        let a = app(serde_json::json!({"image": "x",
            "ports": [{"name": "web", "port": 8080}, {"name": "admin", "port": 9000}],
            "ingress": {"host": "shop.example.com", "path": "/api", "className": "nginx",
                "port": "admin", "tls": {"secretName": "cert"}}}));
        let spec = ingress(&a, ObjectMeta::default())
            .expect("ingress")
            .spec
            .expect("spec");
        assert_eq!(spec.ingress_class_name.as_deref(), Some("nginx"));
        let rule = &spec.rules.expect("rules")[0];
        assert_eq!(rule.host.as_deref(), Some("shop.example.com"));
        let path = &rule.http.as_ref().expect("http").paths[0];
        assert_eq!(
            (path.path.as_deref(), path.path_type.as_str()),
            (Some("/api"), "Prefix")
        );
        let backend = path.backend.service.as_ref().expect("service backend");
        assert_eq!(
            (
                backend.name.as_str(),
                backend.port.as_ref().and_then(|p| p.number)
            ),
            ("web", Some(9000))
        );
        let tls = &spec.tls.expect("tls")[0];
        assert_eq!(tls.secret_name.as_deref(), Some("cert"));
        assert_eq!(
            tls.hosts.as_deref(),
            Some(&["shop.example.com".to_owned()][..])
        );
    }
}
