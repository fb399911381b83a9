//! The fake nodes: Node objects registered by the control plane and handed to kwok, which keeps
//! their status and Leases fresh and reports the pods bound to them Running. Nothing here binds
//! pods: the real scheduler does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::components::KWOK_NODE_ANNOTATION;
use crate::error::Result;

/// A Node for kwok to play: no taints (ordinary pods schedule onto it), the labels a kubelet
/// sets, and the annotation kwok selects its nodes by.
pub fn fake_node(name: &str) -> Node {
    let labels = BTreeMap::from([
        ("kubernetes.io/hostname".to_string(), name.to_string()),
        ("kubernetes.io/os".to_string(), "linux".to_string()),
        ("kubernetes.io/arch".to_string(), "amd64".to_string()),
        ("type".to_string(), "kwok".to_string()),
    ]);
    let annotations = BTreeMap::from([(
        KWOK_NODE_ANNOTATION.0.to_string(),
        KWOK_NODE_ANNOTATION.1.to_string(),
    )]);
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        ..Node::default()
    }
}

pub async fn register_nodes(client: &Client, count: usize) -> Result<Vec<String>> {
    let api: Api<Node> = Api::all(client.clone());
    let mut names = Vec::with_capacity(count);
    for i in 0..count {
        let name = format!("fake-node-{i}");
        api.create(&PostParams::default(), &fake_node(&name))
            .await?;
        names.push(name);
    }
    Ok(names)
}

/// Whether the node reports the condition Ready=True.
pub fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_node_is_handed_to_kwok_and_takes_pods() {
        let n = fake_node("fake-node-0");
        let annotations = n.metadata.annotations.unwrap();
        assert_eq!(
            annotations.get("kwok.x-k8s.io/node").map(String::as_str),
            Some("fake")
        );
        assert!(n.spec.and_then(|s| s.taints).is_none());
        assert!(!is_ready(&Node::default()));
    }
}
