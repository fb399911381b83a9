//! Attaching and detaching disks (`Attaching` / `Detaching` for the transition delay, as ECS
//! does), replacing an instance's system disk, and what releasing an instance does to its disks.

use std::time::Duration;

use jiff::Timestamp;

use super::{
    DiskSpec, DiskStore, DiskType, InstanceFacts, Transition, incorrect_disk_status,
    instance_status_for, until,
};
use crate::error::ErrorResponse;
use crate::instance::Status;

impl DiskStore {
    /// AttachDisk: an `Available` disk of the instance's zone, to a Running or Stopped instance.
    /// With `bootable`, a detached system disk goes back to its own Stopped instance as its
    /// system disk.
    pub fn attach(
        &mut self,
        account_id: &str,
        disk_id: &str,
        instance: &InstanceFacts,
        delete_with_instance: Option<bool>,
        bootable: bool,
        (now, delay): (Timestamp, Duration),
    ) -> Result<(), ErrorResponse> {
        let has_system_disk = self
            .of_instance(&instance.id)
            .iter()
            .any(|d| d.disk_type == DiskType::System);
        let device = self.free_device(&instance.id);
        let disk = self.find_mut(account_id, disk_id)?;
        if disk.zone_id != instance.zone_id {
            return Err(ErrorResponse::forbidden(
                "ResourcesNotInSameZone",
                format!(
                    "The specified instance and disk are not in the same zone: the disk is in {}, the instance in {}.",
                    disk.zone_id, instance.zone_id
                ),
            ));
        }
        if disk.status() != "Available" {
            return Err(ErrorResponse::forbidden(
                "IncorrectDiskStatus",
                format!(
                    "The operation is not supported in this status: the disk is {}, not Available.",
                    disk.status()
                ),
            ));
        }
        if bootable {
            if disk.home_instance_id.as_deref() != Some(instance.id.as_str()) || has_system_disk {
                return Err(ErrorResponse::forbidden(
                    "DiskId.ValueNotSupported",
                    "The specified parameter diskid is not supported: only a system disk detached from this instance can be attached as its system disk.",
                ));
            }
            if instance.status != Status::Stopped {
                return Err(instance_status_for(
                    "a system disk is attached only to a Stopped instance",
                ));
            }
        } else if !matches!(instance.status, Status::Running | Status::Stopped) {
            return Err(instance_status_for(
                "disks are attached only to Running or Stopped instances",
            ));
        }
        disk.instance_id = Some(instance.id.clone());
        disk.device = if bootable {
            "/dev/xvda".to_owned()
        } else {
            device
        };
        disk.attached_at = Some(now);
        disk.transition = until(now, delay).map(|t| (Transition::Attaching, t));
        if let Some(delete) = delete_with_instance {
            disk.delete_with_instance = delete;
        }
        Ok(())
    }

    /// DetachDisk: a data disk from a Running or Stopped instance, a system disk from a Stopped
    /// one only.
    pub fn detach(
        &mut self,
        account_id: &str,
        disk_id: &str,
        instance: &InstanceFacts,
        delete_with_instance: Option<bool>,
        (now, delay): (Timestamp, Duration),
    ) -> Result<(), ErrorResponse> {
        let disk = self.find_mut(account_id, disk_id)?;
        if let Some((Transition::Detaching, _)) = disk.transition {
            return Err(ErrorResponse::forbidden(
                "InvalidOperation.DiskDetachingFromThisEcs",
                "The specified disk is detaching from this ecs: wait until it is Available.",
            ));
        }
        if disk.transition.is_some() {
            return Err(incorrect_disk_status(&format!(
                "the disk is {}; try again once it is In_use",
                disk.status()
            )));
        }
        match disk.instance_id.as_deref() {
            None => {
                return Err(ErrorResponse::not_found(
                    "InvalidDisk.AlreadyDetached",
                    "The specified disk has been detached.",
                ));
            }
            Some(other) if other != instance.id => {
                return Err(ErrorResponse::forbidden(
                    "DependencyViolation",
                    "The specified disk has not been attached on the specified instance.",
                ));
            }
            Some(_) => {}
        }
        match (disk.disk_type, instance.status) {
            (DiskType::System, Status::Stopped) => {}
            (DiskType::System, _) => {
                return Err(instance_status_for(
                    "a system disk is detached only from a Stopped instance",
                ));
            }
            (DiskType::Data, Status::Running | Status::Stopped) => {}
            (DiskType::Data, _) => {
                return Err(instance_status_for(
                    "disks are detached only from Running or Stopped instances",
                ));
            }
        }
        match until(now, delay) {
            Some(t) => disk.transition = Some((Transition::Detaching, t)),
            None => {
                disk.instance_id = None;
                disk.device.clear();
                disk.detached_at = Some(now);
            }
        }
        disk.delete_with_instance = match disk.disk_type {
            DiskType::System => delete_with_instance.unwrap_or(true),
            DiskType::Data => false,
        };
        Ok(())
    }

