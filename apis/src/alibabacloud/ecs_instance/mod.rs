//! `ECSInstance`: an Alibaba Cloud ECS instance managed by ferroplane: its spec and parameters
//! here, what ferroplane observed of it in `observation`.

mod observation;

pub use observation::*;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{SECURITY_GROUP_KIND, VSWITCH_KIND};
use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, tag_values_schema,
};
use crate::common::LocalSecretKeySelector;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector};

managed_spec! {
    columns: [
        printcolumn(name = "STATUS", type_ = "string", json_path = ".status.atProvider.status"),
        printcolumn(
            name = "PUBLIC-IP",
            type_ = "string",
            json_path = ".status.atProvider.publicIpAddress"
        ),
        printcolumn(
            name = "PRIVATE-IP",
            type_ = "string",
            json_path = ".status.atProvider.privateIpAddress",
            priority = 1
        ),
        printcolumn(
            name = "TYPE",
            type_ = "string",
            json_path = ".spec.forProvider.instanceType",
            priority = 1
        ),
    ];
    /// The desired state of an ECS instance and how ferroplane manages it.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "ECSInstance",
        plural = "ecsinstances",
        singular = "ecsinstance",
        status = "ECSInstanceStatus",
        shortname = "ecs",
        doc = "An Alibaba Cloud ECS instance. ferroplane creates it with RunInstances, keeps it matching spec.forProvider, reports it in status.atProvider and releases it when the object is deleted (unless deletionPolicy is Orphan)."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct ECSInstanceSpec {
        /// What happens to the ECS instance when this object is deleted: `Delete` releases it,
        /// `Orphan` leaves it running in the cloud.
        deletion_policy,
        /// What ferroplane may do to the instance: any of Observe, Create, Update, Delete,
        /// LateInitialize, or `*` for all. `[Observe]` imports an existing instance read-only.
        management_policies,
        /// The ProviderConfig (same namespace) or ClusterProviderConfig holding the Alibaba Cloud
        /// credentials. Defaults to the ProviderConfig named `default`.
        provider_config_ref,
        /// When set, ferroplane writes `instanceId`, `publicIpAddress` and `privateIpAddress` to
        /// this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired state of the instance, with the ECS API's own parameter names.
        pub for_provider: ECSInstanceParameters,
    }
}

