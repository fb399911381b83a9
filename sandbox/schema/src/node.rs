//! The compiled form of one `openAPIV3Schema` node: keywords parsed once, patterns and CEL
//! rules compiled once (by [`crate::compile`]), so that every request only walks the tree.

use crate::rule::Rule;
use regex::Regex;
use serde_json::{Number, Value};
use std::collections::BTreeMap;

/// The JSON types a structural schema can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonType {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl JsonType {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    /// The swagger type name of a JSON value, as go-openapi reports it in type errors.
    pub(crate) fn of(value: &Value) -> Option<Self> {
        Some(match value {
            Value::Null => return None,
            Value::Bool(_) => Self::Boolean,
            Value::Number(n) if n.is_f64() => Self::Number,
            Value::Number(_) => Self::Integer,
            Value::String(_) => Self::String,
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        })
    }

    /// Whether `value` (non-null) is acceptable for this type. A float with no fractional part
    /// is an integer, as JSON does not distinguish `1` from `1.0`.
    pub(crate) fn accepts(self, value: &Value) -> bool {
        match (self, value) {
            (Self::Object, Value::Object(_)) => true,
            (Self::Array, Value::Array(_)) => true,
            (Self::String, Value::String(_)) => true,
            (Self::Boolean, Value::Bool(_)) => true,
            (Self::Number, Value::Number(_)) => true,
            (Self::Integer, Value::Number(n)) => {
                !n.is_f64()
                    || n.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
            }
            _ => false,
        }
    }
}

/// `additionalProperties`: absent, a boolean, or a schema for every undeclared key.
#[derive(Debug, Default)]
pub(crate) enum Additional {
    #[default]
    Unspecified,
    Allowed(bool),
    Schema(Box<Node>),
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ListType {
    #[default]
    Atomic,
    Set,
    Map,
}

/// A numeric bound (`minimum`/`maximum`) with its exclusivity.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    pub value: Number,
    pub exclusive: bool,
}

#[derive(Debug)]
pub(crate) struct Pattern {
    pub source: String,
    pub regex: Regex,
}

/// One schema node. Only keywords with a meaning for validation, defaulting or pruning are
/// kept; descriptions and examples are dropped at compile time.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub ty: Option<JsonType>,
    pub nullable: bool,
    pub format: Option<String>,
    pub properties: BTreeMap<String, Node>,
    pub additional: Additional,
    pub items: Option<Box<Node>>,
    pub required: Vec<String>,
    pub enumeration: Option<Vec<Value>>,
    pub minimum: Option<Bound>,
    pub maximum: Option<Bound>,
    pub multiple_of: Option<Number>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<Pattern>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
    pub default: Option<Value>,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded_resource: bool,
    pub list_type: ListType,
    pub list_map_keys: Vec<String>,
    pub rules: Vec<Rule>,
    /// This node or one that CEL validation reaches below it (properties, additional
    /// properties, items) has rules: subtrees without any are not walked.
    pub rules_below: bool,
    /// This node or one below it (properties, additional properties, items) checks something
    /// validation ratcheting never drops: `required`, a composition keyword, or the type meta
    /// of an embedded resource. Unchanged subtrees without any are not walked.
    pub sticky_below: bool,
    /// This node or one below it has `x-kubernetes-list-type` `set` or `map`.
    pub list_types_below: bool,
    /// As a property: its name as CEL rules see it (escaped), `None` when it cannot be one.
    pub cel_key: Option<cel::objects::Key>,
}

impl Node {
    /// Whether `test` holds for a node validation descends to: a property, the
    /// `additionalProperties` schema or the items.
    pub(crate) fn any_child(&self, test: impl Fn(&Node) -> bool) -> bool {
        self.properties.values().any(&test)
            || self.additional_schema().is_some_and(&test)
            || self.items.as_deref().is_some_and(&test)
    }

    /// The schema for an undeclared key of an object, if `additionalProperties` gives one.
    pub(crate) fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Additional::Schema(node) => Some(node),
            _ => None,
        }
    }

    /// The type name CEL error messages use for this node (`sts.Type` in the apiserver).
    pub(crate) fn type_name(&self) -> &'static str {
        self.ty.map(JsonType::name).unwrap_or("")
    }
}
