//! ferroplane-sandbox-schema: what kube-apiserver does to a custom object before storing it,
//! driven by the CRD version's `openAPIV3Schema`: prune unknown fields, apply defaults,
//! validate (OpenAPI value checks, list-type uniqueness, then `x-kubernetes-validations` CEL
//! rules), and word the failures exactly like the apiserver so kubectl users see familiar
//! messages.
//!
//! Compile a [`CompiledSchema`] once per CRD version: compilation refuses what the apiserver
//! refuses at CRD creation (non-structural schemas, bad patterns, invalid defaults, CEL rules
//! that do not parse or name undeclared fields) and names the schema path of the culprit. Then
//! run every write through [`CompiledSchema::admit`], or through the three steps in the same
//! order; on update, pass the stored object for transition rules and validation ratcheting.
//!
//! Not modelled: CEL cost limits, CEL timestamps/durations for `format: date-time`/`duration`
//! fields (the `cel` crate is built without chrono), order-insensitive equality of `set`/`map`
//! lists in CEL, and the Kubernetes CEL libraries beyond lists and regex (rules that call
//! `url()`, `quantity()`, `ip()`... are skipped rather than failed).
//!
//! The crate works on `serde_json::Value`s only: it must not depend on HTTP, on a store, or on
//! any other ferroplane crate, so that the sandbox API server calls it and nothing flows back.
//!
//! ```
//! use ferroplane_sandbox_schema::{CompiledSchema, invalid_message};
//! use serde_json::json;
//!
//! let schema = CompiledSchema::compile(&json!({
//!     "type": "object",
//!     "properties": {"spec": {
//!         "type": "object",
//!         "required": ["size"],
//!         "properties": {
//!             "size": {"type": "integer", "maximum": 9},
//!             "policy": {"type": "string", "default": "Delete"},
//!             "region": {"type": "string",
//!                 "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "region is immutable"}]}
//!         }
//!     }}
//! }))?;
//!
//! let mut object = json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "t"},
//!                         "spec": {"size": 12, "junk": true}});
//! let errors = schema.admit(&mut object, None);
//! assert_eq!(object["spec"]["policy"], "Delete");          // defaulted
//! assert!(object["spec"].get("junk").is_none());            // pruned
//! assert_eq!(
//!     invalid_message("Thing", "x.io", "t", &errors),
//!     "Thing.x.io \"t\" is invalid: spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9"
//! );
//! # Ok::<(), ferroplane_sandbox_schema::SchemaError>(())
//! ```

mod cel;
mod celcheck;
mod cellib;
mod celvalue;
mod compile;
mod defaults;
mod error;
mod field_path;
mod format;
mod gofmt;
mod json_equal;
mod listtype;
mod node;
mod prune;
mod rule;
mod structural;
mod validate;

pub use error::{FieldError, FieldErrorKind, SchemaError, invalid_message, status_causes};
/// Go's `%v` of a float64, as the apiserver prints numbers: shared with the sandbox's Table
/// printers so that a number column reads the same as in a validation message.
pub use gofmt::float as go_float;

use node::Node;
use serde_json::Value;

/// A CRD version's `openAPIV3Schema`, compiled once and shared by every request
/// (`Send + Sync`, so it can live in the server's registry behind an `Arc`).
#[derive(Debug)]
pub struct CompiledSchema {
    root: Node,
}

impl CompiledSchema {
    /// Compiles `open_api_v3_schema` (the value of `spec.versions[].schema.openAPIV3Schema`).
    /// Fails, naming the schema path of the culprit, on what makes kube-apiserver refuse a CRD:
    /// a non-structural schema, malformed keywords, invalid `pattern` regexes, defaults that
    /// do not validate, CEL rules that do not parse or select a field the schema does not declare.
    pub fn compile(open_api_v3_schema: &Value) -> Result<Self, SchemaError> {
        structural::check(open_api_v3_schema)?;
        Self::compile_unchecked(open_api_v3_schema)
    }

    /// Compiles without the structural-schema rules, for tests of validation semantics on
    /// schemas a CRD could not carry.
    pub(crate) fn compile_unchecked(open_api_v3_schema: &Value) -> Result<Self, SchemaError> {
        let root = compile::compile_node(open_api_v3_schema, "openAPIV3Schema")?;
        celcheck::check_tree(&root, true)?;
        Ok(Self { root })
    }

    /// Prunes, defaults and validates `object` in the apiserver's order; `old` is the stored
    /// object on update. Returns the field errors (empty when the object may be stored).
    pub fn admit(&self, object: &mut Value, old: Option<&Value>) -> Vec<FieldError> {
        self.prune(object);
        self.apply_defaults(object);
        self.validate(object, old)
    }

    /// Fills in `default` values, recursively, where a field is missing or is a `null` that
    /// its schema does not allow.
    pub fn apply_defaults(&self, object: &mut Value) {
        defaults::apply(&self.root, object);
    }

    /// Drops fields the schema does not declare (unless `x-kubernetes-preserve-unknown-fields`)
    /// and non-nullable `null`s without a default. `apiVersion`, `kind` and `metadata` at the root
    /// are never touched.
    pub fn prune(&self, object: &mut Value) {
        self.prune_unknown_fields(object);
    }

    /// Prunes like [`CompiledSchema::prune`] and returns the paths of the unknown fields it
    /// dropped, e.g. `spec.forProvider.bogus` or `spec.list[0].x`: what the apiserver reports as
    /// `unknown field "spec.forProvider.bogus"` under `fieldValidation=Strict` (an error) or
    /// `Warn` (a warning).
    pub fn prune_unknown_fields(&self, object: &mut Value) -> Vec<String> {
        let mut unknown = Vec::new();
        prune::prune(&self.root, object, true, "", true, &mut unknown);
        unknown
    }

    /// Prunes like [`CompiledSchema::prune_unknown_fields`], but leaves out the unknown fields
    /// that held `null`: what the apiserver warns about (a `null` is no data lost).
    pub fn prune_unknown_values(&self, object: &mut Value) -> Vec<String> {
        let mut unknown = Vec::new();
        prune::prune(&self.root, object, true, "", false, &mut unknown);
        unknown
    }

    /// Validates `object` (after pruning and defaulting), `old` being the stored object on
    /// update: transition rules (`oldSelf`) run against it, and failures in values the update
    /// left unchanged are ratcheted (tolerated) as Kubernetes 1.30+ does. Root `metadata` is left
    /// to the server.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = validate::validate(&self.root, object, old, "", true);
        listtype::validate(&self.root, object, "", true, &mut errors);
        cel::validate(&self.root, object, old, "", true, &mut errors);
        errors
    }
}

#[cfg(test)]
mod tests;
