//! `spec.forProvider` vs the instance ECS reports → a [`Plan`]: changes made in place, changes
//! that need the instance stopped (instance type, host name, password, user data), the power
//! state, and immutable fields that differ. Pure.

use std::collections::{BTreeMap, BTreeSet};

use alibaba_sdk::ecs::{Instance, Tag};
use ferroplane_apis::alibabacloud::{DesiredStatus, ECSInstanceParameters};
use ferroplane_runtime::UID_TAG;

use super::applied_inputs::ChangedInputs;
use super::spec_mapping::instance_charge_type;

/// ECS instance states.
pub mod status {
    pub const PENDING: &str = "Pending";
    pub const STARTING: &str = "Starting";
    pub const RUNNING: &str = "Running";
    pub const STOPPING: &str = "Stopping";
    pub const STOPPED: &str = "Stopped";

    /// The instance is changing state; operations would be refused.
    pub fn in_transition(status: &str) -> bool {
        matches!(status, PENDING | STARTING | STOPPING)
    }
}

/// Changes ECS applies without a restart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InPlace {
    pub instance_name: Option<String>,
    pub description: Option<String>,
    pub security_group_ids: Option<Vec<String>>,
    pub deletion_protection: Option<bool>,
    pub bandwidth_out: Option<u32>,
    pub tags_to_set: Vec<Tag>,
    pub tags_to_remove: Vec<String>,
}

impl InPlace {
    /// Whether `ModifyInstanceAttribute` has something to do.
    pub fn has_attributes(&self) -> bool {
        self.instance_name.is_some()
            || self.description.is_some()
            || self.security_group_ids.is_some()
            || self.deletion_protection.is_some()
    }
}

/// Changes that need the instance stopped (and started again to take effect).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestartBound {
    pub instance_type: Option<String>,
    pub host_name: Option<String>,
    pub password: bool,
    pub user_data: bool,
}

impl RestartBound {
    pub fn is_empty(&self) -> bool {
        self.instance_type.is_none()
            && self.host_name.is_none()
            && !self.password
            && !self.user_data
    }
}

/// Start or stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Power {
    Start,
    Stop,
}

/// Everything that differs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub in_place: InPlace,
    pub restart: RestartBound,
    pub power: Option<Power>,
    /// One line per immutable field that differs from the cloud.
    pub immutable: Vec<String>,
    /// One line per change, for messages (no secret values).
    pub changes: Vec<String>,
    pub restart_changes: Vec<String>,
}

fn differs<T: PartialEq>(desired: Option<&T>, observed: &T) -> bool {
    desired.is_some_and(|d| d != observed)
}

