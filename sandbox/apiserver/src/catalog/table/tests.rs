//! Table tests of printers against objects shaped like the apiserver stores them.

use super::*;
use crate::catalog::table::column::NAME_DESCRIPTION;
use serde_json::{Value, json};

fn now() -> Timestamp {
    "2024-05-01T12:00:00Z".parse().expect("valid timestamp")
}

fn meta(name: &str) -> Value {
    json!({"name": name, "namespace": "default", "creationTimestamp": "2024-05-01T11:55:00Z", "uid": "u1"})
}

fn headers(printer: &Printer) -> Vec<(String, i64)> {
    printer
        .columns()
        .into_iter()
        .map(|c| (c.name, c.priority))
        .collect()
}

/// (group, kind, object, expected (column, priority) pairs, expected cells)
type BuiltinCase = (
    &'static str,
    &'static str,
    Value,
    Vec<(&'static str, i64)>,
    Value,
);

#[test]
fn builtin_columns_and_cells() {
    let cases: Vec<BuiltinCase> = vec![
        (
            "",
            "Namespace",
            json!({"metadata": meta("team-a"), "status": {"phase": "Active"}}),
            vec![("Name", 0), ("Status", 0), ("Age", 0)],
            json!(["team-a", "Active", "5m"]),
        ),
        (
            "",
            "Secret",
            json!({"metadata": meta("creds"), "type": "Opaque", "data": {"a": "eA==", "b": "eQ=="}}),
            vec![("Name", 0), ("Type", 0), ("Data", 0), ("Age", 0)],
            json!(["creds", "Opaque", 2, "5m"]),
        ),
        (
            "",
            "ConfigMap",
            json!({"metadata": meta("cfg"), "data": {"a": "1"}, "binaryData": {"b": "AA=="}}),
            vec![("Name", 0), ("Data", 0), ("Age", 0)],
            json!(["cfg", 2, "5m"]),
        ),
        (
            "",
            "Event",
            json!({
                "metadata": meta("web-1.17a"),
                "involvedObject": {"kind": "ECSInstance", "name": "web-1", "fieldPath": ""},
                "reason": "CreatedExternalResource", "message": " Created i-123 \n", "type": "Normal",
                "firstTimestamp": "2024-05-01T11:50:00Z", "lastTimestamp": "2024-05-01T11:58:00Z", "count": 3,
                "source": {"component": "ferroplane"}
            }),
            vec![
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1),
            ],
            json!([
                "2m",
                "Normal",
                "CreatedExternalResource",
                "ecsinstance/web-1",
                "",
                "ferroplane",
                "Created i-123",
                "10m",
                3,
                "web-1.17a"
            ]),
        ),
        (
            "events.k8s.io",
            "Event",
            json!({
                "metadata": meta("e2"),
                "regarding": {"kind": "Application", "name": "shop"},
                "reason": "Synced", "note": "ok", "type": "Warning",
                "eventTime": "2024-05-01T11:59:00.000000Z", "reportingController": "ferroplane", "reportingInstance": "pod-1"
            }),
            vec![
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1),
            ],
            json!([
                "60s",
                "Warning",
                "Synced",
                "application/shop",
                "",
                "ferroplane, pod-1",
                "ok",
                "60s",
                1,
                "e2"
            ]),
        ),
        (
            "",
            "Service",
            json!({"metadata": meta("web"), "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443}], "selector": {"app": "web", "tier": "fe"}}}),
            vec![
                ("Name", 0),
                ("Type", 0),
                ("Cluster-IP", 0),
                ("External-IP", 0),
                ("Port(s)", 0),
                ("Age", 0),
                ("Selector", 1),
            ],
            json!([
                "web",
                "ClusterIP",
                "10.96.0.10",
                "<none>",
                "80/TCP,443/TCP",
                "5m",
                "app=web,tier=fe"
            ]),
        ),
        (
            "",
            "Service",
            json!({"metadata": meta("etcd"), "spec": {"clusterIP": "None", "ports": [{"port": 2379, "nodePort": 30001, "protocol": "TCP"}]}}),
            vec![
                ("Name", 0),
                ("Type", 0),
                ("Cluster-IP", 0),
                ("External-IP", 0),
                ("Port(s)", 0),
                ("Age", 0),
                ("Selector", 1),
            ],
            json!([
                "etcd",
                "ClusterIP",
                "None",
                "<none>",
                "2379:30001/TCP",
                "5m",
                "<none>"
            ]),
        ),
        (
            "",
            "Service",
            json!({"metadata": meta("lb"), "spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1", "ports": []}}),
            vec![
                ("Name", 0),
                ("Type", 0),
                ("Cluster-IP", 0),
                ("External-IP", 0),
                ("Port(s)", 0),
                ("Age", 0),
                ("Selector", 1),
            ],
            json!([
                "lb",
                "LoadBalancer",
                "10.0.0.1",
                "<pending>",
                "<none>",
                "5m",
                "<none>"
            ]),
        ),
        (
            "apps",
            "Deployment",
            json!({"metadata": meta("shop"), "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "shop"}},
                "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "busybox"}]}}},
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
            vec![
                ("Name", 0),
                ("Ready", 0),
                ("Up-to-date", 0),
                ("Available", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1),
            ],
            json!([
                "shop",
                "2/3",
                3,
                2,
                "5m",
                "app,side",
                "nginx:1,busybox",
                "app=shop"
            ]),
        ),
        (
            "apps",
            "StatefulSet",
            json!({"metadata": meta("etcd"), "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "etcd", "image": "etcd:3.5"}]}}}, "status": {}}),
            vec![
                ("Name", 0),
                ("Ready", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
            ],
            json!(["etcd", "0/3", "5m", "etcd", "etcd:3.5"]),
        ),
        (
            "networking.k8s.io",
            "Ingress",
            json!({"metadata": meta("shop"), "spec": {"ingressClassName": "nginx", "rules": [{"host": "shop.example.com"}],
                "tls": [{"hosts": ["shop.example.com"]}]}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}),
            vec![
                ("Name", 0),
                ("Class", 0),
                ("Hosts", 0),
                ("Address", 0),
                ("Ports", 0),
                ("Age", 0),
            ],
            json!([
                "shop",
                "nginx",
                "shop.example.com",
                "1.2.3.4",
                "80, 443",
                "5m"
            ]),
        ),
        (
            "networking.k8s.io",
            "Ingress",
            json!({"metadata": meta("many"), "spec": {"rules": [{"host": "a"}, {"host": "b"}, {}, {"host": "d"}, {"host": "e"}]}}),
            vec![
                ("Name", 0),
                ("Class", 0),
                ("Hosts", 0),
                ("Address", 0),
                ("Ports", 0),
                ("Age", 0),
            ],
            json!(["many", "<none>", "a,b,d + 2 more...", "", "80", "5m"]),
        ),
        (
            "policy",
            "PodDisruptionBudget",
            json!({"metadata": meta("etcd"), "spec": {"maxUnavailable": 1}, "status": {"disruptionsAllowed": 1}}),
            vec![
                ("Name", 0),
                ("Min Available", 0),
                ("Max Unavailable", 0),
                ("Allowed Disruptions", 0),
                ("Age", 0),
            ],
            json!(["etcd", "N/A", "1", 1, "5m"]),
        ),
        (
            "coordination.k8s.io",
            "Lease",
            json!({"metadata": meta("ferroplane-leader"), "spec": {"holderIdentity": "pod-a"}}),
            vec![("Name", 0), ("Holder", 0), ("Age", 0)],
            json!(["ferroplane-leader", "pod-a", "5m"]),
        ),
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            json!({"metadata": {"name": "ecsinstances.alibabacloud.ferroplane.io", "creationTimestamp": "2024-05-01T11:55:00Z"}}),
            vec![("Name", 0), ("Created At", 0)],
            json!([
                "ecsinstances.alibabacloud.ferroplane.io",
                "2024-05-01T11:55:00Z"
            ]),
        ),
        (
            "",
            "ServiceAccount",
            json!({"metadata": meta("ferroplane"), "secrets": [{"name": "x"}]}),
            vec![("Name", 0), ("Age", 0)],
            json!(["ferroplane", "5m"]),
        ),
        (
            "rbac.authorization.k8s.io",
            "ClusterRoleBinding",
            json!({"metadata": meta("ferroplane"), "roleRef": {"kind": "ClusterRole", "name": "ferroplane"},
                "subjects": [{"kind": "ServiceAccount", "name": "ferroplane", "namespace": "ferroplane-system"}]}),
            vec![
                ("Name", 0),
                ("Role", 0),
                ("Age", 0),
                ("Users", 1),
                ("Groups", 1),
                ("ServiceAccounts", 1),
            ],
            json!([
                "ferroplane",
                "ClusterRole/ferroplane",
                "5m",
                "",
                "",
                "ferroplane-system/ferroplane"
            ]),
        ),
    ];
    for (group, kind, object, want_headers, want_cells) in cases {
        let printer = Printer::for_builtin(group, kind);
        let got_headers = headers(&printer);
        let want_headers: Vec<(String, i64)> = want_headers
            .into_iter()
            .map(|(n, p)| (n.to_owned(), p))
            .collect();
        assert_eq!(got_headers, want_headers, "{group}/{kind} headers");
        assert_eq!(
            Value::Array(printer.cells(&object, now())),
            want_cells,
            "{group}/{kind} cells"
        );
    }
}

#[test]
fn pod_status_column() {
    let pod = |status: Value, extra_meta: Value| {
        let mut m = meta("p");
        if let (Some(m), Some(extra)) = (m.as_object_mut(), extra_meta.as_object()) {
            m.extend(extra.clone());
        }
        json!({"metadata": m, "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "node-1"}, "status": status})
    };
    let cases: Vec<(Value, Value)> = vec![
        (
            pod(
                json!({"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                    {"name": "b", "ready": true, "restartCount": 2, "state": {"running": {}},
                     "lastState": {"terminated": {"finishedAt": "2024-05-01T11:57:00Z"}}}
                ]}),
                json!({}),
            ),
            json!([
                "p",
                "2/2",
                "Running",
                "2 (3m ago)",
                "5m",
                "10.0.0.5",
                "node-1",
                "<none>",
                "<none>"
            ]),
        ),
        (
            pod(
                json!({"phase": "Pending", "containerStatuses": [
                    {"name": "a", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}
                ]}),
                json!({}),
            ),
            json!([
                "p",
                "0/2",
                "ImagePullBackOff",
                "0",
                "5m",
                "<none>",
                "node-1",
                "<none>",
                "<none>"
            ]),
        ),
        (
            pod(
                json!({"phase": "Pending", "initContainerStatuses": [
                    {"name": "init", "restartCount": 0, "state": {"running": {}}}
                ]}),
                json!({}),
            ),
            json!([
                "p", "0/2", "Init:0/0", "0", "5m", "<none>", "node-1", "<none>", "<none>"
            ]),
        ),
        (
            pod(
                json!({"phase": "Running"}),
                json!({"deletionTimestamp": "2024-05-01T11:59:00Z"}),
            ),
            json!([
                "p",
                "0/2",
                "Terminating",
                "0",
                "5m",
                "<none>",
                "node-1",
                "<none>",
                "<none>"
            ]),
        ),
    ];
    let printer = Printer::for_builtin("", "Pod");
    for (object, want) in cases {
        assert_eq!(
            Value::Array(printer.cells(&object, now())),
            want,
            "{object}"
        );
    }
}

fn ecs_crd_version() -> Value {
    json!({
        "name": "v1alpha1",
        "additionalPrinterColumns": [
            {"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
            {"name": "SYNCED", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Synced\")].status"},
            {"name": "EXTERNAL-NAME", "type": "string", "jsonPath": ".metadata.annotations.ferroplane\\.io/external-name"},
            {"name": "CPU", "type": "integer", "jsonPath": ".status.atProvider.cpu", "priority": 1, "description": "vCPUs"},
            {"name": "RATIO", "type": "number", "jsonPath": ".status.ratio"},
            {"name": "PAUSED", "type": "boolean", "jsonPath": ".spec.paused"},
            {"name": "TAGS", "type": "string", "jsonPath": ".spec.tags"},
            {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
        ]
    })
}

#[test]
fn crd_columns_and_cells() {
    let printer = Printer::for_crd_version(&ecs_crd_version());
    let columns = printer.columns();
    assert_eq!(
        columns
            .iter()
            .map(|c| (c.name.as_str(), c.type_.as_str(), c.priority))
            .collect::<Vec<_>>(),
        vec![
            ("Name", "string", 0),
            ("READY", "string", 0),
            ("SYNCED", "string", 0),
            ("EXTERNAL-NAME", "string", 0),
            ("CPU", "integer", 1),
            ("RATIO", "number", 0),
            ("PAUSED", "boolean", 0),
            ("TAGS", "string", 0),
            ("AGE", "date", 0),
        ]
    );
    assert_eq!(columns[0].format, "name");
    assert_eq!(
        columns[1].description,
        "Custom resource definition column (in JSONPath format): .status.conditions[?(@.type==\"Ready\")].status"
    );
    assert_eq!(columns[4].description, "vCPUs");

    let full = json!({
        "metadata": {"name": "web-1", "creationTimestamp": "2024-04-28T07:00:00Z",
            "annotations": {"ferroplane.io/external-name": "i-123"}},
        "spec": {"paused": false, "tags": {"env": "prod", "app": "web"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}],
            "atProvider": {"cpu": 2.0}, "ratio": 1}
    });
    assert_eq!(
        Value::Array(printer.cells(&full, now())),
        json!([
            "web-1",
            "True",
            "False",
            "i-123",
            2,
            1.0,
            false,
            "map[app:web env:prod]",
            "3d5h"
        ])
    );
    // Missing values are null cells (kubectl shows <none>); a bad date is <invalid>.
    let sparse = json!({"metadata": {"name": "web-2", "creationTimestamp": "later"}});
    assert_eq!(
        Value::Array(printer.cells(&sparse, now())),
        json!([
            "web-2",
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            "<invalid>"
        ])
    );
}

#[test]
fn crd_without_columns_gets_age() {
    let printer = Printer::for_crd_version(&json!({"name": "v1"}));
    assert_eq!(
        headers(&printer),
        vec![("Name".to_owned(), 0), ("Age".to_owned(), 0)]
    );
    let object = json!({"metadata": {"name": "x", "creationTimestamp": "2024-05-01T11:59:30Z"}});
    assert_eq!(
        printer.cells(&object, now()),
        vec![json!("x"), json!("30s")]
    );
}

#[test]
fn invalid_jsonpath_columns() {
    let version = json!({"additionalPrinterColumns": [
        {"name": "OK", "type": "string", "jsonPath": ".spec.a"},
        {"name": "BAD", "type": "string", "jsonPath": ".spec.["}
    ]});
    assert!(Printer::try_for_crd_version(&version).is_err());
    assert_eq!(Printer::for_crd_version(&version).columns().len(), 2);
}

#[test]
fn render_table_shapes() {
    let printer = Printer::for_crd_version(&json!({}));
    let a = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a", "creationTimestamp": "2024-05-01T11:55:00Z", "resourceVersion": "7"}, "spec": {"s": 1}});
    let b = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "b"}});
    let table = render_table(
        &printer,
        &[&a, &b],
        IncludeObject::Metadata,
        "42",
        Some("tok"),
        now(),
    );
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": "42", "continue": "tok"})
    );
    assert_eq!(
        table["columnDefinitions"][0],
        json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0})
    );
    assert_eq!(table["rows"][0]["cells"], json!(["a", "5m"]));
    // No creationTimestamp: the AGE column's JSONPath finds nothing, a null cell.
    assert_eq!(table["rows"][1]["cells"], json!(["b", null]));
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": a["metadata"]})
    );

    let none = render_table(&printer, &[&a], IncludeObject::None, "", None, now());
    assert_eq!(none["metadata"], json!({}));
    assert_eq!(none["rows"][0]["object"], Value::Null);
    let whole = render_table(&printer, &[&a], IncludeObject::Object, "1", None, now());
    assert_eq!(whole["rows"][0]["object"], a);
    let empty = render_table(&printer, &[], IncludeObject::Metadata, "1", None, now());
    assert_eq!(empty["rows"], json!([]));
}

