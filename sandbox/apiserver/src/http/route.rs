//! Request paths: which endpoint a URL names.

/// A resource URL, before the registry is consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub plural: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Version,
    Health,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/<group>`
    Group(String),
    /// `/api/v1`, `/apis/<group>/<version>`
    Resources {
        group: String,
        version: String,
    },
    OpenApiIndex,
    /// `/openapi/v3/<api/v1 | apis/g/v>`
    OpenApiDocument(String),
    OpenApiV2,
    Resource(ResourcePath),
}

pub fn parse(path: &str) -> Option<Route> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Some(Route::Version),
        ["healthz" | "readyz" | "livez", ..] => Some(Route::Health),
        ["api"] => Some(Route::CoreVersions),
        ["apis"] => Some(Route::Groups),
        ["apis", group] => Some(Route::Group((*group).to_owned())),
        ["openapi", "v3"] => Some(Route::OpenApiIndex),
        ["openapi", "v3", rest @ ..] => Some(Route::OpenApiDocument(rest.join("/"))),
        ["openapi", "v2"] => Some(Route::OpenApiV2),
        ["api", version, rest @ ..] => resource("", version, rest),
        ["apis", group, version, rest @ ..] => resource(group, version, rest),
        _ => None,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Option<Route> {
    if rest.is_empty() {
        return Some(Route::Resources {
            group: group.to_owned(),
            version: version.to_owned(),
        });
    }
    let is_namespace_subresource = group.is_empty()
        && rest.len() == 3
        && rest[0] == "namespaces"
        && matches!(rest[2], "status" | "finalize");
    let (namespace, rest) =
        if rest[0] == "namespaces" && rest.len() >= 3 && !is_namespace_subresource {
            (Some(rest[1].to_owned()), &rest[2..])
        } else {
            (None, rest)
        };
    if rest.len() > 3 {
        return None;
    }
    Some(Route::Resource(ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace,
        plural: rest[0].to_owned(),
        name: rest.get(1).map(|s| (*s).to_owned()),
        subresource: rest.get(2).map(|s| (*s).to_owned()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Some(Route::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn resource_paths() {
        let r = res("/apis/apps/v1/namespaces/default/deployments/web/status");
        assert_eq!(
            (r.group.as_str(), r.namespace.as_deref(), r.plural.as_str()),
            ("apps", Some("default"), "deployments")
        );
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("web"), Some("status"))
        );
        let ns = res("/api/v1/namespaces/team");
        assert_eq!(
            (ns.plural.as_str(), ns.name.as_deref(), ns.namespace),
            ("namespaces", Some("team"), None)
        );
        let ns_status = res("/api/v1/namespaces/team/status");
        assert_eq!(
            (ns_status.name.as_deref(), ns_status.subresource.as_deref()),
            (Some("team"), Some("status"))
        );
        let list = res("/api/v1/namespaces/team/configmaps");
        assert_eq!((list.namespace.as_deref(), list.name), (Some("team"), None));
        assert_eq!(res("/apis/example.io/v1/widgets").namespace, None);
        assert_eq!(
            parse("/apis/apps/v1"),
            Some(Route::Resources {
                group: "apps".into(),
                version: "v1".into()
            })
        );
        assert_eq!(
            parse("/openapi/v3/apis/apps/v1"),
            Some(Route::OpenApiDocument("apis/apps/v1".into()))
        );
        assert_eq!(parse("/nope"), None);
        assert_eq!(parse("/api/v1/namespaces/a/b/c/d/e"), None);
    }
}
