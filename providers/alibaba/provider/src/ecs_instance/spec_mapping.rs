//! `spec.forProvider` → the `RunInstances` request of a new instance (enum values by their
//! `wire_names`). Pure.

use alibaba_sdk::Secret;
use alibaba_sdk::ecs::{DataDisk, RunInstancesRequest, SystemDisk, Tag};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferroplane_apis::alibabacloud::{ECSInstanceParameters, InstanceChargeType};
use ferroplane_runtime::UID_TAG;

use super::wire_names::{
    credit_specification, disk_category, http_endpoint, http_tokens, instance_charge_type,
    internet_charge_type, period_unit, security_enhancement_strategy, spot_interruption_behavior,
    spot_strategy,
};

/// Why a spec cannot be launched as it is, found before any call (ECS would refuse it).
pub fn launch_refusal(p: &ECSInstanceParameters) -> Option<String> {
    (p.instance_charge_type == Some(InstanceChargeType::PrePaid) && p.period.is_none()).then(|| {
        "instanceChargeType PrePaid needs spec.forProvider.period (and periodUnit, Month by default): ECS buys the subscription for that long".to_owned()
    })
}

/// User data as ECS takes it: Base64 of the plain text in the spec.
pub fn encode_user_data(plain: &str) -> String {
    STANDARD.encode(plain.as_bytes())
}

fn non_negative(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// The tags to send: the spec's plus the UID tag (which the spec may not set).
pub fn tags_with_uid(p: &ECSInstanceParameters, uid: &str) -> Vec<Tag> {
    let mut tags: Vec<Tag> = p
        .tags
        .iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != UID_TAG)
        .map(|(k, v)| Tag::new(k, v))
        .collect();
    tags.push(Tag::new(UID_TAG, uid));
    tags
}

