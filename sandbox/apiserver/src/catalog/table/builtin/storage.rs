//! The PersistentVolumeClaim printer: kube-apiserver's columns and cells for `kubectl get pvc`.

use serde_json::{Value, json};

use super::fields::{get, s};

/// kubectl's short form of an access mode.
fn short_mode(mode: &str) -> &str {
    match mode {
        "ReadWriteOnce" => "RWO",
        "ReadOnlyMany" => "ROX",
        "ReadWriteMany" => "RWX",
        "ReadWriteOncePod" => "RWOP",
        other => other,
    }
}

fn or_unset(value: &str) -> String {
    if value.is_empty() {
        "<unset>".to_owned()
    } else {
        value.to_owned()
    }
}

/// NAME, STATUS, VOLUME, CAPACITY, ACCESS MODES, STORAGECLASS, VOLUMEATTRIBUTESCLASS, AGE and
/// (wide) VOLUMEMODE. Capacity and access modes come from the status, as the volume's.
pub fn claim_cells(o: &Value, name: Value, created: String) -> Vec<Value> {
    let phase = if get(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating".to_owned()
    } else {
        s(o, &["status", "phase"])
    };
    let modes: Vec<&str> = get(o, &["status", "accessModes"])
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).map(short_mode).collect())
        .unwrap_or_default();
    let storage_class = match s(o, &["spec", "storageClassName"]).as_str() {
        "" => s(
            o,
            &[
                "metadata",
                "annotations",
                "volume.beta.kubernetes.io/storage-class",
            ],
        ),
        class => class.to_owned(),
    };
    vec![
        name,
        json!(phase),
        json!(s(o, &["spec", "volumeName"])),
        json!(s(o, &["status", "capacity", "storage"])),
        json!(modes.join(",")),
        json!(storage_class),
        json!(or_unset(&s(o, &["spec", "volumeAttributesClassName"]))),
        json!(created),
        json!(or_unset(&s(o, &["spec", "volumeMode"]))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_claim_prints_as_kube_apiserver_prints_it() {
        let claim = json!({"metadata": {"name": "data-db-0"},
            "spec": {"volumeName": "pv-4", "volumeMode": "Filesystem"},
            "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"]}});
        assert_eq!(
            claim_cells(&claim, json!("data-db-0"), "34s".into()),
            vec![
                json!("data-db-0"),
                json!("Bound"),
                json!("pv-4"),
                json!("2Gi"),
                json!("RWO"),
                json!(""),
                json!("<unset>"),
                json!("34s"),
                json!("Filesystem")
            ]
        );
    }
}
