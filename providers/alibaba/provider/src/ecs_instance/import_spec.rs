//! The `spec.forProvider` of an ECSInstance that describes an existing instance as it is, for
//! `ferroplane import` (and later `ferroplane plan`): the fields a create needs (region, image,
//! type), the power state the instance is in (an unset `desiredStatus` means `Running`, so a
//! stopped instance must say `Stopped` or its first reconcile would start it), and every field
//! late initialization fills, taken from [`late_init`]. What ECS does not report (the system
//! disk, user data, a password) stays unset, which the field table treats as not managed. Pure.

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::{DesiredStatus, ECSInstanceParameters};

use super::diff::status;
use super::late_init::late_init;

/// The parameters under which the first reconcile of an object naming `observed` plans no
/// change.
pub fn imported_parameters(observed: &Instance) -> ECSInstanceParameters {
    let mut spec = ECSInstanceParameters {
        region_id: observed.region_id.clone(),
        image_id: observed.image_id.clone(),
        instance_type: observed.instance_type.clone(),
        desired_status: match observed.status.as_str() {
            status::STOPPED | status::STOPPING => Some(DesiredStatus::Stopped),
            _ => Some(DesiredStatus::Running),
        },
        ..ECSInstanceParameters::default()
    };
    if let Some(filled) = late_init(&spec, observed) {
        spec.zone_id = filled.zone_id;
        spec.instance_name = filled.instance_name;
        spec.host_name = filled.host_name;
        spec.v_switch_id = filled.v_switch_id;
        spec.key_pair_name = filled.key_pair_name;
        spec.description = filled.description;
        spec.instance_charge_type = filled.instance_charge_type;
        spec.internet_charge_type = filled.internet_charge_type;
        spec.spot_strategy = filled.spot_strategy;
        spec.security_group_ids = filled.security_group_ids;
        spec.internet_max_bandwidth_out = filled.internet_max_bandwidth_out;
        spec.deletion_protection = filled.deletion_protection;
        spec.tags = filled.tags;
    }
    spec
}

#[cfg(test)]
mod tests {
    use alibaba_sdk::ecs::{SecurityGroupIdList, Tag, TagList};
    use ferroplane_runtime::UID_TAG;

    use super::super::applied_inputs::ChangedInputs;
    use super::super::comparison::Observed;
    use super::super::diff::plan;
    use super::*;

    fn instance(status: &str) -> Instance {
        let mut i = Instance {
            instance_id: "i-1".into(),
            instance_name: "web-1".into(),
            host_name: "web-1".into(),
            status: status.into(),
            instance_type: "ecs.g7.large".into(),
            image_id: "ubuntu_22_04_x64_20G_alibase_20240101.vhd".into(),
            region_id: "cn-beijing".into(),
            zone_id: "cn-beijing-h".into(),
            instance_charge_type: "PostPaid".into(),
            internet_charge_type: "PayByTraffic".into(),
            spot_strategy: "NoSpot".into(),
            security_group_ids: SecurityGroupIdList {
                items: vec!["sg-a".into()],
            },
            tags: TagList {
                items: vec![Tag::new("env", "prod"), Tag::new(UID_TAG, "u")],
            },
            ..Instance::default()
        };
        i.vpc_attributes.vswitch_id = "vsw-a".into();
        i
    }

    #[test]
    fn a_stopped_instance_stays_stopped_and_nothing_else_is_planned() {
        for state in [status::RUNNING, status::STOPPED] {
            let observed = instance(state);
            let spec = imported_parameters(&observed);
            let planned = plan(
                &spec,
                &Observed {
                    instance: &observed,
                    ram_role: None,
                    inputs: ChangedInputs::default(),
                    disks: None,
                    renewal: None,
                },
            );
            assert!(planned.changes.is_empty(), "{state}: {:?}", planned.changes);
            assert!(planned.restart_changes.is_empty());
            assert!(planned.immutable.is_empty());
        }
        let spec = imported_parameters(&instance(status::STOPPED));
        assert_eq!(spec.desired_status, Some(DesiredStatus::Stopped));
        assert_eq!(spec.v_switch_id.as_deref(), Some("vsw-a"));
        let tags = spec.tags.unwrap();
        assert_eq!(tags.get("env").map(String::as_str), Some("prod"));
        assert!(!tags.contains_key(UID_TAG), "the owner tag is never copied");
    }
}
