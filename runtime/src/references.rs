//! References between managed resources of one namespace (`vpcIdRef: {name}`,
//! `vpcIdSelector: {matchLabels}`), resolved the same way for every kind from the table the kind
//! declares ([`HasReferences`]):
//!
//! - a literal that is already set wins, so a resolved reference stays resolved (stable) and
//!   survives the referenced object's deletion;
//! - a reference or selector resolves to the external name of a Ready object of the target kind
//!   in the same namespace, never another namespace's;
//! - a selector picks the first Ready match by name (a list field takes every Ready match);
//! - anything unresolved is a [`ReconcileError::dependency`]: nothing is written and the cloud
//!   is not called with a half-filled request.
//!
//! [`resolve`] returns the `spec.forProvider` patch that fills the literals; [`referencing`]
//! maps a change of a referenced object to the objects waiting for it.

use std::collections::BTreeMap;

use ferroplane_apis::common::names;
use ferroplane_apis::references::{HasReferences, ReferenceField, ReferenceValue, TargetKind};
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, Resource, ResourceExt};
use serde_json::{Map, Value};

use crate::error::ReconcileError;
use crate::resource::ManagedResource;

/// Reason of every unresolved reference (defined with the others in [`crate::reasons`]).
pub use crate::reasons::REFERENCE_NOT_RESOLVED;

fn api_resource(target: &TargetKind) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(target.group, target.version, target.kind),
        target.plural,
    )
}

fn for_provider<K: serde::Serialize>(obj: &K) -> Value {
    serde_json::to_value(obj)
        .ok()
        .and_then(|mut v| v.pointer_mut("/spec/forProvider").map(Value::take))
        .unwrap_or(Value::Null)
}

fn is_set(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// What `field` takes from a Ready object, or why it cannot be used.
fn usable_value(obj: &DynamicObject, field: &ReferenceField) -> Result<String, &'static str> {
    let name = usable_name(obj)?;
    match field.value {
        ReferenceValue::ExternalName => Ok(name),
        ReferenceValue::StatusListItem {
            list,
            key,
            equals,
            field,
        } => obj
            .data
            .pointer(list)
            .and_then(Value::as_array)
            .and_then(|items| {
                items
                    .iter()
                    .find(|item| item.get(key).and_then(Value::as_str) == Some(equals))
            })
            .and_then(|item| item.get(field).and_then(Value::as_str))
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .ok_or("reports no such value in its status yet"),
    }
}

/// The external name of a Ready object, or why it cannot be used.
fn usable_name(obj: &DynamicObject) -> Result<String, &'static str> {
    let ready = obj
        .data
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some(names::READY)
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        });
    let external =
        crate::annotations::external_name_in(obj.meta().annotations.as_ref()).map(str::to_owned);
    match (ready, external) {
        (true, Some(name)) => Ok(name),
        (_, None) => Err("has no external resource yet"),
        (false, Some(_)) => Err("is not Ready yet"),
    }
}

fn unresolved(message: String) -> ReconcileError {
    ReconcileError::dependency(REFERENCE_NOT_RESOLVED, message)
}

