//! Kubernetes CEL library functions the `cel` crate lacks: from the lists library `isSorted()`,
//! `sum()`, `min()`, `max()`, and from the regex library `find()` and `findAll()`.
//!
//! Rules calling a Kubernetes function that is still missing (`url()`, `quantity()`, `ip()`,
//! ...) are skipped rather than failed: a sandbox that rejects objects a real cluster accepts
//! would be worse than one that misses a check. [`is_unsupported_function`] tells them apart.

use cel::extractors::{Arguments, This};
use cel::{Context, ExecutionError, Value};
use regex::Regex;
use std::cmp::Ordering;
use std::sync::Arc;

/// Registers the functions in an evaluation context.
pub(crate) fn register(ctx: &mut Context<'_, '_>) {
    // The names are not declared by the crate's environment, so registration cannot conflict;
    // a future conflict would only leave the crate's own function in place.
    let _ = ctx.add_function("isSorted", is_sorted);
    let _ = ctx.add_function("sum", sum);
    let _ = ctx.add_function("min", list_min);
    let _ = ctx.add_function("max", list_max);
    let _ = ctx.add_function("find", find);
    let _ = ctx.add_function("findAll", find_all);
}

/// Whether `e` is a call of a function neither the crate nor this library provides.
pub(crate) fn is_unsupported_function(e: &ExecutionError, functions: &[String]) -> bool {
    matches!(e, ExecutionError::UndeclaredReference(name) if functions.iter().any(|f| f == name.as_str()))
}

fn list(v: &Value, function: &str) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v {
        Value::List(items) => Ok(items.clone()),
        other => Err(ExecutionError::function_error(
            function,
            format!("expected a list, got {other:?}"),
        )),
    }
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    let ord = match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.partial_cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.partial_cmp(y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).partial_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Value::String(x), Value::String(y)) => x.partial_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.partial_cmp(y),
        _ => None,
    };
    ord.ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn is_sorted(This(this): This<Value>) -> Result<bool, ExecutionError> {
    let items = list(&this, "isSorted")?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return Ok(false);
        }
    }
    Ok(true)
}

fn sum(This(this): This<Value>) -> Result<Value, ExecutionError> {
    let items = list(&this, "sum")?;
    let mut total = match items.first() {
        None | Some(Value::Int(_)) => Value::Int(0),
        Some(Value::UInt(_)) => Value::UInt(0),
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(other) => {
            return Err(ExecutionError::function_error(
                "sum",
                format!("cannot add {other:?}"),
            ));
        }
    };
    for item in items.iter() {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => {
                return Err(ExecutionError::function_error(
                    "sum",
                    format!("cannot add {item:?} to {total:?}"),
                ));
            }
        };
    }
    Ok(total)
}

fn extreme(this: &Value, function: &str, want: Ordering) -> Result<Value, ExecutionError> {
    let items = list(this, function)?;
    let mut best = items.first().cloned().ok_or_else(|| {
        ExecutionError::function_error(function, "cannot be applied to an empty list")
    })?;
    for item in items.iter().skip(1) {
        if compare(item, &best)? == want {
            best = item.clone();
        }
    }
    Ok(best)
}

fn list_min(This(this): This<Value>) -> Result<Value, ExecutionError> {
    extreme(&this, "min", Ordering::Less)
}

fn list_max(This(this): This<Value>) -> Result<Value, ExecutionError> {
    extreme(&this, "max", Ordering::Greater)
}

fn regex(pattern: &str, function: &str) -> Result<Regex, ExecutionError> {
    Regex::new(pattern).map_err(|e| ExecutionError::function_error(function, e.to_string()))
}

fn find(This(this): This<Arc<String>>, pattern: Arc<String>) -> Result<Value, ExecutionError> {
    let re = regex(&pattern, "find")?;
    Ok(Value::String(Arc::new(
        re.find(&this)
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default(),
    )))
}

fn find_all(
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<Value, ExecutionError> {
    let pattern = match args.first() {
        Some(Value::String(p)) => p.clone(),
        _ => {
            return Err(ExecutionError::function_error(
                "findAll",
                "expects a regular expression",
            ));
        }
    };
    let limit = match args.get(1) {
        None => usize::MAX,
        Some(Value::Int(n)) if *n < 0 => usize::MAX,
        Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
        Some(_) => {
            return Err(ExecutionError::function_error(
                "findAll",
                "expects an int limit",
            ));
        }
    };
    let re = regex(&pattern, "findAll")?;
    Ok(Value::List(Arc::new(
        re.find_iter(&this)
            .take(limit)
            .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
            .collect(),
    )))
}