/// The `RunInstances` request for one instance: idempotent through `client_token`, tagged with
/// the object's UID.
pub fn run_instances_request(
    p: &ECSInstanceParameters,
    client_token: &str,
    uid: &str,
    password: Option<Secret>,
) -> RunInstancesRequest {
    RunInstancesRequest {
        image_id: p.image_id.clone(),
        instance_type: p.instance_type.clone(),
        zone_id: p.zone_id.clone(),
        vswitch_id: p.v_switch_id.clone(),
        private_ip_address: p.private_ip_address.clone(),
        deployment_set_id: p.deployment_set_id.clone(),
        // At launch rather than AssignIpv6Addresses on the first poll; 0 asks for none.
        ipv6_address_count: p
            .ipv6_address_count
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0),
        security_group_ids: p.security_group_ids.clone().unwrap_or_default(),
        instance_name: p.instance_name.clone(),
        host_name: p.host_name.clone(),
        description: p.description.clone(),
        password,
        key_pair_name: p.key_pair_name.clone(),
        instance_charge_type: p
            .instance_charge_type
            .map(|v| instance_charge_type(v).to_owned()),
        period: p.period.map(non_negative),
        period_unit: p.period_unit.map(|v| period_unit(v).to_owned()),
        auto_renew: p.auto_renew,
        auto_renew_period: p.auto_renew_period.map(non_negative),
        spot_strategy: p.spot_strategy.map(|v| spot_strategy(v).to_owned()),
        internet_charge_type: p
            .internet_charge_type
            .map(|v| internet_charge_type(v).to_owned()),
        internet_max_bandwidth_out: p.internet_max_bandwidth_out.map(non_negative),
        system_disk: p.system_disk.as_ref().map(|d| SystemDisk {
            category: d.category.map(|c| disk_category(c).to_owned()),
            size: d.size.map(non_negative),
            performance_level: d.performance_level.clone(),
        }),
        data_disks: p
            .data_disks
            .iter()
            .flatten()
            .map(|d| DataDisk {
                category: Some(disk_category(d.category).to_owned()),
                size: Some(non_negative(d.size)),
                snapshot_id: None,
                delete_with_instance: d.delete_with_instance,
            })
            .collect(),
        tags: tags_with_uid(p, uid),
        user_data: p.user_data.as_deref().map(encode_user_data),
        deletion_protection: p.deletion_protection,
        amount: Some(1),
        client_token: Some(client_token.to_owned()),
        dry_run: false,
        ram_role_name: p.ram_role_name.clone(),
        http_endpoint: p.http_endpoint.map(|v| http_endpoint(v).to_owned()),
        http_tokens: p.http_tokens.map(|v| http_tokens(v).to_owned()),
        http_put_response_hop_limit: p.http_put_response_hop_limit.map(non_negative),
        resource_group_id: p.resource_group_id.clone(),
        credit_specification: p
            .credit_specification
            .map(|v| credit_specification(v).to_owned()),
        spot_price_limit: p.spot_price_limit,
        spot_duration: p.spot_duration.map(non_negative),
        spot_interruption_behavior: p
            .spot_interruption_behavior
            .map(|v| spot_interruption_behavior(v).to_owned()),
        security_enhancement_strategy: p
            .security_enhancement_strategy
            .map(|v| security_enhancement_strategy(v).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::alibabacloud::{
        DiskCategory, InternetChargeType, PeriodUnit, SpotStrategy, SystemDisk as SpecSystemDisk,
    };

    pub(crate) fn spec() -> ECSInstanceParameters {
        ECSInstanceParameters {
            region_id: "cn-beijing".into(),
            image_id: "aliyun_3_x64_20G_alibase_20240528.vhd".into(),
            instance_type: "ecs.g6.large".into(),
            ..ECSInstanceParameters::default()
        }
    }

    #[test]
    fn maps_every_field() {
        let mut p = spec();
        p.instance_name = Some("web-1".into());
        p.security_group_ids = Some(vec!["sg-1".into()]);
        p.internet_max_bandwidth_out = Some(5);
        p.instance_charge_type = Some(InstanceChargeType::PostPaid);
        p.internet_charge_type = Some(InternetChargeType::PayByTraffic);
        p.spot_strategy = Some(SpotStrategy::SpotAsPriceGo);
        p.system_disk = Some(SpecSystemDisk {
            category: Some(DiskCategory::CloudEssd),
            size: Some(40),
            performance_level: Some("PL2".into()),
        });
        p.user_data = Some("#!/bin/sh\necho hi".into());
        p.tags = Some([("env".to_owned(), "dev".to_owned())].into());
        let r = run_instances_request(&p, "fp-token", "uid-1", Some(Secret::new("Passw0rd!")));
        let params = r.to_params("fp-token");
        assert_eq!(params.get("ClientToken"), Some("fp-token"));
        assert_eq!(params.get("Amount"), Some("1"));
        assert_eq!(params.get("InstanceName"), Some("web-1"));
        assert_eq!(params.get("SecurityGroupId"), Some("sg-1"));
        assert_eq!(params.get("SystemDisk.Category"), Some("cloud_essd"));
        assert_eq!(params.get("SystemDisk.PerformanceLevel"), Some("PL2"));
        assert_eq!(params.get("SpotStrategy"), Some("SpotAsPriceGo"));
        assert_eq!(params.get("UserData"), Some("IyEvYmluL3NoCmVjaG8gaGk="));
        assert_eq!(params.get("Tag.1.Key"), Some("env"));
        assert_eq!(params.get("Tag.2.Key"), Some(UID_TAG));
        assert_eq!(params.get("Tag.2.Value"), Some("uid-1"));
        assert_eq!(params.get("Password"), Some("Passw0rd!"));
        assert!(!format!("{r:?}").contains("Passw0rd!"));
    }

    #[test]
    fn maps_a_subscription() {
        let mut p = spec();
        p.instance_charge_type = Some(InstanceChargeType::PrePaid);
        assert!(launch_refusal(&p).is_some_and(|m| m.contains("period")));
        p.period = Some(2);
        p.period_unit = Some(PeriodUnit::Week);
        p.auto_renew = Some(true);
        p.auto_renew_period = Some(1);
        assert_eq!(launch_refusal(&p), None);
        let params = run_instances_request(&p, "t", "u", None).to_params("t");
        assert_eq!(params.get("InstanceChargeType"), Some("PrePaid"));
        assert_eq!(params.get("Period"), Some("2"));
        assert_eq!(params.get("PeriodUnit"), Some("Week"));
        assert_eq!(params.get("AutoRenew"), Some("true"));
        assert_eq!(params.get("AutoRenewPeriod"), Some("1"));
    }

    #[test]
    fn pay_as_you_go_sends_no_subscription_parameters() {
        let params = run_instances_request(&spec(), "t", "u", None).to_params("t");
        for name in ["Period", "PeriodUnit", "AutoRenew", "AutoRenewPeriod"] {
            assert_eq!(params.get(name), None, "{name}");
        }
        assert_eq!(launch_refusal(&spec()), None);
    }

    #[test]
    fn a_uid_tag_in_the_spec_is_replaced() {
        let mut p = spec();
        p.tags = Some([(UID_TAG.to_owned(), "forged".to_owned())].into());
        let tags = tags_with_uid(&p, "real");
        assert_eq!(tags, vec![Tag::new(UID_TAG, "real")]);
    }
}
