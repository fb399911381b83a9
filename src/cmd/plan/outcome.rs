//! What `ferroplane plan` says about one object ([`ObjectPlan`]), and how provider-alibaba's
//! preview of an observed instance becomes one [`Action`]. Pure; the JSON form is the stable
//! schema README documents (`schemaVersion` 1).

use ferroplane_apis::common::{DeletionPolicy, ManagementAction};
use provider_alibaba::{ChangeClass, InstancePreview, PlannedChange};
use serde::Serialize;

/// The schema version of `-o json`; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// What the next reconcile of an object does, most severe first when several apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// The object is being deleted.
    Delete,
    /// A reference, configuration, Secret or instance is missing: nothing happens until it is
    /// there.
    Blocked,
    /// A change ferroplane refuses (an immutable field, a spec ECS would not launch).
    Refused,
    /// `imageId` changes: the system disk is replaced.
    Replace,
    /// A restart-bound field changes.
    NeedsRestart,
    /// Fields change on the running instance.
    UpdateInPlace,
    Create,
    NoChange,
}

impl Action {
    /// The words of the table.
    pub fn words(self) -> &'static str {
        match self {
            Self::Delete => "delete",
            Self::Blocked => "blocked",
            Self::Refused => "refused",
            Self::Replace => "replace",
            Self::NeedsRestart => "needs restart",
            Self::UpdateInPlace => "update in place",
            Self::Create => "create",
            Self::NoChange => "no change",
        }
    }
}

/// One change, as the JSON schema has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub field: String,
    /// `in-place`, `restart`, `replace` or `immutable`.
    pub class: &'static str,
    /// Old → new.
    pub description: String,
    /// The ECS action that applies it (empty for an immutable field).
    pub action: &'static str,
    /// The calls the controller sends for it, in order (`action` may name two of which this
    /// change needs one); absent where the plan cannot tell which.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<&'static str>,
}

impl From<&PlannedChange> for Change {
    fn from(c: &PlannedChange) -> Self {
        Self {
            field: c.field.clone(),
            class: match c.class {
                ChangeClass::InPlace => "in-place",
                ChangeClass::Restart => "restart",
                ChangeClass::Replace => "replace",
                ChangeClass::Immutable => "immutable",
            },
            description: c.description.clone(),
            action: c.action,
            calls: c.calls.clone(),
        }
    }
}

/// Where and what a create launches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Launch {
    pub region_id: String,
    /// Empty when ECS picks the zone (from the vSwitch).
    pub zone_id: String,
    pub instance_type: String,
    pub image_id: String,
}

/// Why nothing can happen yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Blocked {
    /// The condition reason the controller shows for it.
    pub reason: String,
    pub message: String,
}

/// The plan of one object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectPlan {
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    /// The instance ID, when the object names one.
    pub external_name: Option<String>,
    pub action: Action,
    pub changes: Vec<Change>,
    /// For `needs-restart` and `replace`: whether the controller would stop the instance
    /// (`allowRestart: true`, or it is stopped anyway); otherwise the changes wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_permitted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<Launch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<Blocked>,
    /// For `refused` by the API server's admission (a server-side dry run): its message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<String>,
    /// What else a person should know (what is lost, what waits, observe-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `metadata` of an object plan.
#[derive(Clone, Debug)]
pub struct Identity {
    pub namespace: String,
    pub name: String,
    pub external_name: Option<String>,
}

impl ObjectPlan {
    pub fn new(who: Identity, action: Action) -> Self {
        Self {
            kind: "ECSInstance",
            namespace: who.namespace,
            name: who.name,
            external_name: who.external_name,
            action,
            changes: Vec::new(),
            restart_permitted: None,
            launch: None,
            blocked: None,
            admission: None,
            note: None,
        }
    }

    /// The plan of an object the API server's admission refuses, with its message.
    pub fn refused_by_admission(who: Identity, message: String) -> Self {
        Self {
            admission: Some(message),
            ..Self::new(who, Action::Refused)
        }
    }

    pub fn blocked(who: Identity, reason: &str, message: String) -> Self {
        Self {
            blocked: Some(Blocked {
                reason: reason.to_owned(),
                message,
            }),
            ..Self::new(who, Action::Blocked)
        }
    }

