//! The Application controller on ferroplane-runtime. The "external resource" is the set of
//! children (Deployment, Service, Ingress, HorizontalPodAutoscaler): `observe` compares their
//! renderings with the live objects (on the fields ferroplane renders only) and reports status,
//! Ready stays False while a Secret or ConfigMap the pods need is missing (`references`).
//! `create`/`update` apply them with server-side apply (forced, so hand edits of those fields
//! are reverted) and delete an Ingress or autoscaler the spec no longer asks for, `delete`
//! removes them. With deletion policy Orphan the children carry no owner reference, so deleting the
//! Application leaves them running.

use ferroplane_apis::application::{Application, ApplicationStatus};
use ferroplane_runtime::children::{self, Child, Children, labelled_for, owned};
use ferroplane_runtime::{
    ConnectionDetails, Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, ReconcileError, Update,
};
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::error::Error;
use crate::references::{self, Missing, Source};
use crate::render::{self, Rendered};
use crate::status;

/// Field manager of every server-side apply of an Application's children: one per kind, so
/// that the EtcdCluster controller never silently takes this kind's fields, nor this kind its.
pub const FIELD_MANAGER: &str = "ferroplane-application";

/// In-cluster kinds need no credentials: the connector hands out the Kubernetes client.
pub struct ApplicationConnector {
    client: Client,
}

impl ApplicationConnector {
    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

impl Connector<Application> for ApplicationConnector {
    type Client = ApplicationClient;

    async fn connect(&self, _mr: &Application) -> Result<ApplicationClient, ReconcileError> {
        Ok(ApplicationClient {
            kube: self.client.clone(),
            children: Children::with_field_manager(self.client.clone(), FIELD_MANAGER),
            handover: Children::with_field_manager(self.client.clone(), REPLICAS_HANDOVER_MANAGER),
        })
    }
}

pub struct ApplicationClient {
    kube: Client,
    children: Children,
    /// Applies only the Deployment's `replicas`, under [`REPLICAS_HANDOVER_MANAGER`].
    handover: Children,
}

/// The live children status is read from.
struct Live {
    deployment: Option<Deployment>,
    ingress: Option<Ingress>,
}

/// Field manager that keeps the Deployment's `replicas` while ownership passes from this
/// controller to the HorizontalPodAutoscaler (see [`ApplicationClient::hand_over_replicas`]).
pub const REPLICAS_HANDOVER_MANAGER: &str = "ferroplane-application-handover";

/// Whether `manager`'s apply owns the live object's `spec.replicas`.
fn applies_replicas(live: &Value, manager: &str) -> bool {
    live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|entry| {
            entry["manager"] == manager
                && entry["operation"] == "Apply"
                && entry["fieldsV1"]["f:spec"].get("f:replicas").is_some()
        })
}

impl ApplicationClient {
    /// Refuses when an object with the name of a child the spec asks for exists and is not this
    /// Application's (another object's, or made by hand): it is never adopted, changed or
    /// deleted.
    async fn refuse_foreign(&self, app: &Application) -> Result<(), ReconcileError> {
        let uid = app.uid().unwrap_or_default();
        let children = render::render(app, owned(app))?.children()?;
        self.children.refuse_foreign(&children, &uid).await
    }

    /// When `autoscaling` is turned on, the next apply leaves out `replicas`; server-side
    /// apply would then remove the field (the API server defaults it to 1) and scale the
    /// application down until the autoscaler's next sync. Applying the live value first under
    /// a second manager keeps it, as Kubernetes' server-side apply documentation describes for
    /// handing `replicas` to an autoscaler; the autoscaler's own writes take it over from there.
    async fn hand_over_replicas(&self, app: &Application, deployment: &Child) -> Result<(), Error> {
        if app.spec.autoscaling.is_none() {
            return Ok(());
        }
        let Some(live) = self.children.read(deployment).await? else {
            return Ok(());
        };
        if !applies_replicas(&live, FIELD_MANAGER) {
            return Ok(());
        }
        let replicas = live["spec"]["replicas"].clone();
        let mut keep = deployment.clone();
        keep.object = json!({
            "apiVersion": deployment.object["apiVersion"],
            "kind": deployment.object["kind"],
            "metadata": {"name": deployment.name(), "namespace": deployment.namespace()},
            "spec": {"replicas": replicas},
        });
        self.handover
            .apply(&keep)
            .await
            .map_err(|e| Error::kube("handing the Deployment's replicas to the autoscaler", e))
    }

    async fn apply(&self, app: &Application) -> Result<(), Error> {
        let children = render::render(app, owned(app))?.children()?;
        if let Some(deployment) = children.first() {
            self.hand_over_replicas(app, deployment).await?;
        }
        for child in children {
            self.children
                .apply(&child)
                .await
                .map_err(|e| Error::kube(format!("applying {}", child.key()), e))?;
        }
        let uid = app.uid().unwrap_or_default();
        for stale in render::unwanted(app)? {
            if let Some(live) = self.children.read(&stale).await?
                && labelled_for(&live, &uid)
            {
                self.children.delete(&stale).await.map_err(|e| {
                    Error::kube(
                        format!("deleting {} the spec no longer asks for", stale.key()),
                        e,
                    )
                })?;
            }
        }
        Ok(())
    }

    /// The live Deployment and Ingress, typed.
    async fn live_status_sources(&self, app: &Application) -> Result<Live, Error> {
        let namespace = app.namespace().unwrap_or_default();
        let deployment = Api::<Deployment>::namespaced(self.kube.clone(), &namespace)
            .get_opt(&app.name_any())
            .await
            .map_err(|e| Error::kube("reading the Deployment", e))?;
        let ingress = match app.spec.ingress {
            Some(_) => Api::<Ingress>::namespaced(self.kube.clone(), &namespace)
                .get_opt(&app.name_any())
                .await
                .map_err(|e| Error::kube("reading the Ingress", e))?,
            None => None,
        };
        Ok(Live {
            deployment,
            ingress,
        })
    }
}

