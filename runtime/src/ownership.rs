//! Who owns an external resource: the managed object its ownership tag ([`UID_TAG`]) names.
//!
//! A cloud resource belongs to at most one managed object. When `observe` reports a tag that
//! names another object, the framework asks the API server whether that object still exists
//! ([`find_owner`]) and then decides ([`decide`]):
//! - the tag names this object, or the kind does not report tags (in-cluster kinds, whose
//!   children carry owner references instead): go on;
//! - no tag, or a tag whose object is gone (deleted with `deletionPolicy: Orphan`), on a resource
//!   the object names by its external name (an import): go on, and take the resource over by
//!   rewriting the tag (as Crossplane's import does) right before the first change made to it;
//!   a resource that matches its spec is observed and not written;
//! - the same, on a resource found under the name the spec chooses (a key pair's name) while the
//!   object names none: refuse. A resource ferroplane did not create is taken over only when a
//!   person asks for it by setting the external name, never because its name happens to match;
//! - a tag whose object exists, or one the controller cannot check: refuse. The resource is never
//!   changed or deleted for this object, and the message names the owner only when it lives in
//!   the same namespace (another tenant's object names are not this tenant's business).
//!
//! "Still exists" is answered by listing the kind's object metadata in every namespace, paged,
//! from the API server rather than the controller's cache: the cache may not have been filled
//! yet at startup, and a controller restricted to one namespace caches only that one. When the
//! list is forbidden (a namespaced install), the answer is unknown and the resource is refused:
//! never adopt what might be another tenant's.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use crate::annotations;
use crate::error::{ReconcileError, RetryClass};
use crate::idempotency::UID_TAG;
use crate::import_census::{self, CensusFailure, ImportCensus, Importer, Importers};

use crate::reasons::{EXISTS_UNMANAGED, OWNED_ELSEWHERE};

/// Objects fetched per page when looking for an owner.
const PAGE: u32 = 500;

/// What `observe` found in the resource's ownership tag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ExternalOwner {
    /// The kind does not track ownership with a tag (the default): nothing is checked.
    #[default]
    NotReported,
    /// The resource has no ownership tag: made outside ferroplane, or by a tool that does not tag.
    Untagged,
    /// The tag names the object with this UID.
    Uid(String),
}

impl ExternalOwner {
    /// From the value of the tag, if the resource has one (an empty value counts as none).
    pub fn from_tag(value: Option<&str>) -> Self {
        match value.filter(|v| !v.is_empty()) {
            Some(uid) => Self::Uid(uid.to_owned()),
            None => Self::Untagged,
        }
    }
}

/// The object a tag names, as the API server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OwnerStatus {
    /// It exists (maybe being deleted), in this namespace under this name.
    Live { namespace: String, name: String },
    /// No object of the kind has the UID.
    Gone,
    /// The controller may not look (its RBAC does not allow listing every namespace).
    Unverifiable,
}

/// What the reconcile does with the resource.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// It is this object's: go on.
    Ours,
    /// Nobody (alive) owns it: go on, and rewrite the tag to this object's UID when allowed.
    Claim,
    /// Another object owns it, or may: touch nothing.
    Refuse(ReconcileError),
}

/// Whether `reported` needs [`find_owner`] before [`decide`]: only a tag naming another UID.
pub(crate) fn other_uid<'a>(reported: &'a ExternalOwner, own_uid: &str) -> Option<&'a str> {
    match reported {
        ExternalOwner::Uid(uid) if uid != own_uid => Some(uid),
        _ => None,
    }
}

