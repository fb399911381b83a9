//! The Application controller on ferroplane-runtime. The "external resource" is the set of
//! children (Deployment, Service, Ingress): `observe` compares their renderings with the live
//! objects and reports status, `create`/`update` apply them with server-side apply (forced, so
//! hand edits are reverted) and delete an Ingress the spec no longer asks for, `delete` removes
//! them. With deletion policy Orphan the children carry no owner reference, so deleting the
//! Application leaves them running.

use ferroplane_apis::application::{Application, ApplicationStatus};
use ferroplane_runtime::children::{self, Child, Children, Holder, holder, owned};
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

/// Field manager of every server-side apply of an Application's children: one per kind, so
/// that the EtcdCluster controller never silently takes this kind's fields, nor this kind its.
pub const FIELD_MANAGER: &str = "ferroplane-application";

/// Reason of the error naming a child that exists and is not this Application's.
pub const CHILD_NOT_OURS: &str = "ChildNotOurs";

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
        })
    }
}

pub struct ApplicationClient {
    kube: Client,
    children: Children,
}

/// `app` with an Ingress (a placeholder when its spec has none): every child it can have.
fn with_any_ingress(app: &Application) -> Result<Application, Error> {
    let mut with_ingress = app.clone();
    if with_ingress.spec.ingress.is_none() {
        with_ingress.spec.ingress = Some(serde_json::from_value(
            json!({"host": "placeholder.invalid"}),
        )?);
    }
    Ok(with_ingress)
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

    /// Refuses when an object with the name of a child the spec asks for exists and is not this
    /// Application's (another object's, or made by hand): it is never adopted, changed or
    /// deleted.
    async fn refuse_foreign(&self, app: &Application) -> Result<(), ReconcileError> {
        let uid = app.uid().unwrap_or_default();
        let children = render::render(app, owned(app))?.children()?;
        match self
            .children
            .foreign(&children, &uid)
            .await
            .map_err(|e| Error::kube("checking who holds the children", e))?
        {
            Some(message) => Err(ReconcileError::terminal(CHILD_NOT_OURS, message)),
            None => Ok(()),
        }
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
        if app.metadata.deletion_timestamp.is_none() {
            self.refuse_foreign(app).await?;
        }
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
        let uid = app.uid().unwrap_or_default();
        let mut all_gone = true;
        for child in render::render(&with_any_ingress(app)?, true)?
            .children()?
            .iter()
            .rev()
        {
            // Only this Application's children go with it; an object that merely has a child's
            // name (a Deployment made by hand, another kind's Service) is left alone.
            let Some(live) = self.live(child).await? else {
                continue;
            };
            if holder(&live, &uid) != Holder::Us {
                continue;
            }
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
