//! The plan of the kinds served by provider-alibaba's shared cloud connector (VPC, VSwitch,
//! SecurityGroup, SecurityGroupRule, Disk, KeyPair, EIP, EIPAssociation, NATGateway, SNATEntry,
//! DNATEntry), one generic path for all: the object (a manifest applied over its live object),
//! its references resolved as the runtime resolves them, then `CloudPreviews::observe` (the
//! controller's connect and the kind's own observe, reads only) made an [`ObjectPlan`]. A kind
//! is planned once it is listed in [`KINDS`] and [`with_kind_type!`].

use anyhow::Context as _;
use ferroplane_apis::alibabacloud::{
    DNATEntry, Disk, EIP, EIPAssociation, KeyPair, NATGateway, SNATEntry, SecurityGroup,
    SecurityGroupRule, VPC, VSwitch,
};
use ferroplane_apis::common::{DeletionPolicy, ManagementAction};
use ferroplane_runtime::ManagedResource;
use ferroplane_runtime::reasons::EXTERNAL_RESOURCE_NOT_FOUND;
use ferroplane_runtime::references;
use kube::{Api, ResourceExt as _};
use provider_alibaba::{CloudPreviews, KindPreview, Ownership, PlannableKind};
use serde_json::Value;

use super::admission::{self, Admission};
use super::change_actions;
use super::outcome::{self, Action, Change, Identity, ObjectPlan};

/// The kinds of this module, by `kind`.
pub const KINDS: [&str; 11] = [
    "VPC",
    "VSwitch",
    "SecurityGroup",
    "SecurityGroupRule",
    "Disk",
    "KeyPair",
    "EIP",
    "EIPAssociation",
    "NATGateway",
    "SNATEntry",
    "DNATEntry",
];

/// `$body` with `$K` the type of the kind named `$kind` (one of [`KINDS`]) and `$name` its
/// name; an error for any other kind.
macro_rules! with_kind_type {
    ($kind:expr, |$name:ident: $K:ident| $body:expr) => {
        match $kind {
            "VPC" => with_kind_type!(@arm VPC, $name, $K, $body),
            "VSwitch" => with_kind_type!(@arm VSwitch, $name, $K, $body),
            "SecurityGroup" => with_kind_type!(@arm SecurityGroup, $name, $K, $body),
            "SecurityGroupRule" => with_kind_type!(@arm SecurityGroupRule, $name, $K, $body),
            "Disk" => with_kind_type!(@arm Disk, $name, $K, $body),
            "KeyPair" => with_kind_type!(@arm KeyPair, $name, $K, $body),
            "EIP" => with_kind_type!(@arm EIP, $name, $K, $body),
            "EIPAssociation" => with_kind_type!(@arm EIPAssociation, $name, $K, $body),
            "NATGateway" => with_kind_type!(@arm NATGateway, $name, $K, $body),
            "SNATEntry" => with_kind_type!(@arm SNATEntry, $name, $K, $body),
            "DNATEntry" => with_kind_type!(@arm DNATEntry, $name, $K, $body),
            other => anyhow::bail!("{other} is not planned by this module"),
        }
    };
    (@arm $ty:ident, $name:ident, $K:ident, $body:expr) => {{
        type $K = $ty;
        let $name: &'static str = stringify!($ty);
        $body
    }};
}

/// The reason of an object planned without a cluster: these kinds' configurations are read
/// from it.
const NEEDS_CLUSTER: &str = "ClusterRequired";

/// What a plan of these kinds reads with.
pub struct Reads<'a> {
    /// `None` with `-f` and `--credentials local`.
    pub kube: Option<&'a kube::Client>,
    pub previews: Option<&'a CloudPreviews>,
    /// The reconcile's first-importer check, with the cluster.
    pub importers: Option<&'a super::importers::ImporterLists>,
    /// The manifest is dry-run through admission and applied over the live object (`-f`);
    /// otherwise it is the live object.
    pub from_manifest: bool,
}

/// The plan of one manifest or cluster object `doc` of kind `kind` (one of [`KINDS`]).
pub async fn plan_document(
    kind: &str,
    doc: Value,
    reads: &Reads<'_>,
) -> anyhow::Result<ObjectPlan> {
    with_kind_type!(kind, |name: K| plan::<K>(name, doc, reads).await)
}

