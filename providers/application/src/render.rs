//! Desired children of an Application: a Deployment, a Service (port 80 → the container port)
//! and, when `ingress` is set, an Ingress (path type Prefix, TLS when asked). Pure.

use std::collections::BTreeMap;

use ferroplane_apis::application::{Application, HttpProbe};
use ferroplane_runtime::UID_TAG;
use ferroplane_runtime::children::{Child, MANAGED_BY, MANAGED_BY_LABEL};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, HTTPGetAction, PodSpec, PodTemplateSpec, Probe, Service,
    ServicePort, ServiceSpec,
};
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule,
    IngressServiceBackend, IngressSpec, IngressTLS, ServiceBackendPort,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{Resource, ResourceExt};

use crate::error::Error;

/// Port of the Service.
pub const SERVICE_PORT: i32 = 80;

/// The children of one Application.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub deployment: Deployment,
    pub service: Service,
    pub ingress: Option<Ingress>,
}

impl Rendered {
    /// In apply order.
    pub fn children(&self) -> Result<Vec<Child>, Error> {
        let mut out = vec![
            Child::from_typed(&self.deployment)?,
            Child::from_typed(&self.service)?,
        ];
        if let Some(ingress) = &self.ingress {
            out.push(Child::from_typed(ingress)?);
        }
        Ok(out)
    }
}

/// Labels that select the Application's pods.
pub fn selector(app: &Application) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), app.name_any()),
        ("app.kubernetes.io/instance".to_owned(), app.name_any()),
    ])
}

fn labels(app: &Application) -> BTreeMap<String, String> {
    let mut labels = selector(app);
    labels.insert(MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned());
    labels
}

fn meta(app: &Application, owned: bool) -> Result<ObjectMeta, Error> {
    let namespace = app.namespace().ok_or(Error::MissingMetadata("namespace"))?;
    let owner = app
        .controller_owner_ref(&())
        .ok_or(Error::MissingMetadata("uid"))?;
    let mut labels = labels(app);
    labels.insert(UID_TAG.to_owned(), owner.uid.clone());
    Ok(ObjectMeta {
        name: Some(app.name_any()),
        namespace: Some(namespace),
        labels: Some(labels),
        owner_references: owned.then(|| vec![owner]),
        ..ObjectMeta::default()
    })
}

/// Renders every child. `owned` puts an owner reference on them (deletion policy Delete).
pub fn render(app: &Application, owned: bool) -> Result<Rendered, Error> {
    let meta = meta(app, owned)?;
    let ingress = app.spec.ingress.as_ref().map(|spec| Ingress {
        metadata: meta.clone(),
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
                                    number: Some(SERVICE_PORT),
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
    });
    Ok(Rendered {
        deployment: deployment(app, meta.clone()),
        service: service(app, meta),
        ingress,
    })
}

