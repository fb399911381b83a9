//! The names ECS uses on the wire for the values of the spec's enums (`PrePaid`, `cloud_essd`,
//! `required` ...), in one place for the launch request, the comparisons and the in-place
//! requests. Ground floor: imports nothing of the controller. Pure.

use alibaba_sdk::ecs;
use ferroplane_apis::alibabacloud::{
    CreditSpecification, DiskCategory, HttpEndpoint, HttpTokens, InstanceChargeType,
    InternetChargeType, PeriodUnit, SecurityEnhancementStrategy, SpotInterruptionBehavior,
    SpotStrategy, StoppedMode,
};

/// `PostPaid` / `PrePaid`.
pub fn instance_charge_type(v: InstanceChargeType) -> &'static str {
    match v {
        InstanceChargeType::PostPaid => "PostPaid",
        InstanceChargeType::PrePaid => "PrePaid",
    }
}

/// `PayByTraffic` / `PayByBandwidth`.
pub fn internet_charge_type(v: InternetChargeType) -> &'static str {
    match v {
        InternetChargeType::PayByTraffic => "PayByTraffic",
        InternetChargeType::PayByBandwidth => "PayByBandwidth",
    }
}

/// `Month` / `Week`.
pub fn period_unit(v: PeriodUnit) -> &'static str {
    match v {
        PeriodUnit::Month => "Month",
        PeriodUnit::Week => "Week",
    }
}

/// The SDK's `StopInstance` mode.
pub fn stopped_mode(v: StoppedMode) -> ecs::StoppedMode {
    match v {
        StoppedMode::KeepCharging => ecs::StoppedMode::KeepCharging,
        StoppedMode::StopCharging => ecs::StoppedMode::StopCharging,
    }
}

/// `NoSpot` / `SpotWithPriceLimit` / `SpotAsPriceGo`.
pub fn spot_strategy(v: SpotStrategy) -> &'static str {
    match v {
        SpotStrategy::NoSpot => "NoSpot",
        SpotStrategy::SpotWithPriceLimit => "SpotWithPriceLimit",
        SpotStrategy::SpotAsPriceGo => "SpotAsPriceGo",
    }
}

/// `Terminate` / `Stop`.
pub fn spot_interruption_behavior(v: SpotInterruptionBehavior) -> &'static str {
    match v {
        SpotInterruptionBehavior::Terminate => "Terminate",
        SpotInterruptionBehavior::Stop => "Stop",
    }
}

/// `Active` / `Deactive`.
pub fn security_enhancement_strategy(v: SecurityEnhancementStrategy) -> &'static str {
    match v {
        SecurityEnhancementStrategy::Active => "Active",
        SecurityEnhancementStrategy::Deactive => "Deactive",
    }
}

/// `cloud_essd` and friends.
pub fn disk_category(v: DiskCategory) -> &'static str {
    match v {
        DiskCategory::Cloud => "cloud",
        DiskCategory::CloudEfficiency => "cloud_efficiency",
        DiskCategory::CloudSsd => "cloud_ssd",
        DiskCategory::CloudEssd => "cloud_essd",
        DiskCategory::CloudEssdEntry => "cloud_essd_entry",
        DiskCategory::CloudAuto => "cloud_auto",
    }
}

/// `Standard` / `Unlimited`.
pub fn credit_specification(v: CreditSpecification) -> &'static str {
    match v {
        CreditSpecification::Standard => "Standard",
        CreditSpecification::Unlimited => "Unlimited",
    }
}

/// `optional` / `required`.
pub fn http_tokens(v: HttpTokens) -> &'static str {
    match v {
        HttpTokens::Optional => "optional",
        HttpTokens::Required => "required",
    }
}

/// `enabled` / `disabled`.
pub fn http_endpoint(v: HttpEndpoint) -> &'static str {
    match v {
        HttpEndpoint::Enabled => "enabled",
        HttpEndpoint::Disabled => "disabled",
    }
}
