//! Late initialization: spec fields the user left unset, filled with what ECS chose (zone,
//! charge types, spot strategy, host name, name, vSwitch, security groups, bandwidth, deletion
//! protection, key pair, tags), so the spec documents the instance and later diffs are exact.
//! Pure; the framework applies the patch only to fields that are still unset.
//!
//! The system disk is not filled in: `DescribeInstances` does not report disks.

use std::collections::BTreeMap;

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::{
    ECSInstanceParameters, InstanceChargeType, InternetChargeType, SpotStrategy,
};
use serde::Serialize;

use super::diff::is_reserved_tag;

/// The `spec.forProvider` fields ECS fills when the user leaves them unset, with only the ones
/// to write set. Serializes like the matching fields of [`ECSInstanceParameters`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LateInitialized {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v_switch_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_pair_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_charge_type: Option<InstanceChargeType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internet_charge_type: Option<InternetChargeType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_strategy: Option<SpotStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security_group_ids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internet_max_bandwidth_out: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// `value` when the spec leaves the field unset and the value passes the schema's rule.
fn fill(unset: bool, value: &str, valid: fn(&str) -> bool) -> Option<String> {
    (unset && !value.is_empty() && valid(value)).then(|| value.to_owned())
}

// The CRD schema's rules for the filled fields: a value ECS reports but the schema would refuse
// is left out, or the whole late-init patch would be rejected on every reconcile.
fn lower_alnum(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

fn zone_like(s: &str) -> bool {
    (4..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && s.contains('-')
        && !s.ends_with('-')
}

fn v_switch_like(s: &str) -> bool {
    s.strip_prefix("vsw-").is_some_and(lower_alnum)
}

fn security_group_like(s: &str) -> bool {
    s.strip_prefix("sg-").is_some_and(lower_alnum)
}

fn name_like(s: &str) -> bool {
    (2..=128).contains(&s.chars().count())
        && !s.starts_with("http://")
        && !s.starts_with("https://")
}

fn host_like(s: &str) -> bool {
    (2..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && !s.starts_with(['.', '-'])
        && !s.ends_with(['.', '-'])
}

// Enums only with values the schema accepts, so the patch can never be refused.
fn instance_charge_type(observed: &str) -> Option<InstanceChargeType> {
    match observed {
        "PostPaid" => Some(InstanceChargeType::PostPaid),
        "PrePaid" => Some(InstanceChargeType::PrePaid),
        _ => None,
    }
}

fn internet_charge_type(observed: &str) -> Option<InternetChargeType> {
    match observed {
        "PayByTraffic" => Some(InternetChargeType::PayByTraffic),
        "PayByBandwidth" => Some(InternetChargeType::PayByBandwidth),
        _ => None,
    }
}

fn spot_strategy(observed: &str) -> Option<SpotStrategy> {
    match observed {
        "NoSpot" => Some(SpotStrategy::NoSpot),
        "SpotWithPriceLimit" => Some(SpotStrategy::SpotWithPriceLimit),
        "SpotAsPriceGo" => Some(SpotStrategy::SpotAsPriceGo),
        _ => None,
    }
}

/// The unset `forProvider` fields with what ECS reports, or `None` when there is nothing to fill.
pub fn late_init(spec: &ECSInstanceParameters, observed: &Instance) -> Option<LateInitialized> {
    let groups = &observed.security_group_ids.items;
    let filled = LateInitialized {
        zone_id: fill(spec.zone_id.is_none(), &observed.zone_id, zone_like),
        instance_name: fill(
            spec.instance_name.is_none(),
            &observed.instance_name,
            name_like,
        ),
        host_name: fill(spec.host_name.is_none(), &observed.host_name, host_like),
        v_switch_id: fill(
            spec.v_switch_id.is_none(),
            &observed.vpc_attributes.vswitch_id,
            v_switch_like,
        ),
        key_pair_name: fill(
            spec.key_pair_name.is_none(),
            &observed.key_pair_name,
            name_like,
        ),
        description: (spec.description.is_none()
            && (2..=256).contains(&observed.description.chars().count()))
        .then(|| observed.description.clone()),
        instance_charge_type: spec
            .instance_charge_type
            .is_none()
            .then(|| instance_charge_type(&observed.instance_charge_type))
            .flatten(),
        internet_charge_type: spec
            .internet_charge_type
            .is_none()
            .then(|| internet_charge_type(&observed.internet_charge_type))
            .flatten(),
        spot_strategy: spec
            .spot_strategy
            .is_none()
            .then(|| spot_strategy(&observed.spot_strategy))
            .flatten(),
        security_group_ids: (spec.security_group_ids.is_none()
            && (1..=16).contains(&groups.len())
            && groups.iter().all(|g| security_group_like(g)))
        .then(|| groups.clone()),
        internet_max_bandwidth_out: (spec.internet_max_bandwidth_out.is_none()
            && observed.internet_max_bandwidth_out <= 100)
            .then(|| i32::try_from(observed.internet_max_bandwidth_out).ok())
            .flatten(),
        deletion_protection: spec
            .deletion_protection
            .is_none()
            .then_some(observed.deletion_protection),
        tags: spec.tags.is_none().then(|| {
            observed
                .tags
                .items
                .iter()
                .filter(|t| !is_reserved_tag(&t.key))
                .map(|t| (t.key.clone(), t.value.clone()))
                .collect()
        }),
    };
    (filled != LateInitialized::default()).then_some(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::{Tag, TagList};
    use ferroplane_runtime::UID_TAG;
    use serde_json::{Value, json};

    /// The filled fields as the JSON that lands under `spec.forProvider`.
    fn for_provider(filled: LateInitialized) -> Value {
        serde_json::to_value(filled).unwrap()
    }

    fn observed() -> Instance {
        Instance {
            zone_id: "cn-beijing-a".into(),
            instance_name: "i-1".into(),
            host_name: "iZ1".into(),
            instance_charge_type: "PostPaid".into(),
            internet_charge_type: "PayByTraffic".into(),
            spot_strategy: "NoSpot".into(),
            tags: TagList {
                items: vec![Tag::new(UID_TAG, "u"), Tag::new("env", "dev")],
            },
            ..Instance::default()
        }
    }

    #[test]
    fn fills_unset_fields_and_skips_the_uid_tag() {
        let f = &for_provider(late_init(&ECSInstanceParameters::default(), &observed()).unwrap());
        assert_eq!(f["zoneId"], "cn-beijing-a");
        assert_eq!(f["instanceChargeType"], "PostPaid");
        assert_eq!(f["spotStrategy"], "NoSpot");
        assert_eq!(f["hostName"], "iZ1");
        assert_eq!(f["tags"], json!({"env": "dev"}));
        assert!(
            f.get("description").is_none(),
            "empty description is not filled"
        );
        let mut odd = observed();
        odd.vpc_attributes.vswitch_id = "vsw-cn-beijing-a-default".into();
        odd.host_name = "-bad".into();
        let patch = for_provider(late_init(&ECSInstanceParameters::default(), &odd).unwrap());
        assert!(patch.get("vSwitchId").is_none());
        assert!(patch.get("hostName").is_none());
    }

    #[test]
    fn leaves_set_fields_alone() {
        let spec = ECSInstanceParameters {
            zone_id: Some("cn-beijing-b".into()),
            tags: Some(Default::default()),
            ..ECSInstanceParameters::default()
        };
        let patch = for_provider(late_init(&spec, &observed()).unwrap());
        assert!(patch.get("zoneId").is_none());
        assert!(patch.get("tags").is_none());
    }
}
