//! `spec.forProvider` vs the instance ECS reports → a [`Plan`]: the rows whose change is made in
//! place, the rows whose change needs the instance stopped, the power state, and immutable
//! fields that differ. Driven by [`FIELDS`]: every property classed in place or restart-bound is
//! compared by its diff, and a differing row is planned with the request it fills. Pure.

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::{DesiredStatus, ECSInstanceParameters};

use super::comparison::Observed;
use super::field_classes::{FIELDS, FieldClass};
pub use super::field_diffs::is_reserved_tag;
use super::requests::Planned;

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

/// Start or stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Power {
    Start,
    Stop,
}

/// Everything that differs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Rows changed on the running instance, in table order.
    pub in_place: Vec<Planned>,
    /// Rows changed while the instance is stopped, in table order.
    pub restart: Vec<Planned>,
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
            FieldClass::InPlace { request, diff } => {
                if let Some(d) = diff(spec, observed) {
                    plan.changes
                        .push(format!("{} ({})", d.line, request.action()));
                    plan.in_place.push(Planned {
                        path: field.path,
                        request,
                        change: d.change,
                        line: d.line,
                    });
                }
            }
            FieldClass::Restart { request, diff } => {
                if let Some(d) = diff(spec, observed) {
                    plan.restart_changes
                        .push(format!("{} ({})", d.line, request.action()));
                    plan.restart.push(Planned {
                        path: field.path,
                        request,
                        change: d.change,
                        line: d.line,
                    });
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
    use super::super::comparison::{Change, Wanted};
    use super::super::requests::{Shared, batch, own};
    use super::*;
    use alibaba_sdk::ecs::{
        MetadataOptions, ModifyInstanceAttributeRequest, ModifyInstanceSpecRequest,
        NetworkSpecChange, SecurityGroupIdList, Tag, TagList, VpcAttributes,
    };
    use ferroplane_runtime::UID_TAG;
    use std::collections::BTreeMap;

    /// The shared request the planned rows fill from `base`, as the apply step builds it.
    pub(super) fn filled<R: Shared>(
        rows: &[Planned],
        base: R,
        s: &ECSInstanceParameters,
        i: &Instance,
    ) -> Option<R> {
        let observed = Observed {
            instance: i,
            ram_role: None,
            inputs: ChangedInputs::default(),
            disks: None,
            renewal: None,
        };
        let wanted = Wanted {
            spec: s,
            observed: &observed,
            password: None,
        };
        batch(rows, base, &wanted)
    }

    fn tags(rows: &[Planned]) -> (Vec<Tag>, Vec<String>) {
        own(rows, |c| match c {
            Change::Tags { set, remove } => Some((set.clone(), remove.clone())),
            _ => None,
        })
        .unwrap_or_default()
    }

    fn vpc_attribute(rows: &[Planned]) -> Option<(String, Option<String>)> {
        own(rows, |c| match c {
            Change::VpcAttribute {
                vswitch_id,
                private_ip,
            } => Some((vswitch_id.clone(), private_ip.clone())),
            _ => None,
        })
    }

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
        let attribute = filled(
            &p.in_place,
            ModifyInstanceAttributeRequest::default(),
            &s,
            &observed(),
        )
        .unwrap();
        let network = filled(&p.in_place, NetworkSpecChange::default(), &s, &observed()).unwrap();
        let (tags_to_set, tags_to_remove) = tags(&p.in_place);
        assert_eq!(attribute.instance_name.as_deref(), Some("api"));
        assert_eq!(attribute.security_group_ids.as_ref().map(Vec::len), Some(2));
        assert_eq!(attribute.deletion_protection, Some(true));
        assert_eq!(network.internet_max_bandwidth_out, Some(10));
        assert_eq!(
            tags_to_set,
            vec![Tag::new("env", "prod"), Tag::new("team", "a")]
        );
        assert_eq!(tags_to_remove, vec!["old".to_owned()]);
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
            tags(&p.in_place).1,
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
        let spec_change = filled(
            &p.restart,
            ModifyInstanceSpecRequest::default(),
            &s,
            &observed(),
        )
        .unwrap();
        assert_eq!(spec_change.instance_type.as_deref(), Some("ecs.g6.xlarge"));
        assert!(p.restart.iter().any(|r| r.path == "passwordSecretRef"));
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
            vpc_attribute(&p.restart),
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
        assert_eq!(
            own(&p.restart, |c| match c {
                Change::ImageId(image) => Some(image.as_str()),
                _ => None,
            }),
            Some("img-2")
        );
        assert_eq!(vpc_attribute(&p.restart), Some(("vsw-b".to_owned(), None)));
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
    use super::tests::filled;
    use super::*;
    use crate::ecs_instance::applied_inputs::ChangedInputs;
    use crate::ecs_instance::comparison::Change;
    use crate::ecs_instance::requests::own;
    use alibaba_sdk::ecs::{MetadataOptions, MetadataOptionsChange, NetworkSpecChange};
    use ferroplane_apis::alibabacloud::{HttpEndpoint, HttpTokens, InternetChargeType};

    fn ram_role(rows: &[Planned]) -> Option<(Option<String>, String)> {
        own(rows, |c| match c {
            Change::RamRoleName { from, to } => Some((from.clone(), to.clone())),
            _ => None,
        })
    }

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
        let network = filled(&p.in_place, NetworkSpecChange::default(), &s, &i);
        let metadata = filled(
            &p.in_place,
            MetadataOptionsChange {
                http_endpoint: "enabled".to_owned(),
                http_tokens: None,
                http_put_response_hop_limit: None,
            },
            &s,
            &i,
        );
        assert!(network.is_some() && metadata.is_some());
        let (network, metadata) = (network.unwrap(), metadata.unwrap());
        assert_eq!(
            network.network_charge_type.as_deref(),
            Some("PayByBandwidth")
        );
        assert_eq!(network.internet_max_bandwidth_out, Some(20));
        assert_eq!(metadata.http_tokens.as_deref(), Some("required"));
        assert!(
            !p.in_place.iter().any(|r| r.path == "httpEndpoint"),
            "already enabled"
        );
        assert_eq!(metadata.http_put_response_hop_limit, Some(3));
        assert_eq!(
            ram_role(&p.in_place),
            Some((Some("old-role".to_owned()), "web-role".to_owned()))
        );
        assert_eq!(
            own(&p.in_place, |c| match c {
                Change::ResourceGroupId(group) => Some(group.as_str()),
                _ => None,
            }),
            Some("rg-b")
        );

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
        assert_eq!(ram_role(&unknown.in_place), None);
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
        assert_eq!(
            ram_role(&none.in_place),
            Some((None, "web-role".to_owned()))
        );
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