/// The decision for an object in `namespace` about resource `external_name` of `kind`, given the
/// tag `observe` reported and, for a tag naming another UID, what [`find_owner`] answered.
/// `imported` says whether the object names the resource by its external name (set by a person,
/// or recorded by ferroplane); without it a found resource that is not the object's own was
/// found by the name the spec chooses, and is not taken over.
pub(crate) fn decide(
    kind: &str,
    namespace: &str,
    external_name: &str,
    reported: &ExternalOwner,
    own_uid: &str,
    owner: Option<&OwnerStatus>,
    imported: bool,
) -> Verdict {
    let claim = || {
        if imported {
            Verdict::Claim
        } else {
            Verdict::Refuse(exists_unmanaged(kind, external_name))
        }
    };
    match reported {
        ExternalOwner::NotReported => Verdict::Ours,
        ExternalOwner::Uid(uid) if uid == own_uid => Verdict::Ours,
        ExternalOwner::Untagged => claim(),
        ExternalOwner::Uid(_) => match owner {
            Some(OwnerStatus::Gone) => claim(),
            Some(OwnerStatus::Live {
                namespace: owner_ns,
                name,
            }) if owner_ns == namespace => Verdict::Refuse(refusal(format!(
                "external resource {external_name} belongs to {kind} {name} in this namespace \
                 (its {UID_TAG} tag names that object), and a resource is managed by one object \
                 only: import another resource, or delete {name} with deletionPolicy: Orphan \
                 first; until then nothing is changed or deleted for this object"
            ))),
            Some(OwnerStatus::Live { .. }) => Verdict::Refuse(refusal(format!(
                "external resource {external_name} belongs to another {kind} outside this \
                 namespace (its {UID_TAG} tag names that object), so it cannot be imported \
                 here; nothing is changed or deleted for this object"
            ))),
            // Never asked, or not allowed to ask: fail closed.
            Some(OwnerStatus::Unverifiable) | None => Verdict::Refuse(refusal(format!(
                "external resource {external_name} is tagged ({UID_TAG}) as another {kind}'s, \
                 and this controller may not list {kind}s in every namespace to check whether \
                 that object still exists; it is left alone. If its owner is gone, remove the \
                 {UID_TAG} tag from the resource to import it"
            ))),
        },
    }
}

/// What a reconcile would decide about a found resource, for a read-only preview (`ferroplane
/// plan`): the reconcile's own [`find_owner`] (a list of metadata) and [`decide`]. The check of
/// two importers of one resource, made right before a claim, is not part of it.
#[derive(Debug)]
pub enum OwnershipPreview {
    /// The object's own, or a kind that does not report tags: nothing to do.
    Ours,
    /// Untagged or orphaned and named by the object: the reconcile takes it over (rewrites the
    /// tag through `ExternalClient::claim`) when the policies allow updates.
    Claim,
    /// Another object owns it, or may: the reconcile touches nothing.
    Refused(ReconcileError),
}

/// [`OwnershipPreview`] of the resource `reported` describes, found as `external_name` for `obj`
/// (`named`: the object names it by its external name).
pub async fn preview_ownership<K>(
    client: &Client,
    obj: &K,
    external_name: &str,
    reported: &ExternalOwner,
    named: bool,
) -> Result<OwnershipPreview, ReconcileError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let own_uid = obj.meta().uid.clone().unwrap_or_default();
    let owner = match other_uid(reported, &own_uid) {
        Some(uid) => Some(find_owner::<K>(client, uid).await?),
        None => None,
    };
    let namespace = obj.meta().namespace.clone().unwrap_or_default();
    Ok(
        match decide(
            &K::kind(&()),
            &namespace,
            external_name,
            reported,
            &own_uid,
            owner.as_ref(),
            named,
        ) {
            Verdict::Ours => OwnershipPreview::Ours,
            Verdict::Claim => OwnershipPreview::Claim,
            Verdict::Refuse(err) => OwnershipPreview::Refused(err),
        },
    )
}

/// The refusal to take over a same-named resource that ferroplane did not create for this object.
fn exists_unmanaged(kind: &str, external_name: &str) -> ReconcileError {
    ReconcileError::new(
        EXISTS_UNMANAGED,
        format!(
            "a {kind} named {external_name} already exists and was not created for this object \
             (no {UID_TAG} tag names it); ferroplane takes over a resource it did not create only \
             when asked. To manage that one, set the annotation ferroplane.io/external-name: \
             {external_name} on this object; to create a new one, choose another name. Nothing \
             is changed or deleted meanwhile"
        ),
        RetryClass::UntilSpecChanges,
    )
}