#[test]
fn include_object_query() {
    assert_eq!(
        IncludeObject::from_query(None),
        Some(IncludeObject::Metadata)
    );
    assert_eq!(
        IncludeObject::from_query(Some("")),
        Some(IncludeObject::Metadata)
    );
    assert_eq!(
        IncludeObject::from_query(Some("None")),
        Some(IncludeObject::None)
    );
    assert_eq!(
        IncludeObject::from_query(Some("Object")),
        Some(IncludeObject::Object)
    );
    assert_eq!(IncludeObject::from_query(Some("bogus")), None);
}

/// A CRD printer's columns and an age, end to end (as `kubectl get` shows them).
#[test]
fn crd_printer_renders_a_row() {
    let crd_version = json!({"name": "v1alpha1", "additionalPrinterColumns": [
        {"name": "READY", "type": "string",
         "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
        {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    ]});
    let printer = Printer::for_crd_version(&crd_version);
    let object = json!({"metadata": {"name": "web-1", "creationTimestamp": "2024-05-01T11:55:00Z"},
                        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let table = render_table(
        &printer,
        &[&object],
        IncludeObject::Metadata,
        "42",
        None,
        now(),
    );
    assert_eq!(table["rows"][0]["cells"], json!(["web-1", "True", "5m"]));
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}
