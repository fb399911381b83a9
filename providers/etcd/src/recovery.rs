//! What follows a permanent loss of quorum ([`crate::quorum_loss`]): whether to restore, from
//! which snapshot, and the data window lost. Pure; the controller reads the EtcdBackups and
//! carries the restore out through the restore Jobs (`controller/recovery_step.rs`).
//!
//! The restore replaces every member's data, the survivors' too: a cluster restored from a
//! snapshot is a new cluster, and a member that kept the old one's data could not join it. The
//! revision is moved past every revision the lost cluster handed out
//! ([`REVISION_BUMP`], `etcdutl snapshot restore --bump-revision --mark-compacted`), so that
//! clients watching from a revision they saw before the loss are told it is compacted instead of
//! silently missing the writes that were lost.

use ferroplane_apis::etcd::{EtcdRecovery, EtcdRecoveryRecord, RecoveryPolicy};
use ferroplane_apis::etcd_backup::{EtcdBackup, EtcdSnapshot};
use jiff::Timestamp;

use crate::version::Version;

/// How far past the snapshot's revision the restored cluster starts. The lost cluster's last
/// revision is unknown (its members are gone); a billion is far beyond the writes of the
/// longest grace period. The value of etcd's own disaster-recovery guide.
pub const REVISION_BUMP: u64 = 1_000_000_000;

/// The first 3.5 release whose `etcdutl snapshot restore` has `--bump-revision` and
/// `--mark-compacted` (etcd pull request 16165); every 3.6 has them.
pub const FIRST_WITH_BUMP: Version = Version::new(3, 5, 10);

/// What the recovery of a permanent loss is to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// `policy: Manual` and no annotation: wait.
    Wait,
    /// Restore the newest snapshot of the cluster's EtcdBackups.
    Latest,
    /// Restore a snapshot of this EtcdBackup: the given key, or its newest.
    Named { backup: String, key: Option<String> },
}

/// A `recover-from` annotation that does not name a backup.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "annotation etcd.ferroplane.io/recover-from={0:?} names no EtcdBackup: give <EtcdBackup> or <EtcdBackup>/<snapshot key>"
)]
pub struct BadTrigger(pub String);

/// The trigger from the spec and the `recover-from` annotation (which wins over the policy).
pub fn trigger(recovery: &EtcdRecovery, annotation: Option<&str>) -> Result<Trigger, BadTrigger> {
    if let Some(value) = annotation {
        let value = value.trim();
        let (backup, key) = match value.split_once('/') {
            Some((backup, key)) => (backup, Some(key.to_owned()).filter(|k| !k.is_empty())),
            None => (value, None),
        };
        if backup.is_empty() {
            return Err(BadTrigger(value.to_owned()));
        }
        return Ok(Trigger::Named {
            backup: backup.to_owned(),
            key,
        });
    }
    Ok(match recovery.policy {
        RecoveryPolicy::Manual => Trigger::Wait,
        RecoveryPolicy::FromLatestBackup => Trigger::Latest,
    })
}

/// A snapshot chosen for a recovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub backup: String,
    pub snapshot: EtcdSnapshot,
}

fn taken_at(snapshot: &EtcdSnapshot) -> Option<Timestamp> {
    snapshot.taken_at.parse().ok()
}

/// The newest snapshot `backups` list, of the backups of `cluster` (or only of `named`),
/// with `key` when given. A snapshot listed in a backup's status was taken and checked.
pub fn choose(
    backups: &[EtcdBackup],
    cluster: &str,
    named: Option<&str>,
    key: Option<&str>,
) -> Option<Chosen> {
    backups
        .iter()
        .filter(|b| match named {
            Some(name) => b.metadata.name.as_deref() == Some(name),
            None => b.spec.cluster_ref.name == cluster,
        })
        .flat_map(|b| {
            let name = b.metadata.name.clone().unwrap_or_default();
            b.status
                .iter()
                .flat_map(|s| s.snapshots.iter())
                .filter(|s| key.is_none_or(|k| s.key == k))
                .filter_map(move |s| {
                    Some((
                        taken_at(s)?,
                        Chosen {
                            backup: name.clone(),
                            snapshot: s.clone(),
                        },
                    ))
                })
        })
        .max_by_key(|(at, _)| *at)
        .map(|(_, chosen)| chosen)
}

