//! `refused`: a manifest run through the API server's admission as a server-side dry run
//! (`kubectl apply --server-side --dry-run=server`): the CRD's schema and CEL rules (immutable
//! fields, `set exactly one peer`, …) and any admission webhook see the object as it would be
//! applied over the live one, and nothing is stored.

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt as _};
use serde_json::Value;

/// The field manager of the dry run (nothing is stored under it).
const FIELD_MANAGER: &str = "ferroplane-plan";

/// What admission says about a manifest.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// The API server's message (HTTP 422 Invalid, or 400 BadRequest).
    Refused(String),
}

/// Dry-runs `doc` (the manifest of `mr`) as a server-side apply; an answer other than
/// admitted or refused (unreachable, forbidden) is an error.
pub async fn dry_run<K>(kube: &kube::Client, mr: &K, doc: &Value) -> anyhow::Result<Admission>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let namespace = mr.namespace().unwrap_or_default();
    let api: Api<K> = Api::namespaced(kube.clone(), &namespace);
    let mut doc = doc.clone();
    doc["metadata"]["namespace"] = Value::from(namespace.as_str());
    let params = PatchParams::apply(FIELD_MANAGER).force().dry_run();
    match api
        .patch(&mr.name_any(), &params, &Patch::Apply(&doc))
        .await
    {
        Ok(_) => Ok(Admission::Admitted),
        Err(kube::Error::Api(status)) if status.code == 422 || status.code == 400 => {
            Ok(Admission::Refused(status.message.clone()))
        }
        Err(e) => Err(anyhow::Error::new(e).context(format!(
            "the server-side dry run of {} {namespace}/{} failed",
            K::kind(&()),
            mr.name_any()
        ))),
    }
}
