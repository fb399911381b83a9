//! Status of an Application from its live children. Pure.
//!
//! `Ready` is True only when (1) the children match the spec, (2) the Deployment's rollout of
//! its current generation is complete, judged as `kubectl rollout status` judges it (the
//! controller observed the generation; every replica the Deployment asks for runs the new
//! template; no old replica is left; every updated replica is available), and (3) when the spec
//! has an Ingress, the ingress controller has written an address on it. A rollout past its
//! progress deadline (the Deployment's `Progressing` condition with reason
//! `ProgressDeadlineExceeded`) is reported with that reason. A Secret or ConfigMap the pods need
//! and the cluster lacks (see [`crate::references`]) keeps `Ready` False whatever the rollout
//! says ([`with_missing_references`]): the sandbox runs no pods, and a real cluster's would
//! not start. The URL comes from the Ingress (host, TLS, path) or is the Service's cluster DNS
//! name; the revision is the Deployment's.

use ferroplane_apis::application::Application;
use ferroplane_apis::common::{ConditionStatus, names};
use ferroplane_runtime::Readiness;
use ferroplane_runtime::conditions::Desired;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::networking::v1::Ingress;
use kube::ResourceExt;

use crate::reasons::{
    PROGRESS_DEADLINE_EXCEEDED, REFERENCED_CONFIG_MAP_MISSING, REFERENCED_SECRET_MISSING,
    ROLLED_OUT, ROLLING_OUT, WAITING_FOR_INGRESS_ADDRESS,
};
use crate::references::{self, Missing, Source};
use crate::render::ports;

/// The condition type of a rollout's progress: the Deployment's, read, and the Application's,
/// written (its reasons are in [`crate::reasons`]).
const PROGRESSING: &str = "Progressing";

/// The Deployment annotation that numbers its revisions.
const REVISION: &str = "deployment.kubernetes.io/revision";

#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub replicas: Option<i32>,
    pub available_replicas: i32,
    pub updated_replicas: Option<i32>,
    pub revision: Option<String>,
    pub url: String,
    pub ingress_address: Option<String>,
    pub readiness: Readiness,
    pub conditions: Vec<Desired>,
    pub in_transition: bool,
}

/// Where a rollout stands, as `kubectl rollout status` words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rollout {
    Complete,
    Waiting(String),
    DeadlineExceeded(String),
}

/// `kubectl rollout status` for a Deployment.
pub fn rollout(d: &Deployment) -> Rollout {
    let Some(status) = d.status.as_ref() else {
        return Rollout::Waiting("waiting for the Deployment's first status".into());
    };
    let generation = d.metadata.generation.unwrap_or(0);
    if status.observed_generation.unwrap_or(0) < generation {
        return Rollout::Waiting("waiting for the Deployment spec update to be observed".into());
    }
    let progressing = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == PROGRESSING);
    if let Some(c) = progressing
        && c.reason.as_deref() == Some(PROGRESS_DEADLINE_EXCEEDED)
    {
        return Rollout::DeadlineExceeded(c.message.clone().unwrap_or_default());
    }
    let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let updated = status.updated_replicas.unwrap_or(0);
    let total = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    if updated < wanted {
        Rollout::Waiting(format!(
            "{updated} out of {wanted} new replicas have been updated"
        ))
    } else if total > updated {
        Rollout::Waiting(format!(
            "{} old replicas are pending termination",
            total - updated
        ))
    } else if available < updated {
        Rollout::Waiting(format!(
            "{available} of {updated} updated replicas are available"
        ))
    } else {
        Rollout::Complete
    }
}

/// The first address the ingress controller wrote on the Ingress.
fn ingress_address(ingress: &Ingress) -> Option<String> {
    ingress
        .status
        .as_ref()?
        .load_balancer
        .as_ref()?
        .ingress
        .iter()
        .flatten()
        .find_map(|i| i.ip.clone().or_else(|| i.hostname.clone()))
        .filter(|a| !a.is_empty())
}

/// Where the application is reachable: from the Ingress's rule when the spec has one, else the
/// Service's cluster DNS name (with the port when it is not 80).
pub fn url(app: &Application, ingress: Option<&Ingress>) -> String {
    let from_ingress = ingress.and_then(|i| {
        let spec = i.spec.as_ref()?;
        let rule = spec.rules.as_ref()?.first()?;
        let host = rule.host.clone()?;
        let path = rule
            .http
            .as_ref()
            .and_then(|h| h.paths.first())
            .and_then(|p| p.path.clone())
            .unwrap_or_else(|| "/".to_owned());
        let tls = spec
            .tls
            .iter()
            .flatten()
            .any(|t| t.hosts.iter().flatten().any(|h| *h == host));
        Some(format!(
            "{}://{host}{path}",
            if tls { "https" } else { "http" }
        ))
    });
    if app.spec.ingress.is_some()
        && let Some(url) = from_ingress
    {
        return url;
    }
    let host = format!(
        "{}.{}.svc.cluster.local",
        app.name_any(),
        app.namespace().unwrap_or_default()
    );
    match ports(app).into_iter().find(|p| p.expose) {
        Some(p) if p.service_port != 80 => format!("http://{host}:{}", p.service_port),
        _ => format!("http://{host}"),
    }
}

