//! What a new instance is made from ([`LaunchSpec`]) and the checks RunInstances applies to it,
//! shared by the HTTP action and the library API.

use jiff::Timestamp;

use crate::catalog::{self, CatalogRegion, Image, InstanceType};
use crate::disks::{self, DiskSpec};
use crate::error::{ErrorResponse, truncate};
use crate::instance::{MetadataOptions, SpotSettings};
use crate::network::{AccountNetwork, Placement};
use crate::subscription::Subscription;

/// Most tags a resource may carry.
pub const MAX_TAGS: usize = 20;

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

/// A spec checked against the catalogue, with every default filled in.
#[derive(Debug, Clone)]
pub struct ResolvedLaunch {
    pub region: &'static CatalogRegion,
    pub placement: Placement,
    pub instance_type: &'static InstanceType,
    pub image: &'static Image,
    pub charge_type: &'static str,
    /// For `PrePaid`: the subscription terms.
    pub subscription: Option<Subscription>,
    pub spot_strategy: &'static str,
    pub internet_charge_type: &'static str,
    pub system_disk_category: String,
    pub system_disk_size: u32,
    pub metadata: MetadataOptions,
    pub resource_group_id: String,
    pub spot: SpotSettings,
    /// The CPU credit mode of a burstable type; `None` for the others.
    pub credit_specification: Option<&'static str>,
    /// The disks to create with each instance.
    pub system_disk: DiskSpec,
    pub data_disks: Vec<DiskSpec>,
}

/// `HttpEndpoint`, `HttpTokens` and `HttpPutResponseHopLimit`, checked; unset ones keep
/// `current`.
pub fn metadata_options(
    http_endpoint: Option<&str>,
    http_tokens: Option<&str>,
    hop_limit: Option<u32>,
    current: MetadataOptions,
) -> Result<MetadataOptions, ErrorResponse> {
    let http_endpoint = match http_endpoint {
        None => current.http_endpoint,
        Some("enabled") => "enabled",
        Some("disabled") => "disabled",
        Some(_) => {
            return Err(ErrorResponse::bad_request(
                "InvalidHttpEndpoint.NotSupported",
                "The specified HttpEndpoint not supported, you can use enabled(default) or disabled.",
            ));
        }
    };
    let http_tokens = match http_tokens {
        None => current.http_tokens,
        Some("optional") => "optional",
        Some("required") => "required",
        Some(_) => {
            return Err(ErrorResponse::bad_request(
                "InvalidHttpTokens.NotSupported",
                "The specified HttpTokens not supported, you can use optional(default) or required.",
            ));
        }
    };
    let http_put_response_hop_limit = match hop_limit {
        None => current.http_put_response_hop_limit,
        Some(n) if (1..=64).contains(&n) => n,
        Some(_) => {
            return Err(ErrorResponse::bad_request(
                "InvalidHttpPutResponseHopLimit.NotSupported",
                "The specified HttpPutResponseHopLimit is not supported: 1 to 64.",
            ));
        }
    };
    Ok(MetadataOptions {
        http_endpoint,
        http_tokens,
        http_put_response_hop_limit,
    })
}

