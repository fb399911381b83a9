//! Secrets a test puts in place (credentials, passwords): created, or replaced when present;
//! and deleted.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

/// Creates Secret `namespace/name` with `data`, or replaces the data of the existing one.
pub async fn put(client: &kube::Client, namespace: &str, name: &str, data: &[(&str, &str)]) {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..Secret::default()
    };
    match api.get_opt(name).await.expect("read secret") {
        None => {
            api.create(&PostParams::default(), &secret)
                .await
                .expect("secret created");
        }
        Some(_) => {
            api.replace(name, &PostParams::default(), &secret)
                .await
                .expect("secret replaced");
        }
    }
}

/// Deletes Secret `namespace/name`; panics unless it existed and is deleted.
pub async fn delete(client: &kube::Client, namespace: &str, name: &str) {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    api.delete(name, &DeleteParams::default())
        .await
        .expect("secret deleted");
}
