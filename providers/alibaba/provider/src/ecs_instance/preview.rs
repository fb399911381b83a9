//! What the next reconcile of an ECSInstance would do to the instance ECS reports, for
//! `ferroplane plan`: the same [`diff::plan`] the observe step runs, over the same mapping of
//! the instance, turned into changes a person (or CI) reads. Pure.
//!
//! Given the observe step's extra reads ([`extra_reads`](super::extra_reads): `ramRoleName`,
//! `systemDisk`/`dataDisks`, `autoRenew*`), it compares what the observe step compares; without
//! them, what `DescribeInstances` reports. The inputs ECS never reports back (password, user
//! data) are compared by the controller against digests it keeps in memory, and not here.

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::ECSInstanceParameters;

use super::applied_inputs::ChangedInputs;
use super::comparison::Change;
use super::comparison::Observed;
use super::diff::{self, Power, status};
use super::extra_reads::ExtraReads;
use super::requests::Planned;

/// The property whose change replaces the system disk.
const IMAGE_ID: &str = "imageId";

/// How one change reaches the instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeClass {
    /// On the running instance.
    InPlace,
    /// While the instance is stopped (a stop and a start when it runs).
    Restart,
    /// While stopped, and what is on the system disk is lost.
    Replace,
    /// Only a new instance can take it: ferroplane refuses it.
    Immutable,
}

/// One change of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedChange {
    /// The `spec.forProvider` property (`status` for the power state).
    pub field: String,
    pub class: ChangeClass,
    /// What differs, old → new (no secret values).
    pub description: String,
    /// The ECS action that applies it, as the field table names it; empty for an immutable
    /// field.
    pub action: &'static str,
    /// The calls the update step sends for it, in order (`action` can name two, of which this
    /// change needs one, e.g. `AssignIpv6Addresses / UnassignIpv6Addresses`).
    pub calls: Vec<&'static str>,
}

/// The plan of one ECSInstance against the instance ECS reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstancePreview {
    /// In the order the field table plans them; the power state last.
    pub changes: Vec<PlannedChange>,
    /// Whether restart-bound changes would be applied: `allowRestart: true`, or the instance
    /// is stopped anyway (what the observe step's verdict decides).
    pub restart_permitted: bool,
    /// The instance is starting or stopping: the controller compares nothing until it settles.
    pub in_transition: bool,
}

impl InstancePreview {
    /// Whether a change of `class` is planned.
    pub fn has(&self, class: ChangeClass) -> bool {
        self.changes.iter().any(|c| c.class == class)
    }
}

fn planned(row: &Planned, class: ChangeClass) -> PlannedChange {
    PlannedChange {
        field: row.path.to_owned(),
        class,
        description: row.line.clone(),
        action: row.request.action(),
        calls: calls_of(row),
    }
}

