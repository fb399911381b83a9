//! What one reconcile of a fleet does to its members, decided with no I/O from the fleet (its
//! stored status included) and its members: the reconcile carries it out, `ferroplane plan`
//! shows it ([`crate::ecs_fleet_preview`]).

use std::collections::{BTreeMap, BTreeSet};

use ferroplane_apis::alibabacloud::{
    ECSFleet, ECSInstance, FleetUpdateStrategyType, RefusedPlacement,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use serde_json::Value;

use super::members::Members;
use super::placement::{Choices, Chosen, Placement};
use super::rebalance;
use super::rollout::{self, Strategy};
use super::template::{in_place_patch, member_name};

/// The longest name a fleet may have: its members' names add a hash and an ordinal, and its
/// name is a label value (at most 63 characters).
pub const MAX_FLEET_NAME: usize = 40;

/// What one reconcile does.
#[derive(Debug)]
pub struct Decision {
    /// The placements refused and not to be used until their retry time, after this pass
    /// (those of the members ECS just refused included).
    pub refusals: Vec<RefusedPlacement>,
    /// When the rollout last made progress (this pass counts when it changes something).
    pub last_progress: Timestamp,
    /// A rollout is under way (old members left, or fewer updated Ready members than asked).
    pub rolling: bool,
    /// The rollout's progress deadline passed: it neither creates nor deletes for itself.
    pub halted: bool,
    /// Members moved to where the placement rules put them now (a rebalance).
    pub moving: Vec<String>,
    /// How many to create and which members to delete, for the scale and the rollout.
    pub plan: rollout::Plan,
    /// The new members.
    pub creates: Vec<NewMember>,
    /// The placement's choice (how many wait for a probe, how many nothing can take).
    pub chosen: Chosen,
    /// Members that stay and whose in-place properties, labels or annotations differ from the
    /// template: name and merge patch.
    pub in_place: Vec<(String, Value)>,
}

/// A member to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMember {
    pub ordinal: u32,
    pub name: String,
    pub placement: Placement,
}

/// The update strategy of `fleet`, or why its spec cannot be reconciled.
pub fn strategy_of(fleet: &ECSFleet) -> Result<Strategy, String> {
    let name = fleet.name_any();
    if name.len() > MAX_FLEET_NAME {
        return Err(format!(
            "the fleet's name is {} characters long; at most {MAX_FLEET_NAME} leave room for its members' names and fit its label: recreate it under a shorter name",
            name.len()
        ));
    }
    let update = &fleet.spec.update_strategy;
    match update.type_ {
        FleetUpdateStrategyType::OnDelete => Ok(Strategy::OnDelete),
        FleetUpdateStrategyType::RollingUpdate => {
            let bounds = update.rolling_update.as_ref();
            rollout::rolling_bounds(
                fleet.spec.replicas,
                bounds.and_then(|b| b.max_surge.as_ref()),
                bounds.and_then(|b| b.max_unavailable.as_ref()),
            )
            .map_err(|e| format!("spec.updateStrategy.rollingUpdate: {e}"))
        }
    }
}

/// Members Ready and made from the current template.
pub fn updated_ready(members: &Members) -> usize {
    members.live.iter().filter(|m| m.current && m.ready).count()
}

