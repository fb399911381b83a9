//! `spec.forProvider` vs the instance ECS reports → a [`Plan`]: changes made in place, changes
//! that need the instance stopped, the power state, and immutable fields that differ. Driven by
//! [`FIELDS`]: every property classed in place or restart-bound is compared by its diff. Pure.

use alibaba_sdk::ecs::{Instance, Tag};
use ferroplane_apis::alibabacloud::{DesiredStatus, ECSInstanceParameters};

use super::field_classes::{FIELDS, FieldClass};
pub use super::field_diffs::is_reserved_tag;
use super::field_diffs::{Change, Observed};

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
    pub credit_specification: Option<String>,
    pub deployment_set_id: Option<String>,
    /// (primary interface, addresses to add, addresses to release).
    pub ipv6: Option<(String, u32, Vec<String>)>,
    pub bandwidth_out: Option<u32>,
    pub internet_charge_type: Option<String>,
    pub tags_to_set: Vec<Tag>,
    pub tags_to_remove: Vec<String>,
    pub http_tokens: Option<String>,
    pub http_endpoint: Option<String>,
    pub http_put_response_hop_limit: Option<u32>,
    /// (role attached now, role to attach).
    pub ram_role: Option<(Option<String>, String)>,
    pub resource_group_id: Option<String>,
    /// (key pair bound now, key pair to bind).
    pub key_pair: Option<(Option<String>, String)>,
    /// (system disk, new size in GiB).
    pub system_disk_size: Option<(String, u32)>,
    /// (system disk, performance level).
    pub system_disk_performance_level: Option<(String, String)>,
    /// (billing method, period, period unit).
    pub charge_type: Option<(String, Option<u32>, Option<String>)>,
    /// (renew automatically, length of each renewal).
    pub auto_renew: Option<(bool, Option<u32>)>,
}

impl InPlace {
    /// Whether `ModifyInstanceAttribute` has something to do.
    pub fn has_attributes(&self) -> bool {
        self.instance_name.is_some()
            || self.description.is_some()
            || self.security_group_ids.is_some()
            || self.deletion_protection.is_some()
            || self.credit_specification.is_some()
    }

    /// Whether `ModifyInstanceNetworkSpec` has something to do.
    pub fn has_network_spec(&self) -> bool {
        self.bandwidth_out.is_some() || self.internet_charge_type.is_some()
    }

    /// Whether `ModifyInstanceMetadataOptions` has something to do.
    pub fn has_metadata_options(&self) -> bool {
        self.http_tokens.is_some()
            || self.http_endpoint.is_some()
            || self.http_put_response_hop_limit.is_some()
    }

    fn take(&mut self, change: Change) {
        match change {
            Change::InstanceName(v) => self.instance_name = Some(v),
            Change::Description(v) => self.description = Some(v),
            Change::SecurityGroupIds(v) => self.security_group_ids = Some(v),
            Change::DeletionProtection(v) => self.deletion_protection = Some(v),
            Change::CreditSpecification(v) => self.credit_specification = Some(v),
            Change::DeploymentSetId(v) => self.deployment_set_id = Some(v),
            Change::Ipv6Addresses {
                eni,
                assign,
                release,
            } => self.ipv6 = Some((eni, assign, release)),
            Change::BandwidthOut(v) => self.bandwidth_out = Some(v),
            Change::InternetChargeType(v) => self.internet_charge_type = Some(v),
            Change::Tags { set, remove } => {
                self.tags_to_set = set;
                self.tags_to_remove = remove;
            }
            Change::HttpTokens(v) => self.http_tokens = Some(v),
            Change::HttpEndpoint(v) => self.http_endpoint = Some(v),
            Change::HttpPutResponseHopLimit(v) => self.http_put_response_hop_limit = Some(v),
            Change::RamRoleName { from, to } => self.ram_role = Some((from, to)),
            Change::ResourceGroupId(v) => self.resource_group_id = Some(v),
            Change::KeyPairName { from, to } => self.key_pair = Some((from, to)),
            Change::InstanceChargeType { to, period, unit } => {
                self.charge_type = Some((to, period, unit));
            }
            Change::AutoRenew { enabled, duration } => self.auto_renew = Some((enabled, duration)),
            Change::SystemDiskSize { disk_id, size } => {
                self.system_disk_size = Some((disk_id, size));
            }
            Change::SystemDiskPerformanceLevel { disk_id, level } => {
                self.system_disk_performance_level = Some((disk_id, level));
            }
            Change::InstanceType(_)
            | Change::ImageId(_)
            | Change::VpcAttribute { .. }
            | Change::HostName(_)
            | Change::Password
            | Change::UserData
            | Change::Immutable => {}
        }
    }
}

