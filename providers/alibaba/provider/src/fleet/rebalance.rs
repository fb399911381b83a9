//! Gradual rebalancing: which members of a steady fleet stand where its placement rules would
//! not put them now, with no I/O.
//!
//! A member is misplaced when it could move to a placement the rules prefer and that is open
//! (not refused) now:
//! - its zone is no longer in `placement.zones`;
//! - `Balanced`: its zone holds at least two more members than an open zone (moving one makes
//!   the spread more even); a zone whose placements are refused keeps its members unless it is
//!   that far over an open one (its members serve; the refusal only stops new launches);
//! - `Priority`: an earlier zone is open;
//! - its instance type comes later in `placement.instanceTypes` than the first type open in its
//!   zone, or is not in the list any more.
//!
//! The reconcile replaces misplaced members as a rolling update does, with no instance allowed
//! to be unavailable: a new member is created first, and a misplaced one is deleted only once the
//! new one is Ready, so Ready capacity never drops below `replicas`. Only a fleet with nothing
//! else to do rebalances (every member current, as many as `replicas`, `RollingUpdate` with a
//! surge of at least one).

use std::collections::{BTreeMap, BTreeSet};

use ferroplane_apis::alibabacloud::FleetSpread;

use super::placement::Choices;
use super::rollout::Member;