fn refusal(message: String) -> ReconcileError {
    // Polled: the owner may go away (deleted with Orphan), and then the import proceeds.
    ReconcileError::new(OWNED_ELSEWHERE, message, RetryClass::UntilSpecChanges)
}

/// Looks for the object of kind `K` whose UID is `uid`, in every namespace (metadata only,
/// paged, stopping at the first match).
pub(crate) async fn find_owner<K>(client: &Client, uid: &str) -> Result<OwnerStatus, ReconcileError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let page = match api.list_metadata(&params).await {
            Ok(page) => page,
            Err(kube::Error::Api(status)) if status.code == 403 => {
                return Ok(OwnerStatus::Unverifiable);
            }
            Err(e) => {
                return Err(ReconcileError::kube(
                    "cannot check which object owns the external resource",
                    e,
                ));
            }
        };
        if let Some(found) = page
            .items
            .iter()
            .find(|o| o.metadata.uid.as_deref() == Some(uid))
        {
            return Ok(OwnerStatus::Live {
                namespace: found.metadata.namespace.clone().unwrap_or_default(),
                name: found.metadata.name.clone().unwrap_or_default(),
            });
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(OwnerStatus::Gone),
        }
    }
}

/// Of the objects `importers` lists, another live one that names the same external resource
/// (`external_name` in its `ferroplane.io/external-name` annotation) and was created before
/// `own`, or in the same second (creation times have a resolution of one second, so neither is
/// known to be first): of two objects importing one unowned resource, only the one created
/// strictly first takes it over. Both run this check right before their first change, on a list
/// the API server started after they asked ([`ImportCensus`]), which shows each the other when
/// both exist, so at most one ever goes on; two created in the same second are both refused
/// until one is deleted.
pub(crate) fn earlier_importer(
    importers: &Importers,
    own: &ObjectMeta,
    external_name: &str,
) -> Option<OwnerStatus> {
    let own = Importer::from_meta(own);
    importers
        .get(external_name)?
        .iter()
        .find(|other| imports_before(other, &own))
        .map(|rival| OwnerStatus::Live {
            namespace: rival.namespace.clone(),
            name: rival.name.clone(),
        })
}

/// The objects `api` lists (metadata only, paged) that name an external resource, by the name.
pub(crate) async fn list_importers<K>(api: Api<K>) -> Result<Importers, CensusFailure>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut importers = Importers::new();
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let page = api
            .list_metadata(&params)
            .await
            .map_err(import_census::failure)?;
        for object in &page.items {
            add_importer(&mut importers, &object.metadata);
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(importers),
        }
    }
}

/// `meta`'s object among the importers of the resource it names, if it names one.
fn add_importer(importers: &mut Importers, meta: &ObjectMeta) {
    if let Some(name) = annotations::external_name_in(meta.annotations.as_ref()) {
        importers
            .entry(name.to_owned())
            .or_default()
            .push(Importer::from_meta(meta));
    }
}

/// The census of kind `K`'s importers in every namespace.
pub(crate) fn census<K>(client: &Client) -> ImportCensus
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let client = client.clone();
    ImportCensus::new(Arc::new(move || {
        Box::pin(list_importers::<K>(Api::all(client.clone())))
    }))
}

/// The importers of a kind in every namespace as one list finds them now: the reconcile's
/// first-importer check ([`earlier_importer`]) for previews such as `ferroplane plan`, which
/// list once per kind and ask for every object.
pub struct ImportersPreview {
    kind: String,
    importers: Importers,
}

impl ImportersPreview {
    /// Lists kind `K`'s objects (metadata only, paged) in `namespace`, or in every namespace
    /// (`None`; where that is forbidden, the reconcile too lists only the object's own).
    pub async fn list<K>(client: &Client, namespace: Option<&str>) -> Result<Self, ReconcileError>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
    {
        let api = match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let importers = list_importers::<K>(api)
            .await
            .map_err(|failure| match failure {
                CensusFailure::Failed(err) => err,
                CensusFailure::Forbidden => ReconcileError::new(
                    crate::reasons::FORBIDDEN,
                    format!(
                        "cannot check which objects import the external resource: {}s may not be listed in {}",
                        K::kind(&()),
                        namespace.map_or("every namespace".to_owned(), |ns| format!("namespace {ns}"))
                    ),
                    RetryClass::Backoff,
                ),
            })?;
        Ok(Self {
            kind: K::kind(&()).into_owned(),
            importers,
        })
    }