/// Parameters of the ECS instance (RunInstances and ModifyInstance* parameters).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.zoneId) || has(self.zoneId)").message("zoneId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.vSwitchId) || has(self.vSwitchId)").message("vSwitchId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.instanceChargeType) || has(self.instanceChargeType)").message("instanceChargeType cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.spotStrategy) || has(self.spotStrategy)").message("spotStrategy cannot be removed once set: ECS fixes it at creation"))]
#[x_kube(validation = Rule::new("!has(self.spotStrategy) || self.spotStrategy == 'NoSpot' || !has(self.instanceChargeType) || self.instanceChargeType == 'PostPaid'").message("spot instances must be PostPaid"))]
#[x_kube(validation = Rule::new("(!has(self.period) && !has(self.periodUnit) && !has(self.autoRenew) && !has(self.autoRenewPeriod)) || (has(self.instanceChargeType) && self.instanceChargeType == 'PrePaid')").message("period, periodUnit, autoRenew and autoRenewPeriod apply only to instanceChargeType: PrePaid"))]
#[x_kube(validation = Rule::new("!has(self.period) || (has(self.periodUnit) && self.periodUnit == 'Week' ? self.period in [1, 2, 3, 4] : self.period in [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, 48, 60])").message("period must be 1-4 when periodUnit is Week, or one of 1-9, 12, 24, 36, 48, 60 when periodUnit is Month (the default)"))]
#[x_kube(validation = Rule::new("!has(self.autoRenewPeriod) || (has(self.periodUnit) && self.periodUnit == 'Week' ? self.autoRenewPeriod in [1, 2, 3] : self.autoRenewPeriod in [1, 2, 3, 6, 12, 24, 36, 48, 60])").message("autoRenewPeriod must be 1-3 when periodUnit is Week, or one of 1, 2, 3, 6, 12, 24, 36, 48, 60 when periodUnit is Month (the default)"))]
#[x_kube(validation = Rule::new("!has(self.autoRenewPeriod) || (has(self.autoRenew) && self.autoRenew)").message("autoRenewPeriod needs autoRenew: true"))]
#[x_kube(validation = Rule::new("!has(self.stoppedMode) || self.stoppedMode != 'StopCharging' || !has(self.instanceChargeType) || self.instanceChargeType == 'PostPaid'").message("stoppedMode StopCharging (economical mode) applies only to pay-as-you-go (PostPaid) instances; a PrePaid instance is billed while stopped"))]
#[x_kube(validation = Rule::new("!has(oldSelf.period) || has(self.period) || (has(self.instanceChargeType) && self.instanceChargeType == 'PostPaid')").message("period cannot be removed while the instance stays PrePaid: the subscription is bought for that long"))]
#[x_kube(validation = Rule::new("!has(oldSelf.period) || !has(self.period) || has(self.periodUnit) == has(oldSelf.periodUnit)").message("periodUnit cannot be added or removed after creation: the subscription is bought at creation"))]
#[x_kube(validation = Rule::new("has(self.spotPriceLimit) == has(oldSelf.spotPriceLimit)").message("spotPriceLimit cannot be added or removed after creation: ECS fixes it at creation; create a new ECSInstance"))]
#[x_kube(validation = Rule::new("has(self.spotDuration) == has(oldSelf.spotDuration)").message("spotDuration cannot be added or removed after creation: ECS fixes it at creation; create a new ECSInstance"))]
#[x_kube(validation = Rule::new("has(self.spotInterruptionBehavior) == has(oldSelf.spotInterruptionBehavior)").message("spotInterruptionBehavior cannot be added or removed after creation: ECS fixes it at creation; create a new ECSInstance"))]
#[x_kube(validation = Rule::new("has(self.securityEnhancementStrategy) == has(oldSelf.securityEnhancementStrategy)").message("securityEnhancementStrategy cannot be added or removed after creation: it only applies when the instance is created"))]
#[x_kube(validation = Rule::new("has(self.systemDisk) == has(oldSelf.systemDisk)").message("systemDisk cannot be added or removed after creation: the system disk is created with the instance"))]
#[x_kube(validation = Rule::new("has(self.dataDisks) == has(oldSelf.dataDisks)").message("dataDisks cannot be added or removed after creation: data disks are created with the instance; create a new ECSInstance to have other ones"))]
#[x_kube(validation = Rule::new("!has(self.creditSpecification) || self.instanceType.startsWith('ecs.t5-') || self.instanceType.startsWith('ecs.t6-')").message("creditSpecification applies only to burstable instance types (ecs.t5-*, ecs.t6-*): remove it or choose a burstable instanceType"))]
pub struct ECSInstanceParameters {
    /// Region of the instance, e.g. `cn-beijing` or `ap-southeast-1`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable; create a new ECSInstance in the other region"))]
    pub region_id: String,

    /// Zone of the instance, e.g. `cn-beijing-h`. ECS picks one when unset (then it is filled in
    /// from the cloud). Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("zoneId is immutable"))]
    pub zone_id: Option<String>,

    /// Image to boot from, e.g. `centos_7_8_x64_20G_alibase_20200519.vhd` or `m-...`. A change
    /// replaces the system disk (ReplaceSystemDisk: its data is lost) while the instance is
    /// stopped, which ferroplane only does when `allowRestart` is true.
    #[schemars(length(min = 1, max = 256))]
    pub image_id: String,

