//! etcd's published upgrade path, in one table ([`PATCH_FLOORS`]) with the source of each rule,
//! and the two checks made from it before the StatefulSet is rendered at another version:
//!
//! - [`check_change`]: whether etcd can go from the version the members run to the one the spec
//!   asks for at all (one minor version at a time, upward, and from a minor version's fixed patch
//!   only). A refusal names the path, e.g. `upgrade to 3.5.26 or later first, wait for every
//!   member to be healthy, then to 3.6`.
//! - [`check_rollout_start`]: a change to the next minor version starts only once every member
//!   answers, is a healthy voter and reports a patch at or above the floor; until then the
//!   controller waits (a retried error), the members keep what they run.
//!
//! Both judge by what the members report, not by the spec or the StatefulSet: a spec moved on to
//! 3.5.26 while the members still run 3.5.17 is still a 3.5.17 cluster.
//!
//! etcd's rule for the other direction (a minor downgrade through its downgrade API, which
//! ferroplane does not drive; 3.4 and 3.5 cannot downgrade at all) and for skipping a minor
//! version (not supported) are the same for every release, so they are code, not table rows.

use crate::error::{RolloutWait, SpecError, UpgradeStep};
use crate::version::Version;

/// A patch of one minor version that a cluster must run before it moves to the next minor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchFloor {
    /// The minor version the rule is about: `(3, 5)`.
    pub minor: (u32, u32),
    /// The first patch a cluster may leave that minor version from.
    pub fixed_in: Version,
    /// What goes wrong when a cluster leaves from an older patch.
    pub hazard: &'static str,
}

/// Every patch floor etcd has published, oldest first; the highest that applies wins. A later
/// rule only adds a floor: the older ones stay, so the table says why each release mattered.
pub const PATCH_FLOORS: &[PatchFloor] = &[
    // etcd blog, 2025-03-27, "How to Prevent a Common Failure when Upgrading etcd v3.5 to v3.6",
    // and etcd issue 19557: 3.5.1-3.5.19 persist a learner's promotion in the v2 store only;
    // 3.6 reads membership from the v3 store, so voters come back as learners and 3.6 stops
    // with "too many learner members in cluster". Fixed in 3.5.20 (etcd PR 19563).
    PatchFloor {
        minor: (3, 5),
        fixed_in: Version::new(3, 5, 20),
        hazard: "3.5.19 and earlier can turn voters back into learners in 3.6, etcd issue 19557",
    },
    // etcd issue 20793 and the blog's follow-up (2025-10): a learner added during a rolling
    // replacement can receive the wrong membership in a snapshot from an older member, even on
    // 3.5.20-3.5.23; fixed in 3.5.24. ferroplane adds every member as a learner.
    PatchFloor {
        minor: (3, 5),
        fixed_in: Version::new(3, 5, 24),
        hazard: "3.5.23 and earlier can pass a learner's wrong membership on in a snapshot, etcd issue 20793",
    },
    // etcd blog, 2025-12-21, "Avoiding Zombie Cluster Members When Upgrading to etcd v3.6":
    // 3.5.25 and earlier can hold v2store/v3store membership inconsistencies that bring removed
    // members back as zombies once 3.6 reads the v3 store, and the cluster is inoperable until
    // they are removed; 3.5.26 syncs the v3 store from the v2 store on start. The path: 3.5.26
    // or later, wait until every member is healthy, then 3.6. etcd's 3.5 → 3.6 upgrade guide
    // (etcd.io/docs/latest/upgrades/upgrade_3_6) says the same: "all of your 3.5 members are
    // updated to 3.5.26 or later".
    PatchFloor {
        minor: (3, 5),
        fixed_in: Version::new(3, 5, 26),
        hazard: "3.5.25 and earlier can bring removed members back as zombies in 3.6, etcd blog 2025-12-21",
    },
];

/// The floor a cluster on `minor` must reach before it leaves for the next minor version: the
/// highest of the table's rules for it.
pub fn patch_floor(minor: (u32, u32)) -> Option<&'static PatchFloor> {
    PATCH_FLOORS
        .iter()
        .filter(|f| f.minor == minor)
        .max_by_key(|f| f.fixed_in)
}

