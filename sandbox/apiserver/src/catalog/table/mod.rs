//! `kubectl get` output: the `meta.k8s.io/v1` `Table` kube-apiserver renders when a client asks
//! for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
//!
//! A [`Printer`] decides the columns: a CRD version's `additionalPrinterColumns` (with the
//! implicit NAME first, and AGE when the CRD declares none) or a built-in kind's printer.
//! [`render_table`] turns objects into rows; each row carries the object as
//! `PartialObjectMetadata` unless `?includeObject=` says otherwise. Missing column values are
//! `null` cells, which kubectl prints as `<none>`.

mod age;
mod builtin;
mod column;
mod jsonpath;

pub use age::human_duration;
pub use builtin::BuiltInKind;
use column::CREATION_TIMESTAMP_DESCRIPTION;
pub use column::ColumnDefinition;
pub use jsonpath::{JsonPath, JsonPathError};

use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// A CRD printer column: its definition and compiled JSONPath.
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub definition: ColumnDefinition,
    pub json_path: JsonPath,
}

impl PrinterColumn {
    /// Parses one `additionalPrinterColumns` entry.
    pub fn from_crd_column(column: &Value) -> Result<Self, JsonPathError> {
        let text = |k: &str| column.get(k).and_then(Value::as_str).unwrap_or_default();
        let path = text("jsonPath");
        let json_path = JsonPath::parse(path)?;
        let description = match text("description") {
            "" => format!("Custom resource definition column (in JSONPath format): {path}"),
            d => d.to_owned(),
        };
        Ok(Self {
            definition: ColumnDefinition {
                name: text("name").to_owned(),
                type_: text("type").to_owned(),
                format: text("format").to_owned(),
                description,
                priority: column.get("priority").and_then(Value::as_i64).unwrap_or(0),
            },
            json_path,
        })
    }

    fn age_column() -> Self {
        Self {
            definition: ColumnDefinition {
                name: "Age".to_owned(),
                type_: "date".to_owned(),
                format: String::new(),
                description: CREATION_TIMESTAMP_DESCRIPTION.to_owned(),
                priority: 0,
            },
            json_path: JsonPath::parse(".metadata.creationTimestamp")
                .unwrap_or_else(|e| unreachable!("constant path parses: {e}")),
        }
    }

    /// The cell for `object`, as the apiserver's CRD table convertor computes it.
    fn cell(&self, object: &Value, now: Timestamp) -> Value {
        let Some(value) = self.json_path.find(object).into_iter().next() else {
            return Value::Null;
        };
        match self.definition.type_.as_str() {
            "string" => Value::String(go_print(value)),
            "integer" => match value {
                Value::Number(n) => n
                    .as_i64()
                    .or_else(|| n.as_f64().map(|f| f as i64))
                    .map_or(Value::Null, |i| json!(i)),
                _ => Value::Null,
            },
            "number" => value.as_f64().map_or(Value::Null, |f| json!(f)),
            "boolean" => value.as_bool().map_or(Value::Null, |b| json!(b)),
            "date" => match value {
                Value::String(s) => match s.parse::<Timestamp>() {
                    Ok(t) => json!(human_duration(now.duration_since(t))),
                    Err(_) => json!("<invalid>"),
                },
                _ => Value::Null,
            },
            _ => Value::Null,
        }
    }
}

