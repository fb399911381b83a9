//! Desired children of an Application: a Deployment (`pod`: the container, its ports, env,
//! volumes and probes), a Service with the exposed ports and, when asked, an Ingress
//! (`network`) and a HorizontalPodAutoscaler (`autoscaler`). Pure.

mod autoscaler;
#[cfg(test)]
pub(crate) mod fixture;
mod labels;
mod network;
mod pod;
mod ports;

use ferroplane_apis::application::Application;
use ferroplane_runtime::UID_TAG;
use ferroplane_runtime::children::Child;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Resource, ResourceExt};

use self::labels::labels;
use crate::error::Error;

pub use ports::ports;

/// The children of one Application.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub deployment: Deployment,
    pub service: Service,
    pub ingress: Option<Ingress>,
    pub autoscaler: Option<HorizontalPodAutoscaler>,
}

impl Rendered {
    /// In apply order: the Deployment before what points at it.
    pub fn children(&self) -> Result<Vec<Child>, Error> {
        let mut out = vec![
            Child::from_typed(&self.deployment)?,
            Child::from_typed(&self.service)?,
        ];
        if let Some(ingress) = &self.ingress {
            out.push(Child::from_typed(ingress)?);
        }
        if let Some(autoscaler) = &self.autoscaler {
            out.push(Child::from_typed(autoscaler)?);
        }
        Ok(out)
    }
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
    Ok(Rendered {
        deployment: pod::deployment(app, meta.clone(), labels(app)),
        service: network::service(app, meta.clone()),
        ingress: network::ingress(app, meta.clone()),
        autoscaler: autoscaler::autoscaler(app, meta),
    })
}

/// The optional children `app`'s spec does not ask for (an Ingress, a
/// HorizontalPodAutoscaler), rendered as they would be: what a spec edit may have left behind.
pub fn unwanted(app: &Application) -> Result<Vec<Child>, Error> {
    let mut every = app.clone();
    if every.spec.ingress.is_none() {
        every.spec.ingress = Some(serde_json::from_value(
            serde_json::json!({"host": "placeholder.invalid"}),
        )?);
    }
    if every.spec.autoscaling.is_none() {
        every.spec.autoscaling = Some(serde_json::from_value(
            serde_json::json!({"maxReplicas": 1}),
        )?);
    }
    let wanted: Vec<String> = render(app, false)?
        .children()?
        .iter()
        .map(Child::key)
        .collect();
    Ok(render(&every, false)?
        .children()?
        .into_iter()
        .filter(|c| !wanted.contains(&c.key()))
        .collect())
}

/// Every child `app` can have, whatever its spec asks for: what deleting it removes.
pub fn every_child(app: &Application) -> Result<Vec<Child>, Error> {
    let mut all = render(app, true)?.children()?;
    all.extend(unwanted(app)?);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::fixture::app;
    use super::*;

    #[test]
    fn children_are_owned_and_labelled_unless_orphaned() {
        let a = app(
            serde_json::json!({"image": "x", "ingress": {"host": "h.example.com"},
            "autoscaling": {"maxReplicas": 3}}),
        );
        let children = render(&a, true)
            .expect("renders")
            .children()
            .expect("serializes");
        assert_eq!(
            children.iter().map(Child::key).collect::<Vec<_>>(),
            [
                "Deployment/web",
                "Service/web",
                "Ingress/web",
                "HorizontalPodAutoscaler/web"
            ]
        );
        for child in children {
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

    #[test]
    fn unwanted_children_are_the_optional_ones_the_spec_dropped() {
        let keys = |a: &Application| {
            unwanted(a)
                .expect("renders")
                .iter()
                .map(Child::key)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(&app(serde_json::json!({"image": "x"}))),
            ["Ingress/web", "HorizontalPodAutoscaler/web"]
        );
        assert_eq!(
            keys(&app(
                serde_json::json!({"image": "x", "autoscaling": {"maxReplicas": 2}})
            )),
            ["Ingress/web"]
        );
        assert_eq!(
            every_child(&app(serde_json::json!({"image": "x"})))
                .expect("renders")
                .len(),
            4
        );
    }
}
