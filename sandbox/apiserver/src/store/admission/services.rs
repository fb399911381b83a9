//! Services as kube-apiserver admits them: the defaults controllers compare against (a stable
//! cluster IP, protocols, target ports, `externalTrafficPolicy` and
//! `allocateLoadBalancerNodePorts` for the types that reach outside), the fields a type change
//! drops when they were the server's own (node ports, the traffic policy), the type/port checks
//! of its validation, and node ports allocated from 30000–32767 (`allocate_node_ports`, which
//! needs the other Services and so runs from the store's create and update).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::catalog::registry::{ResourceDef, keys};
use crate::error::{ApiError, ApiResult, Cause};
use crate::meta;
use crate::store::state::State;

/// The default `--service-node-port-range`.
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

fn type_of(spec: &Value) -> &str {
    spec.get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

/// Types whose ports are also node ports.
fn needs_node_ports(spec: &Value) -> bool {
    match type_of(spec) {
        "NodePort" => true,
        "LoadBalancer" => spec
            .get("allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

fn externally_accessible(spec: &Value) -> bool {
    matches!(type_of(spec), "NodePort" | "LoadBalancer")
}

fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.into(), value);
    }
}

/// Defaults, the fields a type change drops, then validation.
pub fn admit_service(object: &mut Value, old: Option<&Value>) -> ApiResult<()> {
    let old_spec = old.and_then(|o| o.get("spec")).cloned();
    let uid = meta::uid_of(object).to_owned();
    let name = meta::name_of(object).to_owned();
    // Every Service carries a load balancer status, empty until a controller fills it.
    if object.get("status").is_none_or(Value::is_null) {
        object["status"] = json!({"loadBalancer": {}});
    }
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    set_default(spec, "type", json!("ClusterIP"));
    if let Some(old_spec) = &old_spec {
        drop_type_dependent_fields(spec, old_spec);
    }
    set_default(spec, "sessionAffinity", json!("None"));
    set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    set_default(spec, "ipFamilies", json!(["IPv4"]));
    set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
    let spec_value = Value::Object(spec.clone());
    if externally_accessible(&spec_value) {
        set_default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if type_of(&spec_value) == "LoadBalancer" {
        set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    if let Some(ip) = old_spec.as_ref().and_then(|o| o.get("clusterIP")).cloned() {
        set_default(spec, "clusterIP", ip);
    }
    if spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        let seed = uid.bytes().fold(0u32, |acc, b| {
            acc.wrapping_mul(31).wrapping_add(u32::from(b))
        });
        let ip = format!("10.96.{}.{}", (seed >> 8) % 256, (seed % 253) + 2);
        spec.insert("clusterIP".into(), json!(ip));
    }
    if let Some(ip) = spec.get("clusterIP").cloned() {
        spec.insert("clusterIPs".into(), json!([ip]));
    }
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(port, "protocol", json!("TCP"));
            if let Some(number) = port.get("port").cloned() {
                set_default(port, "targetPort", number);
            }
        }
    }
    validate(&name, &Value::Object(spec.clone()))
}

/// What kube-apiserver's Service strategy drops when the type no longer needs it and the
/// request left the old value in place (it was the server's, not the user's).
fn drop_type_dependent_fields(spec: &mut Map<String, Value>, old: &Value) {
    let new = Value::Object(spec.clone());
    if needs_node_ports(old)
        && !needs_node_ports(&new)
        && same_node_ports(&new, old)
        && let Some(Value::Array(ports)) = spec.get_mut("ports")
    {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.remove("nodePort");
        }
    }
    if externally_accessible(old)
        && !externally_accessible(&new)
        && new.get("externalTrafficPolicy") == old.get("externalTrafficPolicy")
    {
        spec.remove("externalTrafficPolicy");
    }
    if type_of(old) == "LoadBalancer"
        && type_of(&new) != "LoadBalancer"
        && new.get("allocateLoadBalancerNodePorts") == old.get("allocateLoadBalancerNodePorts")
    {
        spec.remove("allocateLoadBalancerNodePorts");
    }
}

fn node_ports(spec: &Value) -> Vec<Option<i64>> {
    spec.get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| p.get("nodePort").and_then(Value::as_i64))
        .collect()
}

fn same_node_ports(new: &Value, old: &Value) -> bool {
    let (new, old) = (node_ports(new), node_ports(old));
    new.len() == old.len() && new.iter().zip(&old).all(|(n, o)| n.is_none() || n == o)
}

fn validate(name: &str, spec: &Value) -> ApiResult<()> {
    let kind = type_of(spec);
    let mut causes = Vec::new();
    if !matches!(
        kind,
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
    ) {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: \"{kind}\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""
            ),
            field: "spec.type".into(),
        });
    }
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    let ports = spec.get("ports").and_then(Value::as_array);
    if kind != "ExternalName" && !headless && ports.is_none_or(Vec::is_empty) {
        causes.push(Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: "spec.ports".into(),
        });
    }
    if kind == "ClusterIP" {
        for (i, port) in ports.into_iter().flatten().enumerate() {
            if port
                .get("nodePort")
                .and_then(Value::as_i64)
                .is_some_and(|n| n != 0)
            {
                causes.push(Cause {
                    reason: "FieldValueForbidden".into(),
                    message: "Forbidden: may not be used when `type` is 'ClusterIP'".into(),
                    field: format!("spec.ports[{i}].nodePort"),
                });
            }
        }
    }
    if !externally_accessible(spec)
        && let Some(policy) = spec.get("externalTrafficPolicy").and_then(Value::as_str)
    {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: \"{policy}\": may only be set for externally-accessible services"
            ),
            field: "spec.externalTrafficPolicy".into(),
        });
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("Service", "", name, causes))
    }
}