    /// ReplaceSystemDisk: the instance's system disk is released and a new one, of the same
    /// category, performance level and encryption, made from `image_id` takes its place (a new
    /// disk ID). A size below the old disk's is refused. Returns the new disk's ID.
    pub fn replace_system_disk(
        &mut self,
        instance_id: &str,
        image: (&str, u32),
        size: Option<u32>,
        now: Timestamp,
    ) -> Result<String, ErrorResponse> {
        let (image_id, image_size) = image;
        let old = self
            .disks
            .values()
            .find(|d| {
                d.disk_type == DiskType::System && d.instance_id.as_deref() == Some(instance_id)
            })
            .cloned()
            .ok_or_else(|| instance_status_for("the instance has no system disk attached"))?;
        // ECS documents the default as Max{40, image size} and refuses less than the current
        // disk; the default here never shrinks the disk either.
        let size = size.unwrap_or(image_size.max(40).max(old.size));
        if size < old.size {
            return Err(ErrorResponse::bad_request(
                "InvalidSystemDiskSize.ValueNotSupported",
                format!(
                    "SystemDisk.Size cannot be smaller than the current system disk ({} GiB).",
                    old.size
                ),
            ));
        }
        let spec = DiskSpec {
            zone_id: old.zone_id.clone(),
            category: old.category,
            size,
            performance_level: old.performance_level,
            encrypted: old.encrypted,
            kms_key_id: old.kms_key_id.clone(),
            delete_with_instance: old.delete_with_instance,
            ..DiskSpec::default()
        };
        self.disks.remove(&old.id);
        let id = self.insert(&old.account_id, old.region_id, &spec, DiskType::System, now);
        if let Some(disk) = self.disks.get_mut(&id) {
            disk.image_id = image_id.to_owned();
            disk.home_instance_id = Some(instance_id.to_owned());
            disk.instance_id = Some(instance_id.to_owned());
            disk.device = old.device;
            disk.attached_at = Some(now);
        }
        Ok(id)
    }