/// Changes that need the instance stopped (and started again to take effect).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestartBound {
    pub instance_type: Option<String>,
    pub image_id: Option<String>,
    /// (vSwitch, private IP or one ECS picks).
    pub vpc_attribute: Option<(String, Option<String>)>,
    pub host_name: Option<String>,
    pub password: bool,
    pub user_data: bool,
}

impl RestartBound {
    pub fn is_empty(&self) -> bool {
        self.instance_type.is_none()
            && self.image_id.is_none()
            && self.vpc_attribute.is_none()
            && self.host_name.is_none()
            && !self.password
            && !self.user_data
    }

    fn take(&mut self, change: Change) {
        match change {
            Change::InstanceType(v) => self.instance_type = Some(v),
            Change::ImageId(v) => self.image_id = Some(v),
            Change::VpcAttribute {
                vswitch_id,
                private_ip,
            } => self.vpc_attribute = Some((vswitch_id, private_ip)),
            Change::HostName(v) => self.host_name = Some(v),
            Change::Password => self.password = true,
            Change::UserData => self.user_data = true,
            _ => {}
        }
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

/// The plan that makes the observed instance match `spec`: every field of [`FIELDS`] with a
/// diff is compared.
pub fn plan(spec: &ECSInstanceParameters, observed: &Observed<'_>) -> Plan {
    let mut plan = Plan::default();
    for field in FIELDS {
        match field.class {
            FieldClass::InPlace { action, diff } => {
                if let Some(d) = diff(spec, observed) {
                    plan.changes.push(format!("{} ({action})", d.line));
                    plan.in_place.take(d.change);
                }
            }
            FieldClass::Restart { action, diff } => {
                if let Some(d) = diff(spec, observed) {
                    plan.restart_changes.push(format!("{} ({action})", d.line));
                    plan.restart.take(d.change);
                }
            }
            FieldClass::Immutable { check: Some(check) } => {
                if let Some(d) = check(spec, observed) {
                    plan.immutable.push(d.line);
                }
            }
            FieldClass::Immutable { check: None } | FieldClass::Management { .. } => {}
        }
    }
    let instance: &Instance = observed.instance;
    let desired = spec.desired_status.unwrap_or(DesiredStatus::Running);
    plan.power = match (desired, instance.status.as_str()) {
        (DesiredStatus::Running, status::STOPPED) => Some(Power::Start),
        (DesiredStatus::Stopped, status::RUNNING) => Some(Power::Stop),
        _ => None,
    };
    if let Some(power) = plan.power {
        plan.changes.push(format!(
            "status: {} → {}",
            instance.status,
            match power {
                Power::Start => status::RUNNING,
                Power::Stop => status::STOPPED,
            }
        ));
    }
    plan
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
    use super::super::applied_inputs::ChangedInputs;
    use super::*;
    use alibaba_sdk::ecs::{MetadataOptions, SecurityGroupIdList, TagList, VpcAttributes};
    use ferroplane_runtime::UID_TAG;
    use std::collections::BTreeMap;

    fn plan_with(s: &ECSInstanceParameters, i: &Instance, inputs: ChangedInputs) -> Plan {
        plan(
            s,
            &Observed {
                instance: i,
                ram_role: None,
                inputs,
                disks: None,
                renewal: None,
            },
        )
    }

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
            internet_charge_type: "PayByTraffic".into(),
            metadata_options: MetadataOptions {
                http_endpoint: "enabled".into(),
                http_tokens: "optional".into(),
                http_put_response_hop_limit: 1,
            },
            resource_group_id: "rg-default".into(),
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
        let p = plan_with(&spec(), &observed(), ChangedInputs::default());
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
        let p = plan_with(&s, &observed(), ChangedInputs::default());
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
        assert_eq!(p.changes.len(), 5, "{:?}", p.changes);
        let v = verdict(&p, "Running", false);
        assert!(v.diff.unwrap().contains("instanceName: \"web\" → \"api\""));
        assert!(v.note.is_none());
    }

    #[test]
    fn the_uid_tag_is_never_touched() {
        let mut s = spec();
        s.tags = Some(BTreeMap::new());
        let p = plan_with(&s, &observed(), ChangedInputs::default());
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
        let p = plan_with(&s, &observed(), inputs);
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
            plan_with(&s, &observed(), ChangedInputs::default()).power,
            Some(Power::Stop)
        );
        let mut stopped = observed();
        stopped.status = "Stopped".into();
        assert_eq!(
            plan_with(&spec(), &stopped, ChangedInputs::default()).power,
            Some(Power::Start)
        );
        let mut stopping = observed();
        stopping.status = "Stopping".into();
        assert_eq!(
            plan_with(&spec(), &stopping, ChangedInputs::default()).power,
            None
        );
    }