/// The record of a recovery from `chosen` of a loss first seen at `since`.
pub fn record(chosen: &Chosen, since: Timestamp) -> EtcdRecoveryRecord {
    EtcdRecoveryRecord {
        backup: chosen.backup.clone(),
        key: chosen.snapshot.key.clone(),
        snapshot_taken_at: chosen.snapshot.taken_at.clone(),
        lost_window: format!("{} → {since}", chosen.snapshot.taken_at),
    }
}

/// The revision bump of a restore with etcd `version`, `None` where etcdutl has no such flag.
pub fn revision_bump(version: Version) -> Option<u64> {
    (version >= FIRST_WITH_BUMP).then_some(REVISION_BUMP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::etcd_backup::EtcdBackupStatus;

    fn backup(name: &str, cluster: &str, snapshots: &[(&str, &str)]) -> EtcdBackup {
        let mut b: EtcdBackup = serde_json::from_value(serde_json::json!({
            "apiVersion": "etcd.ferroplane.io/v1alpha1",
            "kind": "EtcdBackup",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {
                "clusterRef": {"name": cluster},
                "destination": {"pvc": {"claimName": "backups"}},
            },
        }))
        .expect("a backup");
        b.status = Some(EtcdBackupStatus {
            snapshots: snapshots
                .iter()
                .map(|(key, at)| EtcdSnapshot {
                    key: (*key).into(),
                    size: 1,
                    sha256: "ab".into(),
                    revision: Some(7),
                    taken_at: (*at).into(),
                    generation: None,
                })
                .collect(),
            ..EtcdBackupStatus::default()
        });
        b
    }

    #[test]
    fn the_annotation_wins_over_the_policy() {
        let manual = EtcdRecovery::default();
        let latest = EtcdRecovery {
            policy: RecoveryPolicy::FromLatestBackup,
            ..EtcdRecovery::default()
        };
        assert_eq!(trigger(&manual, None), Ok(Trigger::Wait));
        assert_eq!(trigger(&latest, None), Ok(Trigger::Latest));
        assert_eq!(
            trigger(&manual, Some("nightly")),
            Ok(Trigger::Named {
                backup: "nightly".into(),
                key: None
            })
        );
        assert_eq!(
            trigger(&latest, Some("nightly/etcd/a/1.db")),
            Ok(Trigger::Named {
                backup: "nightly".into(),
                key: Some("etcd/a/1.db".into())
            })
        );
        assert!(trigger(&manual, Some("/x.db")).is_err());
        assert!(trigger(&manual, Some(" ")).is_err());
    }

    #[test]
    fn the_newest_snapshot_of_this_clusters_backups_is_chosen() {
        let backups = [
            backup(
                "hourly",
                "db",
                &[
                    ("h1", "2026-11-29T01:00:00Z"),
                    ("h2", "2026-11-29T02:00:00Z"),
                ],
            ),
            backup("nightly", "db", &[("n1", "2026-11-29T00:00:00Z")]),
            backup("other", "not-db", &[("o1", "2026-11-29T05:00:00Z")]),
        ];
        let newest = choose(&backups, "db", None, None).expect("one");
        assert_eq!(
            (newest.backup.as_str(), newest.snapshot.key.as_str()),
            ("hourly", "h2")
        );
        let named = choose(&backups, "db", Some("nightly"), None).expect("one");
        assert_eq!(named.snapshot.key, "n1");
        let keyed = choose(&backups, "db", Some("hourly"), Some("h1")).expect("one");
        assert_eq!(keyed.snapshot.key, "h1");
        assert_eq!(choose(&backups, "db", Some("hourly"), Some("nope")), None);
        assert_eq!(choose(&backups, "none", None, None), None);
    }

    #[test]
    fn the_record_states_the_window_lost() {
        let chosen = Chosen {
            backup: "hourly".into(),
            snapshot: backup("hourly", "db", &[("h2", "2026-11-29T02:00:00Z")])
                .status
                .expect("status")
                .snapshots
                .remove(0),
        };
        let since: Timestamp = "2026-11-29T02:40:00Z".parse().expect("time");
        let r = record(&chosen, since);
        assert_eq!(r.lost_window, "2026-11-29T02:00:00Z → 2026-11-29T02:40:00Z");
        assert_eq!((r.backup.as_str(), r.key.as_str()), ("hourly", "h2"));
    }

    #[test]
    fn the_bump_needs_an_etcdutl_that_has_it() {
        let v = |s: &str| Version::parse(s).expect("version");
        assert_eq!(revision_bump(v("3.5.9")), None);
        assert_eq!(revision_bump(v("3.5.10")), Some(REVISION_BUMP));
        assert_eq!(revision_bump(v("3.6.0")), Some(REVISION_BUMP));
    }
}