/// The plan that makes `observed` match `spec`. `inputs` says whether the password or user data
/// changed since they were applied (ECS does not report them).
pub fn plan(spec: &ECSInstanceParameters, observed: &Instance, inputs: ChangedInputs) -> Plan {
    let mut plan = Plan::default();
    let change = |lines: &mut Vec<String>, field: &str, from: &str, to: &str| {
        lines.push(format!("{field}: {from:?} → {to:?}"));
    };

    if differs(spec.instance_name.as_ref(), &observed.instance_name) {
        let to = spec.instance_name.clone().unwrap_or_default();
        change(
            &mut plan.changes,
            "instanceName",
            &observed.instance_name,
            &to,
        );
        plan.in_place.instance_name = Some(to);
    }
    if differs(spec.description.as_ref(), &observed.description) {
        let to = spec.description.clone().unwrap_or_default();
        change(&mut plan.changes, "description", &observed.description, &to);
        plan.in_place.description = Some(to);
    }
    if let Some(groups) = &spec.security_group_ids {
        let want: BTreeSet<&String> = groups.iter().collect();
        let have: BTreeSet<&String> = observed.security_group_ids.items.iter().collect();
        if want != have {
            plan.changes.push(format!(
                "securityGroupIds: {:?} → {:?}",
                observed.security_group_ids.items, groups
            ));
            plan.in_place.security_group_ids = Some(groups.clone());
        }
    }
    if let Some(protect) = spec.deletion_protection
        && protect != observed.deletion_protection
    {
        plan.changes.push(format!(
            "deletionProtection: {} → {protect}",
            observed.deletion_protection
        ));
        plan.in_place.deletion_protection = Some(protect);
    }
    if let Some(bandwidth) = spec
        .internet_max_bandwidth_out
        .and_then(|b| u32::try_from(b).ok())
        && bandwidth != observed.internet_max_bandwidth_out
    {
        plan.changes.push(format!(
            "internetMaxBandwidthOut: {} → {bandwidth}",
            observed.internet_max_bandwidth_out
        ));
        plan.in_place.bandwidth_out = Some(bandwidth);
    }
    if let Some(tags) = &spec.tags {
        diff_tags(tags, observed, &mut plan);
    }

    if spec.instance_type != observed.instance_type && !observed.instance_type.is_empty() {
        change(
            &mut plan.restart_changes,
            "instanceType",
            &observed.instance_type,
            &spec.instance_type,
        );
        plan.restart.instance_type = Some(spec.instance_type.clone());
    }
    if differs(spec.host_name.as_ref(), &observed.host_name) {
        let to = spec.host_name.clone().unwrap_or_default();
        change(
            &mut plan.restart_changes,
            "hostName",
            &observed.host_name,
            &to,
        );
        plan.restart.host_name = Some(to);
    }
    if inputs.password {
        plan.restart.password = true;
        plan.restart_changes
            .push("password (the passwordSecretRef Secret changed)".to_owned());
    }
    if inputs.user_data {
        plan.restart.user_data = true;
        plan.restart_changes.push("userData".to_owned());
    }

    let desired = spec.desired_status.unwrap_or(DesiredStatus::Running);
    plan.power = match (desired, observed.status.as_str()) {
        (DesiredStatus::Running, status::STOPPED) => Some(Power::Start),
        (DesiredStatus::Stopped, status::RUNNING) => Some(Power::Stop),
        _ => None,
    };
    if let Some(power) = plan.power {
        plan.changes.push(format!(
            "status: {} → {}",
            observed.status,
            match power {
                Power::Start => status::RUNNING,
                Power::Stop => status::STOPPED,
            }
        ));
    }

    immutable(spec, observed, &mut plan.immutable);
    plan
}

fn diff_tags(tags: &BTreeMap<String, String>, observed: &Instance, plan: &mut Plan) {
    let have: BTreeMap<&str, &str> = observed
        .tags
        .items
        .iter()
        .filter(|t| !is_reserved_tag(&t.key))
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    for (k, v) in tags.iter().filter(|(k, _)| !is_reserved_tag(k)) {
        if have.get(k.as_str()) != Some(&v.as_str()) {
            plan.in_place.tags_to_set.push(Tag::new(k, v));
        }
    }
    for k in have.keys() {
        if !tags.contains_key(*k) {
            plan.in_place.tags_to_remove.push((*k).to_owned());
        }
    }
    if !plan.in_place.tags_to_set.is_empty() || !plan.in_place.tags_to_remove.is_empty() {
        let set: Vec<&str> = plan
            .in_place
            .tags_to_set
            .iter()
            .map(|t| t.key.as_str())
            .collect();
        plan.changes.push(format!(
            "tags: set {set:?}, remove {:?}",
            plan.in_place.tags_to_remove
        ));
    }
}

/// Tags ferroplane never changes: its UID tag and the cloud's own (`acs:`, `aliyun`).
pub fn is_reserved_tag(key: &str) -> bool {
    key == UID_TAG || key.starts_with("acs:") || key.starts_with("aliyun")
}