    /// Instance type, e.g. `ecs.g6.large`. Changing it needs a stop and start of the instance,
    /// which ferroplane only does when `allowRestart` is true.
    #[schemars(
        regex(pattern = r"^ecs\.[a-z0-9][a-z0-9.-]*$"),
        length(min = 5, max = 64)
    )]
    pub instance_type: String,

    /// Display name, 2 to 128 characters; must not start with `http://` or `https://`.
    /// Defaults to ECS's own naming when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 128))]
    #[x_kube(validation = Rule::new("!self.startsWith('http://') && !self.startsWith('https://')").message("instanceName must not start with http:// or https://"))]
    pub instance_name: Option<String>,

    /// Description, 2 to 256 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 256))]
    pub description: Option<String>,

    /// Host name of the guest OS, 2 to 64 characters. Takes effect after a restart, which
    /// ferroplane only does when `allowRestart` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 2, max = 64),
        regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]$")
    )]
    pub host_name: Option<String>,

    /// VSwitch (VPC subnet) to attach the instance to, `vsw-...`. Another vSwitch of the same
    /// VPC and zone is applied while the instance is stopped (ModifyInstanceVpcAttribute): only
    /// with `allowRestart: true` or a stopped instance; the instance gets a free address of the
    /// new vSwitch unless `privateIpAddress` names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^vsw-[a-z0-9]+$"))]
    pub v_switch_id: Option<String>,

    /// Primary private IPv4 address, in the vSwitch's CIDR block (not its first or last three
    /// addresses) and free; ECS picks one when unset. A change is applied while the instance is
    /// stopped (ModifyInstanceVpcAttribute), like `vSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(
        pattern = r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$"
    ))]
    pub private_ip_address: Option<String>,

    /// How many IPv6 addresses the primary network interface holds, 0 to 10 (ECS caps it by
    /// instance type); the vSwitch must have IPv6 turned on. Changed in place
    /// (AssignIpv6Addresses / UnassignIpv6Addresses); unset leaves the addresses alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 10))]
    pub ipv6_address_count: Option<i32>,

    /// A `VSwitch` object of this namespace whose ID becomes `vSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id_ref: Option<Reference>,

    /// Labels of a `VSwitch` object of this namespace whose ID becomes `vSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id_selector: Option<Selector>,

    /// Security groups, `sg-...`, at most 16. Changed in place. Written by ferroplane from
    /// `securityGroupIdRefs` / `securityGroupIdSelector` when those are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 16), inner(regex(pattern = r"^sg-[a-z0-9]+$")))]
    pub security_group_ids: Option<Vec<String>>,

    /// `SecurityGroup` objects of this namespace whose IDs become `securityGroupIds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 16))]
    pub security_group_id_refs: Option<Vec<Reference>>,

    /// Labels of `SecurityGroup` objects of this namespace whose IDs become `securityGroupIds`
    /// (every Ready match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_id_selector: Option<Selector>,

    /// Outbound public bandwidth in Mbit/s, 0 to 100. Greater than 0 gives the instance a public
    /// IP address. Changed in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub internet_max_bandwidth_out: Option<i32>,

    /// How public traffic is billed: `PayByTraffic` or `PayByBandwidth`. Changed in place
    /// (ModifyInstanceNetworkSpec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internet_charge_type: Option<InternetChargeType>,

    /// How the instance is billed: `PostPaid` (pay-as-you-go, the default) or `PrePaid`
    /// (subscription). Changed in place (ModifyInstanceChargeType): to `PrePaid` with `period`
    /// (and `periodUnit`), to `PostPaid` by removing the subscription fields, as ECS allows it
    /// for the account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_charge_type: Option<InstanceChargeType>,

    /// Subscription length, in `periodUnit`s, bought when a `PrePaid` instance is created; required
    /// for `PrePaid`. Week: 1 to 4; Month: 1 to 9, 12, 24, 36, 48 or 60. Immutable: renew in the
    /// console or with `autoRenew`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("period is immutable: the subscription is bought at creation; renew it in the console or with autoRenew"))]
    pub period: Option<i32>,

    /// Unit of `period` and `autoRenewPeriod`: `Month` (default) or `Week`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("periodUnit is immutable"))]
    pub period_unit: Option<PeriodUnit>,

    /// Renew a `PrePaid` instance automatically before it expires (default false). Changed in
    /// place (ModifyInstanceAutoRenewAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_renew: Option<bool>,

    /// Length of each automatic renewal, in `periodUnit`s (default 1). Week: 1 to 3; Month: 1, 2,
    /// 3, 6, 12, 24, 36, 48 or 60. Needs `autoRenew: true`. Changed in place
    /// (ModifyInstanceAutoRenewAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_renew_period: Option<i32>,

    /// How a pay-as-you-go instance stops when `desiredStatus` is `Stopped` or for a restart:
    /// `KeepCharging` keeps its vCPUs, memory and public IP (and is billed for them);
    /// `StopCharging` (economical mode) stops billing for them, but the public IP may change and
    /// the next start can fail when the zone has no stock. Absent: the account's default.
    /// Applies to the next stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_mode: Option<StoppedMode>,

    /// Spot (preemptible) strategy for pay-as-you-go instances. Immutable: ECS sets it at
    /// creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spotStrategy is immutable: ECS fixes it at creation; create a new ECSInstance with the other strategy"))]
    pub spot_strategy: Option<SpotStrategy>,

    /// Highest hourly price, in the account's currency, for `spotStrategy: SpotWithPriceLimit`
    /// (up to 3 decimal places). Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spotPriceLimit is immutable: ECS fixes it at creation; create a new ECSInstance with the other price limit"))]
    pub spot_price_limit: Option<f64>,

    /// Protection period of a spot instance in hours, 0 to 6 (0: none, the default of ECS is 1).
    /// Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 6))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spotDuration is immutable: ECS fixes it at creation; create a new ECSInstance with the other protection period"))]
    pub spot_duration: Option<i32>,

    /// What ECS does when it reclaims a spot instance: `Terminate` (release, the default) or
    /// `Stop` (economical stop). Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spotInterruptionBehavior is immutable: ECS fixes it at creation; create a new ECSInstance with the other behavior"))]
    pub spot_interruption_behavior: Option<SpotInterruptionBehavior>,

    /// `Active` installs the free security agent (Cloud Security Center) from the image at
    /// creation, `Deactive` does not. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("securityEnhancementStrategy is immutable: it only applies when the instance is created; install or remove the security agent inside the instance"))]
    pub security_enhancement_strategy: Option<SecurityEnhancementStrategy>,

    /// Instance RAM role (a role trusted by `ecs.aliyuncs.com`) whose temporary credentials the
    /// metadata service hands to the instance. Changed in place
    /// (DetachInstanceRamRole / AttachInstanceRamRole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9.@-]+$"))]
    pub ram_role_name: Option<String>,

    /// Metadata service tokens: `required` makes the instance use IMDSv2 (token) requests only,
    /// `optional` (the ECS default) accepts both. Changed in place
    /// (ModifyInstanceMetadataOptions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_tokens: Option<HttpTokens>,

    /// The metadata service inside the instance: `enabled` (the ECS default) or `disabled`.
    /// Changed in place (ModifyInstanceMetadataOptions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_endpoint: Option<HttpEndpoint>,

    /// How many network hops a metadata token response (HTTP PUT) may travel, 1 to 64.
    /// Changed in place (ModifyInstanceMetadataOptions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub http_put_response_hop_limit: Option<i32>,

    /// Resource group of the instance, `rg-...`; the account's default group when unset.
    /// Changed in place (JoinResourceGroup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^rg-[a-z0-9]+$"))]
    pub resource_group_id: Option<String>,

    /// CPU credit mode of a burstable instance (`ecs.t5-*`, `ecs.t6-*` types): `Standard`
    /// (performance capped by the credits earned) or `Unlimited` (bursts past them, billed).
    /// ECS refuses it for other types. Changed in place (ModifyInstanceAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_specification: Option<CreditSpecification>,

    /// Deployment set (`ds-...`) that spreads the instance over distinct hosts. Set at
    /// creation and changed in place (ModifyInstanceDeployment, on the current host: ECS does
    /// not restart the instance for it); unset leaves the instance where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^ds-[a-z0-9]+$"))]
    pub deployment_set_id: Option<String>,

    /// System disk. Its category is immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_disk: Option<SystemDisk>,

    /// Data disks created with the instance, at most 16. Immutable after creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("dataDisks are immutable after creation"))]
    pub data_disks: Option<Vec<DataDisk>>,

    /// Name of an SSH key pair registered in the region (Linux images). Changed in place
    /// (DetachKeyPair, AttachKeyPair); the new key takes effect at the next start or reboot of
    /// the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 128))]
    pub key_pair_name: Option<String>,

    /// A `KeyPair` object of this namespace whose key pair name becomes `keyPairName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_pair_name_ref: Option<Reference>,

    /// Labels of a `KeyPair` object of this namespace whose key pair name becomes
    /// `keyPairName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_pair_name_selector: Option<Selector>,

    /// Secret key in this namespace holding the instance's login password (8 to 30 characters,
    /// three of: upper case, lower case, digits, special characters). A change takes effect after
    /// a restart, which ferroplane only does when `allowRestart` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret_ref: Option<LocalSecretKeySelector>,

    /// cloud-init user data as plain text; ferroplane Base64-encodes it. At most 32 KiB of UTF-8
    /// before encoding, the ECS limit. A change needs a restart (`allowRestart`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32768))]
    #[x_kube(validation = Rule::new("size(bytes(self)) <= 32768").message("userData must be at most 32 KiB (32768 bytes of UTF-8) before Base64 encoding, the ECS limit"))]
    pub user_data: Option<String>,

    /// Tags on the instance, at most 19 (ferroplane adds `ferroplane.io/uid`). Keys may not
    /// start with `aliyun` or `acs:`. Changed in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 19))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<BTreeMap<String, String>>,

    /// When true, the instance cannot be released, not even by ferroplane: set it to false
    /// before deleting the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,

    /// Power state: `Running` (default) or `Stopped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_status: Option<DesiredStatus>,

    /// Allow ferroplane to stop and start the instance to apply changes that need it (instance
    /// type, host name, password, user data). Without it such changes are reported in the
    /// Synced condition and wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_restart: Option<bool>,
}