/// The objects of `kind` (one of [`KINDS`]) in `namespace` (all when `None`) matching
/// `selector`, as documents; none when the cluster does not serve the kind.
pub async fn list(
    kind: &str,
    kube: &kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> anyhow::Result<Vec<Value>> {
    with_kind_type!(kind, |_name: K| list_of::<K>(kube, namespace, selector)
        .await)
}

async fn list_of<K: ManagedResource>(
    kube: &kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> anyhow::Result<Vec<Value>> {
    let api: Api<K> = match namespace {
        Some(ns) => Api::namespaced(kube.clone(), ns),
        None => Api::all(kube.clone()),
    };
    let mut params = kube::api::ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    match api.list(&params).await {
        Ok(list) => list
            .items
            .iter()
            .map(|o| Ok(serde_json::to_value(o)?))
            .collect(),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot list {}", K::kind(&())))),
    }
}

fn identity<K: kube::Resource>(mr: &K) -> Identity {
    Identity {
        namespace: mr.namespace().unwrap_or_default(),
        name: mr.name_any(),
        external_name: provider_alibaba::external_name(mr),
    }
}

async fn plan<K: PlannableKind>(
    kind: &'static str,
    doc: Value,
    reads: &Reads<'_>,
) -> anyhow::Result<ObjectPlan> {
    let manifest: K = serde_json::from_value(doc.clone())
        .with_context(|| format!("not a valid {kind}: {}", doc["metadata"]["name"]))?;
    let (Some(kube), Some(previews)) = (reads.kube, reads.previews) else {
        return Ok(ObjectPlan::blocked(
            identity(&manifest),
            NEEDS_CLUSTER,
            format!("a {kind}'s ProviderConfig is read from the cluster: plan it with --credentials cluster"),
        )
        .of_kind(kind));
    };
    let mut mr = manifest.clone();
    if reads.from_manifest {
        let api: Api<K> = Api::namespaced(kube.clone(), &manifest.namespace().unwrap_or_default());
        if let Some(live) = api.get_opt(&manifest.name_any()).await? {
            mr = applied_over(&manifest, &live)?;
        }
        if let Admission::Refused(message) = admission::dry_run(kube, &manifest, &doc).await? {
            return Ok(ObjectPlan::refused_by_admission(identity(&mr), message).of_kind(kind));
        }
    }
    let paused = ferroplane_runtime::paused_by(Some(mr.annotations()));
    let plan = next_reconcile(kind, mr, kube, previews, reads.importers).await?;
    Ok(match paused {
        Some(key) => plan.paused_by(key),
        None => plan,
    })
}

/// What the next reconcile of `mr` (applied, admitted) does, pause aside.
async fn next_reconcile<K: PlannableKind>(
    kind: &'static str,
    mut mr: K,
    kube: &kube::Client,
    previews: &CloudPreviews,
    importers: Option<&super::importers::ImporterLists>,
) -> anyhow::Result<ObjectPlan> {
    let who = identity(&mr);
    let policies = mr.management_policies().to_vec();
    if mr.meta().deletion_timestamp.is_some() {
        let may_delete = outcome::allows(&policies, ManagementAction::Delete);
        let note = match (&who.external_name, mr.deletion_policy(), may_delete) {
            (None, _, _) => "nothing in the cloud is named: only the object goes",
            (Some(_), DeletionPolicy::Delete, true) => {
                "the resource is deleted once what depends on it is gone, then the finalizer goes"
            }
            _ => "the resource is left in place (orphaned); only the object goes",
        };
        return Ok(ObjectPlan::new(who, Action::Delete)
            .of_kind(kind)
            .with_note(note));
    }
    match references::resolve(kube, &mr).await {
        Ok(Some(patch)) => mr = with_resolved(&mr, patch)?,
        Ok(None) => {}
        Err(e) => {
            return Ok(ObjectPlan::blocked(who, e.reason(), e.message().to_owned()).of_kind(kind));
        }
    }
    let preview = match previews.observe(&mr).await {
        Ok(preview) => preview,
        Err(b) => return Ok(ObjectPlan::blocked(who, &b.reason, b.message).of_kind(kind)),
    };
    // A take-over (an import of an unowned resource) is refused to an object created after
    // another importer of it, as the reconcile's first-importer check refuses it.
    if let (
        KindPreview::Found {
            external_name,
            ownership: Ownership::Claim,
            ..
        },
        Some(importers),
    ) = (&preview, importers)
        && outcome::allows(&policies, ManagementAction::Update)
    {
        let name = who
            .external_name
            .clone()
            .unwrap_or_else(|| external_name.clone());
        match importers.refusal(&mr, &name).await {
            Ok(Some(e)) | Err(e) => {
                return Ok(
                    ObjectPlan::blocked(who, e.reason(), e.message().to_owned()).of_kind(kind)
                );
            }
            Ok(None) => {}
        }
    }
    Ok(from_preview(kind, who, &preview, &policies))
}

/// An object and what its kind's observe found, as a plan.
pub fn from_preview(
    kind: &'static str,
    mut who: Identity,
    preview: &KindPreview,
    policies: &[ManagementAction],
) -> ObjectPlan {
    match preview {
        KindPreview::Missing { creates: false } => {
            let id = who.external_name.clone().unwrap_or_default();
            ObjectPlan::blocked(
                who,
                EXTERNAL_RESOURCE_NOT_FOUND,
                format!("{kind} {id} is not found in the cloud; ferroplane does not create another for a named one"),
            )
            .of_kind(kind)
        }
        KindPreview::Missing { creates: true } => {
            if outcome::allows(policies, ManagementAction::Create) {
                ObjectPlan::new(who, Action::Create).of_kind(kind)
            } else {
                ObjectPlan::new(who, Action::NoChange)
                    .of_kind(kind)
                    .with_note("not found and managementPolicies do not include Create: nothing is created")
            }
        }
        KindPreview::Found {
            external_name,
            changes,
            in_transition,
            ownership,
        } => {
            if !external_name.is_empty() {
                who.external_name = Some(external_name.clone());
            }
            if let Ownership::Refused(refusal) = ownership {
                return ObjectPlan::blocked(who, &refusal.reason, refusal.message.clone())
                    .of_kind(kind);
            }
            let mut planned: Vec<Change> = changes.iter().map(|line| change(kind, line)).collect();
            // The reconcile takes an imported resource over right before its first change; one
            // that matches its spec is not written.
            if *ownership == Ownership::Claim && !planned.is_empty() {
                planned.insert(0, outcome::take_over());
            }
            let action = if planned.is_empty() {
                Action::NoChange
            } else {
                Action::UpdateInPlace
            };
            let mut plan = ObjectPlan::new(who, action).of_kind(kind);
            plan.changes = planned;
            if *in_transition {
                plan = plan.with_note(
                    "the resource is changing state: the controller compares once it settles",
                );
            }
            if action != Action::NoChange && !outcome::allows(policies, ManagementAction::Update) {
                let count = plan.changes.len();
                plan.action = Action::NoChange;
                plan.note = None;
                plan = plan.with_note(format!(
                    "managementPolicies do not include Update: {count} difference(s) are reported, not applied"
                ));
            }
            plan
        }
    }
}

/// One line of a kind's diff as a change.
fn change(kind: &str, line: &str) -> Change {
    let field = change_actions::field(kind, line).to_owned();
    let action = change_actions::action(kind, &field, line);
    Change {
        action,
        calls: change_actions::calls(action),
        field,
        class: "in-place",
        description: line.to_owned(),
    }
}

/// `mr` with the reference patch in its `spec.forProvider`.
fn with_resolved<K: ManagedResource>(
    mr: &K,
    patch: serde_json::Map<String, Value>,
) -> anyhow::Result<K> {
    let mut value = serde_json::to_value(mr)?;
    if let Some(fields) = value["spec"]["forProvider"].as_object_mut() {
        fields.extend(patch);
    }
    Ok(serde_json::from_value(value)?)
}

/// `manifest` as `kubectl apply` leaves it over `live`: the live object (its UID, external
/// name, late-initialized fields, deletion state) with the manifest's labels, annotations and
/// set `spec` fields over it.
pub fn applied_over<K: ManagedResource>(manifest: &K, live: &K) -> anyhow::Result<K> {
    let mut merged = serde_json::to_value(live)?;
    let over = serde_json::to_value(manifest)?;
    super::live_object::merge_labels_and_annotations(&mut merged, &over);
    if let Some(spec) = over["spec"].as_object() {
        for (key, value) in spec {
            match (key.as_str(), value.as_object()) {
                ("forProvider", Some(fields)) => {
                    let target = &mut merged["spec"]["forProvider"];
                    if let Some(target) = target.as_object_mut() {
                        target.extend(
                            fields
                                .iter()
                                .filter(|(_, v)| !v.is_null())
                                .map(|(k, v)| (k.clone(), v.clone())),
                        );
                    }
                }
                _ if !value.is_null() => merged["spec"][key] = value.clone(),
                _ => {}
            }
        }
    }
    Ok(serde_json::from_value(merged)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Identity {
        Identity {
            namespace: "ns".into(),
            name: "prod".into(),
            external_name: Some("vpc-1".into()),
        }
    }

    #[test]
    fn every_kind_is_dispatched_by_its_name() {
        fn name_of(kind: &str) -> anyhow::Result<String> {
            with_kind_type!(kind, |name: K| {
                assert_eq!(<K as kube::Resource>::kind(&()), name);
                Ok(name.to_owned())
            })
        }
        for kind in KINDS {
            assert_eq!(name_of(kind).unwrap(), kind);
        }
        assert!(name_of("ECSFleet").is_err());
    }

    #[test]
    fn changes_are_in_place_with_the_kinds_action() {
        let preview = KindPreview::Found {
            external_name: "vpc-1".into(),
            changes: vec!["description: \"a\" → \"b\"".into()],
            in_transition: false,
            ownership: Ownership::Ours,
        };
        let plan = from_preview("VPC", who(), &preview, &[ManagementAction::All]);
        assert_eq!(plan.action, Action::UpdateInPlace);
        assert_eq!(plan.kind, "VPC");
        assert_eq!(plan.changes[0].field, "description");
        assert_eq!(plan.changes[0].action, "ModifyVpcAttribute");
        let observe_only = from_preview("VPC", who(), &preview, &[ManagementAction::Observe]);
        assert_eq!(observe_only.action, Action::NoChange);
        assert!(observe_only.note.unwrap().contains("Update"));
    }

    #[test]
    fn an_untagged_import_is_taken_over_before_a_change_and_another_objects_is_blocked() {
        let found = |ownership| KindPreview::Found {
            external_name: "vpc-1".into(),
            changes: vec![],
            in_transition: false,
            ownership,
        };
        let matching = from_preview(
            "VPC",
            who(),
            &found(Ownership::Claim),
            &[ManagementAction::All],
        );
        assert_eq!(matching.action, Action::NoChange, "nothing is written");
        let edited = KindPreview::Found {
            external_name: "vpc-1".into(),
            changes: vec!["description: \"a\" → \"b\"".into()],
            in_transition: false,
            ownership: Ownership::Claim,
        };
        let claim = from_preview("VPC", who(), &edited, &[ManagementAction::All]);
        assert_eq!(claim.action, Action::UpdateInPlace);
        let actions: Vec<&str> = claim.changes.iter().map(|c| c.action).collect();
        assert_eq!(actions, ["TagResources", "ModifyVpcAttribute"]);
        let observe_only = from_preview(
            "VPC",
            who(),
            &found(Ownership::Claim),
            &[ManagementAction::Observe],
        );
        assert_eq!(observe_only.action, Action::NoChange);
        let refused = Ownership::Refused(provider_alibaba::PreviewBlocked {
            reason: "ExternalResourceOwnedElsewhere".into(),
            message: "belongs to VPC other".into(),
        });
        let owned = from_preview("VPC", who(), &found(refused), &[ManagementAction::All]);
        assert_eq!(owned.action, Action::Blocked);
        assert_eq!(
            owned.blocked.unwrap().reason,
            "ExternalResourceOwnedElsewhere"
        );
    }

    #[test]
    fn missing_is_a_create_or_blocked_when_the_cloud_named_it() {
        let create = from_preview(
            "VSwitch",
            who(),
            &KindPreview::Missing { creates: true },
            &[ManagementAction::All],
        );
        assert_eq!(create.action, Action::Create);
        let gone = from_preview(
            "VSwitch",
            who(),
            &KindPreview::Missing { creates: false },
            &[ManagementAction::All],
        );
        assert_eq!(gone.action, Action::Blocked);
        assert_eq!(gone.blocked.unwrap().reason, EXTERNAL_RESOURCE_NOT_FOUND);
    }

    #[test]
    fn a_manifest_keeps_the_live_ids_and_late_initialized_fields() {
        let live: VPC = serde_json::from_value(serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "VPC",
            "metadata": {"name": "prod", "namespace": "ns", "uid": "u-1",
                "annotations": {"ferroplane.io/external-name": "vpc-1"}},
            "spec": {"forProvider": {"regionId": "cn-beijing", "cidrBlock": "10.0.0.0/16", "vpcName": "prod"}}
        }))
        .unwrap();
        let manifest: VPC = serde_json::from_value(serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "VPC",
            "metadata": {"name": "prod", "namespace": "ns"},
            "spec": {"forProvider": {"regionId": "cn-beijing", "description": "new"}}
        }))
        .unwrap();
        let applied = applied_over(&manifest, &live).unwrap();
        assert_eq!(applied.uid().as_deref(), Some("u-1"));
        assert_eq!(
            provider_alibaba::external_name(&applied).as_deref(),
            Some("vpc-1")
        );
        let p = &applied.spec.for_provider;
        assert_eq!(p.description.as_deref(), Some("new"));
        assert_eq!(p.vpc_name.as_deref(), Some("prod"));
        assert_eq!(p.cidr_block.as_deref(), Some("10.0.0.0/16"));
    }
}