/// Status from the live Deployment and Ingress; `diff` says how the children differ from the
/// spec (they are being applied).
pub fn report(
    app: &Application,
    deployment: Option<&Deployment>,
    ingress: Option<&Ingress>,
    diff: Option<&str>,
) -> Report {
    let status = deployment.and_then(|d| d.status.as_ref());
    let replicas = deployment.and_then(|d| d.spec.as_ref()?.replicas);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    let updated = status.and_then(|s| s.updated_replicas);
    let revision = deployment.and_then(|d| d.annotations().get(REVISION).cloned());
    let address = ingress.and_then(ingress_address);
    let rollout = deployment.map(rollout);

    let mut conditions = Vec::new();
    conditions.push(match &rollout {
        Some(Rollout::DeadlineExceeded(message)) => Desired::new(
            PROGRESSING,
            ConditionStatus::False,
            PROGRESS_DEADLINE_EXCEEDED,
            message.clone(),
        ),
        Some(Rollout::Complete) => Desired::new(
            PROGRESSING,
            ConditionStatus::False,
            ROLLED_OUT,
            format!(
                "revision {} rolled out: {available} replicas available",
                revision.as_deref().unwrap_or("?")
            ),
        ),
        Some(Rollout::Waiting(message)) => Desired::new(
            PROGRESSING,
            ConditionStatus::True,
            ROLLING_OUT,
            message.clone(),
        ),
        None => Desired::new(
            PROGRESSING,
            ConditionStatus::True,
            ROLLING_OUT,
            "the Deployment is being created".to_owned(),
        ),
    });
    let (readiness, in_transition) = match (&rollout, diff) {
        (None, _) => (Readiness::Creating, true),
        (Some(Rollout::DeadlineExceeded(message)), _) => {
            // Refines the framework's Ready=False/Unavailable: later conditions of a type win.
            conditions.push(Desired::new(
                names::READY,
                ConditionStatus::False,
                PROGRESS_DEADLINE_EXCEEDED,
                format!(
                    "the rollout stopped making progress: {message}; check the pods' events and \
                     the image (kubectl describe deployment {})",
                    app.name_any()
                ),
            ));
            (
                Readiness::Unavailable(format!(
                    "rollout exceeded its progress deadline: {message}"
                )),
                false,
            )
        }
        (Some(_), Some(diff)) => (
            Readiness::Unavailable(format!("applying the spec to the children: {diff}")),
            true,
        ),
        (Some(Rollout::Waiting(message)), None) => (
            Readiness::Unavailable(format!("rollout in progress: {message}")),
            true,
        ),
        (Some(Rollout::Complete), None) => match (&app.spec.ingress, &address) {
            (Some(spec), None) => {
                let class = spec
                    .class_name
                    .as_deref()
                    .map(|c| format!("IngressClass {c}"))
                    .unwrap_or_else(|| "the cluster's default IngressClass".to_owned());
                let message = format!(
                    "the rollout is complete, but Ingress/{} has no address yet: Ready waits \
                     until an ingress controller for {class} writes status.loadBalancer on it. \
                     Without an ingress controller running in the cluster it never does",
                    app.name_any()
                );
                conditions.push(Desired::new(
                    names::READY,
                    ConditionStatus::False,
                    WAITING_FOR_INGRESS_ADDRESS,
                    message.clone(),
                ));
                // The Ingress is watched: its address triggers the next reconcile.
                (Readiness::Unavailable(message), false)
            }
            _ => (Readiness::Available, false),
        },
    };
    Report {
        replicas,
        available_replicas: available,
        updated_replicas: updated,
        revision,
        url: url(app, ingress),
        ingress_address: address,
        readiness,
        conditions,
        in_transition,
    }
}

/// `report` with `Ready=False` when the pods need Secrets or ConfigMaps that are `missing`: the
/// reason names the kind (a Secret first), the message each object and key. Nothing else of
/// the report changes; the Secrets and ConfigMaps are watched, so no sooner requeue is needed.
pub fn with_missing_references(
    app: &Application,
    mut report: Report,
    missing: &[Missing],
) -> Report {
    let Some(source) = references::first_source(missing) else {
        return report;
    };
    let reason = match source {
        Source::Secret => REFERENCED_SECRET_MISSING,
        Source::ConfigMap => REFERENCED_CONFIG_MAP_MISSING,
    };
    let message = references::message(app, missing);
    // Later conditions of a type win over the rollout's and the framework's.
    report.conditions.push(Desired::new(
        names::READY,
        ConditionStatus::False,
        reason,
        message.clone(),
    ));
    report.readiness = Readiness::Unavailable(message);
    report
}

#[cfg(test)]
mod tests;
