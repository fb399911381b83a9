//! The plan of an ECSFleet: what its next reconcile does to its member ECSInstances, computed
//! by the fleet controller's own decision (`provider_alibaba::ecs_fleet_preview`) over the
//! fleet (a manifest applied over the stored one, which keeps its status) and its members as
//! the cluster has them. Reads the cluster only; the members' own changes in the cloud are
//! their plans (`ferroplane plan -l ferroplane.io/fleet=<name>`).

use ferroplane_apis::alibabacloud::{ECSFleet, ECSInstance};
use kube::api::ListParams;
use kube::{Api, ResourceExt as _};
use provider_alibaba::FleetPreview;

use super::admission::{self, Admission};
use super::outcome::{Action, Change, Identity, ObjectPlan};

pub const KIND: &str = "ECSFleet";

fn identity(fleet: &ECSFleet) -> Identity {
    Identity {
        namespace: fleet.namespace().unwrap_or_default(),
        name: fleet.name_any(),
        external_name: None,
    }
}

/// The fleets of `namespace` (all when `None`) matching `selector`; none when the cluster does
/// not serve the kind.
pub async fn list(
    kube: &kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> anyhow::Result<Vec<ECSFleet>> {
    let api: Api<ECSFleet> = match namespace {
        Some(ns) => Api::namespaced(kube.clone(), ns),
        None => Api::all(kube.clone()),
    };
    let mut params = ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    match api.list(&params).await {
        Ok(list) => Ok(list.items),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot list ECSFleets")),
    }
}

/// The plan of `fleet`, a manifest (`from_manifest`: dry-run through admission and applied
/// over the stored fleet) or the cluster's object. Without a cluster a fleet is planned as
/// new (every member a create).
pub async fn plan(
    fleet: ECSFleet,
    kube: Option<&kube::Client>,
    from_manifest: bool,
) -> anyhow::Result<ObjectPlan> {
    let namespace = fleet.namespace().unwrap_or_default();
    let (fleet, instances) = match kube {
        None => (fleet, Vec::new()),
        Some(kube) => {
            let fleets: Api<ECSFleet> = Api::namespaced(kube.clone(), &namespace);
            let mut applied = fleet.clone();
            if from_manifest {
                if let Some(live) = fleets.get_opt(&fleet.name_any()).await? {
                    applied = applied_over(&fleet, &live)?;
                }
                let doc = serde_json::to_value(&fleet)?;
                if let Admission::Refused(message) = admission::dry_run(kube, &fleet, &doc).await? {
                    return Ok(
                        ObjectPlan::refused_by_admission(identity(&applied), message).of_kind(KIND),
                    );
                }
            }
            // A fleet not stored yet has no UID, so no member is its.
            let instances = if applied.uid().is_some() {
                let api: Api<ECSInstance> = Api::namespaced(kube.clone(), &namespace);
                api.list(&ListParams::default())
                    .await
                    .map_err(|e| anyhow::Error::new(e).context("cannot list ECSInstances"))?
                    .items
            } else {
                Vec::new()
            };
            (applied, instances)
        }
    };
    let who = identity(&fleet);
    if fleet.metadata.deletion_timestamp.is_some() {
        return Ok(ObjectPlan::new(who, Action::Delete)
            .of_kind(KIND)
            .with_note(
                "its members go with it (owner references), each as its deletionPolicy says",
            ));
    }
    let stored = fleet.uid().is_some();
    let preview = provider_alibaba::ecs_fleet_preview(&fleet, instances, jiff::Timestamp::now());
    let plan = from_preview(who, stored, &preview);
    Ok(
        match ferroplane_runtime::paused_by(Some(fleet.annotations())) {
            Some(key) => plan.paused_by(key),
            None => plan,
        },
    )
}

/// `manifest` as `kubectl apply` leaves it over `live`: the stored fleet (UID, status) with the
/// manifest's labels, annotations and top-level `spec` fields.
fn applied_over(manifest: &ECSFleet, live: &ECSFleet) -> anyhow::Result<ECSFleet> {
    let mut merged = serde_json::to_value(live)?;
    let over = serde_json::to_value(manifest)?;
    super::live_object::merge_labels_and_annotations(&mut merged, &over);
    if let (Some(spec), Some(target)) = (over["spec"].as_object(), merged["spec"].as_object_mut()) {
        target.extend(spec.clone());
    }
    Ok(serde_json::from_value(merged)?)
}

/// One member change.
fn member_change(class: &'static str, description: String, action: &'static str) -> Change {
    Change {
        field: "members".to_owned(),
        class,
        description,
        action,
        calls: if action.is_empty() {
            Vec::new()
        } else {
            vec![action]
        },
    }
}

/// The fleet's preview as a plan: `create` for a fleet not stored yet; `replace` when members
/// of an older template or misplaced ones are deleted for new ones; `update in place` for a
/// scale or in-place patches; `refused` for a spec the controller cannot reconcile.
pub fn from_preview(who: Identity, stored: bool, preview: &FleetPreview) -> ObjectPlan {
    if let Some(message) = &preview.invalid {
        return ObjectPlan::blocked(who, provider_alibaba::INVALID_FLEET, message.clone())
            .of_kind(KIND);
    }
    let mut changes = Vec::new();
    for (name, zone, instance_type) in &preview.create {
        changes.push(member_change(
            "create",
            format!("create {name} in {zone} ({instance_type})"),
            "RunInstances",
        ));
    }
    for name in &preview.delete {
        changes.push(member_change(
            "delete",
            format!("delete {name}"),
            "DeleteInstance",
        ));
    }
    for name in &preview.replace_refused {
        changes.push(member_change(
            "delete",
            format!("delete {name}: ECS refused its placement; placed elsewhere"),
            "",
        ));
    }
    for name in &preview.replace_lost {
        changes.push(member_change(
            "delete",
            format!("delete {name}: its instance is gone from the cloud; replaced"),
            "",
        ));
    }
    for (name, fields) in &preview.in_place {
        changes.push(member_change(
            "in-place",
            format!("patch {name}: {}", fields.join(", ")),
            "",
        ));
    }
    let action = if changes.is_empty() {
        Action::NoChange
    } else if !stored {
        Action::Create
    } else if preview.replacing {
        Action::Replace
    } else {
        Action::UpdateInPlace
    };
    let mut plan = ObjectPlan::new(who, action).of_kind(KIND);
    plan.changes = changes;
    if !preview.outdated_kept.is_empty() {
        plan = plan.with_note(format!(
            "{} member(s) of an older template stay for now and are replaced as the rollout's bounds allow: {}",
            preview.outdated_kept.len(),
            preview.outdated_kept.join(", ")
        ));
    }
    if preview.halted {
        plan = plan.with_note(
            "the rollout passed its progress deadline: it creates and deletes nothing for itself until the fleet changes",
        );
    }
    if preview.unplaced > 0 {
        plan = plan.with_note(format!(
            "{} member(s) have no placement: every zone and instance type is refused for now",
            preview.unplaced
        ));
    }
    if preview.waiting > 0 {
        plan = plan.with_note(format!(
            "{} member(s) wait until a first member proves their zone's placement",
            preview.waiting
        ));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Identity {
        Identity {
            namespace: "ns".into(),
            name: "web".into(),
            external_name: None,
        }
    }

    fn create(name: &str) -> (String, String, String) {
        (name.into(), "cn-beijing-a".into(), "ecs.g6.large".into())
    }

    #[test]
    fn the_action_says_what_happens_to_the_members() {
        let nothing = FleetPreview::default();
        assert_eq!(from_preview(who(), true, &nothing).action, Action::NoChange);

        let new = FleetPreview {
            create: vec![create("web-h-0"), create("web-h-1")],
            ..FleetPreview::default()
        };
        let plan = from_preview(who(), false, &new);
        assert_eq!((plan.kind, plan.action), (KIND, Action::Create));
        assert_eq!(plan.changes.len(), 2);
        assert_eq!(
            plan.changes[0].description,
            "create web-h-0 in cn-beijing-a (ecs.g6.large)"
        );
        assert_eq!(plan.changes[0].calls, ["RunInstances"]);

        let scaled = from_preview(who(), true, &new);
        assert_eq!(scaled.action, Action::UpdateInPlace, "a scale-up");

        let rolling = FleetPreview {
            create: vec![create("web-n-4")],
            delete: vec!["web-o-3".into()],
            replacing: true,
            outdated_kept: vec!["web-o-0".into(), "web-o-1".into()],
            ..FleetPreview::default()
        };
        let plan = from_preview(who(), true, &rolling);
        assert_eq!(plan.action, Action::Replace);
        assert!(
            plan.note
                .as_deref()
                .is_some_and(|n| n.contains("2 member(s) of an older template")),
            "{plan:?}"
        );

        let patched = FleetPreview {
            in_place: vec![(
                "web-h-0".into(),
                vec!["spec.forProvider.description".into()],
            )],
            ..FleetPreview::default()
        };
        let plan = from_preview(who(), true, &patched);
        assert_eq!(plan.action, Action::UpdateInPlace);
        assert_eq!(
            plan.changes[0].description,
            "patch web-h-0: spec.forProvider.description"
        );
        assert!(
            plan.changes[0].calls.is_empty(),
            "the member's own plan says"
        );

        let invalid = FleetPreview {
            invalid: Some("too long".into()),
            ..FleetPreview::default()
        };
        let plan = from_preview(who(), true, &invalid);
        assert_eq!(plan.action, Action::Blocked);
        assert_eq!(
            plan.blocked.map(|b| b.reason),
            Some(provider_alibaba::INVALID_FLEET.to_owned())
        );
    }
}