/// The spot settings of a launch: only spot instances take them.
fn spot_settings(spec: &LaunchSpec, spot_strategy: &str) -> Result<SpotSettings, ErrorResponse> {
    let price_limit = spec
        .spot_price_limit
        .as_deref()
        .map(|p| {
            p.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| ErrorResponse::invalid("SpotPriceLimit"))
        })
        .transpose()?;
    if price_limit.is_some() && spot_strategy != "SpotWithPriceLimit" {
        return Err(ErrorResponse::bad_request(
            "InvalidSpotPriceLimit.LowerThanPublicPrice",
            "SpotPriceLimit applies only when SpotStrategy is SpotWithPriceLimit.",
        ));
    }
    let duration = spec.spot_duration.unwrap_or(1);
    if duration > 6 {
        return Err(ErrorResponse::bad_request(
            "InvalidSpotDuration",
            "The specified SpotDuration is invalid: 0 to 6 hours.",
        ));
    }
    let interruption_behavior = one_of(
        spec.spot_interruption_behavior.as_deref(),
        &["Terminate", "Stop"],
        "InvalidSpotInterruptionBehavior",
        "SpotInterruptionBehavior",
    )?;
    one_of(
        spec.security_enhancement_strategy.as_deref(),
        &["Active", "Deactive"],
        "InvalidParameter",
        "SecurityEnhancementStrategy",
    )?;
    let spot = spot_strategy != "NoSpot";
    Ok(SpotSettings {
        price_limit: price_limit.unwrap_or(0.0),
        duration: if spot { duration } else { 0 },
        interruption_behavior: if spot { interruption_behavior } else { "" },
    })
}

fn one_of(
    value: Option<&str>,
    allowed: &[&'static str],
    code: &'static str,
    name: &str,
) -> Result<&'static str, ErrorResponse> {
    match value {
        None => Ok(allowed[0]),
        Some(v) => allowed.iter().copied().find(|a| *a == v).ok_or_else(|| {
            ErrorResponse::bad_request(code, format!("The specified {name} is not supported."))
        }),
    }
}

/// Checks a name: 2–`max` characters, starting with a letter (any script), not a URL.
fn check_name(
    value: &str,
    max: usize,
    code: &'static str,
    what: &str,
) -> Result<(), ErrorResponse> {
    let len = value.chars().count();
    let starts_with_letter = value.chars().next().is_some_and(char::is_alphabetic);
    if !(2..=max).contains(&len)
        || !starts_with_letter
        || value.starts_with("http://")
        || value.starts_with("https://")
    {
        return Err(ErrorResponse::bad_request(
            code,
            format!(
                "The specified {what} is invalid: 2 to {max} characters, starting with a letter, not with http:// or https://."
            ),
        ));
    }
    Ok(())
}

/// `InstanceName`: 2–128 characters, starting with a letter, not a URL.
pub fn check_instance_name(name: &str) -> Result<(), ErrorResponse> {
    check_name(name, 128, "InvalidInstanceName.Malformed", "InstanceName")
}

/// `HostName`: 2–64 characters of letters, digits, `.` and `-`, not starting or ending with either.
pub fn check_host_name(host: &str) -> Result<(), ErrorResponse> {
    let ok = (2..=64).contains(&host.len())
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !host.starts_with(['-', '.'])
        && !host.ends_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidHostName.Malformed",
            "The specified HostName is invalid: 2 to 64 characters of letters, digits, '.' and '-', not starting or ending with '.' or '-'.",
        ))
    }
}

/// `Description`: at most 256 characters, not starting with a URL scheme.
pub fn check_description(description: &str) -> Result<(), ErrorResponse> {
    if description.chars().count() > 256
        || description.starts_with("http://")
        || description.starts_with("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidDescription.Malformed",
            "The specified Description is invalid: at most 256 characters, not starting with http:// or https://.",
        ));
    }
    Ok(())
}

/// `InternetMaxBandwidthOut`: 0–100 Mbit/s.
pub fn check_bandwidth(mbps: u32) -> Result<(), ErrorResponse> {
    if mbps > 100 {
        return Err(ErrorResponse::bad_request(
            "InvalidInternetMaxBandwidthOut.Malformed",
            "InternetMaxBandwidthOut must be between 0 and 100.",
        ));
    }
    Ok(())
}

/// `ClientToken`: ASCII, at most 64 characters.
pub fn check_client_token(token: &str) -> Result<(), ErrorResponse> {
    if token.len() > 64 || !token.is_ascii() {
        return Err(ErrorResponse::bad_request(
            "InvalidClientToken.Malformed",
            "The specified ClientToken is invalid: ASCII, at most 64 characters.",
        ));
    }
    Ok(())
}

