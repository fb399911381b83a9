//! The fleet's status from its members and this reconcile's plan: counts, per-zone and per-type
//! figures, and the `Ready` and `Progressing` conditions.

use std::collections::BTreeMap;

use ferroplane_apis::alibabacloud::FleetCount;
use ferroplane_apis::common::{ConditionStatus, names};
use ferroplane_runtime::conditions::Desired;

use super::members::Members;
use crate::reasons::{
    FLEET_COMPLETE, FLEET_PROGRESSING, INVALID_FLEET, NO_CAPACITY, PROGRESS_DEADLINE_EXCEEDED,
};

/// What the conditions are computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub replicas: u32,
    pub live: u32,
    pub ready: u32,
    /// Members of the current template.
    pub updated: u32,
    /// Members of the current template that are Ready.
    pub updated_ready: u32,
    /// Instances still to place that no (zone, type) can take now.
    pub unplaced: u32,
    pub halted: bool,
}

/// `Ready` and `Progressing`.
pub fn conditions(progress: &Progress, refusals: &str) -> Vec<Desired> {
    let p = progress;
    let complete = p.updated_ready == p.replicas && p.live == p.replicas;
    let ready = if complete {
        Desired::new(
            names::READY,
            ConditionStatus::True,
            names::REASON_AVAILABLE,
            "",
        )
    } else {
        Desired::new(
            names::READY,
            ConditionStatus::False,
            names::REASON_UNAVAILABLE,
            format!(
                "{} of {} instances Ready and up to date ({} Ready in all, {} instances)",
                p.updated_ready, p.replicas, p.ready, p.live
            ),
        )
    };
    let progressing = if p.halted {
        Desired::new(
            "Progressing",
            ConditionStatus::False,
            PROGRESS_DEADLINE_EXCEEDED,
            format!(
                "no instance of the current template became Ready within progressDeadlineSeconds; the rollout stopped with {} of {} up to date and the old instances serving: check the new instances' conditions (kubectl get ecs -l ferroplane.io/fleet=NAME), then fix the template",
                p.updated_ready, p.replicas
            ),
        )
    } else if p.unplaced > 0 {
        Desired::new(
            "Progressing",
            ConditionStatus::False,
            NO_CAPACITY,
            format!(
                "{} instance(s) cannot be placed: every zone and instance type of placement was refused recently ({refusals}); they are tried again after retryRefusedAfterSeconds, or add zones or instance types",
                p.unplaced
            ),
        )
    } else if complete {
        Desired::new(
            "Progressing",
            ConditionStatus::True,
            FLEET_COMPLETE,
            format!("{} instances Ready and up to date", p.replicas),
        )
    } else {
        Desired::new(
            "Progressing",
            ConditionStatus::True,
            FLEET_PROGRESSING,
            format!(
                "{} of {} instances Ready and up to date",
                p.updated_ready, p.replicas
            ),
        )
    };
    vec![ready, progressing]
}

/// The conditions of a fleet whose spec cannot be acted on.
pub fn invalid(message: String) -> Vec<Desired> {
    vec![
        Desired::new(
            names::READY,
            ConditionStatus::False,
            INVALID_FLEET,
            message.clone(),
        ),
        Desired::new(
            "Progressing",
            ConditionStatus::False,
            INVALID_FLEET,
            message,
        ),
    ]
}

/// Live members per zone and per instance type, in name order.
pub fn counts(members: &Members) -> (Vec<FleetCount>, Vec<FleetCount>) {
    let mut zones: BTreeMap<String, u32> = BTreeMap::new();
    let mut types: BTreeMap<String, u32> = BTreeMap::new();
    for object in &members.objects {
        let p = &object.spec.for_provider;
        *zones
            .entry(p.zone_id.clone().unwrap_or_default())
            .or_default() += 1;
        *types.entry(p.instance_type.clone()).or_default() += 1;
    }
    let list = |m: BTreeMap<String, u32>| {
        m.into_iter()
            .map(|(name, replicas)| FleetCount { name, replicas })
            .collect()
    };
    (list(zones), list(types))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress() -> Progress {
        Progress {
            replicas: 6,
            live: 6,
            ready: 6,
            updated: 6,
            updated_ready: 6,
            unplaced: 0,
            halted: false,
        }
    }

    #[test]
    fn complete_halted_and_no_capacity_read_as_users_expect() {
        let c = conditions(&progress(), "");
        assert_eq!(c[0].status, ConditionStatus::True);
        assert_eq!(c[1].reason, FLEET_COMPLETE);
        let rolling = Progress {
            updated_ready: 3,
            live: 7,
            ..progress()
        };
        let c = conditions(&rolling, "");
        assert_eq!(
            (c[0].status, c[1].reason),
            (ConditionStatus::False, FLEET_PROGRESSING)
        );
        let c = conditions(
            &Progress {
                halted: true,
                ..rolling
            },
            "",
        );
        assert_eq!(c[1].reason, PROGRESS_DEADLINE_EXCEEDED);
        let c = conditions(
            &Progress {
                unplaced: 2,
                ..rolling
            },
            "a/t1 NoStock",
        );
        assert_eq!(c[1].reason, NO_CAPACITY);
        assert!(c[1].message.contains("a/t1 NoStock"), "{}", c[1].message);
    }
}
