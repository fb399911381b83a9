//! Where the controllers watch: the `Api` of a kind in one namespace (`ferroplane run
//! --namespace`) or in all.

use kube::api::Api;

/// `Api` of `K` in `namespace`, or in all namespaces.
pub fn api_in<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}
