//! What a Disk's update must do, computed from the spec and the disk ECS describes (pure, so
//! every rule is unit-tested): detach from an instance the spec does not name, grow, change the
//! performance level, change name / description / snapshot release, add or overwrite the spec's
//! tags and remove the others, attach to the instance the spec names.

use std::collections::BTreeMap;

use alibaba_sdk::ecs::{Disk as CloudDisk, ModifyDiskAttributeRequest};
use ferroplane_apis::alibabacloud::DiskParameters;
use ferroplane_runtime::UID_TAG;

/// The calls that bring a disk to its spec, in the order they are made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DiskPlan {
    /// DetachDisk from this instance.
    pub detach_from: Option<String>,
    /// ResizeDisk to this size (GiB).
    pub grow_to: Option<u32>,
    /// ModifyDiskSpec to this performance level.
    pub performance_level: Option<String>,
    /// ModifyDiskAttribute.
    pub attribute: ModifyDiskAttributeRequest,
    /// TagResources with these tags.
    pub tag: BTreeMap<String, String>,
    /// UntagResources of these keys.
    pub untag: Vec<String>,
    /// AttachDisk to this instance.
    pub attach_to: Option<String>,
}

fn differs(desired: Option<&String>, actual: &str) -> Option<String> {
    desired.filter(|d| d.as_str() != actual).cloned()
}

