//! `x-kubernetes-validations`: CEL rules compiled once per CRD version and evaluated at their
//! schema node with `self` (and `oldSelf` for transition rules), as kube-apiserver does.
//!
//! Semantics kept from Kubernetes:
//! - a rule at a node whose value is `null` or absent does not run;
//! - a transition rule (one that mentions `oldSelf`) runs only on update and only where the old
//!   object has a value at the same place: object properties and `additionalProperties` are
//!   matched by name, items of `x-kubernetes-list-type: map` lists by their keys, other list
//!   items never; with `optionalOldSelf: true` it always runs and `oldSelf` is an optional;
//! - on update, a rule without `oldSelf` does not run on a value the update left unchanged
//!   (validation ratcheting);
//! - null-valued fields are absent, undeclared fields of objects with properties are invisible;
//! - property names that are not CEL identifiers are escaped (`x-y` is `self.x__dash__y`);
//! - a failure is `<path>: Invalid value: "<schema type>": <message>`, the path extended by the
//!   rule's `fieldPath`, the kind taken from its `reason`.
//!
//! The evaluator is the `cel` crate (built without chrono), with its strings and lists extensions
//! and the Kubernetes list and regex functions of [`super::cellib`].

use super::cellib;
use super::celvalue::{optional, to_cel};
use super::error::{FieldError, FieldErrorKind, SchemaError};
use super::node::Node;
use super::validate::correlate_item;
use super::{child, index, json_equal, key};
use cel::{Context, Env, ExecutionError, Program, extensions};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// The CEL environment shared by every rule: the standard library plus the Kubernetes-style
/// string and list extensions.
fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // Registering the crate's own extensions into a fresh stdlib cannot conflict; if a
        // future version ever made it fail, the rules would still run without them.
        let _ = env.add_extension(extensions::strings);
        let _ = env.add_extension(extensions::lists);
        Arc::new(env)
    })
}

/// One compiled `x-kubernetes-validations` entry.
pub(crate) struct Rule {
    /// Where the rule sits in the schema, e.g. `openAPIV3Schema...x-kubernetes-validations[0]`.
    path: String,
    source: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    /// `fieldPath` without its leading dot, appended to the node's path on failure.
    field_path: Option<String>,
    kind: FieldErrorKind,
    transition: bool,
    /// `optionalOldSelf: true`: the rule also runs on create, `oldSelf` being an optional.
    optional_old_self: bool,
    /// The functions the rule calls, to tell an unsupported library function from a bug.
    functions: Vec<String>,
    /// The rule is exactly `self == oldSelf` (or `oldSelf == self`), the usual immutability
    /// rule: true whenever the value is the old value itself.
    plain_immutability: bool,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("rule", &self.source)
            .field("transition", &self.transition)
            .finish_non_exhaustive()
    }
}

impl Rule {
    pub(crate) fn compile(value: &Value, path: &str) -> Result<Self, SchemaError> {
        let invalid = |field: &str, message: &str| SchemaError::InvalidSchema {
            path: format!("{path}.{field}"),
            message: message.to_owned(),
        };
        let text = |field: &str| -> Result<Option<String>, SchemaError> {
            match value.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(invalid(field, "must be a string")),
            }
        };
        let source = text("rule")?
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| invalid("rule", "Required value"))?;
        let program = env()
            .compile(&source)
            .map_err(|e| SchemaError::InvalidRule {
                path: format!("{path}.rule"),
                rule: source.clone(),
                message: e.to_string(),
            })?;
        let message_expression = match text("messageExpression")? {
            Some(expr) => Some(env().compile(&expr).map_err(|e| SchemaError::InvalidRule {
                path: format!("{path}.messageExpression"),
                rule: expr.clone(),
                message: e.to_string(),
            })?),
            None => None,
        };
        let kind = match text("reason")? {
            None => FieldErrorKind::Invalid,
            Some(r) => FieldErrorKind::from_rule_reason(&r).ok_or_else(|| {
                invalid(
                    "reason",
                    &format!(
                        "unsupported value {r:?}: supported values: \"FieldValueInvalid\", \"FieldValueForbidden\", \"FieldValueRequired\", \"FieldValueDuplicate\""
                    ),
                )
            })?,
        };
        let field_path = match text("fieldPath")? {
            None => None,
            Some(p) => Some(normalize_field_path(&p).ok_or_else(|| {
                invalid(
                    "fieldPath",
                    &format!("{p:?} is not a valid path: use .name or ['name'] segments"),
                )
            })?),
        };
        let transition = program.references().has_variable("oldSelf");
        let optional_old_self = match value.get("optionalOldSelf") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(invalid("optionalOldSelf", "must be a boolean")),
        };
        if optional_old_self && !transition {
            return Err(invalid(
                "optionalOldSelf",
                "may not be set to true for a rule that does not use oldSelf",
            ));
        }
        let functions = program
            .references()
            .functions()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let plain_immutability = matches!(
            source.split_whitespace().collect::<Vec<_>>().as_slice(),
            ["self", "==", "oldSelf"] | ["oldSelf", "==", "self"]
        );
        Ok(Rule {
            functions,
            plain_immutability,
            optional_old_self,
            path: path.to_owned(),
            message: text("message")?.filter(|m| !m.trim().is_empty()),
            source,
            program,
            message_expression,
            field_path,
            kind,
            transition,
        })
    }
}

