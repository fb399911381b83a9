//! Changes to a disk: ResizeDisk, ModifyDiskSpec, ModifyDiskAttribute, its tags and DeleteDisk,
//! with ECS's status and size rules.

use super::rules;
use super::{
    AttributeChange, DiskStore, DiskType, InstanceFacts, incorrect_disk_status, instance_status_for,
};
use crate::error::ErrorResponse;
use crate::instance::Status;

impl DiskStore {
    /// ResizeDisk: grows a disk (never shrinks it). `online` needs the disk attached to a
    /// Running instance; `instance` is the one it is attached to, if any.
    pub fn resize(
        &mut self,
        account_id: &str,
        disk_id: &str,
        new_size: u32,
        online: bool,
        instance: Option<&InstanceFacts>,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}",
                disk.status()
            )));
        }
        if new_size <= disk.size {
            return Err(ErrorResponse::forbidden(
                "InvalidDiskSize.TooSmall",
                format!(
                    "Specified new disk size is less than the original disk size: NewSize must be more than the current {} GiB; disks never shrink.",
                    disk.size
                ),
            ));
        }
        let max = match disk.disk_type {
            DiskType::System => rules::MAX_SYSTEM_DISK_GIB,
            DiskType::Data => rules::size_range(disk.category, disk.performance_level).1,
        };
        if new_size > max {
            return Err(ErrorResponse::forbidden(
                "InvalidDataDiskSize.ValueNotSupported",
                format!(
                    "The specified NewSize is beyond the permitted range: a {} {} disk holds at most {max} GiB.",
                    disk.category,
                    disk.disk_type.as_str()
                ),
            ));
        }
        if let Some(instance) = instance
            && !matches!(instance.status, Status::Running | Status::Stopped)
        {
            return Err(instance_status_for(
                "the disk's instance must be Running or Stopped",
            ));
        }
        if online {
            match instance {
                None => {
                    return Err(ErrorResponse::forbidden(
                        "IncorrectDiskStatus",
                        "The current status of the resource does not support resize online: the disk is not attached; resize it offline.",
                    ));
                }
                Some(i) if i.status != Status::Running => {
                    return Err(ErrorResponse::forbidden(
                        "IncorrectInstanceStatus",
                        "The current status of the resource does not support resize online: the instance is not Running; resize offline.",
                    ));
                }
                Some(_) => {}
            }
        }
        disk.size = new_size;
        Ok(())
    }

    /// ModifyDiskSpec: the performance level of a `cloud_essd` disk, or its category.
    pub fn modify_spec(
        &mut self,
        account_id: &str,
        disk_id: &str,
        new_category: Option<&'static str>,
        level: Option<&str>,
        instance: Option<&InstanceFacts>,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}",
                disk.status()
            )));
        }
        let category = new_category.unwrap_or(disk.category);
        if level.is_some() && category != "cloud_essd" {
            return Err(ErrorResponse::forbidden(
                "OperationDenied",
                "The type of the disk does not support the operation: only cloud_essd disks have a PerformanceLevel.",
            ));
        }
        let level = match level {
            Some(level) => Some(
                rules::PERFORMANCE_LEVELS
                    .iter()
                    .copied()
                    .find(|l| *l == level)
                    .ok_or_else(rules::malformed_performance_level)?,
            ),
            None if category == "cloud_essd" => disk.performance_level.or(Some("PL1")),
            None => None,
        };
        let (min, max) = rules::size_range(category, level);
        if !(min..=max).contains(&disk.size) {
            return Err(match level {
                Some(level) => rules::level_size_mismatch(level, disk.size),
                None => ErrorResponse::forbidden(
                    "OperationDenied",
                    format!(
                        "The type of the disk does not support the operation: a {category} disk holds {min} to {max} GiB."
                    ),
                ),
            });
        }
        if let Some(instance) = instance
            && !matches!(instance.status, Status::Running | Status::Stopped)
        {
            return Err(instance_status_for(
                "the disk's instance must be Running or Stopped",
            ));
        }
        disk.category = category;
        disk.performance_level = level;
        Ok(())
    }

    /// ModifyDiskAttribute: name, description and the release flags.
    pub fn modify_attribute(
        &mut self,
        account_id: &str,
        disk_id: &str,
        change: &AttributeChange,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if let Some(name) = &change.name {
            disk.name.clone_from(name);
        }
        if let Some(description) = &change.description {
            disk.description.clone_from(description);
        }
        if let Some(flag) = change.delete_with_instance {
            disk.delete_with_instance = flag;
        }
        if let Some(flag) = change.delete_auto_snapshot {
            disk.delete_auto_snapshot = flag;
        }
        if let Some(flag) = change.enable_auto_snapshot {
            disk.enable_auto_snapshot = flag;
        }
        Ok(())
    }

    /// Adds or overwrites tags on a disk.
    pub fn tag(
        &mut self,
        account_id: &str,
        disk_id: &str,
        tags: &crate::tags::Tags,
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        crate::tags::merge(&mut disk.tags, tags)
    }

    /// Removes tag keys from a disk.
    pub fn untag(
        &mut self,
        account_id: &str,
        disk_id: &str,
        keys: &[String],
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        disk.tags.retain(|(k, _)| !keys.contains(k));
        Ok(())
    }

    /// DeleteDisk: releases an `Available` disk; an unknown ID is ignored, as ECS documents.
    pub fn delete(&mut self, account_id: &str, disk_id: &str) -> Result<(), ErrorResponse> {
        let Ok(disk) = self.find(account_id, disk_id) else {
            return Ok(());
        };
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}; release it once it is Available",
                disk.status()
            )));
        }
        if disk.instance_id.is_some() {
            return Err(ErrorResponse::forbidden(
                "DiskStillAttached",
                "The disk is still attached to an instance; detach it with DetachDisk first.",
            ));
        }
        self.disks.remove(disk_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::DiskSpec;
    use super::super::tests::{instance, now, spec};
    use super::*;

    #[test]
    fn resize_and_spec_rules() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let id = store
            .create(&acct, "cn-hangzhou", &spec(40), None, now())
            .unwrap();
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.resize("1", &id, 40, false, None)),
            "InvalidDiskSize.TooSmall"
        );
        assert_eq!(
            code(store.resize("1", &id, 30, false, None)),
            "InvalidDiskSize.TooSmall"
        );
        assert_eq!(
            code(store.resize("1", &id, 50, true, None)),
            "IncorrectDiskStatus"
        );
        assert_eq!(
            code(store.resize("1", &id, 50, true, Some(&instance(Status::Stopped)))),
            "IncorrectInstanceStatus"
        );
        store
            .resize("1", &id, 50, true, Some(&instance(Status::Running)))
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().size, 50);
        assert_eq!(
            code(store.modify_spec("1", &id, None, Some("PL2"), None)),
            "OperationDenied.PerformanceLevelNotMatch"
        );
        store
            .modify_spec("1", &id, None, Some("PL0"), None)
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().performance_level, Some("PL0"));
        assert_eq!(
            code(store.modify_spec("1", &id, None, Some("PLX"), None)),
            "InvalidPerformanceLevel.Malformed"
        );
        let ssd = store
            .create(
                &acct,
                "cn-hangzhou",
                &DiskSpec {
                    category: "cloud_ssd",
                    performance_level: None,
                    ..spec(40)
                },
                None,
                now(),
            )
            .unwrap();
        assert_eq!(
            code(store.modify_spec("1", &ssd, None, Some("PL1"), None)),
            "OperationDenied"
        );
    }
}
