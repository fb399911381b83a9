//! How many instances a fleet creates and which it deletes in one reconcile, from the instances
//! it has: the scale and the rollout rules, with no I/O.
//!
//! Only Ready instances count as available. `RollingUpdate` keeps at most `replicas + surge`
//! instances and at least `replicas - unavailable` Ready ones while old instances are replaced:
//! it creates instances of the current template up to the first bound and deletes old ones as
//! the second allows (an old instance that is not Ready serves nobody and goes first). A halted
//! rollout (its progress deadline passed) neither creates nor deletes for the rollout; scaling
//! down still happens. `OnDelete` never deletes an old instance for being old.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// One instance object of the fleet, as the plan needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// The number at the end of its name.
    pub ordinal: u32,
    /// Whether it was made from the current template.
    pub current: bool,
    pub zone: String,
    pub instance_type: String,
    pub ready: bool,
}

/// The update strategy, with its bounds resolved against `replicas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    RollingUpdate { surge: u32, unavailable: u32 },
    OnDelete,
}

/// Resolves `maxSurge` (rounded up) and `maxUnavailable` (rounded down) against `replicas`,
/// 25 % each when unset, as a Deployment does; both 0 would never progress, so then one
/// instance may be unavailable. A negative number counts as 0.
pub fn rolling_bounds(
    replicas: u32,
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
) -> Result<Strategy, String> {
    let default = IntOrString::String("25%".to_owned());
    let surge = resolve(replicas, max_surge.unwrap_or(&default), true)?;
    let mut unavailable = resolve(replicas, max_unavailable.unwrap_or(&default), false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok(Strategy::RollingUpdate { surge, unavailable })
}

fn resolve(replicas: u32, value: &IntOrString, round_up: bool) -> Result<u32, String> {
    match value {
        IntOrString::Int(n) => Ok(u32::try_from(*n).unwrap_or(0)),
        IntOrString::String(text) => {
            let percent: u64 = text
                .strip_suffix('%')
                .and_then(|p| p.trim().parse().ok())
                .ok_or_else(|| {
                    format!("{text:?} is neither a number nor a percentage such as \"25%\"")
                })?;
            let scaled = u64::from(replicas) * percent;
            let n = if round_up {
                scaled.div_ceil(100)
            } else {
                scaled / 100
            };
            Ok(u32::try_from(n).unwrap_or(u32::MAX))
        }
    }
}

/// What one reconcile does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Instances of the current template to create.
    pub create: u32,
    /// Instance objects to delete, by name.
    pub delete: Vec<String>,
}

/// The plan for `members` (the fleet's instance objects that are not being deleted).
pub fn plan(replicas: u32, members: &[Member], strategy: Strategy, halted: bool) -> Plan {
    let (current, old): (Vec<&Member>, Vec<&Member>) = members.iter().partition(|m| m.current);
    let mut delete: Vec<&Member> = Vec::new();
    let current_count = u32::try_from(current.len()).unwrap_or(u32::MAX);
    // More current instances than asked for: a scale-down.
    if current_count > replicas {
        let surplus = (current_count - replicas) as usize;
        delete.extend(deletion_order(&current, members).into_iter().take(surplus));
    }
    let live = u32::try_from(members.len()).unwrap_or(u32::MAX);
    let want = replicas.saturating_sub(current_count);
    let create = match strategy {
        Strategy::OnDelete => replicas.saturating_sub(live),
        Strategy::RollingUpdate { surge, .. } if !halted || old.is_empty() => {
            want.min((replicas + surge).saturating_sub(live))
        }
        Strategy::RollingUpdate { .. } => 0,
    };
    match strategy {
        Strategy::OnDelete => {
            // Only a scale-down removes old instances: the surplus over `replicas`.
            let after = live as usize - delete.len();
            let surplus = after.saturating_sub(replicas as usize);
            delete.extend(deletion_order(&old, members).into_iter().take(surplus));
        }
        Strategy::RollingUpdate { .. } if halted => {
            // Past the deadline the old instances keep serving: one goes only when the old
            // ones alone are more than `replicas` (a scale-down).
            let surplus = old.len().saturating_sub(replicas as usize);
            delete.extend(deletion_order(&old, members).into_iter().take(surplus));
        }
        Strategy::RollingUpdate { unavailable, .. } => {
            let ready = members.iter().filter(|m| m.ready).count() as u32;
            let mut budget = ready.saturating_sub(replicas.saturating_sub(unavailable));
            for member in deletion_order(&old, members) {
                if member.ready {
                    if budget == 0 {
                        continue;
                    }
                    budget -= 1;
                }
                delete.push(member);
            }
        }
    }
    Plan {
        create,
        delete: delete.into_iter().map(|m| m.name.clone()).collect(),
    }
}

