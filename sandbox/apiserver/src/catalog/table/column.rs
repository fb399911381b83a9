//! `Table.columnDefinitions` entries, and the descriptions the apiserver gives its standard
//! columns.

use serde_json::{Value, json};

pub(crate) const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

pub(crate) const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One entry of `Table.columnDefinitions`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDefinition {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: String,
    pub format: String,
    pub description: String,
    /// 0 for default columns; higher ones appear only with `kubectl get -o wide`.
    pub priority: i64,
}

impl ColumnDefinition {
    /// The NAME column every table starts with.
    pub fn name_column() -> Self {
        Self {
            name: "Name".to_owned(),
            type_: "string".to_owned(),
            format: "name".to_owned(),
            description: NAME_DESCRIPTION.to_owned(),
            priority: 0,
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}
