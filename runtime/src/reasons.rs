//! Every reason the framework shows a user, for every managed kind: the reasons of the `Ready`
//! and `Synced` conditions, the reasons of the errors it raises itself (each failure's message
//! in `Synced` and in its Warning event starts with one), and the reasons of the events it
//! publishes. Providers add their own in their `reasons` module. README's "Condition and event
//! reasons" lists them with what to do; a test here keeps that list complete. Ground floor:
//! imports nothing of this crate.

use ferroplane_apis::common::names;

// `Ready` condition.

/// `Ready=True`: the external resource exists and is usable. Nothing to do.
pub const AVAILABLE: &str = names::REASON_AVAILABLE;
/// `Ready=False`: the external resource exists but is not usable yet; the message says why.
/// Wait, or fix what the message names.
pub const UNAVAILABLE: &str = names::REASON_UNAVAILABLE;
/// `Ready=False`: the external resource is being created. Wait.
pub const CREATING: &str = names::REASON_CREATING;
/// `Ready=False`: the object is being deleted and its external resource with it. Wait.
pub const DELETING: &str = names::REASON_DELETING;

// `Synced` condition.

/// `Synced=True`: the last reconcile succeeded. Nothing to do.
pub const RECONCILE_SUCCESS: &str = names::REASON_RECONCILE_SUCCESS;
/// `Synced=False`: the last reconcile failed; the message starts with the error's reason. Act
/// on that reason; it is retried meanwhile.
pub const RECONCILE_ERROR: &str = names::REASON_RECONCILE_ERROR;
/// `Synced=False`: the `ferroplane.io/paused` annotation (or empty `managementPolicies`) stops
/// reconciling. Remove it to resume.
pub const RECONCILE_PAUSED: &str = names::REASON_RECONCILE_PAUSED;
/// `Synced=False` and Warning event: an annotation's value is not one it accepts
/// (`ferroplane.io/paused` takes exactly `"true"` or `"false"`); the object is left alone as if
/// paused. Set a value the message names.
pub const INVALID_ANNOTATION: &str = names::REASON_INVALID_ANNOTATION;
/// Warning event and a note in `Synced`: a `ferroplane.io/` annotation and its `crossplane.io/`
/// alias (external-name, paused, reconcile-requested-at) are both set and differ; the
/// `ferroplane.io/` value is used. Set both alike, or remove one.
pub const CONFLICTING_ANNOTATIONS: &str = "ConflictingAnnotations";
/// `Synced=False`, error and Warning event: the external resource is tagged for another live
/// managed object and is never adopted, changed or deleted. Name another resource, or delete
/// the other object first.
pub const OWNED_ELSEWHERE: &str = "ExternalResourceOwnedElsewhere";
/// `Synced=False`, error and Warning event: a resource with the name the spec chooses (a key
/// pair's name) exists and was not created for this object; it is never adopted, changed or
/// deleted on a name match. Set `ferroplane.io/external-name` to import it, or choose another
/// name.
pub const EXISTS_UNMANAGED: &str = "ExternalResourceExists";
/// `Synced=False`, error and Warning event: the object's configuration now points to another
/// account or region than the one its external resource lives in (recorded in
/// `ferroplane.io/external-scope`); nothing is created, changed or deleted. Set
/// `providerConfigRef` back, or orphan the object and create a new one in the new account.
pub const SCOPE_CHANGED: &str = "ExternalScopeChanged";
/// `Synced=False` and error: the connection Secret exists and another object controls it; it is
/// never written. Choose another `writeConnectionSecretToRef` name, or delete that Secret.
pub const CONNECTION_SECRET_NOT_CONTROLLED: &str = "ConnectionSecretNotControlled";

// Errors the framework raises (the start of a failure's message).

