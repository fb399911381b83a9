//! `status.pendingChanges` of an ECSInstance: the changes of the observe step's plan that the
//! controller does not apply on its own, each with why it waits and what would let it through
//! (what `ferroplane plan` shows for the same object). Pure, but for the record of the calls ECS
//! refused, which the update step keeps.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroplane_apis::common::PendingChange;
use ferroplane_apis::common::pending_reasons::{
    NEEDS_NEW_RESOURCE, REFUSED_BY_CLOUD, RESTART_NOT_ALLOWED, UPDATE_NOT_ALLOWED,
};

use super::preview::{ChangeClass, PlannedChange};

/// A call ECS refused while an update applied one generation of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub action: String,
    /// The `metadata.generation` whose update was refused: a new spec is a new attempt.
    pub generation: Option<i64>,
    /// ECS's code and message (never a request parameter: no secret).
    pub answer: String,
}

/// The last refusal per object (by UID) of every instance this process manages.
#[derive(Debug, Default)]
pub struct Refusals {
    by_uid: Mutex<HashMap<String, Refusal>>,
}

impl Refusals {
    pub fn record(&self, uid: &str, refusal: Refusal) {
        self.lock().insert(uid.to_owned(), refusal);
    }

    /// An update went through, or the object is gone.
    pub fn clear(&self, uid: &str) {
        self.lock().remove(uid);
    }

