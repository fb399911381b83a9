//! When a member's database is defragmented. Compaction (periodic by default, see
//! [`crate::render::options`]) frees pages inside the database file but never shrinks it; only a
//! defragmentation rewrites the file, and while it runs the member serves nothing. So the
//! controller defragments one member per reconcile, only while every voter is healthy and no
//! membership change is under way, followers before the leader (a leader busy rewriting its
//! file would cost an election), and only a member worth it:
//!
//! - at least half of its file is free and that is at least [`DefragPolicy::min_free_bytes`]
//!   (32 MiB by default: small databases are not worth a pause), or
//! - its file has grown past 80 % of the space quota and a tenth of it is free (the quota counts
//!   the file, free pages included: this is what keeps a compacted cluster off NOSPACE).

use crate::planner::Health;
use crate::scaling::{Observed, ObservedMember};

/// The thresholds.
#[derive(Clone, Debug, PartialEq)]
pub struct DefragPolicy {
    pub min_free_bytes: u64,
    /// Share of the file that must be free.
    pub free_ratio: f64,
    /// Share of the quota past which a smaller free share suffices.
    pub quota_ratio: f64,
    /// The free share that suffices past `quota_ratio`.
    pub free_ratio_near_quota: f64,
}

impl Default for DefragPolicy {
    fn default() -> Self {
        Self {
            min_free_bytes: 32 << 20,
            free_ratio: 0.5,
            quota_ratio: 0.8,
            free_ratio_near_quota: 0.1,
        }
    }
}

impl DefragPolicy {
    /// Whether a database of `size` bytes with `in_use` used is worth defragmenting under a
    /// space quota of `quota` bytes.
    pub fn wants(&self, size: u64, in_use: u64, quota: u64) -> bool {
        let free = size.saturating_sub(in_use);
        let share = |part: u64, whole: u64| part as f64 / whole.max(1) as f64;
        (free >= self.min_free_bytes && share(free, size) >= self.free_ratio)
            || (quota > 0
                && share(size, quota) >= self.quota_ratio
                && share(free, size) >= self.free_ratio_near_quota)
    }

    /// The member to defragment now, if any (see the module documentation).
    pub fn pick<'a>(&self, observed: &'a Observed, quota: u64) -> Option<&'a ObservedMember> {
        let all_healthy = observed
            .members
            .iter()
            .all(|m| m.member.is_learner || m.health == Health::Healthy);
        if !all_healthy || observed.members.iter().any(|m| m.member.is_learner) {
            return None;
        }
        let mut candidates: Vec<&ObservedMember> = observed
            .members
            .iter()
            .filter(|m| {
                m.status
                    .as_ref()
                    .is_some_and(|s| self.wants(s.db_size, s.db_size_in_use, quota))
            })
            .collect();
        // Followers first: `false` sorts before `true`.
        candidates.sort_by_key(|m| observed.leader == Some(m.member.id));
        candidates.first().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::membership::{Member, MemberStatus};

    const MIB: u64 = 1 << 20;

    fn member(id: u64, size: u64, in_use: u64, health: Health) -> ObservedMember {
        ObservedMember {
            member: Member {
                id,
                name: format!("e-{id}"),
                peer_urls: vec![],
                client_urls: vec![format!("http://e-{id}:2379")],
                is_learner: false,
            },
            ordinal: u32::try_from(id).ok(),
            status: Some(MemberStatus {
                member_id: id,
                leader: 0,
                version: "3.5.17".into(),
                raft_index: 1,
                is_learner: false,
                errors: vec![],
                db_size: size,
                db_size_in_use: in_use,
            }),
            health,
        }
    }

    #[test]
    fn thresholds() {
        let p = DefragPolicy::default();
        let quota = 2048 * MIB;
        assert!(p.wants(100 * MIB, 40 * MIB, quota), "60% free, 60 MiB");
        assert!(
            !p.wants(40 * MIB, 10 * MIB, quota),
            "30 MiB free is not worth a pause"
        );
        assert!(!p.wants(100 * MIB, 60 * MIB, quota), "40% free");
        assert!(
            p.wants(1700 * MIB, 1500 * MIB, quota),
            "near the quota, 12% free"
        );
        assert!(
            !p.wants(1700 * MIB, 1650 * MIB, quota),
            "near the quota, 3% free"
        );
    }

    #[test]
    fn followers_first_and_never_while_a_member_is_unhealthy() {
        let p = DefragPolicy::default();
        let observed = Observed {
            members: vec![
                member(0, 100 * MIB, 10 * MIB, Health::Healthy),
                member(1, 100 * MIB, 10 * MIB, Health::Healthy),
                member(2, 100 * MIB, 90 * MIB, Health::Healthy),
            ],
            leader: Some(0),
        };
        assert_eq!(p.pick(&observed, 2048 * MIB).map(|m| m.member.id), Some(1));
        let only_leader = Observed {
            members: vec![
                member(0, 100 * MIB, 10 * MIB, Health::Healthy),
                member(1, 100 * MIB, 90 * MIB, Health::Healthy),
            ],
            leader: Some(0),
        };
        assert_eq!(
            p.pick(&only_leader, 2048 * MIB).map(|m| m.member.id),
            Some(0)
        );
        let degraded = Observed {
            members: vec![
                member(0, 100 * MIB, 10 * MIB, Health::Healthy),
                member(1, 100 * MIB, 10 * MIB, Health::Unhealthy),
            ],
            leader: Some(0),
        };
        assert_eq!(p.pick(&degraded, 2048 * MIB), None);
    }
}