/// Which of `candidates` to delete first: not Ready ones, then those in the zone holding the
/// most of `all`, then the highest ordinal (the newest).
fn deletion_order<'a>(candidates: &[&'a Member], all: &[Member]) -> Vec<&'a Member> {
    let mut per_zone: BTreeMap<&str, u32> = BTreeMap::new();
    for m in all {
        *per_zone.entry(m.zone.as_str()).or_default() += 1;
    }
    let mut ordered = candidates.to_vec();
    ordered.sort_by_key(|m| {
        (
            m.ready,
            std::cmp::Reverse(per_zone.get(m.zone.as_str()).copied().unwrap_or(0)),
            std::cmp::Reverse(m.ordinal),
        )
    });
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, current: bool, zone: &str, ready: bool) -> Member {
        Member {
            name: name.to_owned(),
            ordinal: name.rsplit('-').next().unwrap().parse().unwrap(),
            current,
            zone: zone.to_owned(),
            instance_type: "t1".to_owned(),
            ready,
        }
    }

    const ROLL_1_1: Strategy = Strategy::RollingUpdate {
        surge: 1,
        unavailable: 1,
    };

    #[test]
    fn bounds_follow_deployments_rounding() {
        let pct = |s: &str| IntOrString::String(s.to_owned());
        assert_eq!(
            rolling_bounds(10, Some(&pct("25%")), Some(&pct("25%"))),
            Ok(Strategy::RollingUpdate {
                surge: 3,
                unavailable: 2
            })
        );
        assert_eq!(
            rolling_bounds(3, Some(&IntOrString::Int(0)), Some(&pct("10%"))),
            Ok(Strategy::RollingUpdate {
                surge: 0,
                unavailable: 1
            })
        );
        assert!(rolling_bounds(3, Some(&pct("many")), None).is_err());
    }

    #[test]
    fn scaling_up_and_down_touches_only_what_it_must() {
        let members = vec![
            member("w-h-0", true, "a", true),
            member("w-h-1", true, "b", true),
            member("w-h-2", true, "a", false),
        ];
        assert_eq!(plan(5, &members, ROLL_1_1, false).create, 2);
        let down = plan(1, &members, ROLL_1_1, false);
        assert_eq!(down.create, 0);
        // The unready one first, then the crowded zone a.
        assert_eq!(down.delete, ["w-h-2", "w-h-0"]);
        assert_eq!(plan(3, &members, ROLL_1_1, false), Plan::default());
    }

    /// A rollout of 6 with surge 1 and unavailable 1, simulated round by round with new
    /// instances becoming Ready one round after they are made: it ends with 6 current Ready
    /// instances and never has fewer than 5 Ready or more than 7 instances.
    #[test]
    fn a_rolling_update_keeps_its_bounds_to_the_end() {
        let mut members: Vec<Member> = (0..6)
            .map(|i| {
                member(
                    &format!("w-old-{i}"),
                    false,
                    if i % 2 == 0 { "a" } else { "b" },
                    true,
                )
            })
            .collect();
        let mut next = 0;
        for round in 0..40 {
            // Last round's creations are Ready now.
            for m in &mut members {
                m.ready = true;
            }
            let ready = members.iter().filter(|m| m.ready).count();
            assert!(ready >= 5, "round {round}: {ready} Ready");
            let p = plan(6, &members, ROLL_1_1, false);
            members.retain(|m| !p.delete.contains(&m.name));
            let ready_after = members.iter().filter(|m| m.ready).count();
            assert!(
                ready_after >= 5,
                "round {round}: {ready_after} Ready after deletes"
            );
            for _ in 0..p.create {
                members.push(member(&format!("w-new-{next}"), true, "a", false));
                next += 1;
            }
            assert!(
                members.len() <= 7,
                "round {round}: {} instances",
                members.len()
            );
            if members.len() == 6 && members.iter().all(|m| m.current && m.ready) {
                return;
            }
        }
        panic!("the rollout did not end: {members:?}");
    }

    #[test]
    fn a_halted_rollout_keeps_the_old_instances_serving() {
        let members = vec![
            member("w-old-0", false, "a", true),
            member("w-old-1", false, "a", true),
            member("w-new-0", true, "b", false),
        ];
        let p = plan(2, &members, ROLL_1_1, true);
        assert_eq!(p, Plan::default());
        // Unhalted, the same fleet deletes one old Ready instance (3 Ready would allow it).
        let p = plan(2, &members, ROLL_1_1, false);
        assert_eq!(p.create, 0);
        assert_eq!(p.delete.len(), 1);
    }

    #[test]
    fn on_delete_replaces_only_what_was_deleted() {
        let members = vec![
            member("w-old-0", false, "a", true),
            member("w-new-0", true, "b", true),
        ];
        let strategy = Strategy::OnDelete;
        assert_eq!(plan(2, &members, strategy, false), Plan::default());
        assert_eq!(plan(3, &members, strategy, false).create, 1);
        assert_eq!(plan(1, &members, strategy, false).delete, ["w-old-0"]);
    }
}
