//! PersistentVolumeClaims on create, as kube-apiserver admits them: the claim must ask for at
//! least one access mode and a storage size, `volumeMode` defaults to `Filesystem`, the
//! `StorageObjectInUseProtection` admission plugin adds the `kubernetes.io/pvc-protection`
//! finalizer and the claim starts `Pending` (the simulator binds it).

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, Cause};
use crate::meta;

/// The finalizer the pvc-protection controller removes once no pod uses the claim.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";

fn required(field: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: if message.is_empty() {
            "Required value".into()
        } else {
            format!("Required value: {message}")
        },
        field: field.into(),
    }
}

/// Validates and defaults a claim; `old` is the stored claim on updates.
pub fn admit_claim(object: &mut Value, old: Option<&Value>) -> ApiResult<()> {
    let mut causes = Vec::new();
    let modes = object
        .pointer("/spec/accessModes")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if modes == 0 {
        causes.push(required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    if object.pointer("/spec/resources/requests/storage").is_none() {
        causes.push(required("spec.resources[storage]", ""));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            "PersistentVolumeClaim",
            "",
            meta::name_of(object),
            causes,
        ));
    }
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("volumeMode")
            .or_insert_with(|| json!("Filesystem"));
    }
    if old.is_none() {
        let mut finalizers = meta::finalizers(object);
        if !finalizers.iter().any(|f| f == PVC_PROTECTION) {
            finalizers.push(PVC_PROTECTION.to_owned());
        }
        meta::set_finalizers(object, &finalizers);
        object["status"] = json!({"phase": "Pending"});
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_needs_access_modes_and_a_size() {
        let mut claim = json!({"metadata": {"name": "bad"}, "spec": {}});
        let error = admit_claim(&mut claim, None).expect_err("invalid");
        assert_eq!(
            error.message,
            "PersistentVolumeClaim \"bad\" is invalid: [spec.accessModes: Required value: at \
             least 1 access mode is required, spec.resources[storage]: Required value]"
        );
    }

    #[test]
    fn a_new_claim_is_protected_pending_and_a_filesystem() {
        let mut claim = json!({"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        admit_claim(&mut claim, None).expect("valid");
        assert_eq!(claim["metadata"]["finalizers"], json!([PVC_PROTECTION]));
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claim["status"], json!({"phase": "Pending"}));
    }
}
