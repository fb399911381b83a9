//! Installing CustomResourceDefinitions: created on a fresh server, or applied (server-side,
//! forced) on a cluster that may have them already.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};

/// Field manager of the CRDs the tests apply.
const FIELD_MANAGER: &str = "ferroplane-tests";

/// Creates each CRD; panics when one cannot be created.
pub async fn install(
    client: &kube::Client,
    crds: impl IntoIterator<Item = CustomResourceDefinition>,
) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.create(&PostParams::default(), &crd)
            .await
            .unwrap_or_else(|e| panic!("CRD {name} installed: {e}"));
    }
}

/// Applies each CRD with server-side apply (forced), creating or updating it.
pub async fn apply(
    client: &kube::Client,
    crds: impl IntoIterator<Item = CustomResourceDefinition>,
) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds {
        let name = crd.metadata.name.clone().expect("a named CRD");
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&crd),
        )
        .await
        .unwrap_or_else(|e| panic!("CRD {name} applied: {e}"));
    }
}