/// `UserData`: Base64 of at most 32 KiB.
pub fn check_user_data(data: &str) -> Result<(), ErrorResponse> {
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| {
            ErrorResponse::bad_request(
                "InvalidUserData.Base64FormatInvalid",
                "The specified UserData is not valid Base64.",
            )
        })?;
    if decoded.len() > 32 * 1024 {
        return Err(ErrorResponse::bad_request(
            "InvalidUserData.SizeExceeded",
            "The specified UserData exceeds 32 KiB.",
        ));
    }
    Ok(())
}

/// `Password`: 8–30 characters with at least three of lowercase, uppercase, digits and symbols.
/// The value itself never appears in the error.
pub fn check_password(password: &str) -> Result<(), ErrorResponse> {
    const SYMBOLS: &str = "()`~!@#$%^&*-_+=|{}[]:;'<>,.?/";
    let classes = [
        password.chars().any(|c| c.is_ascii_lowercase()),
        password.chars().any(|c| c.is_ascii_uppercase()),
        password.chars().any(|c| c.is_ascii_digit()),
        password.chars().any(|c| SYMBOLS.contains(c)),
    ];
    let allowed = password
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || SYMBOLS.contains(c));
    if !(8..=30).contains(&password.chars().count())
        || !allowed
        || classes.iter().filter(|c| **c).count() < 3
    {
        return Err(ErrorResponse::bad_request(
            "InvalidPassword.Malformed",
            "The specified Password is invalid: 8 to 30 characters with at least three of lowercase letters, uppercase letters, digits and symbols.",
        ));
    }
    Ok(())
}

/// `RamRoleName`: 1–64 characters of letters, digits, `.`, `@` and `-`, as RAM allows.
pub fn check_ram_role_name(name: &str) -> Result<(), ErrorResponse> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'@' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidRamRoleName.Malformed",
            "The specified RamRoleName is invalid: 1 to 64 characters of letters, digits, '.', '@' and '-'.",
        ))
    }
}

/// Validates one tag as ECS does.
pub fn check_tag(key: &str, value: &str) -> Result<(), ErrorResponse> {
    let lower = key.to_ascii_lowercase();
    if key.is_empty()
        || key.chars().count() > 128
        || lower.starts_with("aliyun")
        || lower.starts_with("acs:")
        || key.contains("http://")
        || key.contains("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidTagKey.Malformed",
            format!(
                "The specified tag key \"{}\" is invalid: 1 to 128 characters, not starting with aliyun or acs:, no http:// or https://.",
                truncate(key, 128)
            ),
        ));
    }
    if value.chars().count() > 128 || value.contains("http://") || value.contains("https://") {
        return Err(ErrorResponse::bad_request(
            "InvalidTagValue.Malformed",
            "The specified tag value is invalid: at most 128 characters, no http:// or https://.",
        ));
    }
    Ok(())
}

/// Validates a set of tags for one request: each tag, unique keys, at most [`MAX_TAGS`].
pub fn check_tags(tags: &[(String, String)]) -> Result<(), ErrorResponse> {
    if tags.len() > MAX_TAGS {
        return Err(too_many_tags());
    }
    for (i, (key, value)) in tags.iter().enumerate() {
        check_tag(key, value)?;
        if tags[..i].iter().any(|(k, _)| k == key) {
            return Err(ErrorResponse::bad_request(
                "InvalidTagKey.Duplicated",
                "The specified tag keys are duplicated.",
            ));
        }
    }
    Ok(())
}

/// `InvalidTagCount` (400): a resource would carry more than [`MAX_TAGS`] tags.
pub fn too_many_tags() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidTagCount",
        format!("A resource can carry at most {MAX_TAGS} tags."),
    )
}

/// Most `DataDisk.N` one instance is created with.
pub const MAX_DATA_DISKS: usize = 16;

