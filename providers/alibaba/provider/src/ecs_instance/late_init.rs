//! Late initialization: spec fields the user left unset, filled with what ECS chose (zone,
//! charge types, spot strategy, host name, name, vSwitch, security groups, bandwidth, deletion
//! protection, key pair, tags), so the spec documents the instance and later diffs are exact.
//! Pure; the framework applies the patch only to fields that are still unset.
//!
//! The system disk is not filled in: `DescribeInstances` does not report disks.

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::ECSInstanceParameters;
use serde_json::{Map, Value, json};

use super::diff::is_reserved_tag;

fn put(
    out: &mut Map<String, Value>,
    field: &str,
    unset: bool,
    value: &str,
    valid: fn(&str) -> bool,
) {
    if unset && !value.is_empty() && valid(value) {
        out.insert(field.to_owned(), Value::String(value.to_owned()));
    }
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

fn known(value: &str, allowed: &[&str]) -> bool {
    allowed.contains(&value)
}

/// A JSON merge patch of `spec` (`{"forProvider": {...}}`), or `None` when nothing is unset.
pub fn late_init(spec: &ECSInstanceParameters, observed: &Instance) -> Option<Value> {
    let mut out = Map::new();
    put(
        &mut out,
        "zoneId",
        spec.zone_id.is_none(),
        &observed.zone_id,
        zone_like,
    );
    put(
        &mut out,
        "instanceName",
        spec.instance_name.is_none(),
        &observed.instance_name,
        name_like,
    );
    put(
        &mut out,
        "hostName",
        spec.host_name.is_none(),
        &observed.host_name,
        host_like,
    );
    let vsw = &observed.vpc_attributes.vswitch_id;
    put(
        &mut out,
        "vSwitchId",
        spec.v_switch_id.is_none(),
        vsw,
        v_switch_like,
    );
    put(
        &mut out,
        "keyPairName",
        spec.key_pair_name.is_none(),
        &observed.key_pair_name,
        name_like,
    );
    if spec.description.is_none() && (2..=256).contains(&observed.description.chars().count()) {
        out.insert("description".into(), json!(observed.description));
    }
    // Enums only with values the schema accepts, so the patch can never be refused.
    if spec.instance_charge_type.is_none()
        && known(&observed.instance_charge_type, &["PostPaid", "PrePaid"])
    {
        out.insert(
            "instanceChargeType".into(),
            json!(observed.instance_charge_type),
        );
    }
    if spec.internet_charge_type.is_none()
        && known(
            &observed.internet_charge_type,
            &["PayByTraffic", "PayByBandwidth"],
        )
    {
        out.insert(
            "internetChargeType".into(),
            json!(observed.internet_charge_type),
        );
    }
    if spec.spot_strategy.is_none()
        && known(
            &observed.spot_strategy,
            &["NoSpot", "SpotWithPriceLimit", "SpotAsPriceGo"],
        )
    {
        out.insert("spotStrategy".into(), json!(observed.spot_strategy));
    }
    let groups = &observed.security_group_ids.items;
    if spec.security_group_ids.is_none()
        && (1..=16).contains(&groups.len())
        && groups.iter().all(|g| security_group_like(g))
    {
        out.insert(
            "securityGroupIds".into(),
            json!(observed.security_group_ids.items),
        );
    }
    if spec.internet_max_bandwidth_out.is_none() && observed.internet_max_bandwidth_out <= 100 {
        out.insert(
            "internetMaxBandwidthOut".into(),
            json!(observed.internet_max_bandwidth_out),
        );
    }
    if spec.deletion_protection.is_none() {
        out.insert(
            "deletionProtection".into(),
            json!(observed.deletion_protection),
        );
    }
    if spec.tags.is_none() {
        let tags: Map<String, Value> = observed
            .tags
            .items
            .iter()
            .filter(|t| !is_reserved_tag(&t.key))
            .map(|t| (t.key.clone(), json!(t.value)))
            .collect();
        out.insert("tags".into(), Value::Object(tags));
    }
    (!out.is_empty()).then(|| json!({ "forProvider": out }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::{Tag, TagList};
    use ferroplane_runtime::UID_TAG;

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
        let patch = late_init(&ECSInstanceParameters::default(), &observed()).unwrap();
        let f = &patch["forProvider"];
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
        let patch = late_init(&ECSInstanceParameters::default(), &odd).unwrap();
        assert!(patch["forProvider"].get("vSwitchId").is_none());
        assert!(patch["forProvider"].get("hostName").is_none());
    }

    #[test]
    fn leaves_set_fields_alone() {
        let spec = ECSInstanceParameters {
            zone_id: Some("cn-beijing-b".into()),
            tags: Some(Default::default()),
            ..ECSInstanceParameters::default()
        };
        let patch = late_init(&spec, &observed()).unwrap();
        assert!(patch["forProvider"].get("zoneId").is_none());
        assert!(patch["forProvider"].get("tags").is_none());
    }
}