impl ApplicationClient {
    /// The Secrets and ConfigMaps (or their keys) the pods need and the namespace lacks. Of a
    /// Secret only the key names are kept; its values are dropped as soon as it is read.
    async fn missing_references(&self, app: &Application) -> Result<Vec<Missing>, Error> {
        let needed = references::needed(app);
        let namespace = app.namespace().unwrap_or_default();
        let mut keys: BTreeMap<(Source, String), BTreeSet<String>> = BTreeMap::new();
        for (source, name) in references::objects(&needed) {
            let reading = || format!("reading {source} {name} that the pods need");
            let found: Option<BTreeSet<String>> = match source {
                Source::Secret => Api::<Secret>::namespaced(self.kube.clone(), &namespace)
                    .get_opt(&name)
                    .await
                    .map_err(|e| Error::kube(reading(), e))?
                    .map(|s| {
                        let data = s.data.unwrap_or_default().into_keys();
                        data.chain(s.string_data.unwrap_or_default().into_keys())
                            .collect()
                    }),
                Source::ConfigMap => Api::<ConfigMap>::namespaced(self.kube.clone(), &namespace)
                    .get_opt(&name)
                    .await
                    .map_err(|e| Error::kube(reading(), e))?
                    .map(|c| {
                        let data = c.data.unwrap_or_default().into_keys();
                        data.chain(c.binary_data.unwrap_or_default().into_keys())
                            .collect()
                    }),
            };
            if let Some(found) = found {
                keys.insert((source, name), found);
            }
        }
        Ok(references::missing(&needed, |source, name| {
            keys.get(&(source, name.to_owned()))
        }))
    }
}

impl ExternalClient<Application> for ApplicationClient {
    async fn observe(
        &self,
        app: &Application,
        _ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        if app.metadata.deletion_timestamp.is_none() {
            self.refuse_foreign(app).await?;
        }
        let rendered: Rendered = render::render(app, owned(app))?;
        let uid = app.uid().unwrap_or_default();
        let mut existing = 0;
        let mut diffs = Vec::new();
        for child in rendered.children()? {
            match self.children.read(&child).await? {
                None => diffs.push(format!("{} is missing", child.key())),
                Some(live) => {
                    existing += 1;
                    diffs.extend(children::difference(&child, &live, &uid, owned(app)));
                }
            }
        }
        for stale in render::unwanted(app)? {
            if let Some(live) = self.children.read(&stale).await?
                && labelled_for(&live, &uid)
            {
                existing += 1;
                diffs.push(format!("{} is no longer in the spec", stale.key()));
            }
        }
        if existing == 0 {
            return Ok(Observation::missing());
        }
        let live = self.live_status_sources(app).await?;
        let diff = (!diffs.is_empty()).then(|| diffs.join("; "));
        let report = status::report(
            app,
            live.deployment.as_ref(),
            live.ingress.as_ref(),
            diff.as_deref(),
        );
        let missing = self.missing_references(app).await?;
        let report = status::with_missing_references(app, report, &missing);
        let mut obs = Observation::found(app.name_any())
            .with_readiness(report.readiness)
            .with_status(ApplicationStatus {
                replicas: report.replicas,
                available_replicas: report.available_replicas,
                updated_replicas: report.updated_replicas,
                revision: report.revision,
                url: Some(report.url.clone()),
                ingress_address: report.ingress_address,
                ..ApplicationStatus::default()
            })?
            .with_connection_details(ConnectionDetails::new().with("url", report.url));
        for condition in report.conditions {
            obs = obs.with_condition(condition);
        }
        if report.in_transition {
            obs = obs.in_transition();
        }
        if let Some(diff) = diff {
            obs = obs.with_diff(diff);
        }
        Ok(obs)
    }

    async fn create(
        &self,
        app: &Application,
        _key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        self.refuse_foreign(app).await?;
        self.apply(app).await?;
        Ok(Creation::new(app.name_any()))
    }

    async fn update(
        &self,
        app: &Application,
        _ext: &ExternalRef,
    ) -> Result<Update, ReconcileError> {
        self.refuse_foreign(app).await?;
        self.apply(app).await?;
        Ok(Update::done())
    }

    async fn delete(
        &self,
        app: &Application,
        _ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        // Only this Application's children go with it; an object that merely has a child's
        // name (a Deployment made by hand, another kind's Service) is left alone.
        let uid = app.uid().unwrap_or_default();
        Ok(self
            .children
            .delete_owned(&render::every_child(app)?, &uid)
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_apply_that_owns_replicas_needs_a_handover() {
        let live = |manager: &str, operation: &str, fields: Value| {
            json!({"metadata": {"managedFields": [
                {"manager": manager, "operation": operation, "fieldsV1": fields}]}})
        };
        let replicas = json!({"f:spec": {"f:replicas": {}, "f:template": {}}});
        assert!(applies_replicas(
            &live(FIELD_MANAGER, "Apply", replicas.clone()),
            FIELD_MANAGER
        ));
        assert!(!applies_replicas(
            &live(
                FIELD_MANAGER,
                "Apply",
                json!({"f:spec": {"f:template": {}}})
            ),
            FIELD_MANAGER
        ));
        assert!(!applies_replicas(
            &live("kube-controller-manager", "Update", replicas.clone()),
            FIELD_MANAGER
        ));
        assert!(!applies_replicas(&json!({"metadata": {}}), FIELD_MANAGER));
    }
}
