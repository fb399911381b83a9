//! Every condition and event reason an EtcdCluster or EtcdBackup can show, with what it means
//! and what to do. Error reasons end up on the `Synced` condition (and the runtime's Warning
//! event of the failed step); status reasons on `Available`, `Progressing` and `Degraded`;
//! event reasons on Normal (or, for [`MEMBER_FLAPPING`], [`CA_SECRET_REPLACED`] and
//! [`CERTIFICATE_EXPIRES_SOON`], Warning) events. README's "EtcdCluster
//! and EtcdBackup reasons" lists the same. A ground-floor module: it imports nothing.

// EtcdCluster: the `Available`, `Progressing` and `Degraded` conditions.

/// `Available` True: a quorum of members is healthy; nothing to do.
pub const QUORUM_AVAILABLE: &str = "QuorumAvailable";
/// `Available` False: fewer than a quorum of members are healthy, writes fail; see the
/// `Degraded` condition and the member pods' logs. `Ready` False (and a Warning event once
/// permanent): a majority of voters is lost with its data volumes (`status.quorumLoss`); see
/// `spec.recovery` and the message for how to restore from a backup.
pub const QUORUM_LOST: &str = "QuorumLost";
/// `Progressing` True: a membership change (member added, promoted, removed) is under way; wait.
pub const SCALING: &str = "Scaling";
/// `Progressing` True: the StatefulSet is rolling out a new pod template; wait.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `Progressing` False: nothing is changing; nothing to do.
pub const STABLE: &str = "Stable";
/// `Degraded` True: a member is unhealthy; look at its pod (`kubectl logs`, `describe`).
pub const MEMBER_UNHEALTHY: &str = "MemberUnhealthy";
/// `Degraded` True: the next membership step cannot be taken safely (it would lose quorum); the
/// message says what it waits for.
pub const BLOCKED: &str = "Blocked";
/// `Degraded` True and a Warning event: a voter's pod keeps crashing with its volume kept; it is
/// not removed (its data may be the only healthy copy). Fix the pod, or set
/// `spec.replaceFailedMembers`.
pub const MEMBER_FLAPPING: &str = "MemberFlapping";
/// `Degraded` False: every member is healthy; nothing to do.
pub const ALL_MEMBERS_HEALTHY: &str = "AllMembersHealthy";
/// `Degraded` Unknown: etcd's membership API does not answer (no pods yet, a network policy);
/// status comes from the StatefulSet. Check that the controller can reach the client Service.
pub const MEMBERSHIP_UNKNOWN: &str = "MembershipUnknown";
/// `Degraded` True: etcd raised its NOSPACE alarm, the database reached the space quota and
/// writes fail; compact and defragment, or raise `quota-backend-bytes`, then disarm the alarm.
pub const NO_SPACE: &str = "NoSpace";

// EtcdCluster: errors (the `Synced` condition).

