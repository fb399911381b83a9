//! The built-in catalogue: regions with their zones, instance types and public images.
//!
//! Instance type `ecs.gn6i-c4g1.xlarge` is listed but permanently out of stock
//! ([`InstanceType::in_stock`] is false): launching it, or changing an instance to it, fails with
//! `OperationDenied.NoStock`, so that error can be triggered deterministically.

use crate::error::ErrorResponse;

/// A region and its zones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogRegion {
    /// Region ID, e.g. `cn-hangzhou`.
    pub id: &'static str,
    /// Display name.
    pub local_name: &'static str,
    /// Zone letters; zone IDs are `<region-id>-<letter>`.
    zone_letters: &'static str,
}

impl CatalogRegion {
    /// The public ECS endpoint host of the region.
    pub fn endpoint(&self) -> String {
        if self.id == "cn-hangzhou" {
            "ecs-cn-hangzhou.aliyuncs.com".to_owned()
        } else {
            format!("ecs.{}.aliyuncs.com", self.id)
        }
    }

    /// Zone IDs in order; the first one is the default zone.
    pub fn zones(&self) -> impl Iterator<Item = String> + '_ {
        self.zone_letters
            .chars()
            .map(|c| format!("{}-{c}", self.id))
    }

    /// Whether `zone_id` is a zone of this region.
    pub fn has_zone(&self, zone_id: &str) -> bool {
        zone_id
            .strip_prefix(self.id)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|letter| letter.len() == 1 && self.zone_letters.contains(letter))
    }

    /// The first zone.
    pub fn default_zone(&self) -> String {
        self.zones()
            .next()
            .unwrap_or_else(|| format!("{}-a", self.id))
    }
}

const REGIONS: &[CatalogRegion] = &[
    region("cn-qingdao", "华北1（青岛）", "bc"),
    region("cn-beijing", "华北2（北京）", "abcdefghijkl"),
    region("cn-zhangjiakou", "华北3（张家口）", "abc"),
    region("cn-huhehaote", "华北5（呼和浩特）", "ab"),
    region("cn-wulanchabu", "华北6（乌兰察布）", "abc"),
    region("cn-hangzhou", "华东1（杭州）", "bghijk"),
    region("cn-shanghai", "华东2（上海）", "befglmn"),
    region("cn-shenzhen", "华南1（深圳）", "acdef"),
    region("cn-heyuan", "华南2（河源）", "ab"),
    region("cn-guangzhou", "华南3（广州）", "ab"),
    region("cn-chengdu", "西南1（成都）", "ab"),
    region("cn-hongkong", "中国香港", "bcd"),
    region("ap-northeast-1", "日本（东京）", "abc"),
    region("ap-northeast-2", "韩国（首尔）", "a"),
    region("ap-southeast-1", "新加坡", "abc"),
    region("ap-southeast-3", "马来西亚（吉隆坡）", "ab"),
    region("ap-southeast-5", "印度尼西亚（雅加达）", "abc"),
    region("ap-southeast-6", "菲律宾（马尼拉）", "a"),
    region("ap-southeast-7", "泰国（曼谷）", "a"),
    region("us-west-1", "美国（硅谷）", "ab"),
    region("us-east-1", "美国（弗吉尼亚）", "ab"),
    region("eu-central-1", "德国（法兰克福）", "abc"),
    region("eu-west-1", "英国（伦敦）", "ab"),
    region("me-east-1", "阿联酋（迪拜）", "a"),
    region("me-central-1", "沙特（利雅得）", "a"),
];

const fn region(
    id: &'static str,
    local_name: &'static str,
    zone_letters: &'static str,
) -> CatalogRegion {
    CatalogRegion {
        id,
        local_name,
        zone_letters,
    }
}

/// Every region, in catalogue order.
pub fn regions() -> &'static [CatalogRegion] {
    REGIONS
}

/// The region, or `InvalidRegionId.NotFound`.
pub fn region_by_id(id: &str) -> Result<&'static CatalogRegion, ErrorResponse> {
    REGIONS
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(ErrorResponse::region_not_found)
}

/// An instance type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstanceType {
    /// Type ID, e.g. `ecs.g6.large`.
    pub id: &'static str,
    /// vCPUs.
    pub cpu: u32,
    /// Memory in MiB (what `DescribeInstances` reports as `Memory`).
    pub memory_mib: u32,
    /// False for the type that always answers `OperationDenied.NoStock`.
    pub in_stock: bool,
}