/// What the reconcile of `fleet` at `now` does to `members` (sorted against the template
/// hash `hash`); an error says why the spec cannot be reconciled.
pub fn decide(
    fleet: &ECSFleet,
    members: &Members,
    hash: &str,
    replacing: &BTreeSet<&str>,
    now: Timestamp,
) -> Result<Decision, String> {
    let strategy = strategy_of(fleet)?;
    let previous = fleet.status.clone().unwrap_or_default();
    let placement = &fleet.spec.placement;

    let retry = SignedDuration::from_secs(i64::from(placement.retry_refused_after_seconds));
    let mut refusals: Vec<RefusedPlacement> = previous
        .refused_placements
        .iter()
        .filter(|r| r.retry_after.0 > now)
        .cloned()
        .collect();
    for refused in &members.refused {
        refusals
            .retain(|r| !(r.zone_id == refused.zone && r.instance_type == refused.instance_type));
        refusals.push(RefusedPlacement {
            zone_id: refused.zone.clone(),
            instance_type: refused.instance_type.clone(),
            reason: refused.reason.to_owned(),
            refused_at: Time(now),
            retry_after: Time(now.saturating_add(retry).unwrap_or(now)),
        });
    }

    let progress_made = previous.template_hash.as_deref() != Some(hash)
        || (updated_ready(members) as u32) > previous.updated_ready_replicas;
    let last_progress = if progress_made || previous.last_progress_time.is_none() {
        now
    } else {
        previous.last_progress_time.as_ref().map_or(now, |t| t.0)
    };
    let deadline = SignedDuration::from_secs(i64::from(fleet.spec.progress_deadline_seconds));
    let rolling = members.live.iter().any(|m| !m.current)
        || (updated_ready(members) as u32) < fleet.spec.replicas;
    let halted = rolling && now.duration_since(last_progress) > deadline;

    let refused_now: BTreeSet<(String, String)> = refusals
        .iter()
        .map(|r| (r.zone_id.clone(), r.instance_type.clone()))
        .collect();
    let zone_ids: Vec<String> = placement.zones.iter().map(|z| z.zone_id.clone()).collect();
    let choices = Choices {
        zones: &zone_ids,
        instance_types: &placement.instance_types,
        spread: placement.spread,
        refused: &refused_now,
        launched: &members.launched,
        pending: &members.pending,
    };
    let moving = match strategy {
        Strategy::RollingUpdate { surge, .. }
            if surge > 0
                && !rolling
                && members.live.len() >= fleet.spec.replicas as usize
                && members.refused.is_empty()
                && members.lost.is_empty() =>
        {
            rebalance::misplaced(&members.live, fleet.spec.replicas, &choices)
        }
        _ => Vec::new(),
    };
    let plan = match strategy {
        Strategy::RollingUpdate { surge, .. } if !moving.is_empty() => {
            // The misplaced members are replaced as old ones are in a rollout, with none
            // unavailable: each goes only once a new one is Ready.
            let marked: Vec<rollout::Member> = members
                .live
                .iter()
                .map(|m| rollout::Member {
                    current: m.current && !moving.contains(&m.name),
                    ..m.clone()
                })
                .collect();
            let rebalancing = Strategy::RollingUpdate {
                surge,
                unavailable: 0,
            };
            rollout::plan(fleet.spec.replicas, &marked, rebalancing, false)
        }
        _ => rollout::plan(fleet.spec.replicas, &members.live, strategy, halted),
    };

    // Where new members go counts only the members that stay: in a rolling update every old
    // member leaves, and counting them would leave the new ones as uneven as the old ones stood
    // at each step (and the fleet to rebalance afterwards).
    let mut leaving = moving.clone();
    if matches!(strategy, Strategy::RollingUpdate { .. }) {
        leaving.extend(
            members
                .live
                .iter()
                .filter(|m| !m.current)
                .map(|m| m.name.clone()),
        );
    }
    let mut per_zone: BTreeMap<String, u32> = BTreeMap::new();
    for member in members
        .live
        .iter()
        .filter(|m| !plan.delete.contains(&m.name) && !leaving.contains(&m.name))
    {
        *per_zone.entry(member.zone.clone()).or_default() += 1;
    }
    let chosen = choices.choose(plan.create, &per_zone);
    // New members take the lowest ordinals no object of the fleet uses.
    let name = fleet.name_any();
    let mut free = (0u32..)
        .map(|ordinal| (ordinal, member_name(&name, hash, ordinal)))
        .filter(|(_, n)| !members.names.contains(n));
    let creates = chosen
        .placements
        .iter()
        .filter_map(|placement| {
            let (ordinal, name) = free.next()?;
            Some(NewMember {
                ordinal,
                name,
                placement: placement.clone(),
            })
        })
        .collect();

    let in_place = members
        .objects
        .iter()
        .filter(|o| !plan.delete.contains(&o.name_any()))
        .filter_map(|o| Some((o.name_any(), in_place_patch(fleet, o, replacing)?)))
        .collect();

    Ok(Decision {
        refusals,
        last_progress,
        rolling,
        halted,
        moving,
        plan,
        creates,
        chosen,
        in_place,
    })
}

