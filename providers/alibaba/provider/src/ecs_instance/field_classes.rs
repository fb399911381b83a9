//! The class of every `spec.forProvider` property, in one table: how a change to it reaches the
//! instance. [`FIELDS`] drives [`super::diff::plan`] and the apply step: a property classed in
//! place or restart-bound is compared by its `diff` on every observe, and when it differs its
//! row's [`Request`] says what is sent (a fill writing its parameter into the request it shares
//! with the other rows of that ECS action, or calls of its own that `external/apply` makes from
//! the row's change, in the order ECS needs them). A test reads the generated CRD
//! and fails for any property without a class, and another checks the README's table against
//! this one. One table (with its fills), hence one file.
//!
//! A new in-place property of an action already here is one row: its diff (`d::compare` for a
//! plain value) and its fill.

use alibaba_sdk::ecs::AutoRenewChange;
use ferroplane_apis::alibabacloud::PeriodUnit;

use super::comparison::{DiffFn, Wanted};
use super::field_diffs as d;
use super::requests::Request::{
    self, Attribute, AutoRenew, InstanceSpec, MetadataOptions, NetworkSpec, Own,
};
use super::spec_mapping::encode_user_data;
use super::wire_names;

/// How a change to a property reaches the instance.
#[derive(Clone, Copy, Debug)]
pub enum FieldClass {
    /// Applied to the running instance by `request`, compared by `diff` on every observe (drift
    /// made outside ferroplane is reverted the same way).
    InPlace { request: Request, diff: DiffFn },
    /// Applied while the instance is stopped, by `request`: only with `allowRestart: true` (or
    /// when it is stopped anyway); otherwise Synced says it waits (`RestartPending`).
    Restart { request: Request, diff: DiffFn },
    /// Refused at admission by a CEL rule (`oldSelf`) whose message says what to do instead;
    /// `check`, when set, reports the cloud differing from the spec (e.g. after an import).
    Immutable { check: Option<DiffFn> },
    /// Tells ferroplane how to manage the instance (references, power state, restarts); `what`
    /// says how it is used.
    Management {
        #[cfg_attr(not(test), expect(dead_code, reason = "read by the README table test"))]
        what: &'static str,
    },
}

impl FieldClass {
    /// The class name of the README table.
    pub fn name(&self) -> &'static str {
        match self {
            Self::InPlace { .. } => "in place",
            Self::Restart { .. } => "restart",
            Self::Immutable { .. } => "immutable",
            Self::Management { .. } => "management",
        }
    }
}

#[cfg(test)]
impl FieldClass {
    /// The ECS action (or what the field does) for the README table.
    pub fn action(&self) -> &'static str {
        match self {
            Self::InPlace { request, .. } | Self::Restart { request, .. } => request.action(),
            Self::Immutable { .. } => "RunInstances only",
            Self::Management { what } => what,
        }
    }
}

/// One property of `spec.forProvider` (nested ones as `systemDisk.size`).
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub path: &'static str,
    pub class: FieldClass,
}

const fn in_place(path: &'static str, request: Request, diff: DiffFn) -> Field {
    Field {
        path,
        class: FieldClass::InPlace { request, diff },
    }
}

const fn restart(path: &'static str, request: Request, diff: DiffFn) -> Field {
    Field {
        path,
        class: FieldClass::Restart { request, diff },
    }
}

const fn immutable(path: &'static str, check: Option<DiffFn>) -> Field {
    Field {
        path,
        class: FieldClass::Immutable { check },
    }
}

const fn management(path: &'static str, what: &'static str) -> Field {
    Field {
        path,
        class: FieldClass::Management { what },
    }
}

/// `u32` of a non-negative spec number.
fn count(n: Option<i32>) -> Option<u32> {
    n.and_then(|n| u32::try_from(n).ok())
}

/// Both renewal properties send the whole renewal the spec asks for (an unset `autoRenew`
/// keeps what ECS has).
fn renewal(r: &mut AutoRenewChange, w: &Wanted<'_>) {
    let Some(have) = w.observed.renewal else {
        return;
    };
    let duration = count(w.spec.auto_renew_period);
    *r = AutoRenewChange {
        auto_renew: w.spec.auto_renew.unwrap_or(have.auto_renew_enabled),
        duration,
        period_unit: duration.map(|_| {
            wire_names::period_unit(w.spec.period_unit.unwrap_or(PeriodUnit::Month)).to_owned()
        }),
    };
}