const fn itype(id: &'static str, cpu: u32, memory_gib: u32) -> InstanceType {
    InstanceType {
        id,
        cpu,
        memory_mib: memory_gib * 1024,
        in_stock: true,
    }
}

/// The instance type documented as permanently out of stock.
pub const OUT_OF_STOCK_TYPE: &str = "ecs.gn6i-c4g1.xlarge";

const INSTANCE_TYPES: &[InstanceType] = &[
    itype("ecs.t5-lc1m1.small", 1, 1),
    itype("ecs.t5-lc1m2.small", 1, 2),
    itype("ecs.t5-c1m2.large", 2, 4),
    itype("ecs.t6-c1m1.large", 2, 2),
    itype("ecs.s6-c1m1.small", 1, 1),
    itype("ecs.s6-c1m2.small", 1, 2),
    itype("ecs.n4.small", 1, 2),
    itype("ecs.g5.large", 2, 8),
    itype("ecs.g6.large", 2, 8),
    itype("ecs.g6.xlarge", 4, 16),
    itype("ecs.g6.2xlarge", 8, 32),
    itype("ecs.g6.4xlarge", 16, 64),
    itype("ecs.c6.large", 2, 4),
    itype("ecs.c6.xlarge", 4, 8),
    itype("ecs.c6.2xlarge", 8, 16),
    itype("ecs.r6.large", 2, 16),
    itype("ecs.r6.xlarge", 4, 32),
    itype("ecs.g7.large", 2, 8),
    itype("ecs.g7.xlarge", 4, 16),
    itype("ecs.c7.large", 2, 4),
    itype("ecs.r7.large", 2, 16),
    itype("ecs.u1-c1m2.large", 2, 4),
    InstanceType {
        id: OUT_OF_STOCK_TYPE,
        cpu: 4,
        memory_mib: 15 * 1024,
        in_stock: false,
    },
];

/// Every instance type, in catalogue order.
pub fn instance_types() -> &'static [InstanceType] {
    INSTANCE_TYPES
}

/// The instance type, or `InvalidInstanceType.ValueNotSupported`.
pub fn instance_type(id: &str) -> Result<&'static InstanceType, ErrorResponse> {
    INSTANCE_TYPES.iter().find(|t| t.id == id).ok_or_else(|| {
        ErrorResponse::bad_request(
            "InvalidInstanceType.ValueNotSupported",
            "The specified InstanceType does not exist or beyond the permitted range.",
        )
    })
}

/// The instance type if it can be launched now, or `OperationDenied.NoStock`.
pub fn instance_type_in_stock(id: &str) -> Result<&'static InstanceType, ErrorResponse> {
    let t = instance_type(id)?;
    if t.in_stock {
        Ok(t)
    } else {
        Err(ErrorResponse::no_stock())
    }
}

/// A public image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image {
    /// Image ID.
    pub id: &'static str,
    /// `OSName` as ECS reports it.
    pub os_name: &'static str,
    /// `OSNameEn`.
    pub os_name_en: &'static str,
    /// `linux` or `windows`.
    pub os_type: &'static str,
    /// Minimum system disk size in GiB.
    pub size_gib: u32,
}

const fn image(
    id: &'static str,
    os_name: &'static str,
    os_name_en: &'static str,
    os_type: &'static str,
    size_gib: u32,
) -> Image {
    Image {
        id,
        os_name,
        os_name_en,
        os_type,
        size_gib,
    }
}

