//! What the apiserver does to an object of a given kind before storing it: Secret `stringData`,
//! the defaults of the built-in workload kinds that controllers compare against, CRD status, and
//! for custom objects the CRD schema (defaults, pruning, validation, CEL rules; the
//! `ferroplane-sandbox-schema` crate).
//!
//! Every call into the schema crate is in this file (the registry only compiles and keeps the
//! schemas).

pub mod claims;
mod events;
mod jobs;
mod object_meta;
pub mod services;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use ferroplane_sandbox_schema::{CompiledSchema, invalid_message};

use crate::catalog::registry::{ResourceDef, keys};
use crate::catalog::table::Printer;
use crate::error::{ApiError, ApiResult, Cause};
use crate::meta;

/// `fieldValidation`: what to do with unknown fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    pub fn parse(raw: Option<&str>) -> ApiResult<Self> {
        match raw.unwrap_or_default() {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn, or Strict, got {other:?}"
            ))),
        }
    }
}

/// Prepares `object` (the stored form) for storage. `old` is the stored object on updates.
/// Returns warnings for the `Warning` header.
pub fn admit(
    def: &ResourceDef,
    object: &mut Value,
    old: Option<&Value>,
    validation: FieldValidation,
) -> ApiResult<Vec<String>> {
    let key = def.store_key();
    let mut causes = object_meta::validate(object);
    if key == keys::events() {
        let through_events_api = def.group == "events.k8s.io";
        causes.extend(events::validate(object, old, through_events_api));
    }
    if !causes.is_empty() {
        // Events are validated as the internal (core) type, whatever group they came through.
        let group = if key == keys::events() {
            ""
        } else {
            &def.group
        };
        return Err(ApiError::invalid(
            &def.kind,
            group,
            meta::name_of(object),
            causes,
        ));
    }
    if key == keys::secrets() {
        fold_string_data(object);
        drop_empty_maps(object, &["data"]);
    } else if key.group.is_empty() && key.plural == "configmaps" {
        drop_empty_maps(object, &["data", "binaryData"]);
    } else if key == keys::namespaces() {
        namespace_defaults(object, old);
    } else if key == keys::crds() {
        crd_status(object, old)?;
    } else if key == keys::deployments() {
        workload_defaults(object, true);
    } else if key == keys::statefulsets() {
        workload_defaults(object, false);
    } else if key == keys::services() {
        services::admit_service(object, old)?;
    } else if key == keys::persistent_volume_claims() {
        claims::admit_claim(object, old)?;
    } else if key == keys::jobs() {
        jobs::admit_job(object, old)?;
    }
    if def.is_custom() {
        return admit_custom(def, object, old, validation);
    }
    Ok(Vec::new())
}

/// Empty maps are not kept (kube-apiserver stores built-in kinds as protobuf, where an empty
/// map and a missing one are the same), so `data: {}` reads back as no `data`.
fn drop_empty_maps(object: &mut Value, fields: &[&str]) {
    if let Value::Object(map) = object {
        map.retain(|k, v| {
            !(fields.contains(&k.as_str()) && v.as_object().is_some_and(Map::is_empty))
        });
    }
}

/// `stringData` entries overwrite `data` entries, base64-encoded; the default type is Opaque.
fn fold_string_data(object: &mut Value) {
    let Value::Object(map) = object else { return };
    if let Some(Value::Object(string_data)) = map.remove("stringData") {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if !data.is_object() {
            *data = Value::Object(Map::new());
        }
        if let Value::Object(data) = data {
            for (k, v) in string_data {
                let text = v
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string());
                data.insert(
                    k,
                    Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    if map
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        map.insert("type".into(), json!("Opaque"));
    }
}

fn namespace_defaults(object: &mut Value, old: Option<&Value>) {
    object["spec"] = json!({"finalizers": ["kubernetes"]});
    let phase = if old.is_some_and(meta::is_terminating) {
        "Terminating"
    } else {
        "Active"
    };
    if let Some(old_status) = old.and_then(|o| o.get("status")) {
        object["status"] = old_status.clone();
    }
    meta::set_at(object, &["status", "phase"], json!(phase));
}

fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.into(), value);
    }
}

/// The defaults kube-apiserver fills in for Deployments and StatefulSets.
fn workload_defaults(object: &mut Value, deployment: bool) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    set_default(spec, "replicas", json!(1));
    set_default(spec, "revisionHistoryLimit", json!(10));
    if deployment {
        set_default(spec, "progressDeadlineSeconds", json!(600));
        set_default(
            spec,
            "strategy",
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        );
    } else {
        set_default(spec, "podManagementPolicy", json!("OrderedReady"));
        set_default(
            spec,
            "updateStrategy",
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
        );
        set_default(
            spec,
            "persistentVolumeClaimRetentionPolicy",
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
        );
    }
    if let Some(pod) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        set_default(pod, "restartPolicy", json!("Always"));
        set_default(pod, "terminationGracePeriodSeconds", json!(30));
        set_default(pod, "dnsPolicy", json!("ClusterFirst"));
        set_default(pod, "schedulerName", json!("default-scheduler"));
        set_default(pod, "securityContext", json!({}));
        if let Some(Value::Array(containers)) = pod.get_mut("containers") {
            for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                set_default(
                    container,
                    "terminationMessagePath",
                    json!("/dev/termination-log"),
                );
                set_default(container, "terminationMessagePolicy", json!("File"));
                set_default(container, "imagePullPolicy", json!("IfNotPresent"));
                set_default(container, "resources", json!({}));
                if let Some(Value::Array(ports)) = container.get_mut("ports") {
                    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                        set_default(port, "protocol", json!("TCP"));
                    }
                }
            }
        }
    }
}

