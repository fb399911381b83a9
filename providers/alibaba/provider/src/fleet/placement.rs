//! Where the next instances of a fleet go: over the zones and instance types in the order the
//! user gave them, skipping the (zone, type) pairs ECS refused recently.
//!
//! `Balanced` puts each new instance in the zone with the fewest instances (the earlier zone on
//! a tie); `Priority` in the first zone. Either way the type is the first one of the list that
//! is not refused in that zone, and a zone where every type is refused is skipped.

use std::collections::{BTreeMap, BTreeSet};

use ferroplane_apis::alibabacloud::FleetSpread;

/// A zone and an instance type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placement {
    /// Index into the fleet's `placement.zones`.
    pub zone: usize,
    pub instance_type: String,
}

/// What a placement choice reads.
pub struct Choices<'a> {
    /// Zone IDs in order of preference.
    pub zones: &'a [String],
    /// Instance types in order of preference.
    pub instance_types: &'a [String],
    pub spread: FleetSpread,
    /// (zone ID, type) pairs not to use now.
    pub refused: &'a BTreeSet<(String, String)>,
}

impl Choices<'_> {
    fn first_type_in(&self, zone: usize) -> Option<&String> {
        self.instance_types.iter().find(|t| {
            !self
                .refused
                .contains(&(self.zones[zone].clone(), (*t).clone()))
        })
    }

    /// Placements for `count` new instances, given how many the fleet has per zone ID. Fewer
    /// than `count` when no (zone, type) is left.
    pub fn choose(&self, count: u32, per_zone: &BTreeMap<String, u32>) -> Vec<Placement> {
        let open: Vec<(usize, String)> = (0..self.zones.len())
            .filter_map(|z| self.first_type_in(z).map(|t| (z, t.clone())))
            .collect();
        let mut counts: Vec<u32> = open
            .iter()
            .map(|(z, _)| per_zone.get(&self.zones[*z]).copied().unwrap_or(0))
            .collect();
        let mut chosen = Vec::new();
        for _ in 0..count {
            let pick = match self.spread {
                FleetSpread::Priority => (!open.is_empty()).then_some(0),
                FleetSpread::Balanced => (0..open.len()).min_by_key(|i| (counts[*i], *i)),
            };
            let Some(i) = pick else { break };
            counts[i] += 1;
            chosen.push(Placement {
                zone: open[i].0,
                instance_type: open[i].1.clone(),
            });
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

    #[test]
    fn balanced_fills_the_emptiest_zone_and_skips_refused_types() {
        let zones = s(&["a", "b", "c"]);
        let types = s(&["t1", "t2"]);
        let refused = BTreeSet::from([("a".to_owned(), "t1".to_owned())]);
        let choices = Choices {
            zones: &zones,
            instance_types: &types,
            spread: FleetSpread::Balanced,
            refused: &refused,
        };
        let per_zone = BTreeMap::from([("b".to_owned(), 2)]);
        let chosen = choices.choose(5, &per_zone);
        let got: Vec<(usize, &str)> = chosen
            .iter()
            .map(|p| (p.zone, p.instance_type.as_str()))
            .collect();
        // a and c start empty (a first on a tie, with its second type); b, holding two, is
        // only reached once the others hold two as well.
        assert_eq!(got, [(0, "t2"), (2, "t1"), (0, "t2"), (2, "t1"), (0, "t2")]);
        assert_eq!(choices.choose(7, &per_zone)[5].zone, 1);
    }

    #[test]
    fn priority_fills_the_first_open_zone_and_nothing_is_chosen_when_all_are_refused() {
        let zones = s(&["a", "b"]);
        let types = s(&["t1"]);
        let refused = BTreeSet::from([("a".to_owned(), "t1".to_owned())]);
        let choices = Choices {
            zones: &zones,
            instance_types: &types,
            spread: FleetSpread::Priority,
            refused: &refused,
        };
        let chosen = choices.choose(3, &BTreeMap::new());
        assert!(chosen.iter().all(|p| p.zone == 1), "{chosen:?}");
        assert_eq!(chosen.len(), 3);
        let all_refused = BTreeSet::from([
            ("a".to_owned(), "t1".to_owned()),
            ("b".to_owned(), "t1".to_owned()),
        ]);
        let choices = Choices {
            refused: &all_refused,
            ..choices
        };
        assert!(choices.choose(3, &BTreeMap::new()).is_empty());
    }
}
