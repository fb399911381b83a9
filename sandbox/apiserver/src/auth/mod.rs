//! Authentication and authorization: who sends a request (`identity`) and whether the stored
//! RBAC objects let them (`rbac`). The administrator is never checked; every other user gets
//! what their bindings grant and the apiserver's 403 for the rest.

pub mod identity;
pub mod rbac;

use crate::catalog::registry::StoreKey;
use crate::error::ApiError;
use crate::store::state::State;

pub use identity::{AuthnError, Identity, Tokens, User};
pub use rbac::{Decision, Policy, ResourceAttributes};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The RBAC objects stored now.
pub fn policy(state: &State) -> Policy {
    let all = |plural: &str| {
        state
            .list(&StoreKey::new(RBAC_GROUP, plural), None)
            .cloned()
            .collect()
    };
    Policy {
        roles: all("roles"),
        cluster_roles: all("clusterroles"),
        role_bindings: all("rolebindings"),
        cluster_role_bindings: all("clusterrolebindings"),
    }
}

/// kube-apiserver's 403: `<resource> "<name>" is forbidden: User "<user>" cannot <verb>
/// resource "<resource[/subresource]>" in API group "<group>" in the namespace "<ns>"` (or `at
/// the cluster scope`), with `details` naming the object.
pub fn forbidden(user: &User, attributes: &ResourceAttributes) -> ApiError {
    let group_resource = if attributes.group.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}.{}", attributes.resource, attributes.group)
    };
    let object = if attributes.name.is_empty() {
        group_resource
    } else {
        format!("{group_resource} \"{}\"", attributes.name)
    };
    let scope = if attributes.namespace.is_empty() {
        "at the cluster scope".to_owned()
    } else {
        format!("in the namespace \"{}\"", attributes.namespace)
    };
    ApiError::forbidden_object(
        format!(
            "{object} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
            user.name,
            attributes.verb,
            attributes.combined_resource(),
            attributes.group,
        ),
        &attributes.name,
        &attributes.group,
        &attributes.resource,
    )
}

/// The 401 of a request whose credentials are not accepted.
pub fn unauthorized(error: &AuthnError) -> ApiError {
    tracing::debug!(%error, "request not authenticated");
    ApiError::unauthorized()
}