fn immutable(spec: &ECSInstanceParameters, observed: &Instance, out: &mut Vec<String>) {
    let mut check = |field: &str, desired: Option<&str>, actual: &str| {
        if let Some(desired) = desired
            && !actual.is_empty()
            && desired != actual
        {
            out.push(format!(
                "{field} is {actual:?} in ECS but {desired:?} in the spec"
            ));
        }
    };
    check("regionId", Some(&spec.region_id), &observed.region_id);
    check("zoneId", spec.zone_id.as_deref(), &observed.zone_id);
    check("imageId", Some(&spec.image_id), &observed.image_id);
    check(
        "vSwitchId",
        spec.v_switch_id.as_deref(),
        &observed.vpc_attributes.vswitch_id,
    );
    check(
        "instanceChargeType",
        spec.instance_charge_type.map(instance_charge_type),
        &observed.instance_charge_type,
    );
}

/// What `observe` reports for a plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// `update` is needed; what differs.
    pub diff: Option<String>,
    /// Changes waiting for a restart the spec does not allow.
    pub note: Option<String>,
}

/// Reason word at the start of the note about changes waiting for a restart.
pub const RESTART_PENDING: &str = "RestartPending";

/// Decides whether `update` runs. Restart-bound changes are applied when the instance is
/// stopped anyway or `allowRestart` is true; otherwise they wait and the note says so.
pub fn verdict(plan: &Plan, observed_status: &str, allow_restart: bool) -> Verdict {
    let mut lines = plan.changes.clone();
    let mut note = None;
    if !plan.restart.is_empty() {
        if allow_restart || observed_status == status::STOPPED {
            lines.extend(plan.restart_changes.iter().map(|c| {
                if observed_status == status::STOPPED {
                    c.clone()
                } else {
                    format!("{c} (stop, change, start)")
                }
            }));
        } else {
            note = Some(format!(
                "{RESTART_PENDING}: {} must wait for a stop and start of the instance; set spec.forProvider.allowRestart: true to let ferroplane restart it, or stop it with spec.forProvider.desiredStatus: Stopped",
                plan.restart_changes.join(", ")
            ));
        }
    }
    lines.extend(plan.immutable.iter().map(|l| format!("{l} (immutable)")));
    Verdict {
        diff: (!lines.is_empty()).then(|| lines.join("; ")),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::{SecurityGroupIdList, TagList, VpcAttributes};

    fn spec() -> ECSInstanceParameters {
        ECSInstanceParameters {
            region_id: "cn-beijing".into(),
            image_id: "img-1".into(),
            instance_type: "ecs.g6.large".into(),
            ..ECSInstanceParameters::default()
        }
    }

    fn observed() -> Instance {
        Instance {
            instance_id: "i-1".into(),
            instance_name: "web".into(),
            status: "Running".into(),
            instance_type: "ecs.g6.large".into(),
            image_id: "img-1".into(),
            region_id: "cn-beijing".into(),
            zone_id: "cn-beijing-a".into(),
            instance_charge_type: "PostPaid".into(),
            host_name: "web-host".into(),
            vpc_attributes: VpcAttributes {
                vswitch_id: "vsw-a".into(),
                ..VpcAttributes::default()
            },
            security_group_ids: SecurityGroupIdList {
                items: vec!["sg-1".into()],
            },
            tags: TagList {
                items: vec![
                    Tag::new(UID_TAG, "u"),
                    Tag::new("env", "dev"),
                    Tag::new("old", "x"),
                ],
            },
            ..Instance::default()
        }
    }

    #[test]
    fn matching_spec_has_an_empty_plan() {
        let p = plan(&spec(), &observed(), ChangedInputs::default());
        assert_eq!(p, Plan::default());
        assert_eq!(verdict(&p, "Running", false), Verdict::default());
    }

    #[test]
    fn in_place_changes() {
        let mut s = spec();
        s.instance_name = Some("api".into());
        s.security_group_ids = Some(vec!["sg-1".into(), "sg-2".into()]);
        s.deletion_protection = Some(true);
        s.internet_max_bandwidth_out = Some(10);
        s.tags = Some(
            [
                ("env".to_owned(), "prod".to_owned()),
                ("team".to_owned(), "a".to_owned()),
            ]
            .into(),
        );
        let p = plan(&s, &observed(), ChangedInputs::default());
        assert_eq!(p.in_place.instance_name.as_deref(), Some("api"));
        assert_eq!(
            p.in_place.security_group_ids.as_ref().map(Vec::len),
            Some(2)
        );
        assert_eq!(p.in_place.deletion_protection, Some(true));
        assert_eq!(p.in_place.bandwidth_out, Some(10));
        assert_eq!(
            p.in_place.tags_to_set,
            vec![Tag::new("env", "prod"), Tag::new("team", "a")]
        );
        assert_eq!(p.in_place.tags_to_remove, vec!["old".to_owned()]);
        assert!(p.restart.is_empty() && p.immutable.is_empty() && p.power.is_none());
        let v = verdict(&p, "Running", false);
        assert!(v.diff.unwrap().contains("instanceName: \"web\" → \"api\""));
        assert!(v.note.is_none());
    }

    #[test]
    fn the_uid_tag_is_never_touched() {
        let mut s = spec();
        s.tags = Some(BTreeMap::new());
        let p = plan(&s, &observed(), ChangedInputs::default());
        assert_eq!(
            p.in_place.tags_to_remove,
            vec!["env".to_owned(), "old".to_owned()]
        );
    }

    #[test]
    fn restart_bound_changes_wait_without_allow_restart() {
        let mut s = spec();
        s.instance_type = "ecs.g6.xlarge".into();
        s.host_name = Some("new-host".into());
        let inputs = ChangedInputs {
            password: true,
            user_data: false,
        };
        let p = plan(&s, &observed(), inputs);
        assert_eq!(p.restart.instance_type.as_deref(), Some("ecs.g6.xlarge"));
        assert!(p.restart.password);
        let waiting = verdict(&p, "Running", false);
        assert!(waiting.diff.is_none());
        let note = waiting.note.unwrap();
        assert!(note.starts_with(RESTART_PENDING), "{note}");
        assert!(
            note.contains("instanceType") && note.contains("allowRestart"),
            "{note}"
        );
        assert!(
            verdict(&p, "Running", true)
                .diff
                .unwrap()
                .contains("stop, change, start")
        );
        // A stopped instance takes them without a restart.
        assert!(verdict(&p, "Stopped", false).diff.is_some());
    }

    #[test]
    fn power_state() {
        let mut s = spec();
        s.desired_status = Some(DesiredStatus::Stopped);
        assert_eq!(
            plan(&s, &observed(), ChangedInputs::default()).power,
            Some(Power::Stop)
        );
        let mut stopped = observed();
        stopped.status = "Stopped".into();
        assert_eq!(
            plan(&spec(), &stopped, ChangedInputs::default()).power,
            Some(Power::Start)
        );
        let mut stopping = observed();
        stopping.status = "Stopping".into();
        assert_eq!(
            plan(&spec(), &stopping, ChangedInputs::default()).power,
            None
        );
    }

    #[test]
    fn immutable_fields_are_reported() {
        let mut s = spec();
        s.zone_id = Some("cn-beijing-b".into());
        s.image_id = "img-2".into();
        s.v_switch_id = Some("vsw-b".into());
        let p = plan(&s, &observed(), ChangedInputs::default());
        assert_eq!(p.immutable.len(), 3, "{:?}", p.immutable);
        assert!(p.immutable[0].contains("zoneId is \"cn-beijing-a\" in ECS but \"cn-beijing-b\""));
        assert!(
            verdict(&p, "Running", false)
                .diff
                .unwrap()
                .contains("(immutable)")
        );
    }
}
