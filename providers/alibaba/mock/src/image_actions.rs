//! DescribeImages: the catalogue's public images, as ECS describes system images. The mock has
//! no custom, shared or marketplace images, so `ImageOwnerAlias` other than `system` finds
//! none, as does any `Status` but `Available`.

use serde_json::{Value, json};

use crate::action::{ActionContext, page_of, requested_region};
use crate::catalog::{self, Image};
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// The release date in an image ID (`…_alibase_20200519.vhd`), as the image's creation time.
fn creation_time(image: &Image) -> String {
    image
        .id
        .split(['_', '.'])
        .find(|part| part.len() == 8 && part.bytes().all(|b| b.is_ascii_digit()))
        .map(|d| format!("{}-{}-{}T00:00:00Z", &d[0..4], &d[4..6], &d[6..8]))
        .unwrap_or_default()
}

/// The OS family ECS names an image's platform by (`CentOS`, `Ubuntu`, `Windows Server 2019`…).
fn platform(image: &Image) -> String {
    let words: Vec<&str> = image.os_name_en.split_whitespace().collect();
    match words.as_slice() {
        ["Windows", "Server", year, ..] => format!("Windows Server {year}"),
        ["Alibaba", "Cloud", "Linux", ..] => "Aliyun".to_owned(),
        [first, ..] => (*first).to_owned(),
        [] => String::new(),
    }
}

/// `Features`: the mock's images claim none of the optional ones.
fn features() -> Value {
    json!({
        "NvmeSupport": "unsupported",
        "ImdsSupport": "v1",
        "CpuOnlineUpgrade": "unsupported",
        "CpuOnlineDowngrade": "unsupported",
        "MemoryOnlineUpgrade": "unsupported",
        "MemoryOnlineDowngrade": "unsupported",
    })
}

/// The image's one disk, its system disk.
fn system_disk(image: &Image) -> Value {
    json!({
        "Device": "/dev/xvda",
        "Size": image.size_gib.to_string(),
        "Type": "system",
        "SnapshotId": "",
        "Format": "",
        "ImportOSSBucket": "",
        "ImportOSSObject": "",
        "Progress": "100%",
        "RemainTime": 0,
        "Encrypted": false,
    })
}

fn view(image: &Image) -> Value {
    let linux = image.os_type == "linux";
    json!({
        "ImageId": image.id,
        "ImageName": image.id,
        "Description": "",
        "ImageVersion": "",
        "ImageFamily": "",
        "ImageOwnerAlias": "system",
        "ImageOwnerId": 0,
        "OSName": image.os_name,
        "OSNameEn": image.os_name_en,
        "OSType": image.os_type,
        "Platform": platform(image),
        "Architecture": "x86_64",
        "BootMode": "BIOS",
        "Size": image.size_gib,
        "Status": "Available",
        "Progress": "100%",
        "Usage": "instance",
        "CreationTime": creation_time(image),
        "IsPublic": true,
        "IsCopied": false,
        "IsSelfShared": "",
        "IsSubscribed": false,
        "IsSupportCloudinit": linux,
        "IsSupportIoOptimized": true,
        "LoginAsNonRootSupported": false,
        "LicenseType": "",
        "ProductCode": "",
        "SupplierName": "",
        "ResourceGroupId": "",
        "Features": features(),
        "DetectionOptions": {"Status": "", "Items": {"Item": []}},
        "DiskDeviceMappings": {"DiskDeviceMapping": [system_disk(image)]},
        "Tags": {"Tag": []},
    })
}

pub fn describe_images(
    _store: &mut Store,
    _ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = requested_region(p)?;
    let ids: Option<Vec<&str>> = p
        .get("ImageId")
        .map(|raw| raw.split(',').map(str::trim).collect());
    let name = p.get("ImageName");
    let os_type = p.get("OSType");
    let owner_ok = p.get("ImageOwnerAlias").is_none_or(|o| o == "system");
    // Status takes a comma-separated list; the default is Available.
    let status_ok = p
        .get("Status")
        .is_none_or(|s| s.split(',').any(|one| one.trim() == "Available"));
    let arch_ok = p.get("Architecture").is_none_or(|a| a == "x86_64");
    // Every catalogue image runs on every catalogue type: a type only has to exist.
    p.get("InstanceType")
        .map(catalog::instance_type)
        .transpose()?;
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
    let chosen: Vec<&Image> = catalog::images()
        .iter()
        .filter(|_| owner_ok && status_ok && arch_ok)
        .filter(|i| ids.as_ref().is_none_or(|ids| ids.contains(&i.id)))
        .filter(|i| name.is_none_or(|n| crate::glob::glob_match(n, i.id)))
        .filter(|i| os_type.is_none_or(|o| o == i.os_type))
        .collect();
    let (total, page) = page_of(&chosen, number, size);
    Ok(json!({
        "RegionId": region.id,
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "Images": {"Image": page.iter().map(|i| view(i)).collect::<Vec<_>>()},
    }))
}