    #[test]
    fn a_new_private_ip_moves_within_the_current_vswitch() {
        let mut s = spec();
        s.private_ip_address = Some("172.16.0.50".into());
        let mut i = observed();
        i.vpc_attributes.private_ip_address.items = vec!["172.16.0.10".into()];
        let p = plan_with(&s, &i, ChangedInputs::default());
        assert_eq!(
            p.restart.vpc_attribute,
            Some((
                i.vpc_attributes.vswitch_id.clone(),
                Some("172.16.0.50".to_owned())
            ))
        );
        i.vpc_attributes.private_ip_address.items = vec!["172.16.0.50".into()];
        assert!(
            plan_with(&s, &i, ChangedInputs::default())
                .restart
                .is_empty()
        );
    }

    #[test]
    fn immutable_fields_are_reported() {
        let mut s = spec();
        s.zone_id = Some("cn-beijing-b".into());
        s.image_id = "img-2".into();
        s.v_switch_id = Some("vsw-b".into());
        let p = plan_with(&s, &observed(), ChangedInputs::default());
        assert_eq!(p.immutable.len(), 1, "{:?}", p.immutable);
        // The image is replaced and the vSwitch changed through a restart, not refused.
        assert_eq!(p.restart.image_id.as_deref(), Some("img-2"));
        assert_eq!(p.restart.vpc_attribute, Some(("vsw-b".to_owned(), None)));
        assert!(p.immutable[0].contains("zoneId is \"cn-beijing-a\" in ECS but \"cn-beijing-b\""));
        assert!(
            verdict(&p, "Running", false)
                .diff
                .unwrap()
                .contains("(immutable)")
        );
    }
}

#[cfg(test)]
mod new_field_tests {
    use super::*;
    use crate::ecs_instance::applied_inputs::ChangedInputs;
    use alibaba_sdk::ecs::MetadataOptions;
    use ferroplane_apis::alibabacloud::{HttpEndpoint, HttpTokens, InternetChargeType};