/// Every property of `spec.forProvider` and its class.
pub const FIELDS: &[Field] = &[
    immutable("regionId", Some(d::region_id)),
    immutable("zoneId", Some(d::zone_id)),
    restart("imageId", Own("ReplaceSystemDisk"), d::image_id),
    restart(
        "instanceType",
        InstanceSpec(|r, w| r.instance_type = Some(w.spec.instance_type.clone())),
        d::instance_type,
    ),
    in_place(
        "instanceName",
        Attribute(|r, w| r.instance_name.clone_from(&w.spec.instance_name)),
        d::instance_name,
    ),
    in_place(
        "description",
        Attribute(|r, w| r.description.clone_from(&w.spec.description)),
        d::description,
    ),
    restart(
        "hostName",
        Attribute(|r, w| r.host_name.clone_from(&w.spec.host_name)),
        d::host_name,
    ),
    restart("vSwitchId", Own(VPC_ATTRIBUTE), d::v_switch_id),
    management("vSwitchIdRef", "resolved once into vSwitchId"),
    management("vSwitchIdSelector", "resolved once into vSwitchId"),
    restart(
        "privateIpAddress",
        Own(VPC_ATTRIBUTE),
        d::private_ip_address,
    ),
    in_place(
        "ipv6AddressCount",
        Own("AssignIpv6Addresses / UnassignIpv6Addresses"),
        d::ipv6_address_count,
    ),
    in_place(
        "securityGroupIds",
        Attribute(|r, w| r.security_group_ids.clone_from(&w.spec.security_group_ids)),
        d::security_group_ids,
    ),
    management("securityGroupIdRefs", "resolved into securityGroupIds"),
    management("securityGroupIdSelector", "resolved into securityGroupIds"),
    in_place(
        "internetMaxBandwidthOut",
        NetworkSpec(|r, w| {
            let mbps = count(w.spec.internet_max_bandwidth_out);
            r.internet_max_bandwidth_out = mbps;
            // A pay-as-you-go instance rising from 0 Mbit/s gets a public IP only when asked.
            r.allocate_public_ip =
                mbps.is_some_and(|b| b > 0) && w.observed.instance.public_ip().is_none();
        }),
        |s, o| {
            let have = o.instance.internet_max_bandwidth_out;
            d::compare(
                "internetMaxBandwidthOut",
                count(s.internet_max_bandwidth_out),
                have,
            )
        },
    ),
    in_place(
        "internetChargeType",
        NetworkSpec(|r, w| {
            r.network_charge_type = w
                .spec
                .internet_charge_type
                .map(|v| wire_names::internet_charge_type(v).to_owned());
        }),
        d::internet_charge_type,
    ),
    in_place(
        "instanceChargeType",
        Own("ModifyInstanceChargeType"),
        d::instance_charge_type,
    ),
    immutable("period", None),
    immutable("periodUnit", None),
    in_place("autoRenew", AutoRenew(renewal), d::auto_renew),
    in_place("autoRenewPeriod", AutoRenew(renewal), d::auto_renew_period),
    management("stoppedMode", "StopInstance StoppedMode of the next stop"),
    immutable("spotStrategy", Some(d::spot_strategy)),
    immutable("spotPriceLimit", None),
    immutable("spotDuration", None),
    immutable("spotInterruptionBehavior", None),
    immutable("securityEnhancementStrategy", None),
    in_place(
        "ramRoleName",
        Own("DetachInstanceRamRole + AttachInstanceRamRole"),
        d::ram_role_name,
    ),
    in_place(
        "httpTokens",
        MetadataOptions(|r, w| {
            r.http_tokens = w
                .spec
                .http_tokens
                .map(|v| wire_names::http_tokens(v).to_owned());
        }),
        d::http_tokens,
    ),
    in_place(
        "httpEndpoint",
        MetadataOptions(|r, w| {
            if let Some(v) = w.spec.http_endpoint {
                wire_names::http_endpoint(v).clone_into(&mut r.http_endpoint);
            }
        }),
        d::http_endpoint,
    ),
    in_place(
        "httpPutResponseHopLimit",
        MetadataOptions(|r, w| {
            r.http_put_response_hop_limit = count(w.spec.http_put_response_hop_limit);
        }),
        |s, o| {
            let have = o.instance.metadata_options.http_put_response_hop_limit;
            d::compare(
                "httpPutResponseHopLimit",
                count(s.http_put_response_hop_limit),
                have,
            )
        },
    ),
    in_place(
        "resourceGroupId",
        Own("JoinResourceGroup"),
        d::resource_group_id,
    ),
    in_place(
        "creditSpecification",
        Attribute(|r, w| {
            r.credit_specification = w
                .spec
                .credit_specification
                .map(|v| wire_names::credit_specification(v).to_owned());
        }),
        d::credit_specification,
    ),
    in_place(
        "deploymentSetId",
        Own("ModifyInstanceDeployment"),
        d::deployment_set_id,
    ),
    immutable("systemDisk.category", None),
    in_place(
        "systemDisk.size",
        Own("ResizeDisk (online)"),
        d::system_disk_size,
    ),
    in_place(
        "systemDisk.performanceLevel",
        Own("ModifyDiskSpec"),
        d::system_disk_performance_level,
    ),
    immutable("dataDisks", None),
    in_place(
        "keyPairName",
        Own("DetachKeyPair + AttachKeyPair (effective at the next start)"),
        d::key_pair_name,
    ),
    management("keyPairNameRef", "resolved once into keyPairName"),
    management("keyPairNameSelector", "resolved once into keyPairName"),
    restart(
        "passwordSecretRef",
        Attribute(|r, w| r.password = w.password.cloned()),
        d::password,
    ),
    restart(
        "userData",
        Attribute(|r, w| r.user_data = w.spec.user_data.as_deref().map(encode_user_data)),
        d::user_data,
    ),
    in_place("tags", Own("TagResources + UntagResources"), d::tags),
    in_place(
        "deletionProtection",
        Attribute(|r, w| r.deletion_protection = w.spec.deletion_protection),
        |s, o| {
            let have = o.instance.deletion_protection;
            d::compare("deletionProtection", s.deletion_protection, have)
        },
    ),
    management("desiredStatus", "StartInstance / StopInstance"),
    management(
        "allowRestart",
        "lets ferroplane stop and start the instance",
    ),
];

