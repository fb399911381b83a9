//! The class of every `spec.forProvider` property, in one table: how a change to it reaches the
//! instance. [`FIELDS`] drives [`super::diff::plan`], so a property classed in place or
//! restart-bound is compared on every observe and applied when it differs; a test reads the
//! generated CRD and fails for any property without a class, and another checks the README's
//! table against this one.

use super::field_diffs::{self as d, DiffFn};

/// How a change to a property reaches the instance.
#[derive(Clone, Copy, Debug)]
pub enum FieldClass {
    /// Applied to the running instance by `action`, compared by `diff` on every observe (drift
    /// made outside ferroplane is reverted the same way).
    InPlace { action: &'static str, diff: DiffFn },
    /// Applied while the instance is stopped, by `action`: only with `allowRestart: true` (or
    /// when it is stopped anyway); otherwise Synced says it waits (`RestartPending`).
    Restart { action: &'static str, diff: DiffFn },
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

#[cfg(test)]
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

    /// The ECS action (or what the field does) for the README table.
    pub fn action(&self) -> &'static str {
        match self {
            Self::InPlace { action, .. } | Self::Restart { action, .. } => action,
            Self::Immutable { .. } => "RunInstances only",
            Self::Management { what } => what,
        }
    }
}

/// One property of `spec.forProvider` (nested ones as `systemDisk.size`).
#[derive(Clone, Copy, Debug)]
pub struct Field {
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the class and README tests")
    )]
    pub path: &'static str,
    pub class: FieldClass,
}

const fn in_place(path: &'static str, action: &'static str, diff: DiffFn) -> Field {
    Field {
        path,
        class: FieldClass::InPlace { action, diff },
    }
}

const fn restart(path: &'static str, action: &'static str, diff: DiffFn) -> Field {
    Field {
        path,
        class: FieldClass::Restart { action, diff },
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

const ATTRIBUTE: &str = "ModifyInstanceAttribute";
const NETWORK_SPEC: &str = "ModifyInstanceNetworkSpec";
const METADATA: &str = "ModifyInstanceMetadataOptions";
const AUTO_RENEW: &str = "ModifyInstanceAutoRenewAttribute";
const VPC_ATTRIBUTE: &str = "ModifyInstanceVpcAttribute";

/// Every property of `spec.forProvider` and its class.
pub const FIELDS: &[Field] = &[
    immutable("regionId", Some(d::region_id)),
    immutable("zoneId", Some(d::zone_id)),
    restart("imageId", "ReplaceSystemDisk", d::image_id),
    restart("instanceType", "ModifyInstanceSpec", d::instance_type),
    in_place("instanceName", ATTRIBUTE, d::instance_name),
    in_place("description", ATTRIBUTE, d::description),
    restart("hostName", ATTRIBUTE, d::host_name),
    restart("vSwitchId", VPC_ATTRIBUTE, d::v_switch_id),
    management("vSwitchIdRef", "resolved once into vSwitchId"),
    management("vSwitchIdSelector", "resolved once into vSwitchId"),
    restart("privateIpAddress", VPC_ATTRIBUTE, d::private_ip_address),
    in_place(
        "ipv6AddressCount",
        "AssignIpv6Addresses / UnassignIpv6Addresses",
        d::ipv6_address_count,
    ),
    in_place("securityGroupIds", ATTRIBUTE, d::security_group_ids),
    management("securityGroupIdRefs", "resolved into securityGroupIds"),
    management("securityGroupIdSelector", "resolved into securityGroupIds"),
    in_place(
        "internetMaxBandwidthOut",
        NETWORK_SPEC,
        d::internet_max_bandwidth_out,
    ),
    in_place("internetChargeType", NETWORK_SPEC, d::internet_charge_type),
    in_place(
        "instanceChargeType",
        "ModifyInstanceChargeType",
        d::instance_charge_type,
    ),
    immutable("period", None),
    immutable("periodUnit", None),
    in_place("autoRenew", AUTO_RENEW, d::auto_renew),
    in_place("autoRenewPeriod", AUTO_RENEW, d::auto_renew_period),
    management("stoppedMode", "StopInstance StoppedMode of the next stop"),
    immutable("spotStrategy", Some(d::spot_strategy)),
    immutable("spotPriceLimit", None),
    immutable("spotDuration", None),
    immutable("spotInterruptionBehavior", None),
    immutable("securityEnhancementStrategy", None),
    in_place(
        "ramRoleName",
        "DetachInstanceRamRole + AttachInstanceRamRole",
        d::ram_role_name,
    ),
    in_place("httpTokens", METADATA, d::http_tokens),
    in_place("httpEndpoint", METADATA, d::http_endpoint),
    in_place(
        "httpPutResponseHopLimit",
        METADATA,
        d::http_put_response_hop_limit,
    ),
    in_place("resourceGroupId", "JoinResourceGroup", d::resource_group_id),
    in_place("creditSpecification", ATTRIBUTE, d::credit_specification),
    in_place(
        "deploymentSetId",
        "ModifyInstanceDeployment",
        d::deployment_set_id,
    ),
    immutable("systemDisk.category", None),
    in_place(
        "systemDisk.size",
        "ResizeDisk (online)",
        d::system_disk_size,
    ),
    in_place(
        "systemDisk.performanceLevel",
        "ModifyDiskSpec",
        d::system_disk_performance_level,
    ),
    immutable("dataDisks", None),
    in_place(
        "keyPairName",
        "DetachKeyPair + AttachKeyPair (effective at the next start)",
        d::key_pair_name,
    ),
    management("keyPairNameRef", "resolved once into keyPairName"),
    management("keyPairNameSelector", "resolved once into keyPairName"),
    restart("passwordSecretRef", ATTRIBUTE, d::password),
    restart("userData", ATTRIBUTE, d::user_data),
    in_place("tags", "TagResources + UntagResources", d::tags),
    in_place("deletionProtection", ATTRIBUTE, d::deletion_protection),
    management("desiredStatus", "StartInstance / StopInstance"),
    management(
        "allowRestart",
        "lets ferroplane stop and start the instance",
    ),
];

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