fn deployment(app: &Application, metadata: ObjectMeta) -> Deployment {
    let probe = |p: &HttpProbe| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(p.path.clone()),
            port: IntOrString::Int(app.spec.port),
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: p.initial_delay_seconds,
        period_seconds: p.period_seconds,
        timeout_seconds: p.timeout_seconds,
        failure_threshold: p.failure_threshold,
        ..Probe::default()
    };
    let probes = app.spec.probes.as_ref();
    let env: Vec<EnvVar> = app
        .spec
        .env
        .iter()
        .map(|e| EnvVar {
            name: e.name.clone(),
            value: Some(e.value.clone()),
            ..EnvVar::default()
        })
        .collect();
    let container = Container {
        name: "app".to_owned(),
        image: Some(app.spec.image.clone()),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_owned()),
            container_port: app.spec.port,
            ..ContainerPort::default()
        }]),
        env: (!env.is_empty()).then_some(env),
        resources: app.spec.resources.clone(),
        liveness_probe: probes.and_then(|p| p.liveness.as_ref()).map(probe),
        readiness_probe: probes.and_then(|p| p.readiness.as_ref()).map(probe),
        ..Container::default()
    };
    Deployment {
        metadata,
        spec: Some(DeploymentSpec {
            replicas: Some(app.spec.replicas),
            selector: LabelSelector {
                match_labels: Some(selector(app)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(app)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}

fn service(app: &Application, metadata: ObjectMeta) -> Service {
    Service {
        metadata,
        spec: Some(ServiceSpec {
            selector: Some(selector(app)),
            ports: Some(vec![ServicePort {
                name: Some("http".to_owned()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::Int(app.spec.port)),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn app(spec: serde_json::Value) -> Application {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.ferroplane.io/v1alpha1",
            "kind": "Application",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1"},
            "spec": spec,
        }))
        .expect("valid Application")
    }

    #[test]
    fn deployment_runs_the_image_with_env_probes_and_resources() {
        let a = app(serde_json::json!({
            "image": "nginx:1.27", "replicas": 2, "port": 8080,
            "env": [{"name": "A", "value": "1"}],
            "resources": {"limits": {"memory": "64Mi"}},
            "probes": {"readiness": {"path": "/ready", "periodSeconds": 5}, "liveness": {"path": "/live"}}
        }));
        let r = render(&a, true).expect("renders");
        let spec = r.deployment.spec.expect("spec");
        assert_eq!(spec.replicas, Some(2));
        let c = &spec.template.spec.expect("pod").containers[0];
        assert_eq!(c.image.as_deref(), Some("nginx:1.27"));
        assert_eq!(c.ports.as_ref().expect("ports")[0].container_port, 8080);
        assert_eq!(c.env.as_ref().expect("env")[0].value.as_deref(), Some("1"));
        let readiness = c.readiness_probe.as_ref().expect("readiness");
        assert_eq!(
            readiness.http_get.as_ref().and_then(|h| h.path.as_deref()),
            Some("/ready")
        );
        assert_eq!(
            readiness.http_get.as_ref().map(|h| h.port.clone()),
            Some(IntOrString::Int(8080))
        );
        assert_eq!(readiness.period_seconds, Some(5));
        assert!(c.liveness_probe.is_some());
        assert!(c.resources.is_some());
        assert_eq!(
            spec.selector.match_labels.expect("labels")["app.kubernetes.io/instance"],
            "web"
        );
    }

    #[test]
    fn service_maps_80_to_the_container_port() {
        let r =
            render(&app(serde_json::json!({"image": "x", "port": 3000})), true).expect("renders");
        let port = &r.service.spec.expect("spec").ports.expect("ports")[0];
        assert_eq!(port.port, 80);
        assert_eq!(port.target_port, Some(IntOrString::Int(3000)));
    }

    #[test]
    fn ingress_only_when_asked_with_prefix_path_and_tls() {
        assert!(
            render(&app(serde_json::json!({"image": "x"})), true)
                .expect("renders")
                .ingress
                .is_none()
        );
        let a = app(
            serde_json::json!({"image": "x", "ingress": {"host": "shop.example.com", "path": "/api", "className": "nginx", "tls": {"secretName": "cert"}}}),
        );
        let ingress = render(&a, true).expect("renders").ingress.expect("ingress");
        let spec = ingress.spec.expect("spec");
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
            ("web", Some(80))
        );
        let tls = &spec.tls.expect("tls")[0];
        assert_eq!(tls.secret_name.as_deref(), Some("cert"));
        assert_eq!(
            tls.hosts.as_deref(),
            Some(&["shop.example.com".to_owned()][..])
        );
    }

    #[test]
    fn children_are_owned_and_labelled_unless_orphaned() {
        let a = app(serde_json::json!({"image": "x", "ingress": {"host": "h.example.com"}}));
        for child in render(&a, true)
            .expect("renders")
            .children()
            .expect("serializes")
        {
            let meta = &child.object["metadata"];
            assert_eq!(meta["ownerReferences"][0]["uid"], "u-1", "{}", child.key());
            assert_eq!(meta["labels"]["app.kubernetes.io/managed-by"], "ferroplane");
            assert_eq!(meta["labels"][UID_TAG], "u-1");
        }
        for child in render(&a, false)
            .expect("renders")
            .children()
            .expect("serializes")
        {
            assert!(child.object["metadata"].get("ownerReferences").is_none());
        }
    }
}
