//! The RBAC authorizer: decides a request from the stored Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings with Kubernetes' rules (`rbac.authorization.k8s.io/v1`):
//! - a ClusterRoleBinding grants its ClusterRole's rules everywhere (every namespace and the
//!   cluster scope); a RoleBinding grants its Role's, or a ClusterRole's, rules in its own
//!   namespace only;
//! - a rule matches when its `verbs`, `apiGroups` and `resources` hold the request's (or `*`),
//!   where a resource is `plural` or `plural/subresource`, and `*/subresource` matches that
//!   subresource of any resource; `resourceNames`, when present, must hold the request's name
//!   (so they never match a list, a watch of a collection or a create);
//! - nothing is denied explicitly: what no rule grants is forbidden.
//!
//! Aggregated ClusterRoles (`aggregationRule`) are not expanded: deploy/ uses none.

use serde_json::Value;

use crate::auth::identity::User;

/// What a request asks to do to a resource, as the authorizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceAttributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: String,
    pub group: String,
    /// The plural, e.g. `ecsinstances`.
    pub resource: String,
    /// `""` or e.g. `status`.
    pub subresource: String,
    /// `""` at the cluster scope.
    pub namespace: String,
    /// `""` for requests on a collection.
    pub name: String,
}

impl ResourceAttributes {
    /// `plural` or `plural/subresource`, as rules and messages name it.
    pub fn combined_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// The RBAC objects a decision reads, as stored (JSON).
#[derive(Debug, Default, Clone)]
pub struct Policy {
    pub roles: Vec<std::sync::Arc<Value>>,
    pub cluster_roles: Vec<std::sync::Arc<Value>>,
    pub role_bindings: Vec<std::sync::Arc<Value>>,
    pub cluster_role_bindings: Vec<std::sync::Arc<Value>>,
}

/// An answer: allowed, and by which binding (the reason SelfSubjectAccessReview reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allowed {
        reason: String,
    },
    /// No rule grants the request.
    NoOpinion,
}

impl Decision {
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allowed { .. })
    }
}

impl Policy {
    /// Does any binding of `user` grant `attributes`?
    pub fn authorize(&self, user: &User, attributes: &ResourceAttributes) -> Decision {
        for binding in &self.cluster_role_bindings {
            let Some(subject) = matching_subject(binding, user, "") else {
                continue;
            };
            let role_name = str_at(binding, "/roleRef/name");
            if str_at(binding, "/roleRef/kind") != "ClusterRole" {
                continue;
            }
            if let Some(role) = find(&self.cluster_roles, "", role_name)
                && rules_allow(role, attributes)
            {
                return Decision::Allowed {
                    reason: format!(
                        "RBAC: allowed by ClusterRoleBinding \"{}\" of ClusterRole \"{role_name}\" to {subject}",
                        str_at(binding, "/metadata/name")
                    ),
                };
            }
        }
        if attributes.namespace.is_empty() {
            return Decision::NoOpinion;
        }
        for binding in &self.role_bindings {
            let namespace = str_at(binding, "/metadata/namespace");
            if namespace != attributes.namespace {
                continue;
            }
            let Some(subject) = matching_subject(binding, user, namespace) else {
                continue;
            };
            let role_name = str_at(binding, "/roleRef/name");
            let (kind, role) = match str_at(binding, "/roleRef/kind") {
                "Role" => ("Role", find(&self.roles, namespace, role_name)),
                "ClusterRole" => ("ClusterRole", find(&self.cluster_roles, "", role_name)),
                _ => continue,
            };
            if let Some(role) = role
                && rules_allow(role, attributes)
            {
                return Decision::Allowed {
                    reason: format!(
                        "RBAC: allowed by RoleBinding \"{}/{namespace}\" of {kind} \"{role_name}\" to {subject}",
                        str_at(binding, "/metadata/name")
                    ),
                };
            }
        }
        Decision::NoOpinion
    }
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    value
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn find<'a>(
    objects: &'a [std::sync::Arc<Value>],
    namespace: &str,
    name: &str,
) -> Option<&'a Value> {
    objects.iter().map(AsRef::as_ref).find(|o| {
        str_at(o, "/metadata/name") == name && str_at(o, "/metadata/namespace") == namespace
    })
}

/// The subject of `binding` that names `user`, worded as the review reason words it
/// (`ServiceAccount "name/namespace"`, `User "name"`, `Group "name"`).
fn matching_subject(binding: &Value, user: &User, binding_namespace: &str) -> Option<String> {
    let subjects = binding.get("subjects").and_then(Value::as_array)?;
    subjects.iter().find_map(|subject| {
        let name = str_at(subject, "/name");
        match str_at(subject, "/kind") {
            "User" if name == user.name => Some(format!("User \"{name}\"")),
            "Group" if user.groups.iter().any(|g| g == name) => Some(format!("Group \"{name}\"")),
            "ServiceAccount" => {
                // A RoleBinding's ServiceAccount subject without a namespace means its own.
                let namespace = Some(str_at(subject, "/namespace"))
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or(binding_namespace);
                (user.name == format!("system:serviceaccount:{namespace}:{name}"))
                    .then(|| format!("ServiceAccount \"{name}/{namespace}\""))
            }
            _ => None,
        }
    })
}

fn rules_allow(role: &Value, attributes: &ResourceAttributes) -> bool {
    role.get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|rule| rule_allows(rule, attributes))
}

/// One `PolicyRule` against a resource request.
pub fn rule_allows(rule: &Value, attributes: &ResourceAttributes) -> bool {
    let verb = strings(rule, "verbs").any(|v| v == "*" || v == attributes.verb);
    let group = strings(rule, "apiGroups").any(|g| g == "*" || g == attributes.group);
    let combined = attributes.combined_resource();
    let resource = strings(rule, "resources").any(|r| {
        r == "*"
            || r == combined
            || (!attributes.subresource.is_empty()
                && r.strip_prefix("*/") == Some(attributes.subresource.as_str()))
    });
    let mut names = strings(rule, "resourceNames").peekable();
    let name = names.peek().is_none() || names.any(|n| n == attributes.name);
    verb && group && resource && name
}

#[cfg(test)]
mod tests;
