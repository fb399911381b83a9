//! The Application controller on ferroplane-runtime. The "external resource" is the set of
//! children (Deployment, Service, Ingress): `observe` compares their renderings with the live
//! objects and reports status, `create`/`update` apply them with server-side apply (forced, so
//! hand edits are reverted) and delete an Ingress the spec no longer asks for, `delete` removes
//! them. With deletion policy Orphan the children carry no owner reference, so deleting the
//! Application leaves them running.

use ferroplane_apis::application::{Application, ApplicationStatus};
use ferroplane_runtime::children::{self, Child, Children, owned};
use ferroplane_runtime::{
    ConnectionDetails, Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, ReconcileError, UID_TAG, Update,
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::error::Error;
use crate::render::{self, Rendered};
use crate::status;

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
            children: Children::new(self.client.clone()),
        })
    }
}

pub struct ApplicationClient {
    kube: Client,
    children: Children,
}

/// The Ingress a spec without `ingress` no longer wants: ours (by UID label), still there.
fn stale_ingress(app: &Application) -> Result<Option<Child>, Error> {
    if app.spec.ingress.is_some() {
        return Ok(None);
    }
    let mut with_ingress = app.clone();
    with_ingress.spec.ingress = Some(serde_json::from_value(
        json!({"host": "placeholder.invalid"}),
    )?);
    Ok(render::render(&with_ingress, false)?
        .ingress
        .map(|i| Child::from_typed(&i))
        .transpose()?)
}

impl ApplicationClient {
    async fn live(&self, child: &Child) -> Result<Option<Value>, Error> {
        self.children
            .get(child)
            .await
            .map_err(|e| Error::kube(format!("reading {}", child.key()), e))
    }

    async fn apply(&self, app: &Application) -> Result<(), Error> {
        for child in render::render(app, owned(app))?.children()? {
            self.children
                .apply(&child)
                .await
                .map_err(|e| Error::kube(format!("applying {}", child.key()), e))?;
        }
        if let Some(stale) = stale_ingress(app)?
            && let Some(live) = self.live(&stale).await?
            && live["metadata"]["labels"][UID_TAG].as_str() == app.uid().as_deref()
        {
            self.children
                .delete(&stale)
                .await
                .map_err(|e| Error::kube("deleting the Ingress the spec no longer asks for", e))?;
        }
        Ok(())
    }
}

impl ExternalClient<Application> for ApplicationClient {
    async fn observe(
        &self,
        app: &Application,
        _ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let rendered: Rendered = render::render(app, owned(app))?;
        let uid = app.uid().unwrap_or_default();
        let mut existing = 0;
        let mut diffs = Vec::new();
        for child in rendered.children()? {
            match self.live(&child).await? {
                None => diffs.push(format!("{} is missing", child.key())),
                Some(live) => {
                    existing += 1;
                    diffs.extend(children::difference(&child, &live, &uid, owned(app)));
                }
            }
        }
        if let Some(stale) = stale_ingress(app)?
            && let Some(live) = self.live(&stale).await?
            && live["metadata"]["labels"][UID_TAG].as_str() == Some(uid.as_str())
        {
            existing += 1;
            diffs.push("the Ingress is no longer in the spec".to_owned());
        }
        if existing == 0 {
            return Ok(Observation::missing());
        }
        let deployments: Api<Deployment> =
            Api::namespaced(self.kube.clone(), &app.namespace().unwrap_or_default());
        let deployment = deployments
            .get_opt(&app.name_any())
            .await
            .map_err(|e| Error::kube("reading the Deployment", e))?;
        let report = status::report(app, deployment.as_ref());
        let mut obs = Observation::found(app.name_any())
            .with_readiness(report.readiness)
            .with_status(ApplicationStatus {
                available_replicas: report.available_replicas,
                url: Some(report.url.clone()),
                ..ApplicationStatus::default()
            })?
            .with_connection_details(ConnectionDetails::new().with("url", report.url));
        for condition in report.conditions {
            obs = obs.with_condition(condition);
        }
        if report.in_transition {
            obs = obs.in_transition();
        }
        if !diffs.is_empty() {
            obs = obs.with_diff(diffs.join("; "));
        }
        Ok(obs)
    }

    async fn create(
        &self,
        app: &Application,
        _key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        self.apply(app).await?;
        Ok(Creation::new(app.name_any()))
    }

    async fn update(
        &self,
        app: &Application,
        _ext: &ExternalRef,
    ) -> Result<Update, ReconcileError> {
        self.apply(app).await?;
        Ok(Update::done())
    }

    async fn delete(
        &self,
        app: &Application,
        _ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let mut with_ingress = app.clone();
        if with_ingress.spec.ingress.is_none() {
            with_ingress.spec.ingress = Some(
                serde_json::from_value(json!({"host": "placeholder.invalid"}))
                    .map_err(Error::from)?,
            );
        }
        let mut all_gone = true;
        for child in render::render(&with_ingress, true)?
            .children()?
            .iter()
            .rev()
        {
            all_gone &= self
                .children
                .delete(child)
                .await
                .map_err(|e| Error::kube(format!("deleting {}", child.key()), e))?;
        }
        Ok(if all_gone {
            Deletion::Gone
        } else {
            Deletion::InProgress
        })
    }
}