fn match_labels(selector: &Value) -> BTreeMap<String, String> {
    selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

fn label_selector(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

async fn by_name(
    api: &Api<DynamicObject>,
    field: &ReferenceField,
    name: &str,
) -> Result<String, ReconcileError> {
    let kind = field.target.kind;
    let found = api
        .get_opt(name)
        .await
        .map_err(|e| ReconcileError::kube(&format!("cannot read {kind} {name}"), e))?;
    let Some(obj) = found else {
        return Err(unresolved(format!(
            "{} names {kind} {name}, which does not exist in this namespace",
            field.reference
        )));
    };
    usable_value(&obj, field).map_err(|why| {
        unresolved(format!(
            "{} names {kind} {name}, which {why}",
            field.reference
        ))
    })
}

async fn by_labels(
    api: &Api<DynamicObject>,
    field: &ReferenceField,
    selector: &Value,
) -> Result<Vec<String>, ReconcileError> {
    let kind = field.target.kind;
    let labels = match_labels(selector);
    let shown = label_selector(&labels);
    let mut matches = api
        .list(&ListParams::default().labels(&shown))
        .await
        .map_err(|e| ReconcileError::kube(&format!("cannot list {kind} objects"), e))?
        .items;
    matches.sort_by_key(|o| o.name_any());
    let usable: Vec<String> = matches
        .iter()
        .filter_map(|o| usable_value(o, field).ok())
        .collect();
    if usable.is_empty() {
        return Err(unresolved(format!(
            "{} matches no Ready {kind} in this namespace (labels {shown}; {} match, none Ready with an external resource)",
            field.selector,
            matches.len()
        )));
    }
    Ok(usable)
}

async fn resolve_field(
    client: &Client,
    namespace: &str,
    spec: &Value,
    field: &ReferenceField,
) -> Result<Option<Value>, ReconcileError> {
    if is_set(spec.get(field.field)) {
        return Ok(None);
    }
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &api_resource(&field.target));
    if let Some(reference) = spec.get(field.reference).filter(|v| !v.is_null()) {
        let names: Vec<&str> = if field.many {
            reference
                .as_array()
                .map(|refs| {
                    refs.iter()
                        .filter_map(|r| r.get("name")?.as_str())
                        .collect()
                })
                .unwrap_or_default()
        } else {
            reference
                .get("name")
                .and_then(Value::as_str)
                .into_iter()
                .collect()
        };
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            ids.push(by_name(&api, field, name).await?);
        }
        return Ok(Some(if field.many {
            Value::from(ids)
        } else {
            ids.into_iter()
                .next()
                .map(Value::from)
                .unwrap_or(Value::Null)
        }));
    }
    if let Some(selector) = spec.get(field.selector).filter(|v| !v.is_null()) {
        let ids = by_labels(&api, field, selector).await?;
        return Ok(Some(if field.many {
            Value::from(ids)
        } else {
            Value::from(ids[0].clone())
        }));
    }
    Ok(None)
}

/// The `spec.forProvider` patch that fills every literal whose reference or selector resolves
/// now, or `None` when there is nothing to fill. Any reference that does not resolve is an error
/// naming it, and then nothing is filled.
pub async fn resolve<K: ManagedResource + HasReferences>(
    client: &Client,
    obj: &K,
) -> Result<Option<Map<String, Value>>, ReconcileError> {
    let fields = K::reference_fields();
    if fields.is_empty() {
        return Ok(None);
    }
    let spec = for_provider(obj);
    let namespace = obj.namespace().unwrap_or_default();
    let mut patch = Map::new();
    for field in fields {
        if let Some(value) = resolve_field(client, &namespace, &spec, field).await? {
            patch.insert(field.field.to_owned(), value);
        }
    }
    Ok((!patch.is_empty()).then_some(patch))
}

/// Whether `spec` waits for `target` through `field`: its literal is empty and its reference
/// names the target or its selector matches the target's labels.
fn waits_for(
    spec: &Value,
    field: &ReferenceField,
    target_name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    if is_set(spec.get(field.field)) {
        return false;
    }
    let named = |r: &Value| r.get("name").and_then(Value::as_str) == Some(target_name);
    match spec.get(field.reference) {
        Some(Value::Array(refs)) if refs.iter().any(named) => return true,
        Some(r @ Value::Object(_)) if named(r) => return true,
        _ => {}
    }
    spec.get(field.selector)
        .filter(|s| s.is_object())
        .is_some_and(|s| {
            match_labels(s)
                .iter()
                .all(|(k, v)| labels.get(k) == Some(v))
        })
}

