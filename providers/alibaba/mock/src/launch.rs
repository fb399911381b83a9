//! The checks RunInstances applies to a [`LaunchSpec`] and what they resolve it to
//! ([`ResolvedLaunch`]), shared by the HTTP action and the library API.

use jiff::Timestamp;

use crate::catalog::{self, CatalogRegion, Image, InstanceType};
use crate::disks::DiskSpec;
use crate::disks::rules;
use crate::error::{ErrorResponse, truncate};
use crate::instance::{MetadataOptions, SpotSettings};
use crate::launch_spec::{DataDiskSpec, LaunchSpec};
use crate::network::{AccountNetwork, Placement};
use crate::param_checks;
use crate::subscription::Subscription;

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
        let category = rules::category(self.category.as_deref().unwrap_or("cloud_efficiency"))
            .map_err(|_| {
                ErrorResponse::bad_request(
                    "InvalidDataDiskCategory.ValueNotSupported",
                    format!(
                        "The specified DataDisk.N.Category is not valid: use one of {}.",
                        rules::CATEGORIES.join(", ")
                    ),
                )
            })?;
        let level = rules::performance_level(category, self.performance_level.as_deref())?;
        let size = self
            .size
            .ok_or_else(|| ErrorResponse::missing("DataDisk.N.Size"))?;
        rules::check_data_disk_size(
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
            param_checks::check_instance_name(name)?;
        }
        if let Some(host) = &self.host_name {
            param_checks::check_host_name(host)?;
        }
        if let Some(description) = &self.description {
            param_checks::check_description(description)?;
        }
        param_checks::check_bandwidth(self.internet_max_bandwidth_out)?;
        if let Some(token) = &self.client_token {
            param_checks::check_client_token(token)?;
        }
        if let Some(data) = &self.user_data {
            param_checks::check_user_data(data)?;
        }
        crate::tags::check_tags(&self.tags)?;
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
            param_checks::check_ram_role_name(role)?;
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
            category: rules::category(system_disk_category).map_err(|_| {
                ErrorResponse::bad_request(
                    "InvalidSystemDiskCategory.ValueNotSupported",
                    "The specified SystemDisk.Category is not supported.",
                )
            })?,
            size: system_disk_size,
            performance_level: rules::performance_level(
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
        s.resolve(&AccountNetwork::seeded(Timestamp::now()), Timestamp::now())
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
            .resolve(&AccountNetwork::seeded(Timestamp::now()), Timestamp::now())
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