impl Rule {
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    pub(crate) fn expression(&self) -> &cel::common::ast::IdedExpr {
        self.program.expression()
    }

    /// The offset in the rule's source of the sub-expression `id`.
    pub(crate) fn offset(&self, id: u64) -> Option<u32> {
        self.program
            .source_info()
            .offset_for(id)
            .map(|(start, _)| start)
    }
}

/// `.spec.x['y.z']` → `spec.x.y.z`; `None` when the syntax is not a field path.
fn normalize_field_path(p: &str) -> Option<String> {
    let mut segments = Vec::new();
    let mut rest = p.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            segments.push(r[..end].to_owned());
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            segments.push(r[..end].to_owned());
            rest = &r[end..];
        } else {
            return None;
        }
    }
    if segments.is_empty() {
        None
    } else {
        Some(segments.join("."))
    }
}

/// Evaluates every rule in the tree under `node`. `root` hides `metadata` except its name and
/// generateName, as the apiserver does.
pub(crate) fn validate(
    node: &Node,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    errs: &mut Vec<FieldError>,
) {
    if value.is_null() || !node.rules_below {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !node.rules.is_empty() {
        run_rules(node, value, old, path, root, errs);
    }
    match value {
        Value::Object(map) => {
            for (name, v) in map {
                if root && name == "metadata" {
                    continue;
                }
                let old_v = old.and_then(|o| o.get(name));
                if let Some(prop) = node.properties.get(name) {
                    validate(prop, v, old_v, &child(path, name), false, errs);
                } else if let Some(schema) = node.additional_schema() {
                    validate(schema, v, old_v, &key(path, name), false, errs);
                }
            }
        }
        Value::Array(items) => {
            let Some(schema) = &node.items else {
                return;
            };
            for (i, item) in items.iter().enumerate() {
                let old_item = correlate_item(node, item, old);
                validate(schema, item, old_item, &index(path, i), false, errs);
            }
        }
        _ => {}
    }
}

/// Runs the rules of `node` on `value`. The variables are bound once per node, in one scope
/// for the rules that see `oldSelf` as is and one for those that see it as an optional.
fn run_rules(
    node: &Node,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    errs: &mut Vec<FieldError>,
) {
    // Ratcheting: a rule without oldSelf is not re-checked on a value the update left alone.
    let unchanged = old.is_some_and(|o| json_equal(o, value));
    // The very same JSON converts to the very same CEL value: convert it once.
    let identical = old.is_some_and(|o| o == value);
    let mut values: Option<(cel::Value, Option<cel::Value>)> = None;
    let mut values = || {
        values
            .get_or_insert_with(|| {
                let this = to_cel(Some(node), value, root);
                let previous = match old {
                    Some(_) if identical => Some(this.clone()),
                    Some(o) => Some(to_cel(Some(node), o, root)),
                    None => None,
                };
                (this, previous)
            })
            .clone()
    };
    ROOT_CONTEXT.with(|root_context| {
        let mut plain: Option<Context<'_, 'static>> = None;
        let mut optional_old: Option<Context<'_, 'static>> = None;
        for rule in &node.rules {
            if old.is_none() && rule.transition && !rule.optional_old_self {
                continue;
            }
            if !rule.transition && unchanged {
                continue;
            }
            if identical && rule.plain_immutability && !rule.optional_old_self {
                // `self == oldSelf` holds when both are the same value (JSON has no NaN).
                continue;
            }
            let scope = if rule.optional_old_self {
                &mut optional_old
            } else {
                &mut plain
            };
            let ctx = scope.get_or_insert_with(|| {
                let (this, previous) = values();
                let old_self = if rule.optional_old_self {
                    Some(optional(previous))
                } else {
                    previous
                };
                let mut ctx = root_context.new_inner_scope();
                ctx.add_variable_from_value("self", this);
                if let Some(o) = old_self {
                    ctx.add_variable_from_value("oldSelf", o);
                }
                ctx
            });
            if let Some(e) = outcome(rule, node, ctx, path) {
                errs.push(e);
            }
        }
    });
}

thread_local! {
    /// The environment and the Kubernetes library functions, registered once per thread; the
    /// rules of a node run in a child scope of it that binds `self` and `oldSelf`. (A `Context` is not `Sync`,
    /// so it cannot live in the shared compiled schema.)
    static ROOT_CONTEXT: Context<'static, 'static> = {
        let mut ctx = Context::with_env(env().clone());
        cellib::register(&mut ctx);
        ctx
    };
}

/// Runs `rule` in `ctx` and words a failure.
fn outcome(rule: &Rule, node: &Node, ctx: &Context<'_, '_>, path: &str) -> Option<FieldError> {
    let type_value = json!(node.type_name());
    match rule.program.execute(ctx) {
        Ok(cel::Value::Bool(true)) => None,
        Ok(cel::Value::Bool(false)) => {
            let at = match &rule.field_path {
                Some(fp) => child(path, fp),
                None => path.to_owned(),
            };
            let detail = rule
                .message_expression
                .as_ref()
                .and_then(|m| match m.execute(ctx) {
                    Ok(cel::Value::String(s)) if !s.trim().is_empty() && !s.contains('\n') => {
                        Some(s.trim().to_owned())
                    }
                    _ => None,
                })
                .or_else(|| rule.message.as_ref().map(|m| m.trim().to_owned()))
                .unwrap_or_else(|| format!("failed rule: {}", rule.source.trim()));
            Some(match rule.kind {
                FieldErrorKind::Required => FieldError::required(at, detail),
                FieldErrorKind::Forbidden => FieldError::forbidden(at, detail),
                FieldErrorKind::Duplicate => FieldError::duplicate(at, type_value),
                kind => FieldError::new(at, kind, Some(type_value), detail),
            })
        }
        Ok(other) => Some(FieldError::invalid(
            path,
            type_value,
            format!(
                "rule evaluated to {} instead of a bool: {}",
                cel_type_name(&other),
                rule.source.trim()
            ),
        )),
        Err(e) if cellib::is_unsupported_function(&e, &rule.functions) => None,
        Err(e) => Some(FieldError::invalid(
            path,
            type_value,
            runtime_error(&e, &rule.source),
        )),
    }
}

/// A runtime failure worded like cel-go's errors as the apiserver reports them.
fn runtime_error(e: &ExecutionError, rule: &str) -> String {
    let rule = rule.trim();
    let cause = match e {
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::ValuesNotComparable(..) => {
            return format!(
                "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {rule}"
            );
        }
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", cel_text(i)),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::UndeclaredReference(name) => format!("undeclared reference to '{name}'"),
        other => other.to_string(),
    };
    format!("{cause} evaluating rule: {rule}")
}

fn cel_type_name(v: &cel::Value) -> &'static str {
    match v {
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Bool(_) => "bool",
        cel::Value::Null => "null",
        _ => "an unsupported type",
    }
}

fn cel_text(v: &cel::Value) -> String {
    match v {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths() {
        assert_eq!(normalize_field_path(".spec.x").as_deref(), Some("spec.x"));
        assert_eq!(normalize_field_path(".a['b.c']").as_deref(), Some("a.b.c"));
        assert_eq!(normalize_field_path("a"), None);
        assert_eq!(normalize_field_path(""), None);
    }

    #[test]
    fn bad_rule_is_a_compile_error_naming_it() {
        let err = Rule::compile(&json!({"rule": "self.a =="}), "openAPIV3Schema").unwrap_err();
        match err {
            SchemaError::InvalidRule { path, rule, .. } => {
                assert_eq!(path, "openAPIV3Schema.rule");
                assert_eq!(rule, "self.a ==");
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(Rule::compile(&json!({"rule": "true", "reason": "Nope"}), "p").is_err());
        assert!(Rule::compile(&json!({"message": "m"}), "p").is_err());
    }
}