/// Gives every port of a NodePort or LoadBalancer Service that has none a free node port;
/// `used` holds the node ports of the other Services. Refuses a node port already in use.
pub fn allocate_node_ports(object: &mut Value, used: &BTreeSet<i64>) -> ApiResult<()> {
    let name = meta::name_of(object).to_owned();
    let Some(spec) = object.get_mut("spec") else {
        return Ok(());
    };
    if !needs_node_ports(spec) {
        return Ok(());
    }
    let mut taken = used.clone();
    let Some(Value::Array(ports)) = spec.get_mut("ports") else {
        return Ok(());
    };
    for (i, port) in ports.iter().enumerate() {
        if let Some(n) = port.get("nodePort").and_then(Value::as_i64)
            && !taken.insert(n)
        {
            return Err(ApiError::invalid(
                "Service",
                "",
                &name,
                vec![Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!("Invalid value: {n}: provided port is already allocated"),
                    field: format!("spec.ports[{i}].nodePort"),
                }],
            ));
        }
    }
    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
        if port.get("nodePort").and_then(Value::as_i64).is_none() {
            let free = NODE_PORTS
                .clone()
                .find(|n| !taken.contains(n))
                .ok_or_else(|| {
                    ApiError::internal("failed to allocate a nodePort: range is full")
                })?;
            taken.insert(free);
            port.insert("nodePort".into(), json!(free));
        }
    }
    Ok(())
}

/// Node ports for `object` when it is a Service, against every other Service in `state`.
pub fn allocate_in(state: &State, def: &ResourceDef, object: &mut Value) -> ApiResult<()> {
    if def.store_key() != keys::services() {
        return Ok(());
    }
    let (namespace, name) = (
        meta::str_at(object, "/metadata/namespace").to_owned(),
        meta::name_of(object).to_owned(),
    );
    let used: BTreeSet<i64> = state
        .list(&keys::services(), None)
        .filter(|s| meta::name_of(s) != name || meta::str_at(s, "/metadata/namespace") != namespace)
        .flat_map(|s| held_node_ports(s).collect::<Vec<_>>())
        .collect();
    allocate_node_ports(object, &used)
}

/// The node ports a Service holds.
pub fn held_node_ports(service: &Value) -> impl Iterator<Item = i64> + '_ {
    service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_get_a_cluster_ip_and_target_ports() {
        let mut svc =
            json!({"metadata": {"name": "s", "uid": "u"}, "spec": {"ports": [{"port": 80}]}});
        admit_service(&mut svc, None).expect("admitted");
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], 80);
        assert!(
            svc["spec"]["clusterIP"]
                .as_str()
                .is_some_and(|ip| ip.starts_with("10.96."))
        );
        assert!(svc["spec"].get("externalTrafficPolicy").is_none());
        let mut headless = json!({"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}});
        admit_service(&mut headless, None).expect("admitted");
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    }

    #[test]
    fn a_node_port_on_a_cluster_ip_service_and_a_service_without_ports_are_refused() {
        let mut svc = json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80, "nodePort": 30080}]}});
        let error = admit_service(&mut svc, None).expect_err("invalid");
        assert_eq!(
            error.message,
            "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
        );
        let mut empty = json!({"metadata": {"name": "web"}, "spec": {}});
        let error = admit_service(&mut empty, None).expect_err("invalid");
        assert_eq!(
            error.message,
            "Service \"web\" is invalid: spec.ports: Required value"
        );
        let mut policy = json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}], "externalTrafficPolicy": "Local"}});
        assert_eq!(
            admit_service(&mut policy, None).expect_err("invalid").code,
            422
        );
    }

    #[test]
    fn node_ports_are_allocated_defaulted_and_dropped_with_the_type() {
        let mut svc = json!({"metadata": {"name": "web"}, "spec": {"type": "LoadBalancer",
            "ports": [{"port": 80}, {"port": 443, "nodePort": 30000}]}});
        admit_service(&mut svc, None).expect("admitted");
        assert_eq!(svc["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(svc["spec"]["allocateLoadBalancerNodePorts"], true);
        allocate_node_ports(&mut svc, &BTreeSet::from([30001])).expect("allocated");
        assert_eq!(held_node_ports(&svc).collect::<Vec<_>>(), [30002, 30000]);
        let taken = allocate_node_ports(&mut svc.clone(), &BTreeSet::from([30000]));
        assert!(
            taken
                .expect_err("in use")
                .message
                .contains("already allocated")
        );

        let old = svc.clone();
        let mut back = svc.clone();
        back["spec"]["type"] = json!("ClusterIP");
        admit_service(&mut back, Some(&old)).expect("the server's node ports go with the type");
        assert_eq!(held_node_ports(&back).count(), 0);
        assert!(back["spec"].get("externalTrafficPolicy").is_none());
        assert!(back["spec"].get("allocateLoadBalancerNodePorts").is_none());
    }
}
