//! batch/v1 Jobs on create and update, as kube-apiserver admits them: the generated selector
//! (`batch.kubernetes.io/controller-uid`) and pod labels, the spec defaults, and on updates the
//! immutability of `spec.selector` and `spec.template` (a `kubectl replace` of the original
//! manifest, which lacks the generated selector, is refused). Pod template defaults and the
//! other Job validations are not modelled.

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult, Cause};
use crate::meta;

const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
const JOB_NAME: &str = "batch.kubernetes.io/job-name";

fn invalid(field: &str, message: String) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message,
        field: field.into(),
    }
}

/// Defaults a new Job, or checks an update against the stored one.
pub fn admit_job(object: &mut Value, old: Option<&Value>) -> ApiResult<()> {
    match old {
        None => {
            defaults(object);
            Ok(())
        }
        Some(old) => check_immutable(object, old),
    }
}

fn defaults(object: &mut Value) {
    let uid = meta::uid_of(object).to_owned();
    let name = meta::name_of(object).to_owned();
    let manual = object.pointer("/spec/manualSelector") == Some(&json!(true));
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if !manual {
        let generated = json!({
            CONTROLLER_UID: uid, JOB_NAME: name, "controller-uid": uid, "job-name": name,
        });
        spec.insert(
            "selector".into(),
            json!({"matchLabels": {CONTROLLER_UID: uid}}),
        );
        spec.entry("manualSelector").or_insert(json!(false));
        let template = spec.entry("template").or_insert_with(|| json!({}));
        let labels = template["metadata"]
            .as_object_mut()
            .map(|m| m.entry("labels").or_insert_with(|| json!({})).take())
            .unwrap_or_else(|| json!({}));
        let mut labels: Map<String, Value> = labels.as_object().cloned().unwrap_or_default();
        labels.extend(generated.as_object().cloned().unwrap_or_default());
        template["metadata"]["labels"] = Value::Object(labels);
    }
    let parallelism_set = spec.contains_key("parallelism");
    spec.entry("parallelism").or_insert(json!(1));
    if !parallelism_set {
        spec.entry("completions").or_insert(json!(1));
    }
    spec.entry("backoffLimit").or_insert(json!(6));
    spec.entry("completionMode").or_insert(json!("NonIndexed"));
    spec.entry("suspend").or_insert(json!(false));
    spec.entry("podReplacementPolicy")
        .or_insert(json!("TerminatingOrFailed"));
    let template_labels = spec
        .get("template")
        .and_then(|t| t.pointer("/metadata/labels"))
        .cloned();
    let metadata = meta::metadata_mut(object);
    if !metadata.contains_key("labels")
        && let Some(labels) = template_labels
    {
        metadata.insert("labels".into(), labels);
    }
}

fn check_immutable(object: &Value, old: &Value) -> ApiResult<()> {
    let mut causes = Vec::new();
    let selector = object.pointer("/spec/selector");
    if selector.is_none() {
        causes.push(Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: "spec.selector".into(),
        });
        causes.push(invalid(
            "spec.template.metadata.labels",
            "Invalid value: null: `selector` does not match template `labels`".into(),
        ));
    }
    if selector != old.pointer("/spec/selector") {
        let shown = selector.map_or_else(|| "null".to_owned(), Value::to_string);
        causes.push(invalid(
            "spec.selector",
            format!("Invalid value: {shown}: field is immutable"),
        ));
    }
    let template = object.pointer("/spec/template");
    if template != old.pointer("/spec/template") {
        let shown = template.map_or_else(|| "null".to_owned(), Value::to_string);
        causes.push(invalid(
            "spec.template",
            format!("Invalid value: {shown}: field is immutable"),
        ));
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "Job",
        "batch",
        meta::name_of(object),
        causes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Value {
        json!({"metadata": {"name": "once", "uid": "u1"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}}}})
    }

    #[test]
    fn a_new_job_gets_its_selector_labels_and_defaults() {
        let mut object = job();
        admit_job(&mut object, None).expect("admitted");
        assert_eq!(
            object["spec"]["selector"],
            json!({"matchLabels": {CONTROLLER_UID: "u1"}})
        );
        assert_eq!(
            object["spec"]["template"]["metadata"]["labels"],
            json!({CONTROLLER_UID: "u1", JOB_NAME: "once", "controller-uid": "u1", "job-name": "once"})
        );
        assert_eq!(object["metadata"]["labels"]["job-name"], "once");
        assert_eq!(
            (
                &object["spec"]["completions"],
                &object["spec"]["backoffLimit"]
            ),
            (&json!(1), &json!(6))
        );
    }

    #[test]
    fn replacing_the_selector_or_template_is_refused() {
        let mut stored = job();
        admit_job(&mut stored, None).expect("admitted");
        let error = admit_job(&mut job(), Some(&stored)).expect_err("refused");
        assert_eq!(error.code, 422);
        assert_eq!(
            error
                .details
                .causes
                .iter()
                .map(|c| c.field.as_str())
                .collect::<Vec<_>>(),
            [
                "spec.selector",
                "spec.template.metadata.labels",
                "spec.selector",
                "spec.template"
            ]
        );
        assert!(admit_job(&mut stored.clone(), Some(&stored)).is_ok());
    }
}
