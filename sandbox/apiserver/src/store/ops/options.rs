//! What every write operation takes and gives back: the object it addresses, the options of the
//! request, and the written object.

use std::sync::Arc;

use serde_json::Value;

use crate::catalog::registry::ResourceDef;
use crate::error::ApiError;
use crate::store::admission::FieldValidation;

/// The object a request addresses.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub def: &'a ResourceDef,
    /// The request namespace; ignored for cluster-scoped resources.
    pub namespace: &'a str,
    pub name: &'a str,
    /// `""` for the main resource, or `"status"`.
    pub subresource: &'a str,
}

impl<'a> Target<'a> {
    /// The main resource of `def`'s object `name`.
    pub fn main(def: &'a ResourceDef, namespace: &'a str, name: &'a str) -> Self {
        Self {
            def,
            namespace,
            name,
            subresource: "",
        }
    }

    /// The namespace the object is stored under: empty for cluster-scoped resources.
    pub fn stored_namespace(&self) -> &'a str {
        if self.def.namespaced {
            self.namespace
        } else {
            ""
        }
    }

    pub fn not_found(&self) -> ApiError {
        let def = self.def;
        ApiError::not_found(&def.group_resource(), &def.group, &def.plural, self.name)
    }
}

/// Options shared by every write.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    /// The field manager recorded in managedFields.
    pub manager: String,
    pub validation: FieldValidation,
    /// Record the write as a server-side apply (a create through an apply patch).
    pub apply: bool,
    /// Record no managedFields entry for this Update: kube-apiserver does not start tracking
    /// fields nobody manages (a `/scale` write when no manager owns `spec.replicas`).
    pub untracked: bool,
}

/// `DeleteOptions.propagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    #[default]
    Background,
    Foreground,
    Orphan,
}

/// The parts of `DeleteOptions` the server honours.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub propagation: Propagation,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub dry_run: bool,
}

/// The result of a write.
#[derive(Debug, Clone)]
pub struct Written {
    pub object: Arc<Value>,
    pub warnings: Vec<String>,
    /// The write created the object (a POST, or an apply patch of a missing object).
    pub created: bool,
}
