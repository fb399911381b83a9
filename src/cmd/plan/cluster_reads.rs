//! What the controller reads from the cluster before it calls the cloud, read the same way and
//! never written: the references (`runtime::references::resolve`, which fills the literal
//! fields of a copy of the spec) and the login password's Secret (only whether it and its key
//! exist; the value is never read into the plan).

use ferroplane_apis::alibabacloud::{ECSInstance, ECSInstanceParameters};
use ferroplane_runtime::references;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt as _};

/// Why an object waits, as its condition would say it.
pub struct Waiting {
    pub reason: String,
    pub message: String,
}

/// The reasons this module reports (the controller's, for the same cases).
const PASSWORD_SECRET_NOT_FOUND: &str = "PasswordSecretNotFound";
const PASSWORD_KEY_MISSING: &str = "PasswordKeyMissing";
const KUBERNETES_API_ERROR: &str = "KubernetesApiError";

/// The spec with every reference resolved, as the reconcile would write it before observing.
pub async fn resolved_spec(
    client: &kube::Client,
    instance: &ECSInstance,
) -> Result<ECSInstanceParameters, Waiting> {
    let Some(patch) = references::resolve(client, instance)
        .await
        .map_err(|e| Waiting {
            reason: e.reason().to_owned(),
            message: e.message().to_owned(),
        })?
    else {
        return Ok(instance.spec.for_provider.clone());
    };
    let mut spec = serde_json::to_value(&instance.spec.for_provider).map_err(internal)?;
    if let Some(fields) = spec.as_object_mut() {
        fields.extend(patch);
    }
    serde_json::from_value(spec).map_err(internal)
}

fn internal(e: serde_json::Error) -> Waiting {
    Waiting {
        reason: KUBERNETES_API_ERROR.to_owned(),
        message: format!("the resolved spec does not read back: {e}"),
    }
}

/// Whether the Secret `passwordSecretRef` names exists with its key.
pub async fn password_ready(client: &kube::Client, instance: &ECSInstance) -> Result<(), Waiting> {
    let Some(selector) = &instance.spec.for_provider.password_secret_ref else {
        return Ok(());
    };
    let ns = instance.namespace().unwrap_or_default();
    let api: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let secret = api.get_opt(&selector.name).await.map_err(|e| Waiting {
        reason: KUBERNETES_API_ERROR.to_owned(),
        message: format!("cannot read password Secret {ns}/{}: {e}", selector.name),
    })?;
    let Some(secret) = secret else {
        return Err(Waiting {
            reason: PASSWORD_SECRET_NOT_FOUND.to_owned(),
            message: format!(
                "Secret {ns}/{} named in spec.forProvider.passwordSecretRef does not exist",
                selector.name
            ),
        });
    };
    let has_key = secret
        .data
        .as_ref()
        .is_some_and(|d| d.contains_key(&selector.key));
    if has_key {
        Ok(())
    } else {
        Err(Waiting {
            reason: PASSWORD_KEY_MISSING.to_owned(),
            message: format!(
                "Secret {ns}/{} has no key {} (spec.forProvider.passwordSecretRef.key)",
                selector.name, selector.key
            ),
        })
    }
}
