//! `ExternalResourceNotFound` for a named resource that is not found, where creating one in its
//! place is not allowed.
//!
//! For a kind whose names the external system assigns ([`ExternalClient::assigns_names`], e.g.
//! ECS instance IDs), a create can never bring back the named resource: it would make a new,
//! differently named (and billable) one and silently replace the name. So a name that is not
//! found is an error whoever wrote it: a user importing an ID that does not exist, or a
//! resource ferroplane created that was deleted behind its back. Only a person decides to
//! create a new one, by removing the annotation.
//!
//! [`ExternalClient::assigns_names`]: crate::ExternalClient::assigns_names

use crate::error::{ReconcileError, RetryClass};
use crate::reasons::EXTERNAL_RESOURCE_NOT_FOUND;

/// The named resource does not exist and its kind's names are assigned by the external system.
/// Re-checked at the poll interval (a cloud that lists late is seen once it does).
pub(crate) fn named_resource_missing(name: &str) -> ReconcileError {
    ReconcileError::new(
        EXTERNAL_RESOURCE_NOT_FOUND,
        format!(
            "external resource {name} (annotation ferroplane.io/external-name) does not exist; nothing is created in its place. \
             To create a new resource, remove the ferroplane.io/external-name annotation; to import an existing one, set it to that resource's ID"
        ),
        RetryClass::UntilSpecChanges,
    )
}
