//! Where the next instances of a fleet go: over the zones and instance types in the order the
//! user gave them, skipping the (zone, type) pairs ECS refused recently.
//!
//! `Balanced` puts each new instance in the zone with the fewest instances (the earlier zone on
//! a tie); `Priority` in the first zone. Either way the type is the first one of the list that
//! is not refused in that zone, and a zone where every type is refused is skipped.
//!
//! A (zone, type) no member of the fleet has launched in yet is probed first: one member goes
//! there, and the others meant for that zone wait until it has launched (or been refused), so a
//! sold-out zone costs one refused RunInstances, not one per member planned for it.

use std::collections::{BTreeMap, BTreeSet};

use ferroplane_apis::alibabacloud::FleetSpread;

/// A zone and an instance type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placement {
    /// Index into the fleet's `placement.zones`.
    pub zone: usize,
    pub instance_type: String,
}

/// What a placement choice reads. Pairs are (zone ID, instance type).
pub struct Choices<'a> {
    /// Zone IDs in order of preference.
    pub zones: &'a [String],
    /// Instance types in order of preference.
    pub instance_types: &'a [String],
    pub spread: FleetSpread,
    /// Pairs not to use now.
    pub refused: &'a BTreeSet<(String, String)>,
    /// Pairs where a member of the fleet has launched.
    pub launched: &'a BTreeSet<(String, String)>,
    /// Pairs where a member waits to launch (a probe in flight).
    pub pending: &'a BTreeSet<(String, String)>,
}

/// The outcome of a choice.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Chosen {
    /// Where to create members now.
    pub placements: Vec<Placement>,
    /// Members meant for a zone whose placement is still being probed: created later.
    pub waiting: u32,
    /// Members no (zone, type) can take: every one is refused.
    pub unplaced: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Proven,
    Open,
    InFlight,
}

impl Choices<'_> {
    /// The first instance type of the list not refused in zone `zone` (an index into `zones`),
    /// `None` when every type is.
    pub fn preferred_type(&self, zone: usize) -> Option<&String> {
        self.instance_types.iter().find(|t| {
            !self
                .refused
                .contains(&(self.zones[zone].clone(), (*t).clone()))
        })
    }

    /// Placements for `count` new members, given how many the fleet has per zone ID.
    pub fn choose(&self, count: u32, per_zone: &BTreeMap<String, u32>) -> Chosen {
        let mut open: Vec<(usize, String, Probe)> = (0..self.zones.len())
            .filter_map(|z| {
                let t = self.preferred_type(z)?;
                let pair = (self.zones[z].clone(), t.clone());
                let probe = if self.launched.contains(&pair) {
                    Probe::Proven
                } else if self.pending.contains(&pair) {
                    Probe::InFlight
                } else {
                    Probe::Open
                };
                Some((z, t.clone(), probe))
            })
            .collect();
        if open.is_empty() {
            return Chosen {
                unplaced: count,
                ..Chosen::default()
            };
        }
        let mut counts: Vec<u32> = open
            .iter()
            .map(|(z, _, _)| per_zone.get(&self.zones[*z]).copied().unwrap_or(0))
            .collect();
        let mut chosen = Chosen::default();
        for _ in 0..count {
            let i = match self.spread {
                FleetSpread::Priority => 0,
                FleetSpread::Balanced => (0..open.len())
                    .min_by_key(|i| (counts[*i], *i))
                    .unwrap_or(0),
            };
            counts[i] += 1;
            let (zone, instance_type, probe) = &mut open[i];
            match probe {
                Probe::InFlight => chosen.waiting += 1,
                Probe::Open | Probe::Proven => {
                    chosen.placements.push(Placement {
                        zone: *zone,
                        instance_type: instance_type.clone(),
                    });
                    if *probe == Probe::Open {
                        *probe = Probe::InFlight;
                    }
                }
            }
        }
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    fn pairs(v: &[(&str, &str)]) -> BTreeSet<(String, String)> {
        v.iter()
            .map(|(z, t)| ((*z).to_owned(), (*t).to_owned()))
            .collect()
    }

    fn got(chosen: &Chosen) -> Vec<(usize, &str)> {
        chosen
            .placements
            .iter()
            .map(|p| (p.zone, p.instance_type.as_str()))
            .collect()
    }

    #[test]
    fn balanced_fills_the_emptiest_zone_and_skips_refused_types() {
        let zones = s(&["a", "b", "c"]);
        let types = s(&["t1", "t2"]);
        let refused = pairs(&[("a", "t1")]);
        let launched = pairs(&[("a", "t2"), ("b", "t1"), ("c", "t1")]);
        let choices = Choices {
            zones: &zones,
            instance_types: &types,
            spread: FleetSpread::Balanced,
            refused: &refused,
            launched: &launched,
            pending: &BTreeSet::new(),
        };
        let per_zone = BTreeMap::from([("b".to_owned(), 2)]);
        let chosen = choices.choose(5, &per_zone);
        // a and c start empty (a first on a tie, with its second type); b, holding two, is
        // only reached once the others hold two as well.
        assert_eq!(
            got(&chosen),
            [(0, "t2"), (2, "t1"), (0, "t2"), (2, "t1"), (0, "t2")]
        );
        assert_eq!(choices.choose(7, &per_zone).placements[5].zone, 1);
    }

    #[test]
    fn an_untried_placement_gets_one_probe_and_the_others_wait_for_it() {
        let zones = s(&["a", "b"]);
        let types = s(&["t1"]);
        let launched = pairs(&[("b", "t1")]);
        let mut choices = Choices {
            zones: &zones,
            instance_types: &types,
            spread: FleetSpread::Balanced,
            refused: &BTreeSet::new(),
            launched: &launched,
            pending: &BTreeSet::new(),
        };
        // Six over a (untried) and b (proven): one probe to a, a's other two wait; b gets 3.
        let chosen = choices.choose(6, &BTreeMap::new());
        assert_eq!(got(&chosen), [(0, "t1"), (1, "t1"), (1, "t1"), (1, "t1")]);
        assert_eq!(chosen.waiting, 2);
        // While the probe is in flight, nothing more goes to a.
        let pending = pairs(&[("a", "t1")]);
        choices.pending = &pending;
        let chosen = choices.choose(
            2,
            &BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 3)]),
        );
        assert_eq!((chosen.placements.len(), chosen.waiting), (0, 2));
    }

    #[test]
    fn priority_fills_the_first_open_zone_and_nothing_is_placed_when_all_are_refused() {
        let zones = s(&["a", "b"]);
        let types = s(&["t1"]);
        let refused = pairs(&[("a", "t1")]);
        let launched = pairs(&[("b", "t1")]);
        let choices = Choices {
            zones: &zones,
            instance_types: &types,
            spread: FleetSpread::Priority,
            refused: &refused,
            launched: &launched,
            pending: &BTreeSet::new(),
        };
        let chosen = choices.choose(3, &BTreeMap::new());
        assert!(chosen.placements.iter().all(|p| p.zone == 1), "{chosen:?}");
        assert_eq!(chosen.placements.len(), 3);
        let all_refused = pairs(&[("a", "t1"), ("b", "t1")]);
        let choices = Choices {
            refused: &all_refused,
            ..choices
        };
        let chosen = choices.choose(3, &BTreeMap::new());
        assert_eq!((chosen.placements.len(), chosen.unplaced), (0, 3));
    }
}