/// The names of the members to move, the first to move first. Members beyond `replicas` (the
/// new ones of a move under way) count where they stand, and as many leave, from the fullest
/// zones: otherwise a new member, once counted, would make the spread look even and the move
/// would end with one member too many.
pub fn misplaced(members: &[Member], replicas: u32, choices: &Choices<'_>) -> Vec<String> {
    let zone_index = |zone: &str| choices.zones.iter().position(|z| z == zone);
    let open: Vec<usize> = (0..choices.zones.len())
        .filter(|z| choices.preferred_type(*z).is_some())
        .collect();
    if open.is_empty() {
        return Vec::new();
    }
    let mut moving: BTreeSet<&str> = BTreeSet::new();
    // Members of a zone dropped from the spec, and of a type the zone would no longer launch.
    for m in members {
        let Some(z) = zone_index(&m.zone) else {
            moving.insert(&m.name);
            continue;
        };
        let Some(preferred) = choices.preferred_type(z) else {
            continue;
        };
        let rank = |t: &str| choices.instance_types.iter().position(|x| x == t);
        let worse = match (rank(&m.instance_type), rank(preferred)) {
            (Some(have), Some(best)) => have > best,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if worse {
            moving.insert(&m.name);
        }
    }
    // The zones' counts without those, then moves between zones until none helps.
    let mut per_zone: BTreeMap<usize, Vec<&Member>> = BTreeMap::new();
    for m in members.iter().filter(|m| !moving.contains(m.name.as_str())) {
        if let Some(z) = zone_index(&m.zone) {
            per_zone.entry(z).or_default().push(m);
        }
    }
    for staying in per_zone.values_mut() {
        // The newest of a zone leaves it first (taken from the end).
        staying.sort_by_key(|m| m.ordinal);
    }
    let mut staying: usize = per_zone.values().map(Vec::len).sum();
    while staying > replicas as usize {
        let fullest = per_zone
            .iter_mut()
            .filter(|(_, v)| !v.is_empty())
            .max_by_key(|(z, v)| (v.len(), std::cmp::Reverse(**z)));
        let Some(member) = fullest.and_then(|(_, v)| v.pop()) else {
            break;
        };
        moving.insert(&member.name);
        staying -= 1;
    }
    let count = |per_zone: &BTreeMap<usize, Vec<&Member>>, z: usize| {
        per_zone.get(&z).map_or(0, |v| v.len())
    };
    let mut arriving: BTreeMap<usize, usize> = BTreeMap::new();
    loop {
        let total = |z: usize| count(&per_zone, z) + arriving.get(&z).copied().unwrap_or(0);
        let from = match choices.spread {
            FleetSpread::Balanced => {
                let Some(&to) = open.iter().min_by_key(|z| (total(**z), **z)) else {
                    break;
                };
                let fullest = per_zone
                    .iter()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(z, _)| *z)
                    .max_by_key(|z| (total(*z), std::cmp::Reverse(*z)));
                match fullest {
                    Some(from) if total(from) >= total(to) + 2 => Some((from, to)),
                    _ => None,
                }
            }
            FleetSpread::Priority => {
                let to = open[0];
                per_zone
                    .iter()
                    .filter(|(z, v)| **z > to && !v.is_empty())
                    .map(|(z, _)| *z)
                    .next_back()
                    .map(|from| (from, to))
            }
        };
        let Some((from, to)) = from else {
            break;
        };
        let Some(member) = per_zone.get_mut(&from).and_then(|v| v.pop()) else {
            break;
        };
        moving.insert(&member.name);
        *arriving.entry(to).or_default() += 1;
    }
    let mut names: Vec<&Member> = members
        .iter()
        .filter(|m| moving.contains(m.name.as_str()))
        .collect();
    names.sort_by_key(|m| std::cmp::Reverse(m.ordinal));
    names.into_iter().map(|m| m.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(ordinal: u32, zone: &str, instance_type: &str) -> Member {
        Member {
            name: format!("w-h-{ordinal}"),
            ordinal,
            current: true,
            zone: zone.to_owned(),
            instance_type: instance_type.to_owned(),
            ready: true,
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    fn pairs(v: &[(&str, &str)]) -> BTreeSet<(String, String)> {
        v.iter()
            .map(|(z, t)| ((*z).to_owned(), (*t).to_owned()))
            .collect()
    }

    struct Rules {
        zones: Vec<String>,
        types: Vec<String>,
        refused: BTreeSet<(String, String)>,
        none: BTreeSet<(String, String)>,
    }

    impl Rules {
        fn new(zones: &[&str], types: &[&str], refused: &[(&str, &str)]) -> Self {
            Self {
                zones: s(zones),
                types: s(types),
                refused: pairs(refused),
                none: BTreeSet::new(),
            }
        }

        fn choices(&self, spread: FleetSpread) -> Choices<'_> {
            Choices {
                zones: &self.zones,
                instance_types: &self.types,
                spread,
                refused: &self.refused,
                launched: &self.none,
                pending: &self.none,
            }
        }
    }

    #[test]
    fn a_balanced_fleet_moves_into_a_zone_open_again_until_even() {
        // Six in b while a was sold out; a is open again: three move, the newest first.
        let members: Vec<Member> = (0..6).map(|n| member(n, "b", "t1")).collect();
        let rules = Rules::new(&["a", "b"], &["t1"], &[]);
        assert_eq!(
            misplaced(
                &members,
                members.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            ),
            ["w-h-5", "w-h-4", "w-h-3"]
        );
        // Half-way (two arrived in a, not Ready yet), only one more is to move.
        let mut halfway = members.clone();
        halfway.extend([member(6, "a", "t1"), member(7, "a", "t1")]);
        assert_eq!(
            misplaced(&halfway, 6, &rules.choices(FleetSpread::Balanced)),
            ["w-h-5", "w-h-4", "w-h-3"],
            "6 of 8 stay, 3 in each zone: three of b's six still leave"
        );
        // The last move under way (a's second member not Ready yet): b's surplus member still
        // leaves; counting the new one would make 2 and 3 look even and end with 5 members.
        let last = vec![
            member(0, "b", "t1"),
            member(1, "b", "t1"),
            member(2, "b", "t1"),
            member(4, "a", "t1"),
            member(5, "a", "t1"),
        ];
        assert_eq!(
            misplaced(&last, 4, &rules.choices(FleetSpread::Balanced)),
            ["w-h-2"]
        );
        // Even within one: nothing moves.
        let even = vec![
            member(0, "a", "t1"),
            member(1, "b", "t1"),
            member(2, "b", "t1"),
        ];
        assert!(
            misplaced(
                &even,
                even.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            )
            .is_empty()
        );
    }

    #[test]
    fn members_of_a_sold_out_zone_stay_unless_far_over_an_open_one() {
        let rules = Rules::new(&["a", "b"], &["t1"], &[("a", "t1")]);
        let spread = vec![
            member(0, "a", "t1"),
            member(1, "a", "t1"),
            member(2, "b", "t1"),
        ];
        assert!(
            misplaced(
                &spread,
                spread.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            )
            .is_empty()
        );
        let crowded: Vec<Member> = (0..4).map(|n| member(n, "a", "t1")).collect();
        assert_eq!(
            misplaced(
                &crowded,
                crowded.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            ),
            ["w-h-3", "w-h-2"]
        );
        // Nothing is open: nothing can move.
        let closed = Rules::new(&["a", "b"], &["t1"], &[("a", "t1"), ("b", "t1")]);
        assert!(
            misplaced(
                &crowded,
                crowded.len() as u32,
                &closed.choices(FleetSpread::Balanced)
            )
            .is_empty()
        );
    }

    #[test]
    fn priority_moves_to_the_first_open_zone() {
        let members = vec![
            member(0, "a", "t1"),
            member(1, "b", "t1"),
            member(2, "c", "t1"),
        ];
        let rules = Rules::new(&["a", "b", "c"], &["t1"], &[]);
        assert_eq!(
            misplaced(
                &members,
                members.len() as u32,
                &rules.choices(FleetSpread::Priority)
            ),
            ["w-h-2", "w-h-1"]
        );
        // a refused: b is first; a's member stays, c's moves.
        let rules = Rules::new(&["a", "b", "c"], &["t1"], &[("a", "t1")]);
        assert_eq!(
            misplaced(
                &members,
                members.len() as u32,
                &rules.choices(FleetSpread::Priority)
            ),
            ["w-h-2"]
        );
    }

    #[test]
    fn a_later_type_moves_once_the_zone_offers_an_earlier_one() {
        let members = vec![
            member(0, "a", "t2"),
            member(1, "b", "t1"),
            member(2, "b", "t3"),
        ];
        let rules = Rules::new(&["a", "b"], &["t1", "t2"], &[]);
        // a's t2 (t1 is open there), b's t3 (no longer listed).
        assert_eq!(
            misplaced(
                &members,
                members.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            ),
            ["w-h-2", "w-h-0"]
        );
        // While a's t1 is refused, a's t2 is the best a offers.
        let rules = Rules::new(&["a", "b"], &["t1", "t2"], &[("a", "t1")]);
        assert_eq!(
            misplaced(
                &members,
                members.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            ),
            ["w-h-2"]
        );
    }

    #[test]
    fn a_zone_dropped_from_the_spec_is_emptied() {
        let members = vec![member(0, "a", "t1"), member(1, "old", "t1")];
        let rules = Rules::new(&["a", "b"], &["t1"], &[]);
        assert_eq!(
            misplaced(
                &members,
                members.len() as u32,
                &rules.choices(FleetSpread::Balanced)
            ),
            ["w-h-1"]
        );
    }
}