    /// The refusal the reconcile gives the object of `meta` importing `external_name` when an
    /// object created before it (or in the same second) imports it too.
    pub fn refusal(&self, meta: &ObjectMeta, external_name: &str) -> Option<ReconcileError> {
        let older = earlier_importer(&self.importers, meta, external_name)?;
        let namespace = meta.namespace.clone().unwrap_or_default();
        Some(later_importer(
            &self.kind,
            &namespace,
            external_name,
            &older,
        ))
    }
}

/// Whether `other`, a live object other than `own` naming the same resource, was created no
/// later than `own` (to the second).
fn imports_before(other: &Importer, own: &Importer) -> bool {
    other.uid != own.uid
        && !other.deleting
        && match (other.created, own.created) {
            (Some(theirs), Some(ours)) => theirs <= ours,
            // Unknown: neither is known to be first.
            _ => true,
        }
}

/// The refusal of an importer when another imports the same resource (see
/// [`earlier_importer`]).
pub(crate) fn later_importer(
    kind: &str,
    namespace: &str,
    external_name: &str,
    older: &OwnerStatus,
) -> ReconcileError {
    let who = match older {
        OwnerStatus::Live {
            namespace: other_ns,
            name,
        } if other_ns == namespace => format!("{kind} {name} in this namespace"),
        _ => format!("another {kind} outside this namespace"),
    };
    refusal(format!(
        "external resource {external_name} is being imported by {who}, created before this \
         object or in the same second, and one resource is managed by one object only; nothing \
         is changed or deleted for this object. Import another resource, or delete one of the \
         two importers (the other then goes on)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(namespace: &str) -> OwnerStatus {
        OwnerStatus::Live {
            namespace: namespace.into(),
            name: "web".into(),
        }
    }

    fn verdict(reported: ExternalOwner, owner: Option<OwnerStatus>) -> Verdict {
        decide(
            "ECSInstance",
            "team-b",
            "i-1",
            &reported,
            "me",
            owner.as_ref(),
            true,
        )
    }

    fn refused_message(v: Verdict) -> String {
        match v {
            Verdict::Refuse(e) => {
                assert_eq!(e.reason(), OWNED_ELSEWHERE);
                e.message().to_owned()
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn own_untracked_and_unowned_resources_go_on() {
        assert!(matches!(
            verdict(ExternalOwner::NotReported, None),
            Verdict::Ours
        ));
        assert!(matches!(
            verdict(ExternalOwner::Uid("me".into()), None),
            Verdict::Ours
        ));
        assert!(matches!(
            verdict(ExternalOwner::Untagged, None),
            Verdict::Claim
        ));
        assert!(matches!(
            verdict(ExternalOwner::Uid("other".into()), Some(OwnerStatus::Gone)),
            Verdict::Claim
        ));
    }

    #[test]
    fn a_resource_found_by_the_chosen_name_is_taken_over_only_when_imported() {
        for (reported, owner) in [
            (ExternalOwner::Untagged, None),
            (ExternalOwner::Uid("gone".into()), Some(OwnerStatus::Gone)),
        ] {
            let v = decide(
                "KeyPair",
                "team-b",
                "laptop",
                &reported,
                "me",
                owner.as_ref(),
                false,
            );
            match v {
                Verdict::Refuse(e) => {
                    assert_eq!(e.reason(), EXISTS_UNMANAGED);
                    assert!(
                        e.message().contains("ferroplane.io/external-name: laptop"),
                        "{e}"
                    );
                }
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
        // Its own resource, found by name before the name was recorded, is its own.
        assert!(matches!(
            decide(
                "KeyPair",
                "team-b",
                "laptop",
                &ExternalOwner::Uid("me".into()),
                "me",
                None,
                false
            ),
            Verdict::Ours
        ));
    }

    #[test]
    fn an_importer_created_earlier_or_in_the_same_second_comes_first() {
        use ferroplane_apis::common::names::{CROSSPLANE_EXTERNAL_NAME, EXTERNAL_NAME};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let meta = |uid: &str, second: i64, name: Option<&str>| ObjectMeta {
            uid: Some(uid.into()),
            creation_timestamp: Some(Time(jiff::Timestamp::from_second(second).expect("a time"))),
            annotations: name.map(|n| [(EXTERNAL_NAME.to_owned(), n.to_owned())].into()),
            ..ObjectMeta::default()
        };
        let own = meta("me", 100, Some("i-1"));
        // The rival `earlier_importer` finds for `own` among `others` and `own` itself, listed.
        let rival = |others: Vec<ObjectMeta>| {
            let mut importers = Importers::new();
            for m in others.iter().chain([&own]) {
                add_importer(&mut importers, m);
            }
            earlier_importer(&importers, &own, "i-1").map(|status| match status {
                OwnerStatus::Live { .. } => (),
                other => panic!("a live rival, not {other:?}"),
            })
        };
        assert!(rival(vec![meta("a", 99, Some("i-1"))]).is_some());
        assert!(
            rival(vec![meta("b", 100, Some("i-1"))]).is_some(),
            "same second"
        );
        assert!(rival(vec![meta("c", 101, Some("i-1"))]).is_none(), "later");
        assert!(
            rival(vec![meta("d", 99, Some("i-2"))]).is_none(),
            "another resource"
        );
        assert!(
            rival(vec![meta("e", 99, None)]).is_none(),
            "no external name"
        );
        assert!(rival(vec![]).is_none(), "not itself");
        let mut by_crossplane = meta("g", 99, None);
        by_crossplane.annotations =
            Some([(CROSSPLANE_EXTERNAL_NAME.to_owned(), "i-1".to_owned())].into());
        assert!(rival(vec![by_crossplane]).is_some(), "crossplane.io/ alias");
        let mut leaving = meta("f", 99, Some("i-1"));
        leaving.deletion_timestamp = leaving.creation_timestamp.clone();
        assert!(rival(vec![leaving]).is_none(), "being deleted");
    }

    #[test]
    fn another_namespace_owner_is_refused_without_naming_it() {
        let message = refused_message(verdict(
            ExternalOwner::Uid("uid-of-a".into()),
            Some(live("team-a")),
        ));
        assert!(!message.contains("team-a"), "{message}");
        assert!(!message.contains("web"), "{message}");
        assert!(!message.contains("uid-of-a"), "the owner's UID: {message}");
        assert!(message.contains("i-1"), "{message}");
    }

    #[test]
    fn a_same_namespace_owner_is_named() {
        let message = refused_message(verdict(
            ExternalOwner::Uid("other".into()),
            Some(live("team-b")),
        ));
        assert!(message.contains("ECSInstance web"), "{message}");
    }

    #[test]
    fn an_owner_that_cannot_be_checked_is_refused() {
        for owner in [Some(OwnerStatus::Unverifiable), None] {
            let message = refused_message(verdict(ExternalOwner::Uid("other".into()), owner));
            assert!(message.contains("remove the"), "{message}");
        }
    }

    #[test]
    fn only_a_foreign_tag_needs_a_lookup() {
        assert_eq!(other_uid(&ExternalOwner::Uid("x".into()), "me"), Some("x"));
        assert_eq!(other_uid(&ExternalOwner::Uid("me".into()), "me"), None);
        assert_eq!(other_uid(&ExternalOwner::Untagged, "me"), None);
        assert_eq!(ExternalOwner::from_tag(Some("")), ExternalOwner::Untagged);
        assert_eq!(
            ExternalOwner::from_tag(Some("u")),
            ExternalOwner::Uid("u".into())
        );
    }
}
