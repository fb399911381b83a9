//! How ready a Disk is, from the disk ECS describes and the instance its spec names: usable once
//! made and, when the spec names an instance, attached to it. A disk left detached (its instance
//! released, an attach refused) is not Ready, so `Ready` never claims an attachment that is not
//! there.

use alibaba_sdk::ecs::Disk as CloudDisk;
use ferroplane_apis::alibabacloud::DiskParameters;
use ferroplane_runtime::Readiness;

/// The readiness of `disk` for a Disk whose parameters are `spec`.
pub(crate) fn readiness(spec: &DiskParameters, disk: &CloudDisk) -> Readiness {
    match disk.status.as_str() {
        "Creating" => Readiness::Creating,
        "Available" | "In_use" | "Attaching" | "Detaching" | "ReIniting" => {
            match spec.instance_id.as_deref() {
                Some(wanted) if disk.instance_id != wanted => {
                    Readiness::Unavailable(not_attached(wanted, disk))
                }
                _ => Readiness::Available,
            }
        }
        other => Readiness::Unavailable(format!("the disk is {other}")),
    }
}

fn not_attached(wanted: &str, disk: &CloudDisk) -> String {
    let now = if disk.instance_id.is_empty() {
        format!("is {} (attached to no instance)", disk.status)
    } else {
        format!("is attached to instance {}", disk.instance_id)
    };
    format!(
        "the disk {now}, not to instance {wanted} that spec.forProvider.instanceId names; \
         Synced says why if attaching it fails"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(status: &str, instance: &str) -> CloudDisk {
        CloudDisk {
            disk_id: "d-1".into(),
            status: status.into(),
            instance_id: instance.into(),
            ..CloudDisk::default()
        }
    }

    fn spec(instance: Option<&str>) -> DiskParameters {
        DiskParameters {
            instance_id: instance.map(str::to_owned),
            ..DiskParameters::default()
        }
    }

    #[test]
    fn a_disk_without_an_instance_in_its_spec_is_ready_once_made() {
        assert_eq!(
            readiness(&spec(None), &disk("Creating", "")),
            Readiness::Creating
        );
        assert_eq!(
            readiness(&spec(None), &disk("Available", "")),
            Readiness::Available
        );
        assert_eq!(
            readiness(&spec(None), &disk("Detaching", "i-1")),
            Readiness::Available
        );
        assert_eq!(
            readiness(&spec(None), &disk("Expired", "")),
            Readiness::Unavailable("the disk is Expired".into())
        );
    }

    #[test]
    fn a_disk_is_ready_only_on_the_instance_its_spec_names() {
        let on_it = spec(Some("i-1"));
        assert_eq!(
            readiness(&on_it, &disk("In_use", "i-1")),
            Readiness::Available
        );
        assert_eq!(
            readiness(&on_it, &disk("Attaching", "i-1")),
            Readiness::Available
        );
        let Readiness::Unavailable(why) = readiness(&on_it, &disk("Available", "")) else {
            panic!("a detached disk is not Ready");
        };
        assert!(
            why.contains("is Available (attached to no instance), not to instance i-1"),
            "{why}"
        );
        let Readiness::Unavailable(why) = readiness(&on_it, &disk("In_use", "i-2")) else {
            panic!("a disk on another instance is not Ready");
        };
        assert!(
            why.contains("attached to instance i-2, not to instance i-1"),
            "{why}"
        );
    }
}
