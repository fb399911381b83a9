//! One `x-kubernetes-validations` entry compiled: the CEL program of its rule and message
//! expression, and what a failure reports (message, `reason`, `fieldPath`). Evaluation is in
//! [`crate::cel`].

use crate::cellib;
use crate::error::{FieldError, FieldErrorKind, SchemaError};
use crate::field_path::child;
use cel::{Context, Env, ExecutionError, Program, extensions};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// The CEL environment shared by every rule: the standard library plus the Kubernetes-style
/// string and list extensions.
pub(crate) fn env() -> &'static Arc<Env> {
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
    pub(crate) transition: bool,
    /// `optionalOldSelf: true`: the rule also runs on create, `oldSelf` being an optional.
    pub(crate) optional_old_self: bool,
    /// The functions the rule calls, to tell an unsupported library function from a bug.
    functions: Vec<String>,
    /// The rule is exactly `self == oldSelf` (or `oldSelf == self`), the usual immutability
    /// rule: true whenever the value is the old value itself.
    pub(crate) plain_immutability: bool,
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

impl Rule {
    /// Runs the rule in `ctx` (which binds `self` and `oldSelf`) at `path`, whose schema type
    /// is `type_name`, and words a failure.
    pub(crate) fn check(
        &self,
        ctx: &Context<'_, '_>,
        type_name: &str,
        path: &str,
    ) -> Option<FieldError> {
        let type_value = json!(type_name);
        match self.program.execute(ctx) {
            Ok(cel::Value::Bool(true)) => None,
            Ok(cel::Value::Bool(false)) => {
                let at = match &self.field_path {
                    Some(fp) => child(path, fp),
                    None => path.to_owned(),
                };
                let detail = self
                    .message_expression
                    .as_ref()
                    .and_then(|m| match m.execute(ctx) {
                        Ok(cel::Value::String(s)) if !s.trim().is_empty() && !s.contains('\n') => {
                            Some(s.trim().to_owned())
                        }
                        _ => None,
                    })
                    .or_else(|| self.message.as_ref().map(|m| m.trim().to_owned()))
                    .unwrap_or_else(|| format!("failed rule: {}", self.source.trim()));
                Some(match self.kind {
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
                    self.source.trim()
                ),
            )),
            Err(e) if cellib::is_unsupported_function(&e, &self.functions) => None,
            Err(e) => Some(FieldError::invalid(
                path,
                type_value,
                runtime_error(&e, &self.source),
            )),
        }
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