/// Go's `fmt.Fprint` of a JSON value, which is how a `string` printer column prints whatever
/// its JSONPath found: strings raw, maps as `map[k:v]`, lists as `[a b]`.
fn go_print(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => ferroplane_sandbox_schema::go_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_print).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_print(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

/// How rows of a table are computed.
#[derive(Debug, Clone, PartialEq)]
pub enum Printer {
    /// A custom resource: NAME, then these columns.
    Crd(Vec<PrinterColumn>),
    /// A built-in kind's dedicated printer.
    BuiltIn(BuiltInKind),
}

impl Printer {
    /// The printer of a CRD version (an entry of `spec.versions`). Columns whose JSONPath does
    /// not parse are skipped (the apiserver refuses such CRDs; see [`Printer::try_for_crd_version`]).
    pub fn for_crd_version(crd_version: &Value) -> Printer {
        let columns = crd_columns(crd_version)
            .filter_map(|c| PrinterColumn::from_crd_column(c).ok())
            .collect();
        Self::crd_with(columns)
    }

    /// Like [`Printer::for_crd_version`], failing on the first column whose JSONPath is invalid,
    /// for validating a CRD when it is created.
    pub fn try_for_crd_version(crd_version: &Value) -> Result<Printer, JsonPathError> {
        let columns = crd_columns(crd_version)
            .map(PrinterColumn::from_crd_column)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::crd_with(columns))
    }

    fn crd_with(mut columns: Vec<PrinterColumn>) -> Printer {
        if columns.is_empty() {
            columns.push(PrinterColumn::age_column());
        }
        Printer::Crd(columns)
    }

    /// The printer of a built-in kind; kinds without a dedicated printer get the apiserver's
    /// default NAME / CREATED AT table.
    pub fn for_builtin(group: &str, kind: &str) -> Printer {
        Printer::BuiltIn(BuiltInKind::for_kind(group, kind))
    }

    /// `Table.columnDefinitions`.
    pub fn columns(&self) -> Vec<ColumnDefinition> {
        match self {
            Printer::Crd(columns) => std::iter::once(ColumnDefinition::name_column())
                .chain(columns.iter().map(|c| c.definition.clone()))
                .collect(),
            Printer::BuiltIn(kind) => kind.columns(),
        }
    }

    /// The cells of one row.
    pub fn cells(&self, object: &Value, now: Timestamp) -> Vec<Value> {
        let name = json!(
            object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        match self {
            Printer::Crd(columns) => std::iter::once(name)
                .chain(columns.iter().map(|c| c.cell(object, now)))
                .collect(),
            Printer::BuiltIn(kind) => kind.cells(object, now),
        }
    }
}

fn crd_columns(crd_version: &Value) -> impl Iterator<Item = &Value> {
    crd_version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
}

/// What each row's `object` holds (`?includeObject=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// `null`.
    None,
    /// The object's metadata as a `meta.k8s.io/v1` `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses the `includeObject` query parameter; absent or empty means `Metadata`.
    pub fn from_query(value: Option<&str>) -> Option<Self> {
        match value.unwrap_or_default() {
            "" | "Metadata" => Some(Self::Metadata),
            "None" => Some(Self::None),
            "Object" => Some(Self::Object),
            _ => None,
        }
    }

    fn render(self, object: &Value) -> Value {
        match self {
            Self::None => Value::Null,
            Self::Object => object.clone(),
            Self::Metadata => json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
            }),
        }
    }
}

/// Renders `objects` as a `meta.k8s.io/v1` `Table`. `resource_version` and `continue_token`
/// go to the table's list metadata (empty ones are omitted); ages are computed at `now`.
pub fn render_table(
    printer: &Printer,
    objects: &[&Value],
    include: IncludeObject,
    resource_version: &str,
    continue_token: Option<&str>,
    now: Timestamp,
) -> Value {
    let mut metadata = Map::new();
    if !resource_version.is_empty() {
        metadata.insert("resourceVersion".to_owned(), json!(resource_version));
    }
    if let Some(token) = continue_token.filter(|t| !t.is_empty()) {
        metadata.insert("continue".to_owned(), json!(token));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            json!({
                "cells": printer.cells(o, now),
                "object": include.render(o),
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": printer.columns().iter().map(ColumnDefinition::to_json).collect::<Vec<_>>(),
        "rows": rows,
    })
}

#[cfg(test)]
mod crd_tests;
#[cfg(test)]
mod tests;
