//! Request options decoded from the query string, headers and `DeleteOptions` bodies: the
//! write options, the delete options, the patch format and the selectors.

use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use crate::catalog::registry::ResourceDef;
use crate::error::{ApiError, ApiResult, Cause};
use crate::http::codec::{self, Query};
use crate::store::admission::FieldValidation;
use crate::store::ops::options::{DeleteOptions, Propagation, WriteOptions};
use crate::store::ops::patch::PatchKind;
use crate::store::selector::{FieldSelector, LabelSelector, Selectors};

/// `dryRun`, the field manager (`fieldManager`, else the client's user agent) and
/// `fieldValidation`.
pub fn write_options(query: &Query, headers: &HeaderMap) -> ApiResult<WriteOptions> {
    let manager = match query.get("fieldManager") {
        Some(m) if !m.is_empty() => m.to_owned(),
        _ => headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .and_then(|ua| ua.split('/').next())
            .filter(|m| !m.is_empty())
            .unwrap_or("unknown")
            .to_owned(),
    };
    Ok(WriteOptions {
        dry_run: query.get("dryRun") == Some("All"),
        manager,
        validation: FieldValidation::parse(query.get("fieldValidation"))?,
        apply: false,
        untracked: false,
    })
}

const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The patch format of the request's `Content-Type`; strategic merge patches are for built-in
/// kinds only.
pub fn patch_kind(def: &ResourceDef, query: &Query, headers: &HeaderMap) -> ApiResult<PatchKind> {
    let media_type = codec::content_type(headers);
    let accepted: &[&str] = if def.is_custom() {
        &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ]
    } else {
        PATCH_TYPES
    };
    match media_type.as_str() {
        "application/merge-patch+json" => Ok(PatchKind::Merge),
        "application/json-patch+json" => Ok(PatchKind::Json),
        "application/strategic-merge-patch+json" if !def.is_custom() => Ok(PatchKind::Strategic),
        "application/apply-patch+yaml" => Ok(PatchKind::Apply {
            force: query.flag("force"),
        }),
        other => Err(ApiError::unsupported_media_type(other, accepted)),
    }
}

/// An apply patch names its field manager: `PatchOptions.fieldManager` is required.
pub fn require_field_manager(query: &Query) -> ApiResult<()> {
    if query.get("fieldManager").is_none_or(str::is_empty) {
        return Err(ApiError::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            vec![Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: is required for apply patch".into(),
                field: "fieldManager".into(),
            }],
        ));
    }
    Ok(())
}

/// `DeleteOptions` from the body (JSON, may be empty), else from the query.
pub fn delete_options(query: &Query, body: &[u8]) -> ApiResult<DeleteOptions> {
    let parsed = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        codec::decode(body, "application/json")?
    };
    let policy = parsed
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or_else(|| query.get("propagationPolicy"))
        .unwrap_or_default();
    let orphan = parsed
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| query.get("orphanDependents").map(|v| v == "true"));
    let propagation = match (policy, orphan) {
        ("Foreground", _) => Propagation::Foreground,
        ("Orphan", _) | ("", Some(true)) => Propagation::Orphan,
        ("Background" | "", _) => Propagation::Background,
        (other, _) => {
            return Err(ApiError::invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                vec![Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!(
                        "Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
                    ),
                    field: "propagationPolicy".into(),
                }],
            ));
        }
    };
    let dry_run = parsed
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|d| d.iter().any(|v| v == "All"))
        || query.get("dryRun") == Some("All");
    Ok(DeleteOptions {
        propagation,
        precondition_uid: parsed
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_owned),
        precondition_rv: parsed
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        dry_run,
    })
}

/// `labelSelector` and `fieldSelector` (the fields `def` can be selected by).
pub fn selectors(def: &ResourceDef, query: &Query) -> ApiResult<Selectors> {
    let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?;
    let fields = FieldSelector::parse(
        query.get("fieldSelector").unwrap_or_default(),
        &def.group,
        &def.plural,
        def.is_custom(),
    )?;
    Ok(Selectors { labels, fields })
}
