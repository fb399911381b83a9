//! The defragmentation step: which member is due ([`crate::defrag`]) and defragmenting it.

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;
use tracing::info;

use super::client::EtcdClient;
use super::snapshot::Snapshot;
use crate::defrag::DefragPolicy;
use crate::error::Error;
use crate::membership::Membership;
use crate::planner::Step;
use crate::reasons;
use crate::render;

impl<M: Membership> EtcdClient<M> {
    /// The member to defragment now and why ([`defrag`]): only while membership is steady.
    pub(super) fn defrag_due(&self, mr: &EtcdCluster, snap: &Snapshot) -> Option<(String, String)> {
        let observed = snap.membership.as_ref().ok()?;
        if snap.step != Step::Steady {
            return None;
        }
        let quota = render::options::effective(mr)
            .ok()?
            .get("quota-backend-bytes")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let member = DefragPolicy::default().pick(observed, quota)?;
        let status = member.status.as_ref()?;
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        Some((
            member.member.name.clone(),
            format!(
                "{:.1} MiB of its {:.1} MiB database are free (space quota {:.0} MiB)",
                mib(status.db_size.saturating_sub(status.db_size_in_use)),
                mib(status.db_size),
                mib(quota)
            ),
        ))
    }

    /// Defragments the member [`Self::defrag_due`] names, and says so in an event.
    pub(super) async fn defragment(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<(), ReconcileError> {
        let Some((name, why)) = self.defrag_due(mr, snap) else {
            return Ok(());
        };
        let Some(url) = snap.membership.as_ref().ok().and_then(|o| {
            let m = o.members.iter().find(|m| m.member.name == name)?;
            m.member
                .client_urls
                .first()
                .cloned()
                .or_else(|| m.ordinal.map(|o| self.names.member_client_url(o)))
        }) else {
            return Ok(());
        };
        self.membership.defragment(&url).await.map_err(|e| {
            let err = Error::from(e);
            ReconcileError::retryable(err.reason(), format!("defragmenting {name}: {err}"))
        })?;
        info!(cluster = %self.names.name, member = %name, "defragmented");
        self.events
            .normal(
                mr,
                reasons::MEMBER_DEFRAGMENTED,
                format!("defragmented {name}: {why}"),
            )
            .await;
        Ok(())
    }
}