impl DiskPlan {
    /// The plan for `disk` to match `spec`.
    pub fn new(spec: &DiskParameters, disk: &CloudDisk) -> Self {
        let attached = (!disk.instance_id.is_empty()).then(|| disk.instance_id.clone());
        let desired_instance = spec.instance_id.clone();
        let (detach_from, attach_to) = if attached == desired_instance {
            (None, None)
        } else {
            (attached, desired_instance)
        };
        let grow_to = spec
            .size
            .and_then(|s| u32::try_from(s).ok())
            .filter(|s| *s > disk.size);
        let performance_level = spec
            .performance_level
            .as_ref()
            .filter(|_| disk.category == "cloud_essd")
            .filter(|l| **l != disk.performance_level)
            .cloned();
        let attribute = ModifyDiskAttributeRequest {
            disk_name: differs(spec.disk_name.as_ref(), &disk.disk_name),
            description: differs(spec.description.as_ref(), &disk.description),
            delete_with_instance: None,
            delete_auto_snapshot: spec
                .delete_auto_snapshot
                .filter(|d| *d != disk.delete_auto_snapshot),
        };
        let (tag, untag) = match &spec.tags {
            None => (BTreeMap::new(), Vec::new()),
            Some(desired) => {
                let actual: BTreeMap<&str, &str> = disk.tags.pairs().collect();
                let tag = desired
                    .iter()
                    .filter(|(k, _)| k.as_str() != UID_TAG)
                    .filter(|(k, v)| actual.get(k.as_str()) != Some(&v.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let untag = actual
                    .keys()
                    .filter(|k| **k != UID_TAG && !desired.contains_key(**k))
                    .map(|k| (*k).to_owned())
                    .collect();
                (tag, untag)
            }
        };
        Self {
            detach_from,
            grow_to,
            performance_level,
            attribute,
            tag,
            untag,
            attach_to,
        }
    }

    /// Whether the disk matches its spec.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The differences, for the Synced condition and the update event.
    pub fn describe(&self, disk: &CloudDisk) -> String {
        let mut parts = Vec::new();
        if let Some(from) = &self.detach_from {
            parts.push(format!("detach from {from}"));
        }
        if let Some(size) = self.grow_to {
            parts.push(format!("size {} → {size} GiB", disk.size));
        }
        if let Some(level) = &self.performance_level {
            parts.push(format!(
                "performanceLevel {} → {level}",
                disk.performance_level
            ));
        }
        if self.attribute.disk_name.is_some() {
            parts.push("diskName".to_owned());
        }
        if self.attribute.description.is_some() {
            parts.push("description".to_owned());
        }
        if self.attribute.delete_auto_snapshot.is_some() {
            parts.push("deleteAutoSnapshot".to_owned());
        }
        if !self.tag.is_empty() || !self.untag.is_empty() {
            parts.push("tags".to_owned());
        }
        if let Some(to) = &self.attach_to {
            parts.push(format!("attach to {to}"));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::{Tag, TagList};

    fn disk() -> CloudDisk {
        CloudDisk {
            disk_id: "d-1".into(),
            category: "cloud_essd".into(),
            size: 40,
            performance_level: "PL1".into(),
            status: "Available".into(),
            delete_auto_snapshot: true,
            tags: TagList {
                items: vec![
                    Tag::new(UID_TAG, "u"),
                    Tag::new("team", "a"),
                    Tag::new("old", "x"),
                ],
            },
            ..CloudDisk::default()
        }
    }

    fn spec() -> DiskParameters {
        DiskParameters {
            region_id: "cn-hangzhou".into(),
            zone_id: "cn-hangzhou-b".into(),
            category: Some("cloud_essd".into()),
            size: Some(40),
            ..DiskParameters::default()
        }
    }

    #[test]
    fn an_unchanged_disk_needs_nothing() {
        assert!(DiskPlan::new(&spec(), &disk()).is_empty());
        // A smaller size in the spec never shrinks the disk.
        let smaller = DiskParameters {
            size: Some(20),
            ..spec()
        };
        assert!(DiskPlan::new(&smaller, &disk()).is_empty());
    }

    #[test]
    fn grows_changes_level_and_attributes() {
        let s = DiskParameters {
            size: Some(80),
            performance_level: Some("PL0".into()),
            disk_name: Some("data".into()),
            delete_auto_snapshot: Some(false),
            ..spec()
        };
        let plan = DiskPlan::new(&s, &disk());
        assert_eq!(plan.grow_to, Some(80));
        assert_eq!(plan.performance_level.as_deref(), Some("PL0"));
        assert_eq!(plan.attribute.disk_name.as_deref(), Some("data"));
        assert_eq!(plan.attribute.delete_auto_snapshot, Some(false));
        assert_eq!(
            plan.describe(&disk()),
            "size 40 → 80 GiB; performanceLevel PL1 → PL0; diskName; deleteAutoSnapshot"
        );
    }

    #[test]
    fn attaches_detaches_and_moves() {
        let attach = DiskParameters {
            instance_id: Some("i-1".into()),
            ..spec()
        };
        let plan = DiskPlan::new(&attach, &disk());
        assert_eq!(
            (plan.detach_from, plan.attach_to.as_deref()),
            (None, Some("i-1"))
        );
        let attached = CloudDisk {
            instance_id: "i-1".into(),
            status: "In_use".into(),
            ..disk()
        };
        assert!(DiskPlan::new(&attach, &attached).is_empty());
        let plan = DiskPlan::new(&spec(), &attached);
        assert_eq!(
            (plan.detach_from.as_deref(), plan.attach_to),
            (Some("i-1"), None)
        );
        let moved = DiskParameters {
            instance_id: Some("i-2".into()),
            ..spec()
        };
        let plan = DiskPlan::new(&moved, &attached);
        assert_eq!(
            (plan.detach_from.as_deref(), plan.attach_to.as_deref()),
            (Some("i-1"), Some("i-2"))
        );
    }

    #[test]
    fn tags_are_kept_as_the_spec_lists_them_except_the_uid_tag() {
        let s = DiskParameters {
            tags: Some([("team".to_owned(), "b".to_owned())].into()),
            ..spec()
        };
        let plan = DiskPlan::new(&s, &disk());
        assert_eq!(plan.tag, [("team".to_owned(), "b".to_owned())].into());
        assert_eq!(plan.untag, vec!["old".to_owned()]);
    }
}