/// What the next reconcile of a fleet would do to its members, for `ferroplane plan`: the
/// reconcile's own [`decide`] over the fleet (a manifest applied over the stored one keeps the
/// stored status) and its members as the cluster has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetPreview {
    /// Why the spec cannot be reconciled (the fleet reports `Ready=False`, nothing changes).
    pub invalid: Option<String>,
    /// New members: name, zone ID and instance type.
    pub create: Vec<(String, String, String)>,
    /// Members deleted for the scale, the rollout or a rebalance.
    pub delete: Vec<String>,
    /// Whether some of them are replaced by new members (of an older template, or misplaced
    /// while new ones are made), not only scaled away.
    pub replacing: bool,
    /// Members deleted because ECS refused their placement, and those whose instance is gone
    /// from the cloud: both replaced.
    pub replace_refused: Vec<String>,
    pub replace_lost: Vec<String>,
    /// Members patched in place, with the properties, labels or annotations that change.
    pub in_place: Vec<(String, Vec<String>)>,
    /// Members of an older template that stay for now (the rollout's bounds, `OnDelete`, or a
    /// halted rollout).
    pub outdated_kept: Vec<String>,
    /// Members asked for that no placement can take now, and those waiting for a probe.
    pub unplaced: u32,
    pub waiting: u32,
    /// The rollout's progress deadline passed.
    pub halted: bool,
}

impl FleetPreview {
    /// Whether the reconcile changes nothing.
    pub fn is_no_change(&self) -> bool {
        self.create.is_empty()
            && self.delete.is_empty()
            && self.replace_refused.is_empty()
            && self.replace_lost.is_empty()
            && self.in_place.is_empty()
    }
}

/// The preview of `fleet` with `instances`, the ECSInstances of its namespace (those it does
/// not own are ignored, as the controller ignores them).
pub fn preview(fleet: &ECSFleet, instances: Vec<ECSInstance>, now: Timestamp) -> FleetPreview {
    let replacing = super::template::replacing_properties();
    let hash = super::template::template_hash(fleet, &replacing);
    let members =
        super::members::members_of(fleet, instances.into_iter().map(std::sync::Arc::new), &hash);
    let decision = match decide(fleet, &members, &hash, &replacing, now) {
        Ok(decision) => decision,
        Err(message) => {
            return FleetPreview {
                invalid: Some(message),
                ..FleetPreview::default()
            };
        }
    };
    let zones = &fleet.spec.placement.zones;
    let create = decision
        .creates
        .iter()
        .map(|new| {
            let zone = zones
                .get(new.placement.zone)
                .map(|z| z.zone_id.clone())
                .unwrap_or_default();
            (new.name.clone(), zone, new.placement.instance_type.clone())
        })
        .collect();
    let in_place = decision
        .in_place
        .iter()
        .map(|(name, patch)| (name.clone(), patched_fields(patch)))
        .collect();
    let outdated_kept = members
        .live
        .iter()
        .filter(|m| !m.current && !decision.plan.delete.contains(&m.name))
        .map(|m| m.name.clone())
        .collect();
    // Replaced: a member of an older template deleted, or a misplaced one deleted while new
    // members are made (a scale-down may delete a misplaced member too: nothing replaces it).
    let replacing = members.live.iter().any(|m| {
        decision.plan.delete.contains(&m.name)
            && (!m.current || (decision.moving.contains(&m.name) && !decision.creates.is_empty()))
    });
    FleetPreview {
        invalid: None,
        create,
        delete: decision.plan.delete.clone(),
        replacing,
        replace_refused: members.refused.iter().map(|r| r.name.clone()).collect(),
        replace_lost: members.lost.iter().map(|(name, _)| name.clone()).collect(),
        in_place,
        outdated_kept,
        unplaced: decision.chosen.unplaced,
        waiting: decision.chosen.waiting,
        halted: decision.halted,
    }
}