/// How public traffic is billed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum InternetChargeType {
    PayByTraffic,
    PayByBandwidth,
}

/// How the instance is billed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum InstanceChargeType {
    PostPaid,
    PrePaid,
}

/// Unit of a subscription length.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum PeriodUnit {
    Month,
    Week,
}

/// How a stopped pay-as-you-go instance is billed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum StoppedMode {
    KeepCharging,
    StopCharging,
}

/// Spot (preemptible) strategy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum SpotStrategy {
    NoSpot,
    SpotWithPriceLimit,
    SpotAsPriceGo,
}

/// What ECS does with a spot instance it reclaims.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum SpotInterruptionBehavior {
    Terminate,
    Stop,
}

/// Whether the security agent is installed at creation.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum SecurityEnhancementStrategy {
    Active,
    Deactive,
}

/// CPU credit mode of a burstable instance.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum CreditSpecification {
    Standard,
    Unlimited,
}

/// Whether metadata requests need a token (IMDSv2).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HttpTokens {
    Optional,
    Required,
}

/// Whether the metadata service answers inside the instance.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HttpEndpoint {
    Enabled,
    Disabled,
}

/// Power state of the instance.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum DesiredStatus {
    Running,
    Stopped,
}

/// Category of a cloud disk.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiskCategory {
    Cloud,
    CloudEfficiency,
    CloudSsd,
    CloudEssd,
    CloudEssdEntry,
    CloudAuto,
}