    /// A note added to the plan's notes (`; ` between them).
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        self.note = Some(match self.note.take() {
            Some(before) => format!("{before}; {note}"),
            None => note,
        });
        self
    }

    /// This plan of an object the `key` annotation pauses: the controller does nothing (not even
    /// a deletion) until it is removed, so `no change`, with what it would do then in the note
    /// and the changes kept. A manifest the API server's admission refuses stays `refused`: the
    /// apply itself fails.
    pub fn paused_by(mut self, key: &str) -> Self {
        if self.admission.is_some() {
            return self;
        }
        let then = match self.blocked.take() {
            Some(blocked) => format!("{} ({})", self.action.words(), blocked.reason),
            None => self.action.words().to_owned(),
        };
        let note = self.note.take();
        self.action = Action::NoChange;
        self.restart_permitted = None;
        self.launch = None;
        self = self.with_note(format!(
            "reconciliation is paused by the {key} annotation: nothing is done until it is removed; then: {then}"
        ));
        match note {
            Some(note) => self.with_note(note),
            None => self,
        }
    }

    /// The plan of an object of `kind` (`ECSInstance` by default).
    pub fn of_kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }
}

/// The take-over of an untagged or orphaned resource the object names: the reconcile's claim,
/// right before the resource's first change.
pub fn take_over() -> Change {
    Change {
        field: "ownership".to_owned(),
        class: "in-place",
        description: format!(
            "{} tag: none or an orphaned object's → this object's UID (take over)",
            ferroplane_runtime::UID_TAG
        ),
        action: "TagResources",
        calls: vec!["TagResources"],
    }
}

/// Whether the policies let the controller do `action` (`*` allows all).
pub fn allows(policies: &[ManagementAction], action: ManagementAction) -> bool {
    policies.contains(&ManagementAction::All) || policies.contains(&action)
}

/// The plan of an object being deleted.
pub fn deleting(who: Identity, deletion: DeletionPolicy, may_delete: bool) -> ObjectPlan {
    let note = match (&who.external_name, deletion, may_delete) {
        (None, _, _) => "no instance: only the object goes",
        (Some(_), DeletionPolicy::Delete, true) => "DeleteInstance, then the finalizer goes",
        _ => "the instance is left in place (orphaned); only the object goes",
    };
    ObjectPlan::new(who, Action::Delete).with_note(note)
}

/// The plan of an object whose instance ECS reports as `preview` says.
pub fn observed(who: Identity, preview: &InstancePreview, may_update: bool) -> ObjectPlan {
    let action = if preview.has(ChangeClass::Immutable) {
        Action::Refused
    } else if preview.has(ChangeClass::Replace) {
        Action::Replace
    } else if preview.has(ChangeClass::Restart) {
        Action::NeedsRestart
    } else if preview.changes.is_empty() {
        Action::NoChange
    } else {
        Action::UpdateInPlace
    };
    let mut plan = ObjectPlan::new(who, action);
    plan.changes = preview.changes.iter().map(Change::from).collect();
    let restart_bound = matches!(action, Action::Replace | Action::NeedsRestart);
    if restart_bound {
        plan.restart_permitted = Some(preview.restart_permitted);
    }
    let mut notes = Vec::new();
    if action == Action::Refused {
        notes.push(
            "an immutable field differs: ferroplane changes nothing; only a new object (a new instance) can take it"
                .to_owned(),
        );
    }
    if preview.has(ChangeClass::Replace) {
        notes.push("imageId: ReplaceSystemDisk replaces the system disk; what is on it is lost (data disks are kept)".to_owned());
    }
    if restart_bound && !preview.restart_permitted {
        notes.push("the restart-bound changes wait (RestartPending): set spec.forProvider.allowRestart: true, or stop the instance".to_owned());
    }
    if preview.in_transition && action != Action::NoChange {
        notes.push(
            "the instance is starting or stopping: the changes are made once it settles".to_owned(),
        );
    }
    if !may_update && action != Action::NoChange {
        plan.action = Action::NoChange;
        plan.restart_permitted = None;
        notes = vec![format!(
            "managementPolicies do not include Update: {} difference(s) are reported, not applied",
            plan.changes.len()
        )];
    }
    if !notes.is_empty() {
        plan.note = Some(notes.join("; "));
    }
    plan
}