/// The spec cannot be acted on (bad version, size, name, restore source); the cluster
/// keeps running as it is. Fix the spec as the message says.
pub const INVALID_SPEC: &str = "InvalidSpec";
/// An entry of `spec.options` cannot go into etcd's configuration file (a value etcd would not
/// read, an unknown or reserved name, options that contradict each other); nothing rolls and the
/// members keep their configuration. Fix the option as the message says.
pub const INVALID_ETCD_OPTION: &str = "InvalidEtcdOption";
/// `spec.version` asks for a change etcd cannot make (skipping a minor version, leaving 3.5 for
/// 3.6 from below 3.5.26, a downgrade), judged by the version the members run; follow the
/// upgrade path the message names.
pub const UNSUPPORTED_UPGRADE: &str = "UnsupportedUpgrade";
/// `spec.version` moves to the next minor version and a member is not yet a healthy voter on
/// the patch etcd requires first (3.5.26 before 3.6); retried, the rollout starts by itself once
/// every member is. The message names the members it waits for.
pub const UPGRADE_WAITS_FOR_MEMBERS: &str = "UpgradeWaitsForMembers";
/// etcd refuses root's password: the auth Secret's and the recorded one both fail; put the
/// password etcd has into the auth Secret.
pub const AUTH_FAILED: &str = "AuthFailed";
/// etcd refuses the client certificate because it has a common name (taken as a user name with
/// authentication on); give a client certificate without a CN.
pub const CLIENT_CERTIFICATE_HAS_COMMON_NAME: &str = "ClientCertificateHasCommonName";
/// A call to etcd's membership API failed; retried. Look at the members if it persists.
pub const MEMBERSHIP_CHANGE_FAILED: &str = "MembershipChangeFailed";
/// A Kubernetes API call failed (EtcdCluster and EtcdBackup); retried. Check the controller's
/// RBAC and the API server.
pub const KUBERNETES_API_ERROR: &str = "KubernetesApiError";
/// Reading the EtcdBackup a restore names failed; retried. Check the controller's RBAC.
pub const KUBERNETES_ERROR: &str = "KubernetesError";
/// A fault of ferroplane itself (serialization, missing metadata, certificate generation);
/// report it.
pub const INTERNAL_ERROR: &str = "InternalError";
/// A TLS Secret the spec names is missing or incomplete; give a `kubernetes.io/tls` Secret with
/// `tls.crt`, `tls.key` and `ca.crt`.
pub const TLS_SECRET_INVALID: &str = "TlsSecretInvalid";
/// The auth Secret is missing or has no `password`; create it in the cluster's namespace.
pub const AUTH_SECRET_INVALID: &str = "AuthSecretInvalid";
/// An object with a child's name exists and is not this cluster's; it is never adopted, changed
/// or deleted. Delete or rename it, or name the cluster differently.
pub const CHILD_NOT_OURS: &str = "ChildNotOurs";
/// The snapshot `spec.restore.from` names does not exist (yet); fix the reference or wait for
/// the backup's first snapshot.
pub const SNAPSHOT_NOT_FOUND: &str = "SnapshotNotFound";
/// A volume kept from an earlier cluster stands where a restored member's would go; delete it if
/// its data is not needed, or restore into a cluster of another name.
pub const VOLUME_EXISTS: &str = "VolumeExists";
/// A restore Job failed; read its logs, then delete the Job to try again.
pub const RESTORE_FAILED: &str = "RestoreFailed";
/// This controller runs without snapshot stores and cannot restore from OSS; run the
/// EtcdCluster controller of `ferroplane run`.
pub const RESTORE_UNAVAILABLE: &str = "RestoreUnavailable";
/// The expiry of a snapshot URL could not be computed (a clock out of range); retried.
pub const CLOCK: &str = "Clock";

// EtcdCluster: Normal events.

/// A learner was added to etcd for a new member; nothing to do.
pub const MEMBER_ADDED: &str = "MemberAdded";
/// A learner caught up and became a voter; nothing to do.
pub const MEMBER_PROMOTED: &str = "MemberPromoted";
/// A member was removed from etcd (scale-down); nothing to do.
pub const MEMBER_REMOVED: &str = "MemberRemoved";
/// A failed member was removed to be added back empty (`spec.replaceFailedMembers`).
pub const MEMBER_REPLACED: &str = "MemberReplaced";
/// A member's data volume was lost (deleted, or replaced by an empty one): it was removed and
/// rejoins as a new member, copying the data from the leader; nothing to do.
pub const MEMBER_DATA_LOST: &str = "MemberDataLost";
/// A member's pod and volume were deleted so that it starts empty (it held a removed member's
/// data, or it was scheduled on its claim while the claim was being deleted); nothing to do.
pub const MEMBER_RESTARTED_EMPTY: &str = "MemberRestartedEmpty";
/// A member was defragmented to give back free space; nothing to do.
pub const MEMBER_DEFRAGMENTED: &str = "MemberDefragmented";
/// A removed member's data volume was deleted (etcd refuses to start on it); nothing to do.
pub const VOLUME_DELETED: &str = "VolumeDeleted";
/// A step of a generated CA's rotation was taken; wait for `CARotated`.
pub const CA_ROTATING: &str = "CARotating";
/// A generated CA's rotation is complete; nothing to do.
pub const CA_ROTATED: &str = "CARotated";
/// The CA Secret was missing: a new CA is trusted beside the old CA certificates that
/// survived in the leaf Secrets' bundle, then rotated in (wait for `CARotated`).
pub const CA_SECRET_RECOVERED: &str = "CASecretRecovered";
/// The CA Secret and every trust bundle were missing: a new CA no client trusts yet was made;
/// give clients the new bundle (the client Secret's `ca.crt`).
pub const CA_SECRET_REPLACED: &str = "CASecretReplaced";
/// The `ca.crt` of the user's TLS Secrets changed: the members trust the old and the new
/// certificates while they restart one at a time; wait for `UserCARolled`.
pub const USER_CA_ROLLING: &str = "UserCARolling";
/// Every member restarted on the user's new `ca.crt`; the old certificates are no longer
/// trusted (the members restart once more); nothing to do.
pub const USER_CA_ROLLED: &str = "UserCARolled";
/// A certificate of the user's TLS Secrets ends within 30 days (ferroplane does not renew
/// them); write a renewed one to the Secret.
pub const CERTIFICATE_EXPIRES_SOON: &str = "CertificateExpiresSoon";
/// etcd authentication was enabled with user root (`spec.auth`); clients need root's password.
pub const AUTH_ENABLED: &str = "AuthEnabled";
/// etcd authentication was disabled (`spec.auth` removed); root keeps its password.
pub const AUTH_DISABLED: &str = "AuthDisabled";
/// root's password was changed to the auth Secret's; clients need the new one.
pub const ROOT_PASSWORD_CHANGED: &str = "RootPasswordChanged";
/// Warning event: a quorum-loss recovery starts: every member's data is replaced by a snapshot;
/// the message states which and the writes lost.
pub const QUORUM_RECOVERY_STARTED: &str = "QuorumRecoveryStarted";
/// A quorum-loss recovery is complete; the message (and `status.lastRecovery`) states the
/// snapshot restored and the writes lost.
pub const QUORUM_RECOVERED: &str = "QuorumRecovered";
/// The snapshot lies in a volume one node at a time can mount: a Job serves it to the members'
/// restore Jobs, which then run at once; nothing to do.
pub const SNAPSHOT_SERVER_STARTED: &str = "SnapshotServerStarted";
/// A member's volume holds the restored snapshot; nothing to do.
pub const MEMBER_RESTORED: &str = "MemberRestored";

