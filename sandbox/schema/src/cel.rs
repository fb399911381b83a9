//! `x-kubernetes-validations`: the compiled rules ([`crate::rule`]) evaluated at their schema
//! node with `self` (and `oldSelf` for transition rules), as kube-apiserver does.
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
//! and the Kubernetes list and regex functions of [`crate::cellib`].

use crate::cellib;
use crate::celvalue::{optional, to_cel};
use crate::error::FieldError;
use crate::field_path::{child, index, key};
use crate::json_equal::json_equal;
use crate::listtype::correlate_item;
use crate::node::Node;
use crate::rule::env;
use cel::Context;
use serde_json::Value;

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
            if let Some(e) = rule.check(ctx, node.type_name(), path) {
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