impl DataDiskSpec {
    /// Checks the disk as RunInstances does and makes it a disk of `zone_id`.
    fn resolve(&self, zone_id: &str) -> Result<DiskSpec, ErrorResponse> {
        if let Some(snapshot) = &self.snapshot_id {
            return Err(ErrorResponse::not_found(
                "InvalidDataDiskSnapshotId.NotFound",
                format!(
                    "The specified DataDisk.N.SnapshotId \"{}\" does not exist.",
                    truncate(snapshot, 64)
                ),
            ));
        }
        let category = disks::category(self.category.as_deref().unwrap_or("cloud_efficiency"))
            .map_err(|_| {
                ErrorResponse::bad_request(
                    "InvalidDataDiskCategory.ValueNotSupported",
                    format!(
                        "The specified DataDisk.N.Category is not valid: use one of {}.",
                        disks::CATEGORIES.join(", ")
                    ),
                )
            })?;
        let level = disks::performance_level(category, self.performance_level.as_deref())?;
        let size = self
            .size
            .ok_or_else(|| ErrorResponse::missing("DataDisk.N.Size"))?;
        disks::check_data_disk_size(
            category,
            level,
            size,
            "InvalidDataDiskSize.ValueNotSupported",
        )?;
        Ok(DiskSpec {
            zone_id: zone_id.to_owned(),
            name: self.disk_name.clone().unwrap_or_default(),
            description: self.description.clone().unwrap_or_default(),
            category,
            size,
            performance_level: level,
            encrypted: self.encrypted,
            delete_with_instance: self.delete_with_instance.unwrap_or(true),
            ..DiskSpec::default()
        })
    }
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