const VPC_ATTRIBUTE: &str = "ModifyInstanceVpcAttribute";

/// The class of `path`, if it has one.
#[cfg(test)]
pub fn class_of(path: &str) -> Option<FieldClass> {
    FIELDS.iter().find(|f| f.path == path).map(|f| f.class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::alibabacloud::ECSInstance;
    use kube::CustomResourceExt;
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn for_provider_schema() -> Value {
        let crd = serde_json::to_value(ECSInstance::crd()).expect("CRD serializes");
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["forProvider"]
            .clone()
    }

    /// Property paths under forProvider: objects with properties are walked (`systemDisk.size`),
    /// everything else (scalars, lists, maps, references) is one property.
    fn leaf_paths(schema: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
        let Some(props) = schema["properties"].as_object() else {
            return;
        };
        for (name, sub) in props {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let nested = sub["properties"].is_object()
                && !path.ends_with("Ref")
                && !path.ends_with("Selector");
            if nested {
                leaf_paths(sub, &path, out);
            } else {
                out.push((path, sub.clone()));
            }
        }
    }

    fn crd_properties() -> Vec<(String, Value)> {
        let mut out = Vec::new();
        leaf_paths(&for_provider_schema(), "", &mut out);
        out
    }

    #[test]
    fn every_for_provider_property_has_a_class() {
        let props = crd_properties();
        assert!(props.len() > 30, "{} properties", props.len());
        let unclassed: Vec<&str> = props
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| class_of(p).is_none())
            .collect();
        assert!(
            unclassed.is_empty(),
            "forProvider properties without a class in FIELDS (a change to them would be silently ignored): {unclassed:?}"
        );
        let in_crd: BTreeSet<&str> = props.iter().map(|(p, _)| p.as_str()).collect();
        let stale: Vec<&str> = FIELDS
            .iter()
            .map(|f| f.path)
            .filter(|p| !in_crd.contains(p))
            .collect();
        assert!(
            stale.is_empty(),
            "FIELDS lists properties the CRD lacks: {stale:?}"
        );
        let mut seen = BTreeSet::new();
        for f in FIELDS {
            assert!(seen.insert(f.path), "{} is listed twice", f.path);
        }
    }

    #[test]
    fn every_immutable_property_is_refused_at_admission_with_a_message() {
        for (path, schema) in crd_properties() {
            if !matches!(class_of(&path), Some(FieldClass::Immutable { .. })) {
                continue;
            }
            let rules = schema["x-kubernetes-validations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let rule = rules.iter().find(|r| {
                r["rule"]
                    .as_str()
                    .is_some_and(|text| text.contains("oldSelf"))
            });
            let rule = rule.unwrap_or_else(|| {
                panic!("immutable {path} has no transition (oldSelf) CEL rule: {rules:?}")
            });
            let message = rule["message"].as_str().unwrap_or_default();
            let leaf = path.rsplit('.').next().unwrap_or(&path);
            assert!(
                message.contains(leaf),
                "the CEL message of {path} must name it: {message:?}"
            );
        }
    }

    /// Every rule text under forProvider (its own and its nested objects').
    fn all_rules(schema: &Value, out: &mut Vec<String>) {
        if let Some(rules) = schema["x-kubernetes-validations"].as_array() {
            out.extend(
                rules
                    .iter()
                    .filter_map(|r| r["rule"].as_str())
                    .map(str::to_owned),
            );
        }
        if let Some(props) = schema["properties"].as_object() {
            for sub in props.values() {
                all_rules(sub, out);
            }
        }
    }

    #[test]
    fn immutable_properties_cannot_be_added_or_removed_unnoticed() {
        // A transition rule on a property runs only when it exists before and after: adding or
        // removing it needs a rule on the parent, unless observe compares it with the cloud.
        let mut rules = Vec::new();
        all_rules(&for_provider_schema(), &mut rules);
        for f in FIELDS {
            let FieldClass::Immutable { check: None } = f.class else {
                continue;
            };
            let leaf = f.path.rsplit('.').next().unwrap_or(f.path);
            let needle = format!("has(oldSelf.{leaf})");
            assert!(
                rules.iter().any(|r| r.contains(&needle)),
                "immutable {} has no rule with {needle}: adding or removing it would be silently ignored",
                f.path
            );
        }
    }

    /// Rows `| `path` | class | action |` of the README's ECSInstance field table.
    fn readme_rows() -> Vec<(String, String, String)> {
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../README.md"),
        )
        .expect("README.md readable");
        let start = readme
            .find("<!-- ecsinstance-fields:start -->")
            .expect("README has the ECSInstance field table markers");
        let end = readme
            .find("<!-- ecsinstance-fields:end -->")
            .expect("README has the end marker");
        readme[start..end]
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let cells: Vec<String> = l
                    .trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_owned())
                    .collect();
                (
                    cells[0].trim_matches('`').to_owned(),
                    cells.get(1).cloned().unwrap_or_default(),
                    cells.get(2).cloned().unwrap_or_default(),
                )
            })
            .collect()
    }

    #[test]
    fn the_readme_table_lists_every_field_with_its_class() {
        let rows = readme_rows();
        let listed: Vec<&str> = rows.iter().map(|(p, _, _)| p.as_str()).collect();
        let expected: Vec<&str> = FIELDS.iter().map(|f| f.path).collect();
        assert_eq!(listed, expected, "README table rows, in FIELDS order");
        for ((path, class, action), field) in rows.iter().zip(FIELDS) {
            assert_eq!(class, field.class.name(), "class of {path}");
            assert_eq!(
                action.replace('`', ""),
                field.class.action(),
                "action of {path}"
            );
        }
    }
}