/// Validates a CRD's names and sets the status a real apiserver converges to at once.
fn crd_status(object: &mut Value, old: Option<&Value>) -> ApiResult<()> {
    let name = meta::name_of(object).to_owned();
    let group = meta::str_at(object, "/spec/group").to_owned();
    let plural = meta::str_at(object, "/spec/names/plural").to_owned();
    let kind = meta::str_at(object, "/spec/names/kind").to_owned();
    let invalid = |field: &str, message: String| {
        ApiError::invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            &name,
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message,
                field: field.into(),
            }],
        )
    };
    if name != format!("{plural}.{group}") {
        return Err(invalid(
            "metadata.name",
            format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    if kind.is_empty() {
        return Err(invalid("spec.names.kind", "Required value".into()));
    }
    let versions = object
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    if storage.len() != 1 {
        return Err(invalid(
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version".into(),
        ));
    }
    for (i, version) in versions.iter().enumerate() {
        if let Err(error) = Printer::try_for_crd_version(version) {
            return Err(invalid(
                &format!("spec.versions[{i}].additionalPrinterColumns"),
                format!("Invalid value: {error}"),
            ));
        }
        if let Some(schema) = version.pointer("/schema/openAPIV3Schema")
            && let Err(error) = CompiledSchema::compile(schema)
        {
            return Err(invalid(
                &format!("spec.versions[{i}].schema.openAPIV3Schema"),
                format!("Invalid value: {error}"),
            ));
        }
    }
    let mut names = object
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if names.get("singular").is_none() {
        names["singular"] = json!(kind.to_lowercase());
    }
    if names.get("listKind").is_none() {
        names["listKind"] = json!(format!("{kind}List"));
    }
    let mut stored: Vec<Value> = old
        .and_then(|o| o.pointer("/status/storedVersions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !stored.iter().any(|v| v == storage[0]) {
        stored.push(json!(storage[0]));
    }
    let since = old
        .and_then(|o| o.pointer("/status/conditions/0/lastTransitionTime"))
        .cloned()
        .unwrap_or_else(|| json!(meta::now_time()));
    object["status"] = json!({
        "acceptedNames": names,
        "storedVersions": stored,
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": since},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": since}
        ]
    });
    if old.is_some_and(meta::is_terminating) {
        object["status"]["conditions"].as_array_mut().into_iter().for_each(|c| {
            c.push(json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress", "message": "CustomResource deletion is in progress", "lastTransitionTime": meta::now_time()}));
        });
    }
    Ok(())
}

/// Custom objects: the CRD version's schema.
fn admit_custom(
    def: &ResourceDef,
    object: &mut Value,
    old: Option<&Value>,
    validation: FieldValidation,
) -> ApiResult<Vec<String>> {
    let Some(schema) = def.crd.as_ref().and_then(|c| c.compiled.clone()) else {
        return Ok(Vec::new());
    };
    let unknown = schema.prune_unknown_values(object);
    if validation == FieldValidation::Strict && !unknown.is_empty() {
        let listed: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field {f:?}"))
            .collect();
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
            listed.join(", "),
            kind = def.kind,
            version = def.version,
        )));
    }
    schema.apply_defaults(object);
    let errors = schema.validate(object, old);
    if !errors.is_empty() {
        let name = meta::name_of(object);
        let causes = errors
            .iter()
            .map(|e| Cause {
                reason: e.reason().to_owned(),
                message: e.body(),
                field: e.field_display().to_owned(),
            })
            .collect();
        let message = invalid_message(&def.kind, &def.group, name, &errors);
        return Err(ApiError::invalid_with_message(
            message, &def.kind, &def.group, name, causes,
        ));
    }
    Ok(match validation {
        FieldValidation::Warn => unknown
            .iter()
            .map(|f| format!("unknown field {f:?}"))
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::registry::Registry;

    #[test]
    fn secrets_fold_string_data() {
        let def = Registry::default()
            .find("", "v1", "secrets")
            .expect("served");
        let mut secret = json!({"metadata": {"name": "s"}, "data": {"a": "eA=="}, "stringData": {"b": "hello", "a": "y"}});
        admit(&def, &mut secret, None, FieldValidation::Strict).expect("admitted");
        assert_eq!(secret["data"], json!({"a": "eQ==", "b": "aGVsbG8="}));
        assert_eq!(secret["type"], "Opaque");
        assert!(secret.get("stringData").is_none());
    }

    #[test]
    fn crd_name_must_match_plural_and_group() {
        let def = Registry::default()
            .find("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .expect("served");
        let mut crd = json!({"metadata": {"name": "wrong"}, "spec": {"group": "example.io", "names": {"kind": "W", "plural": "ws"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
        let error = admit(&def, &mut crd, None, FieldValidation::Strict).expect_err("invalid");
        assert_eq!(error.code, 422);
        crd["metadata"]["name"] = json!("ws.example.io");
        admit(&def, &mut crd, None, FieldValidation::Strict).expect("admitted");
        assert_eq!(crd["status"]["conditions"][1]["type"], "Established");
        assert_eq!(crd["status"]["acceptedNames"]["listKind"], "WList");
    }
}
