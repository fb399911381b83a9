use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

fn sa() -> User {
    User::service_account("ferroplane-system", "ferroplane")
}

fn attrs(
    verb: &str,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> ResourceAttributes {
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    ResourceAttributes {
        verb: verb.into(),
        group: group.into(),
        resource: resource.into(),
        subresource: subresource.into(),
        namespace: namespace.into(),
        name: name.into(),
    }
}

fn role(kind: &str, namespace: &str, name: &str, rules: Value) -> Arc<Value> {
    Arc::new(
        json!({"kind": kind, "metadata": {"name": name, "namespace": namespace}, "rules": rules}),
    )
}

fn binding(
    kind: &str,
    namespace: &str,
    name: &str,
    role_kind: &str,
    role: &str,
    subjects: Value,
) -> Arc<Value> {
    Arc::new(json!({
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }))
}

fn to_sa() -> Value {
    json!([{"kind": "ServiceAccount", "name": "ferroplane", "namespace": "ferroplane-system"}])
}

fn cluster_policy(rules: Value) -> Policy {
    Policy {
        cluster_roles: vec![role("ClusterRole", "", "r", rules)],
        cluster_role_bindings: vec![binding(
            "ClusterRoleBinding",
            "",
            "b",
            "ClusterRole",
            "r",
            to_sa(),
        )],
        ..Policy::default()
    }
}

#[test]
fn a_rule_matches_verb_group_resource_and_subresource() {
    let policy = cluster_policy(json!([
        {"apiGroups": ["alibabacloud.ferroplane.io"], "resources": ["ecsinstances"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": ["alibabacloud.ferroplane.io"], "resources": ["ecsinstances/status"], "verbs": ["patch"]},
    ]));
    let g = "alibabacloud.ferroplane.io";
    for (verb, resource, allowed) in [
        ("get", "ecsinstances", true),
        ("list", "ecsinstances", true),
        ("watch", "ecsinstances", true),
        ("patch", "ecsinstances", true),
        ("update", "ecsinstances", false),
        ("delete", "ecsinstances", false),
        ("deletecollection", "ecsinstances", false),
        ("patch", "ecsinstances/status", true),
        ("get", "ecsinstances/status", false),
        ("update", "ecsinstances/status", false),
        ("patch", "ecsinstances/scale", false),
    ] {
        let decision = policy.authorize(&sa(), &attrs(verb, g, resource, "team", "web"));
        assert_eq!(decision.allowed(), allowed, "{verb} {resource}");
    }
    assert!(
        !policy
            .authorize(&sa(), &attrs("get", "", "ecsinstances", "team", "web"))
            .allowed(),
        "another group"
    );
    assert!(
        !policy
            .authorize(
                &sa(),
                &attrs("get", "apps.ferroplane.io", "ecsinstances", "team", "web")
            )
            .allowed()
    );
}

#[test]
fn stars_match_everything_of_their_field() {
    let policy = cluster_policy(json!([
        {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["*"]},
    ]));
    assert!(
        policy
            .authorize(
                &sa(),
                &attrs("get", "example.io", "widgets/status", "a", "w")
            )
            .allowed()
    );
    assert!(
        !policy
            .authorize(&sa(), &attrs("get", "example.io", "widgets", "a", "w"))
            .allowed()
    );
    assert!(
        !policy
            .authorize(
                &sa(),
                &attrs("get", "example.io", "widgets/scale", "a", "w")
            )
            .allowed()
    );
    assert!(
        policy
            .authorize(
                &sa(),
                &attrs("deletecollection", "apps", "statefulsets", "a", "")
            )
            .allowed()
    );
    assert!(
        policy
            .authorize(&sa(), &attrs("patch", "apps", "deployments/scale", "", ""))
            .allowed()
    );
}

#[test]
fn resource_names_restrict_to_named_requests() {
    let policy = cluster_policy(json!([
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "create"], "resourceNames": ["creds"]},
    ]));
    assert!(
        policy
            .authorize(&sa(), &attrs("get", "", "secrets", "a", "creds"))
            .allowed()
    );
    assert!(
        !policy
            .authorize(&sa(), &attrs("get", "", "secrets", "a", "other"))
            .allowed()
    );
    assert!(
        !policy
            .authorize(&sa(), &attrs("list", "", "secrets", "a", ""))
            .allowed(),
        "a list names nothing"
    );
    assert!(
        !policy
            .authorize(&sa(), &attrs("create", "", "secrets", "a", ""))
            .allowed()
    );
}

#[test]
fn a_role_binding_grants_in_its_namespace_only() {
    let rules = json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]);
    let policy = Policy {
        roles: vec![role("Role", "team", "reader", rules.clone())],
        cluster_roles: vec![role("ClusterRole", "", "cluster-reader", rules)],
        role_bindings: vec![
            binding("RoleBinding", "team", "b", "Role", "reader", to_sa()),
            binding(
                "RoleBinding",
                "other",
                "c",
                "ClusterRole",
                "cluster-reader",
                to_sa(),
            ),
            // A Role of another namespace is never found by a binding here.
            binding("RoleBinding", "third", "d", "Role", "reader", to_sa()),
        ],
        ..Policy::default()
    };
    let get = |ns: &str| policy.authorize(&sa(), &attrs("get", "", "secrets", ns, "s"));
    assert_eq!(
        get("team"),
        Decision::Allowed {
            reason: "RBAC: allowed by RoleBinding \"b/team\" of Role \"reader\" to ServiceAccount \"ferroplane/ferroplane-system\"".into()
        }
    );
    assert!(
        get("other").allowed(),
        "a ClusterRole bound in one namespace"
    );
    assert!(!get("third").allowed());
    assert!(!get("elsewhere").allowed());
    assert!(
        !get("").allowed(),
        "a RoleBinding never grants at the cluster scope"
    );
}

#[test]
fn subjects_name_the_user_its_groups_or_its_service_account() {
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]);
    let list = attrs("list", "", "pods", "a", "");
    for (subjects, allowed) in [
        (to_sa(), true),
        (
            json!([{"kind": "ServiceAccount", "name": "ferroplane", "namespace": "other"}]),
            false,
        ),
        (
            json!([{"kind": "User", "name": "system:serviceaccount:ferroplane-system:ferroplane"}]),
            true,
        ),
        (
            json!([{"kind": "Group", "name": "system:serviceaccounts:ferroplane-system"}]),
            true,
        ),
        (
            json!([{"kind": "Group", "name": "system:serviceaccounts:other"}]),
            false,
        ),
        (json!([{"kind": "User", "name": "alice"}]), false),
    ] {
        let policy = Policy {
            cluster_roles: vec![role("ClusterRole", "", "r", rules.clone())],
            cluster_role_bindings: vec![binding(
                "ClusterRoleBinding",
                "",
                "b",
                "ClusterRole",
                "r",
                subjects.clone(),
            )],
            ..Policy::default()
        };
        assert_eq!(
            policy.authorize(&sa(), &list).allowed(),
            allowed,
            "{subjects}"
        );
    }
}

#[test]
fn a_binding_to_a_missing_role_grants_nothing() {
    let policy = Policy {
        cluster_role_bindings: vec![binding(
            "ClusterRoleBinding",
            "",
            "b",
            "ClusterRole",
            "gone",
            to_sa(),
        )],
        ..Policy::default()
    };
    assert_eq!(
        policy.authorize(&sa(), &attrs("get", "", "pods", "a", "p")),
        Decision::NoOpinion
    );
}
