//! The kube-apiserver's own count of writes, from its `/metrics`: what `ferroplane-bench
//! --cluster real` reports beside the sandbox's counters, keyed the same way.

use std::collections::BTreeMap;

/// Writes by (`create` | `update` | `patch` | `delete` | `deletecollection`,
/// `<resource>.<group>[/<subresource>]`; a core resource without a group).
pub type Writes = BTreeMap<(String, String), u64>;

/// The writes the kube-apiserver behind `client` has counted since it started.
pub async fn read_apiserver_writes(client: &kube::Client) -> crate::Result<Writes> {
    let request = http::Request::get("/metrics")
        .body(Vec::new())
        .map_err(|e| crate::Error::Kubeconfig(format!("a GET /metrics request: {e}")))?;
    let text = client.request_text(request).await?;
    Ok(apiserver_writes(&text))
}

/// Sums `apiserver_request_total` of the write verbs (server-side apply counts as `patch`)
/// over codes, scopes and versions; reads are left out.
pub fn apiserver_writes(text: &str) -> Writes {
    let mut writes = Writes::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split("\",")
                .find_map(|pair| pair.strip_prefix(&format!("{name}=\"")))
                .map(|v| v.trim_end_matches('"').to_owned())
                .unwrap_or_default()
        };
        let verb = match label("verb").as_str() {
            "POST" => "create",
            "PUT" => "update",
            "PATCH" | "APPLY" => "patch",
            "DELETE" => "delete",
            "DELETECOLLECTION" => "deletecollection",
            _ => continue,
        };
        let (group, resource, subresource) =
            (label("group"), label("resource"), label("subresource"));
        let mut key = if group.is_empty() {
            resource
        } else {
            format!("{resource}.{group}")
        };
        if !subresource.is_empty() {
            key = format!("{key}/{subresource}");
        }
        let count = value.trim().parse::<f64>().unwrap_or(0.0) as u64;
        *writes.entry((verb.to_owned(), key)).or_default() += count;
    }
    writes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_totals_become_writes_by_verb_and_resource() {
        let text = r#"# HELP apiserver_request_total x
apiserver_request_total{code="200",component="apiserver",dry_run="",group="alibabacloud.ferroplane.io",resource="ecsinstances",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 7
apiserver_request_total{code="201",component="apiserver",dry_run="",group="alibabacloud.ferroplane.io",resource="ecsinstances",scope="resource",subresource="",verb="POST",version="v1alpha1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="events",scope="resource",subresource="",verb="APPLY",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 9
"#;
        let writes = apiserver_writes(text);
        let get = |verb: &str, resource: &str| {
            writes.get(&(verb.to_owned(), resource.to_owned())).copied()
        };
        assert_eq!(
            get("patch", "ecsinstances.alibabacloud.ferroplane.io/status"),
            Some(7)
        );
        assert_eq!(
            get("create", "ecsinstances.alibabacloud.ferroplane.io"),
            Some(3)
        );
        assert_eq!(get("patch", "events"), Some(2));
        assert_eq!(writes.len(), 3, "reads are not writes: {writes:?}");
    }
}