    /// An instance was released: its disks marked `DeleteWithInstance` go with it, the others
    /// become `Available`.
    pub fn release_instance(&mut self, instance_id: &str, now: Timestamp) {
        let attached: Vec<String> = self
            .disks
            .values()
            .filter(|d| d.instance_id.as_deref() == Some(instance_id))
            .map(|d| d.id.clone())
            .collect();
        for id in attached {
            let release = self.disks.get(&id).is_some_and(|d| d.delete_with_instance);
            if release {
                self.disks.remove(&id);
            } else if let Some(disk) = self.disks.get_mut(&id) {
                disk.instance_id = None;
                disk.device.clear();
                disk.detached_at = Some(now);
                disk.transition = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::Disk;
    use super::super::tests::{at_once, instance, now, spec};
    use super::*;

    #[test]
    fn attach_rules() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let id = store
            .create(&acct, "cn-hangzhou", &spec(40), None, now())
            .unwrap();
        let other_zone = InstanceFacts {
            zone_id: "cn-hangzhou-h".into(),
            ..instance(Status::Running)
        };
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.attach("1", &id, &other_zone, None, false, at_once())),
            "ResourcesNotInSameZone"
        );
        assert_eq!(
            code(store.attach("1", &id, &instance(Status::Pending), None, false, at_once())),
            "IncorrectInstanceStatus"
        );
        assert_eq!(
            code(store.attach("2", &id, &instance(Status::Running), None, false, at_once())),
            "InvalidDiskId.NotFound"
        );
        store
            .attach("1", &id, &instance(Status::Running), None, false, at_once())
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().status(), "In_use");
        assert_eq!(store.find("1", &id).unwrap().device, "/dev/xvdb");
        assert_eq!(
            code(store.attach("1", &id, &instance(Status::Running), None, false, at_once())),
            "IncorrectDiskStatus"
        );
        assert_eq!(code(store.delete("1", &id)), "DiskStillAttached");
        let elsewhere = InstanceFacts {
            id: "i-2".into(),
            ..instance(Status::Running)
        };
        assert_eq!(
            code(store.detach("1", &id, &elsewhere, None, at_once())),
            "DependencyViolation"
        );
        store
            .detach("1", &id, &instance(Status::Stopped), None, at_once())
            .unwrap();
        assert_eq!(
            code(store.detach("1", &id, &instance(Status::Stopped), None, at_once())),
            "InvalidDisk.AlreadyDetached"
        );
        store.delete("1", &id).unwrap();
        assert!(store.find("1", &id).is_err());
        // An unknown disk is ignored, as ECS documents.
        store.delete("1", &id).unwrap();
    }

    #[test]
    fn system_disk_leaves_only_a_stopped_instance() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        store.create_for_instance(
            (&acct, "cn-hangzhou"),
            ("i-1", crate::resource_groups::DEFAULT),
            "img",
            &spec(40),
            &[spec(100)],
            now(),
        );
        let disks: Vec<Disk> = store.of_instance("i-1").into_iter().cloned().collect();
        assert_eq!(disks.len(), 2);
        assert_eq!(disks[0].disk_type, DiskType::System);
        assert_eq!(disks[1].device, "/dev/xvdb");
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.detach(
                "1",
                &disks[0].id,
                &instance(Status::Running),
                None,
                at_once()
            )),
            "IncorrectInstanceStatus"
        );
        store
            .detach(
                "1",
                &disks[0].id,
                &instance(Status::Stopped),
                None,
                at_once(),
            )
            .unwrap();
        store
            .attach(
                "1",
                &disks[0].id,
                &instance(Status::Stopped),
                None,
                true,
                at_once(),
            )
            .unwrap();
        store.release_instance("i-1", now());
        // The system disk goes with the instance; the data disk (DeleteWithInstance false) stays.
        assert!(store.find("1", &disks[0].id).is_err());
        assert_eq!(store.find("1", &disks[1].id).unwrap().status(), "Available");
    }

    #[test]
    fn attaching_and_detaching_take_the_transition_delay() {
        let mut store = DiskStore::default();
        let acct: Arc<str> = Arc::from("1");
        let id = store
            .create(&acct, "cn-hangzhou", &spec(40), None, now())
            .unwrap();
        let t0 = now();
        let delay = Duration::from_secs(10);
        let at = |secs: i64| {
            t0.checked_add(jiff::SignedDuration::from_secs(secs))
                .unwrap()
        };
        let running = instance(Status::Running);
        store
            .attach("1", &id, &running, None, false, (t0, delay))
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().status(), "Attaching");
        let code = |r: Result<(), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.detach("1", &id, &running, None, (at(1), delay))),
            "IncorrectDiskStatus"
        );
        assert_eq!(
            code(store.resize("1", &id, 50, false, Some(&running))),
            "IncorrectDiskStatus"
        );
        store.settle(at(10));
        assert_eq!(store.find("1", &id).unwrap().status(), "In_use");
        store
            .detach("1", &id, &running, None, (at(11), delay))
            .unwrap();
        assert_eq!(store.find("1", &id).unwrap().status(), "Detaching");
        assert_eq!(
            store.find("1", &id).unwrap().instance_id.as_deref(),
            Some("i-1")
        );
        assert_eq!(code(store.delete("1", &id)), "IncorrectDiskStatus");
        store.settle(at(20));
        assert_eq!(store.find("1", &id).unwrap().status(), "Detaching");
        store.settle(at(21));
        let disk = store.find("1", &id).unwrap();
        assert_eq!(
            (disk.status(), disk.instance_id.as_deref()),
            ("Available", None)
        );
        store.delete("1", &id).unwrap();
    }
}