/// The step before `next_minor` for a cluster leaving `minor`: its patch floor, else the next
/// minor's first release.
fn step_before(minor: (u32, u32), next_minor: u32) -> UpgradeStep {
    let floor = patch_floor(minor);
    UpgradeStep {
        first: floor.map_or_else(
            || Version::new(minor.0, minor.1, 0).to_string(),
            |f| f.fixed_in.to_string(),
        ),
        then: format!("{}.{next_minor}", minor.0),
        hazard: floor.map(|f| f.hazard),
    }
}

/// Refuses a change from the running version `from` to `to` that etcd cannot do in place: a
/// major change, skipping a minor version, leaving a minor version from a patch below its
/// floor, or a minor downgrade. Patch changes within a minor version are fine both ways.
pub fn check_change(from: Version, to: Version) -> Result<(), SpecError> {
    let refuse = |path: Option<UpgradeStep>| {
        Err(SpecError::UnsupportedUpgrade {
            from: from.to_string(),
            to: to.to_string(),
            path,
        })
    };
    if from.major != to.major || to.minor < from.minor {
        return refuse(None);
    }
    if to.minor == from.minor {
        return Ok(());
    }
    let here = (from.major, from.minor);
    // The first hop: leave this minor version only from its floor.
    if let Some(floor) = patch_floor(here)
        && from < floor.fixed_in
    {
        return refuse(Some(step_before(here, from.minor + 1)));
    }
    // Then one minor version at a time, each from its own floor.
    if to.minor > from.minor + 1 {
        return refuse(Some(step_before(
            (from.major, from.minor + 1),
            from.minor + 2,
        )));
    }
    Ok(())
}

/// One member as the rollout check needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberReport {
    /// The member's pod (or etcd's name for it).
    pub name: String,
    /// The version it reports; `None` when it did not answer.
    pub version: Option<Version>,
    /// A voter etcd reports healthy.
    pub healthy_voter: bool,
}

/// Whether the rollout to `to` may start. `rendered` is the version the StatefulSet was last
/// rendered with (the members' oldest for one rendered before that was recorded), and `members` what etcd reports (`None`: etcd did not answer). A rollout to a
/// newer minor version than the one rendered starts only when every member is a healthy voter
/// that reports a version at or above its minor version's floor: etcd's path says to wait for
/// every member to be healthy on the fixed patch (and it is only on start that 3.5.26 repairs
/// its membership). Once rendered, the rollout is under way and is not stopped by the members
/// it restarts.
pub fn check_rollout_start(
    rendered: Option<Version>,
    members: Option<&[MemberReport]>,
    to: Version,
) -> Result<(), RolloutWait> {
    let starts_new_minor = rendered.is_some_and(|r| r.major == to.major && r.minor < to.minor);
    if !starts_new_minor {
        return Ok(());
    }
    let Some(members) = members else {
        return Err(RolloutWait {
            to: to.to_string(),
            floor: None,
            waiting: vec!["etcd does not answer".to_owned()],
        });
    };
    let floor = rendered.and_then(|r| patch_floor((r.major, r.minor)));
    let waiting: Vec<String> = members
        .iter()
        .filter_map(|m| match m.version {
            None => Some(format!("{} does not answer", m.name)),
            Some(_) if !m.healthy_voter => Some(format!("{} is not a healthy voter", m.name)),
            Some(v) if floor.is_some_and(|f| v < f.fixed_in) => {
                Some(format!("{} runs {v}", m.name))
            }
            Some(_) => None,
        })
        .collect();
    if waiting.is_empty() && !members.is_empty() {
        Ok(())
    } else {
        Err(RolloutWait {
            to: to.to_string(),
            floor: floor.map(|f| f.fixed_in.to_string()),
            waiting: if members.is_empty() {
                vec!["etcd lists no members".to_owned()]
            } else {
                waiting
            },
        })
    }
}

#[cfg(test)]
mod tests;
