//! The part of the apiserver's compile-time CEL type check that catches most mistakes in a
//! CRD: selecting a field the schema does not declare (`self.regionID` for `regionId`). The
//! apiserver rejects such a CRD with `undefined field 'regionID'`; so does this check.
//!
//! Only selections rooted at `self`/`oldSelf` are followed; a path through a comprehension
//! variable, a map or an object that preserves unknown fields is not checked further.

use crate::celvalue::escape;
use crate::error::SchemaError;
use crate::node::Node;
use crate::rule::Rule;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, operators};

/// What a sub-expression is known to be.
#[derive(Clone, Copy)]
enum Shape<'a> {
    /// A value described by this schema node; `type_meta` when it also carries `apiVersion`,
    /// `kind` and `metadata` (the root and embedded resources).
    Node { node: &'a Node, type_meta: bool },
    /// Anything: not checked.
    Dynamic,
}

/// The first undefined field selected by `rule` at `node`: `(offset in the rule, field name)`.
pub(crate) fn undefined_field(rule: &Rule, node: &Node, root: bool) -> Option<(u32, String)> {
    let mut found = None;
    walk(rule.expression(), rule, node, root, &mut found);
    found
}

fn walk(e: &IdedExpr, rule: &Rule, node: &Node, root: bool, found: &mut Option<(u32, String)>) {
    if found.is_some() {
        return;
    }
    match &e.expr {
        Expr::Select(select) => {
            if let Shape::Node { node: n, type_meta } = shape(&select.operand, node, root)
                && !has_field(n, type_meta, &select.field)
            {
                let offset = rule.offset(e.id).unwrap_or(0);
                *found = Some((offset, select.field.clone()));
                return;
            }
            walk(&select.operand, rule, node, root, found);
        }
        Expr::Call(call) => {
            if let Some(t) = &call.target {
                walk(t, rule, node, root, found);
            }
            for a in &call.args {
                walk(a, rule, node, root, found);
            }
        }
        Expr::Comprehension(c) => {
            for sub in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                walk(sub, rule, node, root, found);
            }
        }
        Expr::List(list) => {
            for el in &list.elements {
                walk(el, rule, node, root, found);
            }
        }
        Expr::Map(map) => {
            for entry in &map.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    walk(&me.key, rule, node, root, found);
                    walk(&me.value, rule, node, root, found);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value, rule, node, root, found);
                }
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn shape<'a>(e: &IdedExpr, node: &'a Node, root: bool) -> Shape<'a> {
    match &e.expr {
        Expr::Ident(name) if name == "self" || name == "oldSelf" => Shape::Node {
            node,
            type_meta: root || node.embedded_resource,
        },
        Expr::Select(select) if !select.test => match shape(&select.operand, node, root) {
            Shape::Node { node: n, .. } => match declared(n, &select.field) {
                Some(child) => Shape::Node {
                    node: child,
                    type_meta: child.embedded_resource,
                },
                None => match n.additional_schema() {
                    Some(values) => Shape::Node {
                        node: values,
                        type_meta: values.embedded_resource,
                    },
                    None => Shape::Dynamic,
                },
            },
            Shape::Dynamic => Shape::Dynamic,
        },
        Expr::Call(call) if call.func_name == operators::INDEX && call.args.len() == 2 => {
            match shape(&call.args[0], node, root) {
                Shape::Node { node: n, .. } => match n.items.as_deref().or(n.additional_schema()) {
                    Some(inner) => Shape::Node {
                        node: inner,
                        type_meta: inner.embedded_resource,
                    },
                    None => Shape::Dynamic,
                },
                Shape::Dynamic => Shape::Dynamic,
            }
        }
        _ => Shape::Dynamic,
    }
}

/// The property of `n` whose escaped CEL name is `field`.
fn declared<'a>(n: &'a Node, field: &str) -> Option<&'a Node> {
    n.properties
        .iter()
        .find(|(name, _)| escape(name).as_deref() == Some(field))
        .map(|(_, child)| child)
}

fn has_field(n: &Node, type_meta: bool, field: &str) -> bool {
    // Objects that declare properties are closed: undeclared fields, even ones kept by
    // x-kubernetes-preserve-unknown-fields, are invisible to CEL.
    let closed = !n.properties.is_empty() && n.additional_schema().is_none();
    !closed
        || declared(n, field).is_some()
        || (type_meta && matches!(field, "apiVersion" | "kind" | "metadata"))
}

/// Checks every rule in the tree under `node`, failing on the first undefined field.
pub(crate) fn check_tree(node: &Node, root: bool) -> Result<(), SchemaError> {
    for rule in &node.rules {
        if let Some((offset, field)) = undefined_field(rule, node, root) {
            return Err(SchemaError::InvalidRule {
                path: format!("{}.rule", rule.path()),
                rule: rule.source().to_owned(),
                message: format!("ERROR: <input>:1:{}: undefined field '{field}'", offset + 1),
            });
        }
    }
    for child in node.properties.values() {
        check_tree(child, false)?;
    }
    if let Some(values) = node.additional_schema() {
        check_tree(values, false)?;
    }
    if let Some(items) = &node.items {
        check_tree(items, false)?;
    }
    Ok(())
}