/// The system disk.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.category) == has(oldSelf.category)").message("systemDisk.category cannot be added or removed after creation: the system disk is created with the instance"))]
#[x_kube(validation = Rule::new("has(self.size) == has(oldSelf.size)").message("systemDisk.size cannot be added or removed after creation: the system disk is created with the instance"))]
#[x_kube(validation = Rule::new("!has(self.performanceLevel) || (has(self.category) && self.category == 'cloud_essd')").message("systemDisk.performanceLevel applies to category cloud_essd only"))]
pub struct SystemDisk {
    /// Disk category, e.g. `cloud_essd`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("systemDisk.category is immutable"))]
    pub category: Option<DiskCategory>,
    /// Size in GiB, 20 to 2048, and at least the image size. Grown in place (ResizeDisk,
    /// online); never shrinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 20, max = 2048))]
    #[x_kube(validation = Rule::new("self >= oldSelf").message("systemDisk.size cannot shrink: ECS only grows disks; create a new ECSInstance for a smaller system disk"))]
    pub size: Option<i32>,
    /// `PL0` to `PL3` (cloud_essd only; ECS's default is `PL1`). Changed in place
    /// (ModifyDiskSpec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["PL0", "PL1", "PL2", "PL3"]))]
    pub performance_level: Option<String>,
}

/// A data disk created with the instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataDisk {
    /// Disk category, e.g. `cloud_essd`.
    pub category: DiskCategory,
    /// Size in GiB, 20 to 32768.
    #[schemars(range(min = 20, max = 32768))]
    pub size: i32,
    /// Release the disk together with the instance (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_with_instance: Option<bool>,
}

crate::impl_managed!(
    ECSInstance,
    provider_config,
    references = &[
        ReferenceField {
            field: "vSwitchId",
            reference: "vSwitchIdRef",
            selector: "vSwitchIdSelector",
            many: false,
            target: VSWITCH_KIND,
            value: ReferenceValue::ExternalName,
        },
        ReferenceField {
            field: "securityGroupIds",
            reference: "securityGroupIdRefs",
            selector: "securityGroupIdSelector",
            many: true,
            target: SECURITY_GROUP_KIND,
            value: ReferenceValue::ExternalName,
        },
        super::key_pair::KEY_PAIR_NAME_REFERENCE,
    ],
    observation_uncached
);
