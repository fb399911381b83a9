//! `meta.k8s.io/v1 Table` answers for `kubectl get`, with the kind's printer from the catalog.

use serde_json::Value;

use crate::catalog::registry::ResourceDef;
use crate::catalog::table::{IncludeObject, Printer, render_table};

/// The `includeObject` query parameter; unknown values mean the default (metadata).
pub fn include_object(raw: Option<&str>) -> IncludeObject {
    IncludeObject::from_query(raw).unwrap_or_default()
}

/// Renders `objects` (in `def`'s view) as a Table; `resource_version` and `continue_token` go
/// into the list metadata.
pub fn table(
    def: &ResourceDef,
    objects: &[Value],
    resource_version: &str,
    continue_token: Option<&str>,
    include: IncludeObject,
) -> Value {
    let builtin;
    let printer = match &def.crd {
        Some(crd) => &crd.printer,
        None => {
            builtin = Printer::for_builtin(&def.group, &def.kind);
            &builtin
        }
    };
    let refs: Vec<&Value> = objects.iter().collect();
    render_table(
        printer,
        &refs,
        include,
        resource_version,
        continue_token,
        jiff::Timestamp::now(),
    )
}