/// The objects of kind `K` in the store that wait for the changed object `target` (of a kind some
/// of `K`'s references point at), so that they are reconciled as soon as it becomes Ready
/// instead of at their next backoff.
pub fn referencing<R: Resource<DynamicType = ()>, K: ManagedResource + HasReferences>(
    target: &R,
    store: &Store<K>,
) -> Vec<ObjectRef<K>> {
    let kind = R::kind(&());
    let fields: Vec<&ReferenceField> = K::reference_fields()
        .iter()
        .filter(|f| f.target.kind == kind && f.target.group == R::group(&()))
        .collect();
    if fields.is_empty() {
        return Vec::new();
    }
    let namespace = target.meta().namespace.clone();
    let name = target.meta().name.clone().unwrap_or_default();
    let labels = target.meta().labels.clone().unwrap_or_default();
    store
        .state()
        .iter()
        .filter(|obj| obj.namespace() == namespace)
        .filter(|obj| {
            let spec = for_provider(obj.as_ref());
            fields.iter().any(|f| waits_for(&spec, f, &name, &labels))
        })
        .map(|obj| ObjectRef::from_obj(obj.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::references::TargetKind;
    use serde_json::json;

    const FIELD: ReferenceField = ReferenceField {
        field: "vpcId",
        reference: "vpcIdRef",
        selector: "vpcIdSelector",
        many: false,
        target: TargetKind {
            group: "g",
            version: "v1",
            kind: "VPC",
            plural: "vpcs",
        },
        value: ReferenceValue::ExternalName,
    };
    const LIST: ReferenceField = ReferenceField {
        field: "securityGroupIds",
        reference: "securityGroupIdRefs",
        selector: "securityGroupIdSelector",
        many: true,
        target: FIELD.target,
        value: ReferenceValue::ExternalName,
    };

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn waits_only_while_the_literal_is_empty() {
        let by_ref = json!({"vpcIdRef": {"name": "main"}});
        assert!(waits_for(&by_ref, &FIELD, "main", &labels(&[])));
        assert!(!waits_for(&by_ref, &FIELD, "other", &labels(&[])));
        let resolved = json!({"vpcIdRef": {"name": "main"}, "vpcId": "vpc-1"});
        assert!(!waits_for(&resolved, &FIELD, "main", &labels(&[])));

        let by_labels = json!({"vpcIdSelector": {"matchLabels": {"tier": "web"}}});
        assert!(waits_for(
            &by_labels,
            &FIELD,
            "x",
            &labels(&[("tier", "web"), ("a", "b")])
        ));
        assert!(!waits_for(
            &by_labels,
            &FIELD,
            "x",
            &labels(&[("tier", "db")])
        ));

        let list = json!({"securityGroupIdRefs": [{"name": "a"}, {"name": "b"}]});
        assert!(waits_for(&list, &LIST, "b", &labels(&[])));
        let filled = json!({"securityGroupIdRefs": [{"name": "a"}], "securityGroupIds": ["sg-1"]});
        assert!(!waits_for(&filled, &LIST, "a", &labels(&[])));
        assert!(!is_set(Some(&json!([]))));
    }

    #[test]
    fn only_a_ready_object_with_an_external_name_is_usable() {
        let obj = |ready: &str, name: Option<&str>| {
            let mut o = DynamicObject::new("main", &api_resource(&FIELD.target)).data(json!({
                "status": {"conditions": [{"type": "Ready", "status": ready}]}
            }));
            if let Some(n) = name {
                o.metadata.annotations =
                    Some([(names::EXTERNAL_NAME.to_owned(), n.to_owned())].into());
            }
            o
        };
        assert_eq!(
            usable_name(&obj("True", Some("vpc-1"))),
            Ok("vpc-1".to_owned())
        );
        assert_eq!(
            usable_name(&obj("False", Some("vpc-1"))),
            Err("is not Ready yet")
        );
        assert_eq!(
            usable_name(&obj("True", None)),
            Err("has no external resource yet")
        );
        assert_eq!(
            label_selector(&labels(&[("a", "1"), ("b", "2")])),
            "a=1,b=2"
        );
    }

    #[test]
    fn a_status_list_item_is_taken_from_the_matching_element_of_a_ready_object() {
        const PRIMARY: ReferenceField = ReferenceField {
            field: "instanceId",
            reference: "networkInterfaceIdRef",
            selector: "networkInterfaceIdSelector",
            many: false,
            target: FIELD.target,
            value: ReferenceValue::StatusListItem {
                list: "/status/atProvider/networkInterfaces",
                key: "type",
                equals: "Primary",
                field: "networkInterfaceId",
            },
        };
        let obj = |ready: &str, interfaces: Value| {
            let mut o = DynamicObject::new("web", &api_resource(&FIELD.target)).data(json!({
                "status": {
                    "conditions": [{"type": "Ready", "status": ready}],
                    "atProvider": {"networkInterfaces": interfaces},
                }
            }));
            o.metadata.annotations =
                Some([(names::EXTERNAL_NAME.to_owned(), "i-1".to_owned())].into());
            o
        };
        let both = json!([
            {"networkInterfaceId": "eni-2", "type": "Secondary"},
            {"networkInterfaceId": "eni-1", "type": "Primary"},
        ]);
        assert_eq!(
            usable_value(&obj("True", both.clone()), &PRIMARY),
            Ok("eni-1".to_owned())
        );
        assert_eq!(
            usable_value(&obj("False", both), &PRIMARY),
            Err("is not Ready yet")
        );
        assert_eq!(
            usable_value(
                &obj(
                    "True",
                    json!([{"networkInterfaceId": "eni-2", "type": "Secondary"}])
                ),
                &PRIMARY
            ),
            Err("reports no such value in its status yet")
        );
        assert_eq!(
            usable_value(&obj("True", json!([])), &FIELD),
            Ok("i-1".to_owned())
        );
    }
}
