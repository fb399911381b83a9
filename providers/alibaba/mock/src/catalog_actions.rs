//! What the catalogue offers, as ECS describes it: DescribeAvailableResource (zones, instance
//! types, disk categories and network types of a region, by `DestinationResource`) and
//! DescribeImages (`image_actions`). They answer from the same catalogue RunInstances and the
//! disk actions accept, so what they list can be launched: every zone of the region, every
//! type (the out-of-stock one as `SoldOut`/`WithoutStock`), the cloud disk categories with
//! their size ranges, and the `vpc` network.

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, requested_region};
use crate::catalog::{self, InstanceType};
use crate::disks::rules::{CATEGORIES, MAX_SYSTEM_DISK_GIB, size_range};
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// The actions of this module and `image_actions`, with their handlers.
pub const ACTIONS: &[Action] = &[
    Action::fields("DescribeAvailableResource", describe_available_resource),
    Action::fields("DescribeImages", crate::image_actions::describe_images),
];

/// What a call asks about (`DestinationResource`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Destination {
    Zone,
    IoOptimized,
    InstanceType,
    SystemDisk,
    DataDisk,
    Network,
}

impl Destination {
    fn parse(p: &ReceivedParams) -> Result<Self, ErrorResponse> {
        Ok(match p.required("DestinationResource")? {
            "Zone" => Self::Zone,
            "IoOptimized" => Self::IoOptimized,
            "InstanceType" => Self::InstanceType,
            "SystemDisk" => Self::SystemDisk,
            "DataDisk" => Self::DataDisk,
            "Network" => Self::Network,
            _ => return Err(ErrorResponse::invalid("DestinationResource")),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Zone => "Zone",
            Self::IoOptimized => "IoOptimized",
            Self::InstanceType => "InstanceType",
            Self::SystemDisk => "SystemDisk",
            Self::DataDisk => "DataDisk",
            Self::Network => "Network",
        }
    }
}

/// One `SupportedResource`.
fn supported(value: &str, in_stock: bool, range: Option<(u32, u32)>) -> Value {
    let mut v = json!({
        "Value": value,
        "Status": if in_stock { "Available" } else { "SoldOut" },
        "StatusCategory": if in_stock { "WithStock" } else { "WithoutStock" },
    });
    if let Some((min, max)) = range {
        v["Min"] = json!(min);
        v["Max"] = json!(max);
        v["Unit"] = json!("GiB");
    }
    v
}

/// The instance types the call's `InstanceType`, `Cores` and `Memory` (GiB) filters keep.
fn wanted_types(p: &ReceivedParams) -> Result<Vec<&'static InstanceType>, ErrorResponse> {
    let type_id = p.get("InstanceType");
    let cores = p.number::<u32>("Cores")?;
    let memory = p.number::<f64>("Memory")?;
    Ok(catalog::instance_types()
        .iter()
        .filter(|t| type_id.is_none_or(|id| id == t.id))
        .filter(|t| cores.is_none_or(|c| c == t.cpu))
        .filter(|t| memory.is_none_or(|m| (m * 1024.0).round() as u32 == t.memory_mib))
        .collect())
}

/// The cloud disk categories, or the one `wanted` names.
fn categories(wanted: Option<&str>) -> Vec<&'static str> {
    CATEGORIES
        .iter()
        .filter(|c| wanted.is_none_or(|w| w == **c))
        .copied()
        .collect()
}

/// The resources of `destination` in a zone where `types` are sold.
fn resources(destination: Destination, types: &[&InstanceType], p: &ReceivedParams) -> Vec<Value> {
    match destination {
        Destination::Zone => vec![supported("", true, None)],
        Destination::IoOptimized => vec![supported("optimized", true, None)],
        Destination::Network => vec![supported("vpc", true, None)],
        Destination::InstanceType => types
            .iter()
            .map(|t| supported(t.id, t.in_stock, None))
            .collect(),
        Destination::SystemDisk => categories(p.get("SystemDiskCategory"))
            .into_iter()
            .map(|c| supported(c, true, Some((20, MAX_SYSTEM_DISK_GIB))))
            .collect(),
        Destination::DataDisk => categories(p.get("DataDiskCategory"))
            .into_iter()
            .map(|c| supported(c, true, Some(size_range(c, None))))
            .collect(),
    }
}

fn describe_available_resource(
    _store: &mut Store,
    _ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = requested_region(p)?;
    let destination = Destination::parse(p)?;
    match p.get("InstanceChargeType") {
        None | Some("PrePaid" | "PostPaid") => {}
        Some(_) => return Err(ErrorResponse::invalid("InstanceChargeType")),
    }
    match p.get("ResourceType") {
        None | Some("instance" | "disk" | "reservedinstance" | "ddh") => {}
        Some(_) => return Err(ErrorResponse::invalid("ResourceType")),
    }
    // A filter on the network or I/O optimization the mock does not sell finds nothing.
    let sells_filters = p.get("NetworkCategory").is_none_or(|n| n == "vpc")
        && p.get("IoOptimized").is_none_or(|o| o == "optimized");
    let types = wanted_types(p)?;
    let zone_id = p.get("ZoneId");
    let zones: Vec<Value> = region
        .zones()
        .filter(|z| zone_id.is_none_or(|w| w == z))
        .filter(|_| sells_filters && !types.is_empty())
        .filter_map(|z| {
            let mut found = resources(destination, &types, p);
            if destination == Destination::Zone {
                found = vec![supported(&z, true, None)];
            }
            (!found.is_empty()).then(|| {
                json!({
                    "RegionId": region.id,
                    "ZoneId": z,
                    "Status": "Available",
                    "StatusCategory": "WithStock",
                    "AvailableResources": {"AvailableResource": [{
                        "Type": destination.name(),
                        "SupportedResources": {"SupportedResource": found},
                    }]},
                })
            })
        })
        .collect();
    Ok(json!({"AvailableZones": {"AvailableZone": zones}}))
}