    /// Checks every field and resolves catalogue entries, network and defaults, in the order ECS
    /// reports problems: region, syntax of the parameters, billing, placement (security groups
    /// and vSwitch of `network`), then catalogue lookups and stock.
    pub fn resolve(
        &self,
        network: &AccountNetwork,
        now: Timestamp,
    ) -> Result<ResolvedLaunch, ErrorResponse> {
        let region = catalog::region_by_id(&self.region_id)?;
        if let Some(name) = &self.instance_name {
            check_instance_name(name)?;
        }
        if let Some(host) = &self.host_name {
            check_host_name(host)?;
        }
        if let Some(description) = &self.description {
            check_description(description)?;
        }
        check_bandwidth(self.internet_max_bandwidth_out)?;
        if let Some(token) = &self.client_token {
            check_client_token(token)?;
        }
        if let Some(data) = &self.user_data {
            check_user_data(data)?;
        }
        check_tags(&self.tags)?;
        let charge_type = one_of(
            self.instance_charge_type.as_deref(),
            &["PostPaid", "PrePaid"],
            "InvalidInstanceChargeType.ValueNotSupported",
            "InstanceChargeType",
        )?;
        let spot_strategy = one_of(
            self.spot_strategy.as_deref(),
            &["NoSpot", "SpotWithPriceLimit", "SpotAsPriceGo"],
            "InvalidSpotStrategy",
            "SpotStrategy",
        )?;
        let internet_charge_type = one_of(
            self.internet_charge_type.as_deref(),
            &["PayByTraffic", "PayByBandwidth"],
            "InvalidInternetChargeType.ValueNotSupported",
            "InternetChargeType",
        )?;
        let system_disk_category = one_of(
            self.system_disk_category.as_deref(),
            &[
                "cloud_efficiency",
                "cloud_ssd",
                "cloud_essd",
                "cloud_auto",
                "cloud_essd_entry",
                "cloud",
            ],
            "InvalidSystemDiskCategory.ValueNotSupported",
            "SystemDisk.Category",
        )?;
        let metadata = metadata_options(
            self.http_endpoint.as_deref(),
            self.http_tokens.as_deref(),
            self.http_put_response_hop_limit,
            MetadataOptions::default(),
        )?;
        let spot = spot_settings(self, spot_strategy)?;
        if let Some(role) = &self.ram_role_name {
            check_ram_role_name(role)?;
        }
        let resource_group_id =
            crate::resource_groups::resolve(self.resource_group_id.as_deref())?.to_owned();
        let subscription = Subscription::resolve(self, charge_type, spot_strategy)?;
        let placement = network.placement(
            region,
            self.zone_id.as_deref(),
            self.vswitch_id.as_deref(),
            &self.security_group_ids,
            now,
        )?;
        let image = catalog::image_by_id(&self.image_id)?;
        let instance_type = catalog::instance_type(&self.instance_type)?;
        let system_disk_size = self.system_disk_size.unwrap_or(image.size_gib.max(40));
        if !(20..=500).contains(&system_disk_size) || system_disk_size < image.size_gib {
            return Err(ErrorResponse::bad_request(
                "InvalidSystemDiskSize.ValueNotSupported",
                format!(
                    "SystemDisk.Size must be between {} and 500 GiB for this image.",
                    image.size_gib.max(20)
                ),
            ));
        }
        let system_disk = DiskSpec {
            zone_id: placement.zone_id.clone(),
            category: disks::category(system_disk_category).map_err(|_| {
                ErrorResponse::bad_request(
                    "InvalidSystemDiskCategory.ValueNotSupported",
                    "The specified SystemDisk.Category is not supported.",
                )
            })?,
            size: system_disk_size,
            performance_level: disks::performance_level(
                system_disk_category,
                self.system_disk_performance_level.as_deref(),
            )?,
            delete_with_instance: true,
            ..DiskSpec::default()
        };
        let data_disks = self
            .data_disks
            .iter()
            .map(|d| d.resolve(&placement.zone_id))
            .collect::<Result<Vec<_>, _>>()?;
        let credit_specification =
            crate::credit::at_launch(instance_type, self.credit_specification.as_deref())?;
        let instance_type = catalog::instance_type_in_stock(instance_type.id)?;
        Ok(ResolvedLaunch {
            region,
            placement,
            instance_type,
            image,
            charge_type,
            subscription,
            spot_strategy,
            internet_charge_type,
            system_disk_category: system_disk_category.to_owned(),
            system_disk_size,
            metadata,
            resource_group_id,
            spot,
            credit_specification,
            system_disk,
            data_disks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec::new(
            "cn-hangzhou",
            "centos_7_8_x64_20G_alibase_20200519.vhd",
            "ecs.g6.large",
        )
        .with_default_network()
    }

    fn resolve(s: &LaunchSpec) -> Result<ResolvedLaunch, ErrorResponse> {
        s.resolve(&AccountNetwork::seeded(), Timestamp::now())
    }

    #[test]
    fn defaults_are_filled_in() {
        let r = resolve(&spec()).unwrap();
        assert_eq!(r.placement.zone_id, "cn-hangzhou-b");
        assert_eq!(
            r.placement.vswitch_id,
            crate::defaults::vswitch_id("cn-hangzhou-b")
        );
        assert_eq!(r.placement.vpc_id, crate::defaults::vpc_id("cn-hangzhou"));
        assert!(r.subscription.is_none());
        assert_eq!(
            (r.charge_type, r.spot_strategy, r.internet_charge_type),
            ("PostPaid", "NoSpot", "PayByTraffic")
        );
        assert_eq!(r.system_disk_size, 40);
    }

    #[test]
    fn catalogue_errors() {
        let code = |s: LaunchSpec| resolve(&s).unwrap_err().code;
        assert_eq!(
            code(LaunchSpec {
                region_id: "xx".into(),
                ..spec()
            }),
            "InvalidRegionId.NotFound"
        );
        assert_eq!(
            code(LaunchSpec {
                image_id: "nope".into(),
                ..spec()
            }),
            "InvalidImageId.NotFound"
        );
        assert_eq!(
            code(LaunchSpec {
                instance_type: "ecs.nope".into(),
                ..spec()
            }),
            "InvalidInstanceType.ValueNotSupported"
        );
        assert_eq!(
            code(LaunchSpec {
                instance_type: catalog::OUT_OF_STOCK_TYPE.into(),
                ..spec()
            }),
            "OperationDenied.NoStock"
        );
        assert_eq!(
            code(LaunchSpec {
                zone_id: Some("cn-shanghai-b".into()),
                ..spec()
            }),
            "InvalidZoneId.NotFound"
        );
    }

    #[test]
    fn syntax_errors() {
        let code = |s: LaunchSpec| resolve(&s).unwrap_err().code;
        assert_eq!(
            code(LaunchSpec {
                instance_name: Some("x".into()),
                ..spec()
            }),
            "InvalidInstanceName.Malformed"
        );
        assert_eq!(
            code(LaunchSpec {
                instance_name: Some("1abc".into()),
                ..spec()
            }),
            "InvalidInstanceName.Malformed"
        );
        assert!(
            LaunchSpec {
                instance_name: Some("中文名".into()),
                ..spec()
            }
            .resolve(&AccountNetwork::seeded(), Timestamp::now())
            .is_ok()
        );
        assert_eq!(
            code(LaunchSpec {
                internet_max_bandwidth_out: 101,
                ..spec()
            }),
            "InvalidInternetMaxBandwidthOut.Malformed"
        );
        assert_eq!(
            code(LaunchSpec {
                tags: vec![("aliyun-x".into(), "v".into())],
                ..spec()
            }),
            "InvalidTagKey.Malformed"
        );
        assert_eq!(
            code(LaunchSpec {
                tags: vec![("ACS:x".into(), "v".into())],
                ..spec()
            }),
            "InvalidTagKey.Malformed"
        );
        let many = (0..21).map(|i| (format!("k{i}"), String::new())).collect();
        assert_eq!(
            code(LaunchSpec {
                tags: many,
                ..spec()
            }),
            "InvalidTagCount"
        );
        assert_eq!(
            code(LaunchSpec {
                user_data: Some("!!".into()),
                ..spec()
            }),
            "InvalidUserData.Base64FormatInvalid"
        );
        assert_eq!(
            code(LaunchSpec {
                client_token: Some("x".repeat(65)),
                ..spec()
            }),
            "InvalidClientToken.Malformed"
        );
        assert_eq!(
            code(LaunchSpec {
                system_disk_size: Some(10),
                ..spec()
            }),
            "InvalidSystemDiskSize.ValueNotSupported"
        );
    }

    #[test]
    fn passwords_need_three_classes() {
        assert!(check_password("Abcdef12").is_ok());
        assert!(check_password("abcdef12").is_err());
        assert!(check_password("Ab1!").is_err());
        assert!(check_password("Abcdef1 ").is_err());
    }

    #[test]
    fn placement_comes_from_the_network() {
        let s = LaunchSpec {
            vswitch_id: Some(crate::defaults::vswitch_id("cn-hangzhou-h")),
            ..spec()
        };
        assert_eq!(resolve(&s).unwrap().placement.zone_id, "cn-hangzhou-h");
        let bare = LaunchSpec::new(
            "cn-hangzhou",
            "centos_7_8_x64_20G_alibase_20200519.vhd",
            "ecs.g6.large",
        );
        assert_eq!(resolve(&bare).unwrap_err().code, "MissingParameter");
        let s = LaunchSpec {
            vswitch_id: Some("vsw-abc".into()),
            ..spec()
        };
        assert_eq!(resolve(&s).unwrap_err().code, "InvalidVSwitchId.NotFound");
        let s = LaunchSpec {
            instance_charge_type: Some("PrePaid".into()),
            ..spec()
        };
        assert_eq!(resolve(&s).unwrap_err().code, "MissingParamter");
    }
}
