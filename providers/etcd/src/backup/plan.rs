//! The pure half of an EtcdBackup: object names, when a snapshot is due, which snapshots to
//! prune, and the status of what is stored.

use std::str::FromStr;

use croner::Cron;
use ferroplane_apis::etcd_backup::{EtcdBackup, EtcdBackupStatus, EtcdSnapshot};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use kube::ResourceExt;

/// Why a spec cannot be acted on.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(
        "spec.schedule {schedule:?} is not a cron expression ({detail}); use five fields (minute hour day-of-month month day-of-week) or six with seconds first, e.g. \"0 3 * * *\""
    )]
    BadSchedule { schedule: String, detail: String },
    #[error("the EtcdBackup has no {0} yet")]
    MissingMetadata(&'static str),
}

/// What a snapshot's object carries beside its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotMeta {
    pub sha256: String,
    pub revision: Option<i64>,
    pub taken_at: Timestamp,
    pub generation: Option<i64>,
}

/// One snapshot as the store lists it, with its metadata when it could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub key: String,
    pub size: u64,
    pub meta: Option<SnapshotMeta>,
}

/// The folder of one backup's snapshots: `<prefix><namespace>/<name>/<uid>/`. The UID keeps a
/// re-created backup of the same name from pruning (or listing) its predecessor's snapshots.
pub fn folder(backup: &EtcdBackup) -> Result<String, PlanError> {
    let namespace = backup
        .namespace()
        .ok_or(PlanError::MissingMetadata("namespace"))?;
    let uid = backup.uid().ok_or(PlanError::MissingMetadata("uid"))?;
    Ok(format!(
        "{}{namespace}/{}/{uid}/",
        backup.spec.destination.prefix(),
        backup.name_any()
    ))
}

/// The object name of a snapshot taken at `at`: sorts by time (milliseconds, UTC).
pub fn key_at(folder: &str, at: Timestamp) -> String {
    let utc = at.to_zoned(TimeZone::UTC);
    format!(
        "{folder}{}{:03}Z.db",
        utc.strftime("%Y%m%dT%H%M%S."),
        utc.subsec_nanosecond() / 1_000_000
    )
}

/// The external name: the folder, as a URL (`oss://<bucket>/...` or `pvc://<claim>/...`).
pub fn external_name(backup: &EtcdBackup, folder: &str) -> String {
    let destination = &backup.spec.destination;
    match (&destination.oss, &destination.pvc) {
        (Some(oss), _) => format!("oss://{}/{folder}", oss.bucket),
        (None, Some(pvc)) => format!("pvc://{}/{folder}", pvc.claim_name),
        (None, None) => folder.to_owned(),
    }
}

/// The parsed schedule, if any.
pub fn schedule(backup: &EtcdBackup) -> Result<Option<Cron>, PlanError> {
    backup
        .spec
        .schedule
        .as_deref()
        .map(|s| {
            Cron::from_str(s.trim()).map_err(|e| PlanError::BadSchedule {
                schedule: s.to_owned(),
                detail: e.to_string(),
            })
        })
        .transpose()
}

/// The first occurrence of `cron` after `after` (UTC).
pub fn next_after(cron: &Cron, after: Timestamp) -> Option<Timestamp> {
    cron.find_next_occurrence(&after.to_zoned(TimeZone::UTC), false)
        .ok()
        .map(|z| z.timestamp())
}

/// Snapshots to delete so that `keep` remain: the oldest (keys sort by time).
pub fn to_prune(stored: &[Stored], keep: usize) -> Vec<String> {
    let mut keys: Vec<&str> = stored.iter().map(|s| s.key.as_str()).collect();
    keys.sort_unstable();
    let extra = keys.len().saturating_sub(keep.max(1));
    keys[..extra].iter().map(|k| (*k).to_owned()).collect()
}

/// `spec.keep`, at least 1.
pub fn keep(backup: &EtcdBackup) -> usize {
    usize::try_from(backup.spec.keep).unwrap_or(1).max(1)
}

/// Why a new snapshot is due now, if it is: the schedule's next time after the newest
/// snapshot has come, or (without a schedule) the newest snapshot is of an older generation.
pub fn due(
    backup: &EtcdBackup,
    cron: Option<&Cron>,
    stored: &[Stored],
    now: Timestamp,
) -> Option<String> {
    let newest = stored.iter().max_by(|a, b| a.key.cmp(&b.key))?;
    match cron {
        Some(cron) => {
            let taken = newest.meta.as_ref().map(|m| m.taken_at)?;
            let next = next_after(cron, taken)?;
            (next <= now).then(|| format!("the snapshot scheduled for {next} is due"))
        }
        None => {
            let generation = backup.metadata.generation?;
            let newest_generation = newest.meta.as_ref().and_then(|m| m.generation);
            (newest_generation.is_none_or(|g| g < generation))
                .then(|| format!("generation {generation} has no snapshot yet"))
        }
    }
}