    /// The refusal of `generation`'s update, if ECS refused it.
    pub fn of(&self, uid: &str, generation: Option<i64>) -> Option<Refusal> {
        self.lock()
            .get(uid)
            .filter(|r| r.generation == generation)
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Refusal>> {
        self.by_uid.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the controller may do about the plan's changes.
#[derive(Clone, Copy, Debug)]
pub struct Allowed {
    /// `spec.managementPolicies` include `Update`.
    pub update: bool,
    /// Restart-bound changes are applied: `allowRestart`, or the instance is stopped anyway.
    pub restart: bool,
}

/// The changes among `changes` that wait, in their order.
pub fn pending_changes(
    changes: &[PlannedChange],
    allowed: Allowed,
    refusal: Option<&Refusal>,
) -> Vec<PendingChange> {
    changes
        .iter()
        .filter_map(|change| {
            let (reason, message) = why_it_waits(change, allowed, refusal)?;
            Some(PendingChange {
                field: change.field.clone(),
                change: change.description.clone(),
                action: (!change.action.is_empty()).then(|| change.action.to_owned()),
                reason: reason.to_owned(),
                message,
            })
        })
        .collect()
}

fn why_it_waits(
    change: &PlannedChange,
    allowed: Allowed,
    refusal: Option<&Refusal>,
) -> Option<(&'static str, String)> {
    if !allowed.update {
        return Some((
            UPDATE_NOT_ALLOWED,
            "spec.managementPolicies do not include Update, so ferroplane only observes this instance: add Update (or \"*\") to apply it".to_owned(),
        ));
    }
    let needs_restart = matches!(change.class, ChangeClass::Restart | ChangeClass::Replace);
    match change.class {
        ChangeClass::Immutable => Some((
            NEEDS_NEW_RESOURCE,
            "it cannot change after the instance is created: restore it in spec.forProvider, or create a new ECSInstance".to_owned(),
        )),
        _ if needs_restart && !allowed.restart => {
            let lost = if change.class == ChangeClass::Replace {
                "; the system disk is replaced and what is on it is lost"
            } else {
                ""
            };
            Some((
                RESTART_NOT_ALLOWED,
                format!(
                    "it needs a stop and start of the instance{lost}: set spec.forProvider.allowRestart: true to let ferroplane restart it, or stop it with spec.forProvider.desiredStatus: Stopped"
                ),
            ))
        }
        _ => refusal.filter(|r| r.action == change.action).map(|r| {
            (
                REFUSED_BY_CLOUD,
                format!(
                    "ECS refused {} the last time it was sent: {}",
                    r.action, r.answer
                ),
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(field: &str, class: ChangeClass, action: &'static str) -> PlannedChange {
        PlannedChange {
            field: field.to_owned(),
            class,
            description: format!("{field}: old → new"),
            action,
            calls: vec![action],
        }
    }

    fn plan() -> Vec<PlannedChange> {
        vec![
            change(
                "instanceName",
                ChangeClass::InPlace,
                "ModifyInstanceAttribute",
            ),
            change("instanceType", ChangeClass::Restart, "ModifyInstanceSpec"),
            change("imageId", ChangeClass::Replace, "ReplaceSystemDisk"),
            change("zoneId", ChangeClass::Immutable, ""),
        ]
    }

    fn reasons(pending: &[PendingChange]) -> Vec<(&str, &str)> {
        pending
            .iter()
            .map(|p| (p.field.as_str(), p.reason.as_str()))
            .collect()
    }

    #[test]
    fn restart_bound_changes_wait_for_allow_restart_and_immutable_ones_always_wait() {
        let waiting = pending_changes(
            &plan(),
            Allowed {
                update: true,
                restart: false,
            },
            None,
        );
        assert_eq!(
            reasons(&waiting),
            [
                ("instanceType", RESTART_NOT_ALLOWED),
                ("imageId", RESTART_NOT_ALLOWED),
                ("zoneId", NEEDS_NEW_RESOURCE),
            ]
        );
        assert_eq!(waiting[0].action.as_deref(), Some("ModifyInstanceSpec"));
        assert_eq!(waiting[0].change, "instanceType: old → new");
        assert!(waiting[0].message.contains("allowRestart: true"));
        assert!(waiting[1].message.contains("what is on it is lost"));
        assert_eq!(waiting[2].action, None);

        let allowed = Allowed {
            update: true,
            restart: true,
        };
        assert_eq!(
            reasons(&pending_changes(&plan(), allowed, None)),
            [("zoneId", NEEDS_NEW_RESOURCE)]
        );
    }

    #[test]
    fn without_update_every_change_waits_for_the_management_policies() {
        let waiting = pending_changes(
            &plan(),
            Allowed {
                update: false,
                restart: true,
            },
            None,
        );
        assert_eq!(waiting.len(), 4);
        assert!(waiting.iter().all(|p| p.reason == UPDATE_NOT_ALLOWED));
    }

    #[test]
    fn a_refused_call_marks_the_changes_it_applies() {
        let refusal = Refusal {
            action: "ModifyInstanceSpec".to_owned(),
            generation: Some(3),
            answer: "InvalidInstanceType.ValueNotSupported (HTTP 400): not in this zone".to_owned(),
        };
        let allowed = Allowed {
            update: true,
            restart: true,
        };
        let waiting = pending_changes(&plan(), allowed, Some(&refusal));
        assert_eq!(
            reasons(&waiting),
            [
                ("instanceType", REFUSED_BY_CLOUD),
                ("zoneId", NEEDS_NEW_RESOURCE)
            ]
        );
        assert!(
            waiting[0]
                .message
                .contains("InvalidInstanceType.ValueNotSupported"),
            "{}",
            waiting[0].message
        );
    }

    #[test]
    fn a_refusal_belongs_to_the_generation_it_was_refused_for() {
        let refusals = Refusals::default();
        refusals.record(
            "uid-1",
            Refusal {
                action: "ModifyInstanceSpec".to_owned(),
                generation: Some(3),
                answer: "refused".to_owned(),
            },
        );
        assert!(refusals.of("uid-1", Some(3)).is_some());
        assert_eq!(refusals.of("uid-1", Some(4)), None);
        assert_eq!(refusals.of("uid-2", Some(3)), None);
        refusals.clear("uid-1");
        assert_eq!(refusals.of("uid-1", Some(3)), None);
    }
}