// EtcdBackup: errors (the `Synced` condition; the store's own reasons come from the store).

/// `spec.schedule` is not a cron expression; fix it.
pub const INVALID_SCHEDULE: &str = "InvalidSchedule";
/// The EtcdBackup lacks metadata the API server always sets; retried. Report it if it persists.
pub const MISSING_METADATA: &str = "MissingMetadata";
/// `spec.destination` names neither `oss` nor `pvc`; set one.
pub const INVALID_DESTINATION: &str = "InvalidDestination";
/// The EtcdCluster `spec.clusterRef` names does not exist in the backup's namespace; create it
/// or fix the reference.
pub const CLUSTER_NOT_FOUND: &str = "ClusterNotFound";
/// No membership client could be made for the cluster; retried. Check the cluster's TLS Secrets.
pub const CLUSTER_UNREACHABLE: &str = "ClusterUnreachable";
/// Taking a snapshot failed (the members did not answer, or a snapshot Job failed); read the
/// message (and the Job's logs), then delete a failed Job to try again.
pub const SNAPSHOT_FAILED: &str = "SnapshotFailed";
/// A snapshot Job succeeded but its report is not there yet; retried.
pub const SNAPSHOT_REPORT_MISSING: &str = "SnapshotReportMissing";
/// A snapshot Job's report cannot be read (a tools image of another version?); make the tools
/// image match the controller's.
pub const SNAPSHOT_REPORT_UNREADABLE: &str = "SnapshotReportUnreadable";

// EtcdBackup: Normal events.

/// A snapshot was taken and stored; nothing to do.
pub const SNAPSHOT_TAKEN: &str = "SnapshotTaken";
/// A snapshot beyond `keep` was deleted; nothing to do.
pub const SNAPSHOT_PRUNED: &str = "SnapshotPruned";

#[cfg(test)]
mod tests {
    /// README's table lists every reason defined here, and nothing else of this crate.
    #[test]
    fn readme_lists_every_reason() {
        let readme = include_str!("../../../README.md");
        let table = &readme[readme
            .find("### EtcdCluster and EtcdBackup reasons")
            .expect("README has the reasons table")..];
        let defined: Vec<&str> = include_str!("reasons.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("pub const ")?.split('"').nth(1))
            .collect();
        assert!(defined.len() > 40, "{defined:?}");
        for reason in &defined {
            assert!(
                table.contains(&format!("| `{reason}` |")),
                "README does not list {reason}"
            );
        }
        let listed = table
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with('#'))
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .filter(|r| !defined.contains(r))
            .collect::<Vec<_>>();
        assert!(listed.is_empty(), "README lists unknown reasons {listed:?}");
    }
}