/// A Kubernetes API call failed (network, server error). Retried with backoff; check the API
/// server and the controller's RBAC if it persists.
pub const KUBERNETES_API_ERROR: &str = "KubernetesApiError";
/// A write met a newer version of the object. Not reported; the reconcile runs again soon.
pub const CONFLICT: &str = "Conflict";
/// An object the reconcile needs is gone from the API server. Retried with backoff; recreate
/// it if it was deleted by mistake.
pub const NOT_FOUND: &str = "NotFound";
/// The API server rejected a write as invalid. Not retried until the spec changes; fix the
/// field the message names.
pub const INVALID: &str = "Invalid";
/// The controller's service account may not make the call. Grant the missing RBAC permission.
pub const FORBIDDEN: &str = "Forbidden";
/// `spec.managementPolicies` and `deletionPolicy` do not make a supported combination. Fix the
/// policies as the message says.
pub const UNSUPPORTED_MANAGEMENT_POLICIES: &str = "UnsupportedManagementPolicies";
/// `Synced=False` and error: the external resource does not exist and may not be created in its
/// place: the management policies forbid Create, or the object names a resource of a kind whose
/// names the cloud assigns (an imported ID that does not exist, or a resource deleted outside
/// ferroplane). Set `ferroplane.io/external-name` to an existing resource, or remove it to create
/// a new one (allowing Create).
pub const EXTERNAL_RESOURCE_NOT_FOUND: &str = "ExternalResourceNotFound";
/// The status or an observation could not be encoded. A bug: report it.
pub const SERIALIZATION_ERROR: &str = "SerializationError";
/// A found resource has no ownership tag and this kind cannot write one, so it is left alone.
/// Tag it with `ferroplane.io/uid`, or name another resource.
pub const OWNERSHIP_TAG_NOT_WRITABLE: &str = "OwnershipTagNotWritable";
/// The object has no uid yet, so its connection Secret cannot name it as owner. Retried; nothing
/// to do.
pub const OWNER_HAS_NO_UID: &str = "OwnerHasNoUid";
/// A reference to another object (a VPC, a VSwitch, a ProviderConfig) does not resolve yet.
/// Create the referenced object or fix the reference; retried when it changes.
pub const REFERENCE_NOT_RESOLVED: &str = "ReferenceNotResolved";
/// In-cluster kinds: an object with a child's name exists and is not this object's; it is left
/// unchanged and nothing is applied. Rename this object, delete the other, or hand it over by
/// labelling it `ferroplane.io/uid=<uid>`.
pub const CHILD_NOT_OURS: &str = "ChildNotOurs";

// Events.

