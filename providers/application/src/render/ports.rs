//! The container's ports as every child sees them: the single `port` shorthand (`http`,
//! Service port 80) or the `ports` list. Pure.

use ferroplane_apis::application::{Application, Protocol};

/// Port the container listens on when the spec names none.
pub const DEFAULT_PORT: i32 = 8080;
/// Service port of the single `port` shorthand.
pub const SHORTHAND_SERVICE_PORT: i32 = 80;
/// Name of the single `port` shorthand.
pub const SHORTHAND_NAME: &str = "http";

/// One port of the container, with its Service port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppPortView {
    pub name: String,
    pub container_port: i32,
    pub service_port: i32,
    pub protocol: Protocol,
    pub expose: bool,
}

/// The container's ports, in spec order.
pub fn ports(app: &Application) -> Vec<AppPortView> {
    if app.spec.ports.is_empty() {
        return vec![AppPortView {
            name: SHORTHAND_NAME.to_owned(),
            container_port: app.spec.port.unwrap_or(DEFAULT_PORT),
            service_port: SHORTHAND_SERVICE_PORT,
            protocol: Protocol::Tcp,
            expose: true,
        }];
    }
    app.spec
        .ports
        .iter()
        .map(|p| AppPortView {
            name: p.name.clone(),
            container_port: p.port,
            service_port: p.service_port.unwrap_or(p.port),
            protocol: p.protocol,
            expose: p.expose,
        })
        .collect()
}

/// The port the Ingress routes to: the one `ingress.port` names, else the first exposed TCP
/// port. `None` when there is none (the CRD refuses such a spec).
pub fn ingress_port(app: &Application) -> Option<AppPortView> {
    let wanted = app.spec.ingress.as_ref().and_then(|i| i.port.as_deref());
    ports(app).into_iter().find(|p| {
        p.expose && p.protocol == Protocol::Tcp && wanted.is_none_or(|name| name == p.name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::app;

    #[test]
    fn the_shorthand_is_one_http_port_served_as_80() {
        let p = ports(&app(serde_json::json!({"image": "x"})));
        assert_eq!(
            p,
            [AppPortView {
                name: "http".into(),
                container_port: 8080,
                service_port: 80,
                protocol: Protocol::Tcp,
                expose: true
            }]
        );
        assert_eq!(
            ports(&app(serde_json::json!({"image": "x", "port": 3000})))[0].container_port,
            3000
        );
    }

    #[test]
    fn listed_ports_keep_their_numbers_and_the_ingress_takes_the_named_or_first_tcp_one() {
        let a = app(serde_json::json!({"image": "x", "ports": [
            {"name": "dns", "port": 53, "protocol": "UDP"},
            {"name": "web", "port": 8080, "servicePort": 80},
            {"name": "admin", "port": 9000},
            {"name": "debug", "port": 6060, "expose": false}]}));
        let p = ports(&a);
        assert_eq!(
            p.iter()
                .map(|p| (p.name.as_str(), p.service_port, p.expose))
                .collect::<Vec<_>>(),
            [
                ("dns", 53, true),
                ("web", 80, true),
                ("admin", 9000, true),
                ("debug", 6060, false)
            ]
        );
        let mut with_ingress = a.clone();
        with_ingress.spec.ingress =
            Some(serde_json::from_value(serde_json::json!({"host": "h"})).expect("ingress"));
        assert_eq!(
            ingress_port(&with_ingress).map(|p| p.name),
            Some("web".into())
        );
        with_ingress.spec.ingress = Some(
            serde_json::from_value(serde_json::json!({"host": "h", "port": "admin"}))
                .expect("ingress"),
        );
        assert_eq!(
            ingress_port(&with_ingress).map(|p| p.service_port),
            Some(9000)
        );
    }
}