    fn instance() -> Instance {
        Instance {
            instance_id: "i-1".into(),
            status: "Running".into(),
            instance_type: "ecs.g6.large".into(),
            internet_charge_type: "PayByTraffic".into(),
            internet_max_bandwidth_out: 5,
            metadata_options: MetadataOptions {
                http_endpoint: "enabled".into(),
                http_tokens: "optional".into(),
                http_put_response_hop_limit: 1,
            },
            resource_group_id: "rg-a".into(),
            ..Instance::default()
        }
    }

    fn spec() -> ECSInstanceParameters {
        ECSInstanceParameters {
            region_id: String::new(),
            image_id: String::new(),
            instance_type: "ecs.g6.large".into(),
            ..ECSInstanceParameters::default()
        }
    }

    #[test]
    fn network_metadata_role_and_group_changes_are_planned() {
        let mut s = spec();
        s.internet_charge_type = Some(InternetChargeType::PayByBandwidth);
        s.internet_max_bandwidth_out = Some(20);
        s.http_tokens = Some(HttpTokens::Required);
        s.http_endpoint = Some(HttpEndpoint::Enabled);
        s.http_put_response_hop_limit = Some(3);
        s.ram_role_name = Some("web-role".into());
        s.resource_group_id = Some("rg-b".into());
        let i = instance();
        let p = plan(
            &s,
            &Observed {
                instance: &i,
                ram_role: Some("old-role"),
                inputs: ChangedInputs::default(),
                disks: None,
                renewal: None,
            },
        );
        assert_eq!(
            p.in_place.internet_charge_type.as_deref(),
            Some("PayByBandwidth")
        );
        assert_eq!(p.in_place.bandwidth_out, Some(20));
        assert_eq!(p.in_place.http_tokens.as_deref(), Some("required"));
        assert_eq!(p.in_place.http_endpoint, None, "already enabled");
        assert_eq!(p.in_place.http_put_response_hop_limit, Some(3));
        assert_eq!(
            p.in_place.ram_role,
            Some((Some("old-role".to_owned()), "web-role".to_owned()))
        );
        assert_eq!(p.in_place.resource_group_id.as_deref(), Some("rg-b"));
        assert!(p.in_place.has_network_spec() && p.in_place.has_metadata_options());
        for field in [
            "internetChargeType",
            "internetMaxBandwidthOut",
            "httpTokens",
            "httpPutResponseHopLimit",
            "ramRoleName",
            "resourceGroupId",
        ] {
            assert!(
                p.changes.iter().any(|c| c.starts_with(field)),
                "{field} in {:?}",
                p.changes
            );
        }
    }

    #[test]
    fn a_role_not_looked_up_is_not_compared_and_none_attached_is_attached() {
        let mut s = spec();
        s.ram_role_name = Some("web-role".into());
        let i = instance();
        let unknown = plan(
            &s,
            &Observed {
                instance: &i,
                ram_role: None,
                inputs: ChangedInputs::default(),
                disks: None,
                renewal: None,
            },
        );
        assert_eq!(unknown.in_place.ram_role, None);
        let none = plan(
            &s,
            &Observed {
                instance: &i,
                ram_role: Some(""),
                inputs: ChangedInputs::default(),
                disks: None,
                renewal: None,
            },
        );
        assert_eq!(none.in_place.ram_role, Some((None, "web-role".to_owned())));
    }

    #[test]
    fn a_spot_strategy_differing_in_the_cloud_is_reported_immutable() {
        let mut s = spec();
        s.spot_strategy = Some(ferroplane_apis::alibabacloud::SpotStrategy::SpotAsPriceGo);
        let mut i = instance();
        i.spot_strategy = "NoSpot".into();
        let p = plan(
            &s,
            &Observed {
                instance: &i,
                ram_role: None,
                inputs: ChangedInputs::default(),
                disks: None,
                renewal: None,
            },
        );
        assert_eq!(p.immutable.len(), 1, "{:?}", p.immutable);
        assert!(p.immutable[0].starts_with("spotStrategy"));
    }
}