/// Normal event: the external resource was created.
pub const CREATED: &str = "CreatedExternalResource";
/// Normal event: the external resource was changed to match the spec.
pub const UPDATED: &str = "UpdatedExternalResource";
/// Normal event: the external resource was deleted.
pub const DELETED: &str = "DeletedExternalResource";
/// Normal event: an existing external resource was taken over (found by name or by its
/// ownership tag).
pub const ADOPTED: &str = "AdoptedExternalResource";
/// Normal event: the object went and its external resource was left in place (deletion policy
/// Orphan, no Delete in the management policies, or the resource is another object's).
pub const ORPHANED: &str = "OrphanedExternalResource";
/// Normal event: empty spec fields were filled from the external resource.
pub const LATE_INITIALIZED: &str = "LateInitializedSpec";
/// Warning event: the provider could not connect (ProviderConfig or credentials). Fix the
/// ProviderConfig or its Secret.
pub const CANNOT_CONNECT: &str = "CannotConnectToProvider";
/// Warning event: reading the external resource failed. Act on the error's reason.
pub const CANNOT_OBSERVE: &str = "CannotObserveExternalResource";
/// Warning event: creating the external resource failed. Act on the error's reason.
pub const CANNOT_CREATE: &str = "CannotCreateExternalResource";
/// Warning event: changing the external resource failed. Act on the error's reason.
pub const CANNOT_UPDATE: &str = "CannotUpdateExternalResource";
/// Warning event: deleting the external resource failed; the finalizer stays. Act on the
/// error's reason.
pub const CANNOT_DELETE: &str = "CannotDeleteExternalResource";
/// Warning event: writing late-initialized fields into the spec failed. Retried.
pub const CANNOT_LATE_INITIALIZE: &str = "CannotLateInitialize";
/// Warning event: the connection Secret could not be written. Act on the error's reason.
pub const CANNOT_PUBLISH_CONNECTION: &str = "CannotPublishConnectionDetails";
/// Warning event: the management and deletion policies do not resolve. Fix them.
pub const CANNOT_RESOLVE_POLICIES: &str = "CannotResolveManagementPolicies";
/// Normal event: references were resolved and their values written into the spec.
pub const RESOLVED_REFERENCES: &str = "ResolvedReferences";
/// Normal event: deletion waits for something the message names (dependents, the resource's
/// own state). Wait, or remove what it waits for.
pub const DELETION_WAITING: &str = "WaitingToDelete";
/// Warning event: references could not be resolved. Create the referenced object or fix the
/// reference.
pub const CANNOT_RESOLVE_REFERENCES: &str = "CannotResolveReferences";
/// Warning event: the external name of a new resource could not be saved. Retried; the
/// resource is found again by its ownership tag.
pub const CANNOT_RECORD: &str = "CannotRecordExternalName";
/// Warning event: taking over an untagged or orphaned resource failed. Act on the error's
/// reason.
pub const CANNOT_CLAIM: &str = "CannotClaimExternalResource";
/// Warning event (and `Synced=False/ReconcileError`): the object does not decode as its kind and
/// is left out of the watch. Fix the field the message names.
pub const CANNOT_DECODE: &str = "CannotDecodeObject";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reason above.
    const ALL: &[&str] = &[
        AVAILABLE,
        UNAVAILABLE,
        CREATING,
        DELETING,
        RECONCILE_SUCCESS,
        RECONCILE_ERROR,
        RECONCILE_PAUSED,
        INVALID_ANNOTATION,
        CONFLICTING_ANNOTATIONS,
        OWNED_ELSEWHERE,
        CONNECTION_SECRET_NOT_CONTROLLED,
        KUBERNETES_API_ERROR,
        CONFLICT,
        NOT_FOUND,
        INVALID,
        FORBIDDEN,
        UNSUPPORTED_MANAGEMENT_POLICIES,
        EXTERNAL_RESOURCE_NOT_FOUND,
        SERIALIZATION_ERROR,
        OWNERSHIP_TAG_NOT_WRITABLE,
        OWNER_HAS_NO_UID,
        REFERENCE_NOT_RESOLVED,
        CHILD_NOT_OURS,
        CREATED,
        UPDATED,
        DELETED,
        ADOPTED,
        ORPHANED,
        LATE_INITIALIZED,
        CANNOT_CONNECT,
        CANNOT_OBSERVE,
        CANNOT_CREATE,
        CANNOT_UPDATE,
        CANNOT_DELETE,
        CANNOT_LATE_INITIALIZE,
        CANNOT_PUBLISH_CONNECTION,
        CANNOT_RESOLVE_POLICIES,
        RESOLVED_REFERENCES,
        DELETION_WAITING,
        CANNOT_RESOLVE_REFERENCES,
        CANNOT_RECORD,
        CANNOT_CLAIM,
        CANNOT_DECODE,
    ];

    #[test]
    fn reasons_are_distinct_camel_case_words() {
        for (i, reason) in ALL.iter().enumerate() {
            assert!(
                reason.starts_with(|c: char| c.is_ascii_uppercase())
                    && reason.chars().all(|c| c.is_ascii_alphanumeric()),
                "{reason}"
            );
            assert!(!ALL[..i].contains(reason), "{reason} twice");
        }
    }

    #[test]
    fn readme_lists_every_reason() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
            .expect("README.md beside the runtime crate");
        let section = readme
            .split("### Every managed kind (runtime)")
            .nth(1)
            .and_then(|rest| rest.split("\n### ").next())
            .expect("README has a runtime reasons section");
        for reason in ALL {
            assert!(
                section.contains(&format!("| `{reason}` |")),
                "README's runtime reasons table lacks {reason}"
            );
        }
    }
}