const IMAGES: &[Image] = &[
    image(
        "centos_7_8_x64_20G_alibase_20200519.vhd",
        "CentOS  7.8 64位",
        "CentOS  7.8 64 bit",
        "linux",
        20,
    ),
    image(
        "centos_7_9_x64_20G_alibase_20240628.vhd",
        "CentOS  7.9 64位",
        "CentOS  7.9 64 bit",
        "linux",
        20,
    ),
    image(
        "ubuntu_20_04_x64_20G_alibase_20240130.vhd",
        "Ubuntu  20.04 64位",
        "Ubuntu  20.04 64 bit",
        "linux",
        20,
    ),
    image(
        "ubuntu_22_04_x64_20G_alibase_20240130.vhd",
        "Ubuntu  22.04 64位",
        "Ubuntu  22.04 64 bit",
        "linux",
        20,
    ),
    image(
        "debian_12_5_x64_20G_alibase_20240401.vhd",
        "Debian  12.5 64位",
        "Debian  12.5 64 bit",
        "linux",
        20,
    ),
    image(
        "aliyun_3_x64_20G_alibase_20240528.vhd",
        "Alibaba Cloud Linux  3.2104 LTS 64位",
        "Alibaba Cloud Linux  3.2104 LTS 64 bit",
        "linux",
        20,
    ),
    image(
        "aliyun_2_1903_x64_20G_alibase_20240628.vhd",
        "Alibaba Cloud Linux  2.1903 LTS 64位",
        "Alibaba Cloud Linux  2.1903 LTS 64 bit",
        "linux",
        20,
    ),
    image(
        "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd",
        "Windows Server  2019 数据中心版 64位中文版",
        "Windows Server  2019 Data Center Edition 64bit Chinese Edition",
        "windows",
        40,
    ),
    image(
        "win2022_21H2_x64_dtc_en-us_40G_alibase_20240613.vhd",
        "Windows Server  2022 数据中心版 64位英文版",
        "Windows Server  2022 Data Center Edition 64bit English Edition",
        "windows",
        40,
    ),
];

/// Every public image, in catalogue order.
pub fn images() -> &'static [Image] {
    IMAGES
}

/// The image, or `InvalidImageId.NotFound`.
pub fn image_by_id(id: &str) -> Result<&'static Image, ErrorResponse> {
    IMAGES.iter().find(|i| i.id == id).ok_or_else(|| {
        ErrorResponse::not_found(
            "InvalidImageId.NotFound",
            "The specified ImageId does not exist.",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_region_is_present_with_zones() {
        for id in [
            "cn-qingdao",
            "cn-beijing",
            "cn-zhangjiakou",
            "cn-huhehaote",
            "cn-wulanchabu",
            "cn-hangzhou",
            "cn-shanghai",
            "cn-shenzhen",
            "cn-heyuan",
            "cn-guangzhou",
            "cn-chengdu",
            "cn-hongkong",
            "ap-northeast-1",
            "ap-northeast-2",
            "ap-southeast-1",
            "ap-southeast-3",
            "ap-southeast-5",
            "ap-southeast-6",
            "ap-southeast-7",
            "us-west-1",
            "us-east-1",
            "eu-central-1",
            "eu-west-1",
            "me-east-1",
            "me-central-1",
        ] {
            let r = region_by_id(id).unwrap();
            assert!(r.zones().count() >= 1);
            assert!(r.has_zone(&r.default_zone()));
        }
        assert_eq!(
            region_by_id("mars-1").unwrap_err().code,
            "InvalidRegionId.NotFound"
        );
    }

    #[test]
    fn zones_and_endpoints() {
        let hz = region_by_id("cn-hangzhou").unwrap();
        assert_eq!(hz.endpoint(), "ecs-cn-hangzhou.aliyuncs.com");
        assert!(hz.has_zone("cn-hangzhou-h"));
        assert!(!hz.has_zone("cn-hangzhou-a"));
        assert!(!hz.has_zone("cn-hangzhou-"));
        assert!(!hz.has_zone("cn-shanghai-b"));
        assert_eq!(
            region_by_id("cn-beijing").unwrap().endpoint(),
            "ecs.cn-beijing.aliyuncs.com"
        );
    }

    #[test]
    fn types_and_images() {
        let g6 = instance_type("ecs.g6.large").unwrap();
        assert_eq!((g6.cpu, g6.memory_mib), (2, 8192));
        assert!(instance_type_in_stock("ecs.c6.large").is_ok());
        assert_eq!(
            instance_type_in_stock(OUT_OF_STOCK_TYPE).unwrap_err().code,
            "OperationDenied.NoStock"
        );
        assert_eq!(
            instance_type("ecs.nope").unwrap_err().code,
            "InvalidInstanceType.ValueNotSupported"
        );
        assert_eq!(
            image_by_id("centos_7_8_x64_20G_alibase_20200519.vhd")
                .unwrap()
                .os_type,
            "linux"
        );
        assert_eq!(image_by_id("x").unwrap_err().status, 404);
    }
}