/// The exit code of a plan: 0 when nothing would change, 2 otherwise (as `terraform plan
/// -detailed-exitcode`).
pub fn exit_code(plans: &[ObjectPlan]) -> u8 {
    if plans.iter().all(|p| p.action == Action::NoChange) {
        0
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Identity {
        Identity {
            namespace: "ns".into(),
            name: "web".into(),
            external_name: Some("i-1".into()),
        }
    }

    fn change(field: &str, class: ChangeClass, action: &'static str) -> PlannedChange {
        PlannedChange {
            field: field.into(),
            class,
            description: format!("{field}: \"a\" → \"b\""),
            action,
            calls: vec![action],
        }
    }

    fn preview(changes: Vec<PlannedChange>, restart_permitted: bool) -> InstancePreview {
        InstancePreview {
            changes,
            restart_permitted,
            in_transition: false,
        }
    }

    #[test]
    fn the_most_severe_class_names_the_action() {
        use ChangeClass::*;
        let name = || change("instanceName", InPlace, "ModifyInstanceAttribute");
        let cases = [
            (vec![], Action::NoChange),
            (vec![name()], Action::UpdateInPlace),
            (
                vec![
                    name(),
                    change("instanceType", Restart, "ModifyInstanceSpec"),
                ],
                Action::NeedsRestart,
            ),
            (
                vec![change("imageId", Replace, "ReplaceSystemDisk"), name()],
                Action::Replace,
            ),
            (
                vec![change("zoneId", Immutable, ""), name()],
                Action::Refused,
            ),
        ];
        for (changes, action) in cases {
            let plan = observed(who(), &preview(changes.clone(), false), true);
            assert_eq!(plan.action, action, "{changes:?}");
            assert_eq!(plan.changes.len(), changes.len());
        }
    }

    #[test]
    fn a_restart_says_whether_it_is_permitted_and_a_replace_what_is_lost() {
        let restart = vec![change(
            "instanceType",
            ChangeClass::Restart,
            "ModifyInstanceSpec",
        )];
        let waits = observed(who(), &preview(restart.clone(), false), true);
        assert_eq!(waits.restart_permitted, Some(false));
        assert!(waits.note.unwrap().contains("allowRestart"));
        let goes = observed(who(), &preview(restart, true), true);
        assert_eq!(goes.restart_permitted, Some(true));
        assert_eq!(goes.note, None);
        let replace = vec![change("imageId", ChangeClass::Replace, "ReplaceSystemDisk")];
        let lost = observed(who(), &preview(replace, true), true);
        assert!(lost.note.unwrap().contains("system disk"));
    }

    #[test]
    fn observe_only_objects_change_nothing_and_say_why() {
        let name = vec![change(
            "instanceName",
            ChangeClass::InPlace,
            "ModifyInstanceAttribute",
        )];
        let plan = observed(who(), &preview(name, false), false);
        assert_eq!(plan.action, Action::NoChange);
        assert_eq!(plan.changes.len(), 1);
        assert!(plan.note.unwrap().contains("Update"));
    }

    #[test]
    fn a_paused_object_changes_nothing_and_says_what_waits() {
        let name = vec![change(
            "instanceName",
            ChangeClass::InPlace,
            "ModifyInstanceAttribute",
        )];
        let plan = observed(who(), &preview(name, false), true).paused_by("ferroplane.io/paused");
        assert_eq!(plan.action, Action::NoChange);
        assert_eq!(plan.changes.len(), 1);
        let note = plan.note.unwrap();
        assert!(note.contains("ferroplane.io/paused"), "{note}");
        assert!(note.ends_with("then: update in place"), "{note}");
        let blocked = ObjectPlan::blocked(who(), "ReferenceNotResolved", "no VPC".into())
            .paused_by("crossplane.io/paused");
        assert_eq!(blocked.action, Action::NoChange);
        assert_eq!(blocked.blocked, None);
        assert!(
            blocked
                .note
                .unwrap()
                .ends_with("then: blocked (ReferenceNotResolved)")
        );
        let delete =
            deleting(who(), DeletionPolicy::Delete, true).paused_by("ferroplane.io/paused");
        assert_eq!(delete.action, Action::NoChange);
        assert!(
            delete
                .note
                .unwrap()
                .contains("then: delete; DeleteInstance")
        );
        let refused = ObjectPlan::refused_by_admission(who(), "immutable".into())
            .paused_by("ferroplane.io/paused");
        assert_eq!(refused.action, Action::Refused);
        let create = ObjectPlan::new(who(), Action::Create).paused_by("ferroplane.io/paused");
        assert_eq!(exit_code(&[create]), 0);
    }

    #[test]
    fn exit_code_is_two_for_anything_but_no_change() {
        let same = ObjectPlan::new(who(), Action::NoChange);
        assert_eq!(exit_code(&[]), 0);
        assert_eq!(exit_code(std::slice::from_ref(&same)), 0);
        for action in [Action::Create, Action::Blocked, Action::Delete] {
            assert_eq!(
                exit_code(&[same.clone(), ObjectPlan::new(who(), action)]),
                2
            );
        }
    }

    #[test]
    fn json_names_actions_and_classes_in_kebab_case() {
        let name = vec![change(
            "instanceName",
            ChangeClass::InPlace,
            "ModifyInstanceAttribute",
        )];
        let plan = observed(who(), &preview(name, false), true);
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["action"], "update-in-place");
        assert_eq!(json["externalName"], "i-1");
        assert_eq!(json["changes"][0]["class"], "in-place");
        assert_eq!(json["changes"][0]["action"], "ModifyInstanceAttribute");
        assert!(json.get("restartPermitted").is_none());
    }
}
