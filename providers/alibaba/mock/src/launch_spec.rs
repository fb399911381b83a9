//! What a new instance is made from ([`LaunchSpec`], with its [`DataDiskSpec`]s): the parameters
//! of RunInstances as the HTTP action and the library API give them, before any check (the checks
//! are `launch`'s).

use crate::catalog::{self, CatalogRegion};

/// The parameters of a launch, with ECS names in the docs of each field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LaunchSpec {
    /// `RegionId`.
    pub region_id: String,
    /// `ZoneId`; the vSwitch's zone when absent (and it must match the vSwitch's).
    pub zone_id: Option<String>,
    /// `ImageId`.
    pub image_id: String,
    /// `InstanceType`.
    pub instance_type: String,
    /// `InstanceName` (2–128 characters); the instance ID when absent.
    pub instance_name: Option<String>,
    /// `Description` (at most 256 characters).
    pub description: Option<String>,
    /// `HostName` (2–64 characters).
    pub host_name: Option<String>,
    /// `VSwitchId` (`vsw-…`): required, since every security group is of the VPC type.
    pub vswitch_id: Option<String>,
    /// `SecurityGroupId` / `SecurityGroupIds.N` (`sg-…`): at least one, all in the vSwitch's VPC.
    pub security_group_ids: Vec<String>,
    /// `InternetMaxBandwidthOut` (0–100); above 0 gives a public IP.
    pub internet_max_bandwidth_out: u32,
    /// `InternetChargeType`: `PayByTraffic` (default) or `PayByBandwidth`.
    pub internet_charge_type: Option<String>,
    /// `InstanceChargeType`: `PostPaid` (default) or `PrePaid`.
    pub instance_charge_type: Option<String>,
    /// `Period`: required for `PrePaid`; 1–9, 12, 24, 36, 48 or 60 months, or 1–4 weeks.
    pub period: Option<u32>,
    /// `PeriodUnit`: `Month` (default) or `Week`.
    pub period_unit: Option<String>,
    /// `AutoRenew` (PrePaid only).
    pub auto_renew: bool,
    /// `AutoRenewPeriod` (PrePaid only).
    pub auto_renew_period: Option<u32>,
    /// `SpotStrategy`: `NoSpot` (default), `SpotWithPriceLimit`, `SpotAsPriceGo`.
    pub spot_strategy: Option<String>,
    /// `SystemDisk.Category`.
    pub system_disk_category: Option<String>,
    /// `SystemDisk.Size` in GiB (20–500, at least the image size).
    pub system_disk_size: Option<u32>,
    /// `SystemDisk.PerformanceLevel` (`cloud_essd` only; `PL1` by default).
    pub system_disk_performance_level: Option<String>,
    /// `DataDisk.N.*`: the data disks created with the instance.
    pub data_disks: Vec<DataDiskSpec>,
    /// `Tag.N.Key` / `Tag.N.Value`.
    pub tags: Vec<(String, String)>,
    /// `Password`, as its digest ([`crate::password_digest`]): the mock never keeps a password.
    pub password_digest: Option<String>,
    /// `UserData` (Base64, at most 32 KiB decoded).
    pub user_data: Option<String>,
    /// `DeletionProtection`.
    pub deletion_protection: bool,
    /// `KeyPairName`.
    pub key_pair_name: Option<String>,
    /// `ClientToken` (ASCII, at most 64 characters).
    pub client_token: Option<String>,
    /// `RamRoleName`.
    pub ram_role_name: Option<String>,
    /// `HttpEndpoint`: `enabled` (default) or `disabled`.
    pub http_endpoint: Option<String>,
    /// `HttpTokens`: `optional` (default) or `required`.
    pub http_tokens: Option<String>,
    /// `HttpPutResponseHopLimit` (1–64).
    pub http_put_response_hop_limit: Option<u32>,
    /// `ResourceGroupId`; the account's default group when absent.
    pub resource_group_id: Option<String>,
    /// `SpotPriceLimit` as sent (a decimal number).
    pub spot_price_limit: Option<String>,
    /// `SpotDuration` (0–6 hours).
    pub spot_duration: Option<u32>,
    /// `SpotInterruptionBehavior`: `Terminate` (default) or `Stop`.
    pub spot_interruption_behavior: Option<String>,
    /// `SecurityEnhancementStrategy`: `Active` or `Deactive`.
    pub security_enhancement_strategy: Option<String>,
    /// `CreditSpecification`: `Standard` or `Unlimited` (burstable types only).
    pub credit_specification: Option<String>,
    /// `PrivateIpAddress`: the primary private IP, in the vSwitch's block and free.
    pub private_ip_address: Option<String>,
    /// `DeploymentSetId`: one of the region's deployment sets.
    pub deployment_set_id: Option<String>,
    /// `Ipv6AddressCount`: IPv6 addresses of the primary network interface, from the vSwitch's
    /// `/64`.
    pub ipv6_address_count: Option<usize>,
}

/// One `DataDisk.N` of RunInstances.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct DataDiskSpec {
    /// `DataDisk.N.Category` (`cloud_efficiency` by default).
    pub category: Option<String>,
    /// `DataDisk.N.Size` in GiB (required: the mock has no snapshots).
    pub size: Option<u32>,
    /// `DataDisk.N.PerformanceLevel` (`cloud_essd` only).
    pub performance_level: Option<String>,
    /// `DataDisk.N.SnapshotId`.
    pub snapshot_id: Option<String>,
    /// `DataDisk.N.DiskName`.
    pub disk_name: Option<String>,
    /// `DataDisk.N.Description`.
    pub description: Option<String>,
    /// `DataDisk.N.Encrypted`.
    pub encrypted: bool,
    /// `DataDisk.N.DeleteWithInstance` (true by default).
    pub delete_with_instance: Option<bool>,
}

impl LaunchSpec {
    /// Places the instance in the mock's default network: the default vSwitch of the region's
    /// first zone (or of `zone_id`, when set) and the region's default security group (see
    /// [`crate::defaults`]).
    pub fn with_default_network(mut self) -> Self {
        let zone = self.zone_id.clone().or_else(|| {
            catalog::region_by_id(&self.region_id)
                .ok()
                .map(CatalogRegion::default_zone)
        });
        self.vswitch_id = zone.as_deref().map(crate::defaults::vswitch_id);
        self.security_group_ids = vec![crate::defaults::security_group_id(&self.region_id)];
        self
    }

    /// A minimal spec: region, image and type (no placement: see
    /// [`LaunchSpec::with_default_network`]).
    pub fn new(
        region_id: impl Into<String>,
        image_id: impl Into<String>,
        instance_type: impl Into<String>,
    ) -> Self {
        Self {
            region_id: region_id.into(),
            image_id: image_id.into(),
            instance_type: instance_type.into(),
            ..Self::default()
        }
    }
}