/// The status of what is stored, oldest first.
pub fn status(cron: Option<&Cron>, stored: &[Stored]) -> EtcdBackupStatus {
    let mut sorted: Vec<&Stored> = stored.iter().collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    let snapshots: Vec<EtcdSnapshot> = sorted
        .iter()
        .map(|s| EtcdSnapshot {
            key: s.key.clone(),
            size: i64::try_from(s.size).unwrap_or(i64::MAX),
            sha256: s
                .meta
                .as_ref()
                .map(|m| m.sha256.clone())
                .unwrap_or_default(),
            revision: s.meta.as_ref().and_then(|m| m.revision),
            taken_at: s
                .meta
                .as_ref()
                .map(|m| m.taken_at.to_string())
                .unwrap_or_default(),
            generation: s.meta.as_ref().and_then(|m| m.generation),
        })
        .collect();
    let newest_taken = sorted
        .last()
        .and_then(|s| s.meta.as_ref())
        .map(|m| m.taken_at);
    EtcdBackupStatus {
        snapshot_count: i32::try_from(snapshots.len()).unwrap_or(i32::MAX),
        last_success_time: newest_taken.map(|t| t.to_string()),
        next_schedule_time: cron
            .zip(newest_taken)
            .and_then(|(cron, taken)| next_after(cron, taken))
            .map(|t| t.to_string()),
        snapshots,
        ..EtcdBackupStatus::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::etcd_backup::{
        BackupDestination, EtcdBackupSpec, EtcdClusterReference, OssDestination,
    };

    fn backup(schedule: Option<&str>, generation: i64) -> EtcdBackup {
        let mut b = EtcdBackup::new(
            "nightly",
            EtcdBackupSpec {
                deletion_policy: Default::default(),
                management_policies: ferroplane_apis::common::default_management_policies(),
                cluster_ref: EtcdClusterReference {
                    name: "main".into(),
                },
                destination: BackupDestination {
                    pvc: None,
                    oss: Some(OssDestination {
                        bucket: "backups".into(),
                        prefix: "etcd/".into(),
                        region: Some("cn-hangzhou".into()),
                        endpoint: None,
                        provider_config_ref: Default::default(),
                    }),
                },
                schedule: schedule.map(str::to_owned),
                keep: 2,
                trigger: None,
            },
        );
        b.metadata.namespace = Some("team-a".into());
        b.metadata.uid = Some("u-1".into());
        b.metadata.generation = Some(generation);
        b
    }

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn stored(key: &str, taken: &str, generation: i64) -> Stored {
        Stored {
            key: key.into(),
            size: 10,
            meta: Some(SnapshotMeta {
                sha256: "ab".into(),
                revision: Some(7),
                taken_at: at(taken),
                generation: Some(generation),
            }),
        }
    }

    #[test]
    fn keys_sort_by_time_inside_the_backups_own_folder() {
        let b = backup(None, 1);
        let folder = folder(&b).expect("folder");
        assert_eq!(folder, "etcd/team-a/nightly/u-1/");
        let early = key_at(&folder, at("2026-11-26T09:00:00.5Z"));
        let late = key_at(&folder, at("2026-11-26T09:00:01.004Z"));
        assert_eq!(early, "etcd/team-a/nightly/u-1/20261126T090000.500Z.db");
        assert!(early < late, "{early} < {late}");
        assert_eq!(
            external_name(&b, &folder),
            "oss://backups/etcd/team-a/nightly/u-1/"
        );
    }

    #[test]
    fn on_demand_takes_one_snapshot_per_generation() {
        let s = [stored("a", "2026-11-26T09:00:00Z", 1)];
        let now = at("2026-11-26T10:00:00Z");
        assert_eq!(due(&backup(None, 1), None, &s, now), None);
        assert!(
            due(&backup(None, 2), None, &s, now)
                .expect("due")
                .contains("generation 2")
        );
    }

    #[test]
    fn a_schedule_is_due_once_its_next_time_after_the_newest_snapshot_has_come() {
        let b = backup(Some("0 3 * * *"), 1);
        let cron = schedule(&b).expect("valid").expect("some");
        let s = [stored("a", "2026-11-26T03:00:05Z", 1)];
        assert_eq!(due(&b, Some(&cron), &s, at("2026-11-27T02:59:59Z")), None);
        assert!(due(&b, Some(&cron), &s, at("2026-11-27T03:00:00Z")).is_some());
        assert_eq!(
            status(Some(&cron), &s).next_schedule_time.as_deref(),
            Some("2026-11-27T03:00:00Z")
        );
        let err = schedule(&backup(Some("every night"), 1)).expect_err("invalid");
        assert!(err.to_string().contains("every night"), "{err}");
    }

    #[test]
    fn pruning_keeps_the_newest() {
        let s = [
            stored("k3", "2026-11-26T03:00:00Z", 1),
            stored("k1", "2026-11-26T01:00:00Z", 1),
            stored("k2", "2026-11-26T02:00:00Z", 1),
        ];
        assert_eq!(to_prune(&s, 2), ["k1"]);
        assert_eq!(to_prune(&s, 1), ["k1", "k2"]);
        assert!(to_prune(&s, 5).is_empty());
        let status = status(None, &s);
        assert_eq!(status.snapshot_count, 3);
        assert_eq!(status.snapshots[0].key, "k1");
        assert_eq!(
            status.last_success_time.as_deref(),
            Some("2026-11-26T03:00:00Z")
        );
    }
}