/// The leaves a merge patch sets: `spec.forProvider.<property>`, `metadata.labels.<key>`, ….
fn patched_fields(patch: &Value) -> Vec<String> {
    fn walk(prefix: &str, value: &Value, out: &mut Vec<String>, depth: usize) {
        match value {
            // Properties are reported whole, not their inner keys.
            Value::Object(map) if depth < 3 => {
                for (key, inner) in map {
                    let path = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    walk(&path, inner, out, depth + 1);
                }
            }
            _ => out.push(prefix.to_owned()),
        }
    }
    let mut out = Vec::new();
    walk("", patch, &mut out, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::super::placement::Placement;
    use super::super::template::{render_member, replacing_properties, template_hash};
    use super::*;
    use ferroplane_apis::common::names;
    use serde_json::json;

    fn fleet(replicas: u32, image: &str) -> ECSFleet {
        let mut fleet: ECSFleet = serde_json::from_value(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ECSFleet",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {
                "replicas": replicas,
                "template": {"spec": {"forProvider": {
                    "regionId": "cn-hangzhou", "imageId": image, "instanceName": "web",
                    "securityGroupIds": ["sg-1"], "description": "v1",
                }}},
                "placement": {
                    "zones": [
                        {"zoneId": "cn-hangzhou-b", "vSwitchIdRef": {"name": "vsw-b"}},
                        {"zoneId": "cn-hangzhou-c", "vSwitchIdRef": {"name": "vsw-c"}},
                    ],
                    "instanceTypes": ["ecs.g6.large"],
                },
            }
        }))
        .expect("fleet");
        fleet.metadata.uid = Some("u-1".into());
        fleet
    }

    /// A member of `fleet` as its controller made it, launched and Ready.
    fn member(fleet: &ECSFleet, ordinal: u32, zone: usize) -> ECSInstance {
        let hash = template_hash(fleet, &replacing_properties());
        let placement = Placement {
            zone,
            instance_type: "ecs.g6.large".into(),
        };
        let mut member = render_member(fleet, &hash, ordinal, &placement).expect("member");
        member
            .annotations_mut()
            .insert(names::EXTERNAL_NAME.to_owned(), format!("i-{ordinal}"));
        member.metadata.uid = Some(format!("m-{ordinal}"));
        let mut status = member.status.clone().unwrap_or_default();
        status.conditions.push(
            serde_json::from_value(json!({
                "type": names::READY, "status": "True", "reason": "Available",
                "lastTransitionTime": "2026-11-30T00:00:00Z",
            }))
            .expect("condition"),
        );
        member.status = Some(status);
        member
    }

    #[test]
    fn a_steady_fleet_changes_nothing_and_a_scale_up_creates_the_next_ordinals() {
        let now = Timestamp::now();
        let steady = fleet(2, "img-1");
        let members = vec![member(&steady, 0, 0), member(&steady, 1, 1)];
        let seen = preview(&steady, members.clone(), now);
        assert!(seen.is_no_change(), "{seen:?}");

        let grown = fleet(4, "img-1");
        let seen = preview(&grown, members, now);
        let names: Vec<&str> = seen.create.iter().map(|(n, _, _)| n.as_str()).collect();
        let hash = template_hash(&grown, &replacing_properties());
        assert_eq!(
            names,
            [format!("web-{hash}-2"), format!("web-{hash}-3")],
            "the lowest free ordinals"
        );
        let zones: Vec<&str> = seen.create.iter().map(|(_, z, _)| z.as_str()).collect();
        assert_eq!(
            zones,
            ["cn-hangzhou-b", "cn-hangzhou-c"],
            "spread over the zones"
        );
        assert!(seen.delete.is_empty());
        let shrunk = preview(
            &fleet(1, "img-1"),
            vec![member(&steady, 0, 0), member(&steady, 1, 1)],
            now,
        );
        assert_eq!(shrunk.delete.len(), 1, "{shrunk:?}");
        assert!(!shrunk.replacing, "a scale-down replaces nothing");
    }

    #[test]
    fn an_image_change_rolls_within_the_bounds_and_a_description_is_patched_in_place() {
        let now = Timestamp::now();
        let old = fleet(4, "img-1");
        let members: Vec<ECSInstance> = (0..4).map(|o| member(&old, o, (o % 2) as usize)).collect();

        // A new image needs new instances: 25 % surge (1) and 25 % unavailable (1).
        let seen = preview(&fleet(4, "img-2"), members.clone(), now);
        assert_eq!(seen.create.len(), 1, "{seen:?}");
        assert_eq!(seen.delete.len(), 1, "{seen:?}");
        assert_eq!(seen.outdated_kept.len(), 3, "{seen:?}");
        assert!(seen.replacing);
        assert!(seen.in_place.is_empty());

        // A description is an in-place property: every member is patched, none replaced.
        let mut described = old.clone();
        described.spec.template.spec.for_provider.0["description"] = json!("v2");
        let seen = preview(&described, members, now);
        assert!(seen.create.is_empty() && seen.delete.is_empty(), "{seen:?}");
        assert_eq!(seen.in_place.len(), 4);
        assert_eq!(
            seen.in_place[0].1,
            ["spec.forProvider.description"],
            "{seen:?}"
        );
    }

    #[test]
    fn a_fleet_name_too_long_is_invalid_and_changes_nothing() {
        let mut long = fleet(2, "img-1");
        long.metadata.name = Some("w".repeat(MAX_FLEET_NAME + 1));
        let seen = preview(&long, Vec::new(), Timestamp::now());
        assert!(
            seen.invalid
                .as_deref()
                .is_some_and(|m| m.contains("shorter name"))
        );
        assert!(seen.is_no_change());
    }
}