/// The calls `external/apply.rs` sends for `row`.
fn calls_of(row: &Planned) -> Vec<&'static str> {
    fn each(calls: &[(bool, &'static str)]) -> Vec<&'static str> {
        calls
            .iter()
            .filter(|(sent, _)| *sent)
            .map(|(_, call)| *call)
            .collect()
    }
    match &row.change {
        Change::Ipv6Addresses {
            assign, release, ..
        } => each(&[
            (*assign > 0, "AssignIpv6Addresses"),
            (!release.is_empty(), "UnassignIpv6Addresses"),
        ]),
        Change::Tags { set, remove } => each(&[
            (!set.is_empty(), "TagResources"),
            (!remove.is_empty(), "UntagResources"),
        ]),
        Change::RamRoleName { from, .. } => each(&[
            (from.is_some(), "DetachInstanceRamRole"),
            (true, "AttachInstanceRamRole"),
        ]),
        Change::KeyPairName { from, .. } => {
            each(&[(from.is_some(), "DetachKeyPair"), (true, "AttachKeyPair")])
        }
        Change::SystemDiskSize { .. } => vec!["ResizeDisk"],
        _ => vec![row.request.action()],
    }
}

/// What the next reconcile of `spec` would do to `observed`, from `DescribeInstances` alone.
pub fn preview(spec: &ECSInstanceParameters, observed: &Instance) -> InstancePreview {
    preview_with(spec, observed, &ExtraReads::default())
}

/// [`preview`] with what the extra reads found: the rows they compare are planned too.
pub fn preview_with(
    spec: &ECSInstanceParameters,
    observed: &Instance,
    extra: &ExtraReads,
) -> InstancePreview {
    let plan = diff::plan(
        spec,
        &Observed {
            instance: observed,
            ram_role: extra.ram_role.as_deref(),
            inputs: ChangedInputs::default(),
            disks: extra.disks.as_deref(),
            renewal: extra.renewal.as_ref(),
        },
    );
    InstancePreview {
        changes: changes_of(&plan, &observed.status),
        restart_permitted: spec.allow_restart.unwrap_or(false)
            || observed.status == status::STOPPED,
        in_transition: status::in_transition(&observed.status),
    }
}

/// The changes of `plan` for an instance in `observed_status`, in the order the field table
/// plans them; the power state last.
pub fn changes_of(plan: &diff::Plan, observed_status: &str) -> Vec<PlannedChange> {
    let mut changes: Vec<PlannedChange> = plan
        .in_place
        .iter()
        .map(|row| planned(row, ChangeClass::InPlace))
        .collect();
    changes.extend(plan.restart.iter().map(|row| {
        let class = if row.path == IMAGE_ID {
            ChangeClass::Replace
        } else {
            ChangeClass::Restart
        };
        planned(row, class)
    }));
    changes.extend(plan.immutable.iter().map(|line| {
        PlannedChange {
            field: line
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned(),
            class: ChangeClass::Immutable,
            description: line.clone(),
            action: "",
            calls: Vec::new(),
        }
    }));
    if let Some(power) = plan.power {
        let (to, action) = match power {
            Power::Start => (status::RUNNING, "StartInstance"),
            Power::Stop => (status::STOPPED, "StopInstance"),
        };
        changes.push(PlannedChange {
            field: "status".to_owned(),
            class: ChangeClass::InPlace,
            description: format!("status: {observed_status} → {to}"),
            action,
            calls: vec![action],
        });
    }
    changes
}

/// Why `spec` cannot be launched as it is (what a create would refuse before any call).
pub fn launch_refusal(spec: &ECSInstanceParameters) -> Option<String> {
    super::spec_mapping::launch_refusal(spec)
}

#[cfg(test)]
mod tests {
    use alibaba_sdk::ecs::{NetworkInterface, SecurityGroupIdList, Tag, TagList};
    use serde_json::{Value, json};

    use super::super::field_classes::{FIELDS, FieldClass};
    use super::super::import_spec::imported_parameters;
    use super::*;

    /// Rows whose comparison needs a read `DescribeInstances` does not make (or an input ECS
    /// never reports back): the plan does not compare them (module doc).
    const NOT_COMPARED: &[&str] = &[
        "ramRoleName",
        "systemDisk.size",
        "systemDisk.performanceLevel",
        "autoRenew",
        "autoRenewPeriod",
        "passwordSecretRef",
        "userData",
    ];

    /// For every row the plan compares: a value that differs from [`instance`].
    fn edits() -> Vec<(&'static str, Value)> {
        vec![
            ("regionId", json!("cn-shanghai")),
            ("zoneId", json!("cn-beijing-k")),
            ("imageId", json!("aliyun_3_x64_20G_alibase_20240101.vhd")),
            ("instanceType", json!("ecs.g7.xlarge")),
            ("instanceName", json!("renamed")),
            ("description", json!("a new description")),
            ("hostName", json!("new-host")),
            ("vSwitchId", json!("vsw-b")),
            ("privateIpAddress", json!("10.1.0.99")),
            ("ipv6AddressCount", json!(1)),
            ("securityGroupIds", json!(["sg-b"])),
            ("internetMaxBandwidthOut", json!(10)),
            ("internetChargeType", json!("PayByBandwidth")),
            ("instanceChargeType", json!("PrePaid")),
            ("spotStrategy", json!("SpotAsPriceGo")),
            ("httpTokens", json!("required")),
            ("httpEndpoint", json!("disabled")),
            ("httpPutResponseHopLimit", json!(3)),
            ("resourceGroupId", json!("rg-b")),
            ("creditSpecification", json!("Unlimited")),
            ("deploymentSetId", json!("ds-b")),
            ("keyPairName", json!("other-key")),
            ("tags", json!({"env": "staging"})),
            ("deletionProtection", json!(true)),
        ]
    }

    fn instance() -> Instance {
        let mut i = Instance {
            instance_id: "i-1".into(),
            instance_name: "web-1".into(),
            host_name: "web-1".into(),
            status: status::RUNNING.into(),
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
                items: vec![Tag::new("env", "prod")],
            },
            ..Instance::default()
        };
        i.vpc_attributes.vswitch_id = "vsw-a".into();
        i.vpc_attributes.private_ip_address.items = vec!["10.1.0.5".into()];
        i.network_interfaces.items = vec![NetworkInterface {
            network_interface_id: "eni-1".into(),
            interface_type: "Primary".into(),
            primary_ip_address: "10.1.0.5".into(),
            ..NetworkInterface::default()
        }];
        i.credit_specification = "Standard".into();
        i
    }

    /// The imported spec of `observed` with `path` set to `value`.
    fn edited(observed: &Instance, path: &str, value: &Value) -> ECSInstanceParameters {
        let mut spec = serde_json::to_value(imported_parameters(observed)).unwrap();
        spec[path] = value.clone();
        serde_json::from_value(spec).unwrap()
    }

    fn expected(class: &FieldClass) -> Option<(ChangeClass, &'static str)> {
        match class {
            FieldClass::InPlace { request, .. } => Some((ChangeClass::InPlace, request.action())),
            FieldClass::Restart { request, .. } => Some((ChangeClass::Restart, request.action())),
            FieldClass::Immutable { check: Some(_) } => Some((ChangeClass::Immutable, "")),
            FieldClass::Immutable { check: None } | FieldClass::Management { .. } => None,
        }
    }

    #[test]
    fn an_instance_as_imported_plans_nothing() {
        let observed = instance();
        let planned = preview(&imported_parameters(&observed), &observed);
        assert_eq!(planned.changes, vec![]);
        assert!(!planned.restart_permitted && !planned.in_transition);
    }

    #[test]
    fn every_compared_row_is_planned_in_its_class_with_its_action() {
        let observed = instance();
        let edits = edits();
        for field in FIELDS {
            let Some((mut class, action)) = expected(&field.class) else {
                continue;
            };
            if NOT_COMPARED.contains(&field.path) {
                continue;
            }
            let (_, value) = edits
                .iter()
                .find(|(path, _)| *path == field.path)
                .unwrap_or_else(|| panic!("no edit for the compared row {}", field.path));
            if field.path == IMAGE_ID {
                class = ChangeClass::Replace;
            }
            let planned = preview(&edited(&observed, field.path, value), &observed);
            let fields: Vec<&str> = planned.changes.iter().map(|c| c.field.as_str()).collect();
            assert_eq!(
                fields,
                [field.path],
                "{}: {:?}",
                field.path,
                planned.changes
            );
            let change = &planned.changes[0];
            assert_eq!(change.class, class, "{}", field.path);
            assert_eq!(change.action, action, "{}", field.path);
            assert!(!change.description.is_empty());
        }
    }

    #[test]
    fn restarts_are_permitted_by_allow_restart_or_a_stopped_instance() {
        let mut observed = instance();
        let mut spec = edited(&observed, "instanceType", &json!("ecs.g7.xlarge"));
        assert!(!preview(&spec, &observed).restart_permitted);
        spec.allow_restart = Some(true);
        assert!(preview(&spec, &observed).restart_permitted);
        spec.allow_restart = None;
        observed.status = status::STOPPED.into();
        spec.desired_status = Some(ferroplane_apis::alibabacloud::DesiredStatus::Stopped);
        assert!(preview(&spec, &observed).restart_permitted);
    }

    #[test]
    fn the_power_state_is_a_start_or_a_stop() {
        let mut observed = instance();
        let mut spec = imported_parameters(&observed);
        spec.desired_status = Some(ferroplane_apis::alibabacloud::DesiredStatus::Stopped);
        let stop = preview(&spec, &observed).changes;
        assert_eq!(stop.len(), 1);
        assert_eq!(
            (stop[0].field.as_str(), stop[0].action),
            ("status", "StopInstance")
        );
        observed.status = status::STOPPED.into();
        spec.desired_status = None;
        let start = preview(&spec, &observed).changes;
        assert_eq!(start[0].action, "StartInstance");
        assert_eq!(start[0].description, "status: Stopped → Running");
    }
}
