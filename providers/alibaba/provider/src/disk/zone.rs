//! A disk attaches only to an instance of its own zone (ECS answers AttachDisk with
//! `ResourcesNotInSameZone`), and its zone is fixed when it is made. So before a disk is created
//! for an instance, and before it is detached to move to another, the instance is read: one that
//! does not exist, or lives in another zone, is refused with a named reason. Never a disk that
//! cannot attach, never a working attachment given up for one that cannot be made.

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::Disk;
use ferroplane_runtime::{ReconcileError, RetryClass};

use crate::cloud_connector::CloudClients;
use crate::reasons::{INSTANCE_TO_ATTACH_NOT_FOUND, ZONE_MISMATCH};

impl CloudClients {
    /// Whether instance `instance_id` exists and is in the zone of `mr`.
    pub(super) async fn check_instance_zone(
        &self,
        mr: &Disk,
        instance_id: &str,
    ) -> Result<(), ReconcileError> {
        let found = self
            .call(
                "DescribeInstances",
                self.region
                    .ecs
                    .describe_instances_by_ids(&[instance_id.to_owned()]),
            )
            .await?;
        let instance = found.iter().find(|i| i.instance_id == instance_id);
        same_zone(&mr.spec.for_provider.zone_id, instance_id, instance)
    }
}

/// The verdict on attaching a disk of `disk_zone` to `instance_id`, as ECS describes it.
fn same_zone(
    disk_zone: &str,
    instance_id: &str,
    instance: Option<&Instance>,
) -> Result<(), ReconcileError> {
    let Some(instance) = instance else {
        return Err(ReconcileError::new(
            INSTANCE_TO_ATTACH_NOT_FOUND,
            format!(
                "instance {instance_id}, which spec.forProvider.instanceId names, does not exist \
                 in the disk's region; nothing is created or detached for it: fix instanceId \
                 (or instanceIdRef / instanceIdSelector), or remove it to keep the disk unattached"
            ),
            RetryClass::WaitForDependency,
        ));
    };
    if instance.zone_id == disk_zone {
        return Ok(());
    }
    Err(ReconcileError::new(
        ZONE_MISMATCH,
        format!(
            "the disk's zone {disk_zone} (spec.forProvider.zoneId) is not the zone {} of \
             instance {instance_id} it is to be attached to, and ECS attaches a disk only to an \
             instance of its own zone; nothing is created or detached: name an instance of \
             {disk_zone}, or use a Disk with zoneId {} (zoneId is immutable: delete this Disk \
             and create it again with that zone)",
            instance.zone_id, instance.zone_id
        ),
        RetryClass::UntilSpecChanges,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(zone: &str) -> Instance {
        Instance {
            instance_id: "i-1".into(),
            zone_id: zone.into(),
            ..Instance::default()
        }
    }

    #[test]
    fn an_instance_of_the_disks_zone_is_fine() {
        assert!(same_zone("cn-beijing-a", "i-1", Some(&instance("cn-beijing-a"))).is_ok());
    }

    #[test]
    fn an_instance_of_another_zone_is_refused_naming_both_zones_and_the_fix() {
        let err =
            same_zone("cn-beijing-b", "i-1", Some(&instance("cn-beijing-a"))).expect_err("refused");
        assert_eq!(err.reason(), ZONE_MISMATCH);
        assert_eq!(err.retry(), RetryClass::UntilSpecChanges);
        for needle in [
            "cn-beijing-b",
            "cn-beijing-a",
            "i-1",
            "zoneId",
            "delete this Disk",
        ] {
            assert!(
                err.message().contains(needle),
                "{needle}: {}",
                err.message()
            );
        }
    }

    #[test]
    fn a_missing_instance_is_refused() {
        let err = same_zone("cn-beijing-a", "i-1", None).expect_err("refused");
        assert_eq!(err.reason(), INSTANCE_TO_ATTACH_NOT_FOUND);
        assert!(err.message().contains("i-1"), "{}", err.message());
    }
}
