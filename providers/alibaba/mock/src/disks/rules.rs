//! The size and performance-level rules of each disk category, shared by CreateDisk, ResizeDisk,
//! ModifyDiskSpec and RunInstances' disks.

use crate::error::ErrorResponse;

/// Disk categories ECS sells for cloud disks.
pub const CATEGORIES: &[&str] = &[
    "cloud",
    "cloud_efficiency",
    "cloud_ssd",
    "cloud_essd",
    "cloud_auto",
    "cloud_essd_entry",
];

/// ESSD performance levels.
pub const PERFORMANCE_LEVELS: &[&str] = &["PL0", "PL1", "PL2", "PL3"];

/// Largest system disk, in GiB.
pub const MAX_SYSTEM_DISK_GIB: u32 = 2048;

/// The size range, in GiB, of a data disk of `category` (for `cloud_essd`, of its performance
/// level, `PL1` by default).
pub fn size_range(category: &str, performance_level: Option<&str>) -> (u32, u32) {
    match (category, performance_level.unwrap_or("PL1")) {
        ("cloud", _) => (5, 2000),
        ("cloud_essd", "PL0") => (1, 65_536),
        ("cloud_essd", "PL2") => (461, 65_536),
        ("cloud_essd", "PL3") => (1261, 65_536),
        ("cloud_essd", _) => (20, 65_536),
        ("cloud_auto", _) => (1, 65_536),
        ("cloud_essd_entry", _) => (10, 32_768),
        _ => (20, 32_768),
    }
}

/// Resolves a category name to its `'static` form; `InvalidDiskCategory.ValueNotSupported`
/// otherwise.
pub fn category(name: &str) -> Result<&'static str, ErrorResponse> {
    CATEGORIES
        .iter()
        .copied()
        .find(|c| *c == name)
        .ok_or_else(|| {
            ErrorResponse::bad_request(
                "InvalidDiskCategory.ValueNotSupported",
                format!(
                    "The specified parameter \"DiskCategory\" is not valid: use one of {}.",
                    CATEGORIES.join(", ")
                ),
            )
        })
}

/// Resolves a performance level for a disk of `category`: only `cloud_essd` disks have one
/// (`PL1` by default).
pub fn performance_level(
    category: &str,
    level: Option<&str>,
) -> Result<Option<&'static str>, ErrorResponse> {
    match (category, level) {
        ("cloud_essd", None) => Ok(Some("PL1")),
        ("cloud_essd", Some(level)) => PERFORMANCE_LEVELS
            .iter()
            .copied()
            .find(|l| *l == level)
            .map(Some)
            .ok_or_else(malformed_performance_level),
        (_, None) => Ok(None),
        (_, Some(_)) => Err(ErrorResponse::bad_request(
            "InvalidParameter.Conflict",
            "PerformanceLevel applies to cloud_essd disks only; omit it or use DiskCategory cloud_essd.",
        )),
    }
}

pub fn malformed_performance_level() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidPerformanceLevel.Malformed",
        "The specified parameter PerformanceLevel is not valid: use PL0, PL1, PL2 or PL3.",
    )
}

pub fn level_size_mismatch(level: &str, size: u32) -> ErrorResponse {
    let (min, max) = size_range("cloud_essd", Some(level));
    ErrorResponse::forbidden(
        "OperationDenied.PerformanceLevelNotMatch",
        format!(
            "The specified PerformanceLevel and disk size do not match: {level} needs {min} to {max} GiB, the disk has {size} GiB; resize the disk first."
        ),
    )
}

/// Checks a data disk's size against its category and performance level.
pub fn check_data_disk_size(
    category: &str,
    level: Option<&str>,
    size: u32,
    code: &'static str,
) -> Result<(), ErrorResponse> {
    let (min, max) = size_range(category, level);
    if (min..=max).contains(&size) {
        return Ok(());
    }
    if let Some(level) = level.filter(|_| category == "cloud_essd" && size <= 65_536) {
        return Err(level_size_mismatch(level, size));
    }
    Err(ErrorResponse::bad_request(
        code,
        format!(
            "The size of a {category} disk must be between {min} and {max} GiB; {size} was given."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_category_and_level() {
        assert!(check_data_disk_size("cloud_essd", Some("PL1"), 20, "X").is_ok());
        assert_eq!(
            check_data_disk_size("cloud_essd", Some("PL2"), 100, "X")
                .unwrap_err()
                .code,
            "OperationDenied.PerformanceLevelNotMatch"
        );
        assert_eq!(
            check_data_disk_size("cloud", None, 2001, "InvalidSize.ValueNotSupported")
                .unwrap_err()
                .code,
            "InvalidSize.ValueNotSupported"
        );
        assert_eq!(
            performance_level("cloud_ssd", Some("PL1"))
                .unwrap_err()
                .code,
            "InvalidParameter.Conflict"
        );
        assert_eq!(
            performance_level("cloud_essd", Some("PL9"))
                .unwrap_err()
                .code,
            "InvalidPerformanceLevel.Malformed"
        );
        assert_eq!(performance_level("cloud_essd", None).unwrap(), Some("PL1"));
    }
}
