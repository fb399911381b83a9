//! The instance objects a fleet owns (from the ECSInstance controller's cache, or listed by
//! `ferroplane plan`), sorted into what the plan needs: live members, members whose placement
//! ECS refused, and the names in use.

use std::collections::BTreeSet;
use std::sync::Arc;

use ferroplane_apis::alibabacloud::{ECSFleet, ECSInstance, TEMPLATE_HASH_LABEL};
use ferroplane_apis::common::{ConditionStatus, Managed, names};
use kube::ResourceExt;

use super::rollout::Member;
use super::template::ordinal_of;
use ferroplane_runtime::conditions::sync_failed_with;
use ferroplane_runtime::reasons::EXTERNAL_RESOURCE_NOT_FOUND;

use crate::reasons::{NO_STOCK, PLACEMENT_NOT_OFFERED};

/// A member ECS refused to launch where it was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedMember {
    pub name: String,
    pub uid: Option<String>,
    pub zone: String,
    pub instance_type: String,
    pub reason: &'static str,
}

/// The fleet's instance objects.
#[derive(Debug, Default)]
pub struct Members {
    /// Not being deleted and not refused.
    pub live: Vec<Member>,
    /// Their objects, by the same index as `live`.
    pub objects: Vec<Arc<ECSInstance>>,
    /// Refused at launch (no stock, not offered), not yet being deleted.
    pub refused: Vec<RefusedMember>,
    /// Whose instance is gone from the cloud (a reclaimed spot instance, a release outside
    /// ferroplane), by name and UID, not yet being deleted.
    pub lost: Vec<(String, Option<String>)>,
    /// (zone, type) pairs where a live member has launched its instance.
    pub launched: BTreeSet<(String, String)>,
    /// (zone, type) pairs where a live member still waits to launch.
    pub pending: BTreeSet<(String, String)>,
    /// Every name the fleet's objects use, deleted ones included (a name is not reused while
    /// its object exists).
    pub names: BTreeSet<String>,
}

/// The ECSInstances of `fleet`: those in its namespace whose controller owner reference is the
/// fleet's UID (a label alone never makes an object the fleet's).
pub fn members_of(
    fleet: &ECSFleet,
    instances: impl IntoIterator<Item = Arc<ECSInstance>>,
    current_hash: &str,
) -> Members {
    let uid = fleet.uid().unwrap_or_default();
    let namespace = fleet.namespace();
    let fleet_name = fleet.name_any();
    let mut members = Members::default();
    for instance in instances {
        let owned = instance.namespace() == namespace
            && instance
                .owner_references()
                .iter()
                .any(|o| o.controller == Some(true) && o.uid == uid);
        if !owned {
            continue;
        }
        let name = instance.name_any();
        members.names.insert(name.clone());
        if instance.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let zone = instance
            .spec
            .for_provider
            .zone_id
            .clone()
            .unwrap_or_default();
        if let Some(reason) = placement_refusal(&instance) {
            members.refused.push(RefusedMember {
                uid: instance.uid(),
                name,
                zone,
                instance_type: instance.spec.for_provider.instance_type.clone(),
                reason,
            });
            continue;
        }
        if instance_lost(&instance) {
            members.lost.push((name, instance.uid()));
            continue;
        }
        let instance_type = instance.spec.for_provider.instance_type.clone();
        let pair = (zone.clone(), instance_type.clone());
        if instance.annotations().contains_key(names::EXTERNAL_NAME) {
            members.launched.insert(pair);
        } else {
            members.pending.insert(pair);
        }
        let ready = condition_is_true(&instance, names::READY);
        members.live.push(Member {
            ordinal: ordinal_of(&fleet_name, &name).unwrap_or(u32::MAX),
            current: instance
                .labels()
                .get(TEMPLATE_HASH_LABEL)
                .map(String::as_str)
                == Some(current_hash),
            name,
            zone,
            instance_type,
            ready,
        });
        members.objects.push(instance);
    }
    members
}

fn condition_is_true(instance: &ECSInstance, type_: &str) -> bool {
    instance
        .conditions()
        .iter()
        .any(|c| c.type_ == type_ && c.status == ConditionStatus::True)
}

/// Whether the member's instance is gone: it had one (an external name), and its controller now
/// finds none and, as for any ECSInstance, will not create another in its place.
fn instance_lost(instance: &ECSInstance) -> bool {
    instance.annotations().contains_key(names::EXTERNAL_NAME)
        && sync_failed_with(instance.conditions(), EXTERNAL_RESOURCE_NOT_FOUND)
}

/// The reason ECS refused to launch the member where it is placed, if it did: its create failed
/// with no stock or a placement not offered, and it never got an instance (no external name).
fn placement_refusal(instance: &ECSInstance) -> Option<&'static str> {
    if instance.annotations().contains_key(names::EXTERNAL_NAME) {
        return None;
    }
    [NO_STOCK, PLACEMENT_NOT_OFFERED]
        .into_iter()
        .find(|reason| sync_failed_with(instance.conditions(), reason))
}
