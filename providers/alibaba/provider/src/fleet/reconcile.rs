//! One reconcile of an ECSFleet: read its members from the ECSInstance cache, record the
//! placements ECS refused, plan (`rollout`), place (`placement`), create, delete and patch the
//! member objects, and write the status.
//!
//! Member names are deterministic (`<fleet>-<hash>-<n>`, the lowest `n` no object of the fleet
//! uses), so a create that a stale cache repeats answers `AlreadyExists` instead of making a
//! second instance. Deletes carry the member's UID as a precondition.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use ferroplane_apis::alibabacloud::{ECSFleet, ECSFleetStatus, ECSInstance, FLEET_LABEL};
use ferroplane_runtime::conditions::{self, Desired};
use ferroplane_runtime::events::Events;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use kube::{Api, ResourceExt};
use serde_json::{Value, json};
use tracing::debug;

use super::decision::{Decision, NewMember, decide, strategy_of, updated_ready};
use super::expectations::{Expectations, UncountedLosses};
use super::members::{Members, members_of};
use super::status::{self, Progress};
use super::template::{render_member, template_hash};
use crate::reasons::{FLEET_REBALANCING, INSTANCE_LOST, PLACEMENT_REFUSED};

/// What every reconcile shares.
pub struct Context {
    pub client: kube::Client,
    pub instances: Store<ECSInstance>,
    pub events: Events,
    pub poll: Duration,
    /// Top-level `forProvider` properties whose change needs new instances.
    pub replacing: BTreeSet<&'static str>,
    /// Members created and deleted that the cache has not shown yet.
    pub expectations: Expectations,
    /// Members replaced as lost that no status write has counted yet.
    pub uncounted_losses: UncountedLosses,
}

/// A failed call to the API server.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("cannot {what}: {source}")]
    Kube {
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot render a member: {0}")]
    Render(#[from] serde_json::Error),
    #[error("the fleet changed under each of {attempts} status writes; retried")]
    StatusConflict { attempts: usize },
}

fn kube_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> FleetError {
    let what = what.into();
    move |source| FleetError::Kube { what, source }
}

/// After a failed reconcile.
pub fn error_policy(_fleet: Arc<ECSFleet>, error: &FleetError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(%error, "fleet reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

pub async fn reconcile(cached: Arc<ECSFleet>, ctx: Arc<Context>) -> Result<Action, FleetError> {
    let name = cached.name_any();
    let namespace = cached.namespace().unwrap_or_default();
    let fleets: Api<ECSFleet> = Api::namespaced(ctx.client.clone(), &namespace);
    // The status carries what only it holds (refusals in force, the progress clock, the count
    // of lost members): read from the server, not the cache, which a reconcile woken by the
    // members may find older than the last status write.
    let Some(fleet) = fleets
        .get_opt(&name)
        .await
        .map_err(kube_error("read the fleet"))?
    else {
        return Ok(Action::await_change());
    };
    if fleet.metadata.deletion_timestamp.is_some() {
        // The garbage collector deletes the members through their owner references.
        return Ok(Action::await_change());
    }
    let instances: Api<ECSInstance> = Api::namespaced(ctx.client.clone(), &namespace);
    let now = Timestamp::now();
    let previous = fleet.status.clone().unwrap_or_default();

    let key = format!("{namespace}/{name}");
    if let Err(message) = strategy_of(&fleet) {
        return write_invalid(&fleets, &fleet, &previous, message, now).await;
    }
    if !ctx.expectations.satisfied(&key, &namespace, &ctx.instances) {
        return Ok(Action::requeue(Duration::from_secs(1)));
    }
    let hash = template_hash(&fleet, &ctx.replacing);
    let members = members_of(&fleet, ctx.instances.state(), &hash);
    let decision = match decide(&fleet, &members, &hash, &ctx.replacing, now) {
        Ok(decision) => decision,
        Err(message) => return write_invalid(&fleets, &fleet, &previous, message, now).await,
    };

    let pass = Pass {
        ctx: &ctx,
        fleet: &fleet,
        instances: &instances,
        key: &key,
    };
    pass.drop_refused(&members).await?;
    pass.replace_lost(&members).await?;
    if decision.plan.create > 0 && !decision.moving.is_empty() {
        ctx.events
            .normal(
                &fleet,
                FLEET_REBALANCING,
                format!(
                    "{} members stand where the placement rules would not put them now (a zone or instance type open again, or no longer listed); moving them, each new member first and a misplaced one deleted only once it is Ready",
                    decision.moving.len()
                ),
            )
            .await;
    }
    for doomed in &decision.plan.delete {
        let uid = members
            .objects
            .iter()
            .find(|o| &o.name_any() == doomed)
            .and_then(|o| o.uid());
        pass.delete_member(doomed, uid).await?;
    }
    pass.create_members(&decision.creates, &hash).await?;
    pass.apply_in_place(&decision.in_place).await?;

    let Decision {
        refusals,
        last_progress,
        rolling,
        halted,
        chosen,
        ..
    } = decision;
    let (zones, instance_types) = status::counts(&members);
    let live = members.live.len() as u32;
    let progress = Progress {
        replicas: fleet.spec.replicas,
        live,
        ready: members.live.iter().filter(|m| m.ready).count() as u32,
        updated: members.live.iter().filter(|m| m.current).count() as u32,
        updated_ready: updated_ready(&members) as u32,
        unplaced: chosen.unplaced,
        halted,
    };
    let refusal_text = refusals
        .iter()
        .map(|r| format!("{}/{} {}", r.zone_id, r.instance_type, r.reason))
        .collect::<Vec<_>>()
        .join(", ");
    let next_retry = refusals.iter().map(|r| r.retry_after.0).min();
    let new_status = ECSFleetStatus {
        replicas: live,
        ready_replicas: progress.ready,
        updated_replicas: progress.updated,
        updated_ready_replicas: progress.updated_ready,
        lost_replaced: previous.lost_replaced,
        selector: Some(format!("{FLEET_LABEL}={name}")),
        template_hash: Some(hash),
        zones,
        instance_types,
        refused_placements: refusals,
        last_progress_time: Some(Time(last_progress)),
        conditions: conditions::merge(
            &previous.conditions,
            &status::conditions(&progress, &refusal_text),
            fleet.metadata.generation,
            now,
        ),
        observed_generation: fleet.metadata.generation,
    };
    let lost = ctx.uncounted_losses.pending(&key);
    write_status(&fleets, &fleet, new_status, lost).await?;
    ctx.uncounted_losses.counted(&key, lost);

    // Members' changes wake the fleet through the watch; the clock wakes it for a refusal that
    // expires and a deadline that passes.
    let mut wake = ctx.poll;
    if let Some(at) = next_retry {
        wake = wake.min(until(now, at));
    }
    if rolling && !halted {
        wake = wake.min(until(
            now,
            last_progress
                .saturating_add(SignedDuration::from_secs(i64::from(
                    fleet.spec.progress_deadline_seconds,
                )))
                .unwrap_or(now),
        ));
    }
    Ok(Action::requeue(wake.max(Duration::from_secs(1))))
}

/// One reconcile's writes to the fleet's members; each create and delete is recorded in the
/// expectations as soon as it is accepted, so a failure later in the pass cannot hide it from
/// the next one.
struct Pass<'a> {
    ctx: &'a Context,
    fleet: &'a ECSFleet,
    instances: &'a Api<ECSInstance>,
    key: &'a str,
}

impl Pass<'_> {
    /// Deletes the members ECS just refused (they never had an instance), with an event each;
    /// [`decide`] records their placements as refused.
    async fn drop_refused(&self, members: &Members) -> Result<(), FleetError> {
        let placement = &self.fleet.spec.placement;
        for refused in &members.refused {
            self.ctx
                .events
                .warning(
                    self.fleet,
                    PLACEMENT_REFUSED,
                    format!(
                        "ECS refused {} in {} ({}) for {}; placing it elsewhere, and trying that placement again after {}s",
                        refused.instance_type,
                        refused.zone,
                        refused.reason,
                        refused.name,
                        placement.retry_refused_after_seconds
                    ),
                )
                .await;
            self.delete_member(&refused.name, refused.uid.clone())
                .await?;
        }
        Ok(())
    }

    /// Deletes the members whose instance is gone from the cloud, with an event each, each
    /// counted as soon as its delete is accepted.
    async fn replace_lost(&self, members: &Members) -> Result<(), FleetError> {
        for (lost, uid) in &members.lost {
            self.ctx
                .events
                .warning(
                    self.fleet,
                    INSTANCE_LOST,
                    format!("the instance of {lost} is gone from the cloud (reclaimed or released outside ferroplane); replacing it"),
                )
                .await;
            if self.delete_member(lost, uid.clone()).await? {
                self.ctx.uncounted_losses.add(self.key, 1);
            }
        }
        Ok(())
    }

    /// Creates the new members [`decide`] placed and named.
    async fn create_members(&self, creates: &[NewMember], hash: &str) -> Result<(), FleetError> {
        let fleet = self.fleet;
        for new in creates {
            let member = render_member(fleet, hash, new.ordinal, &new.placement)?;
            match self.instances.create(&PostParams::default(), &member).await {
                Ok(_) => {
                    debug!(fleet = %fleet.name_any(), member = %new.name, "member created");
                    self.ctx
                        .expectations
                        .record(self.key, vec![new.name.clone()], Vec::new());
                }
                // A cache that has not seen our last create yet: the object exists.
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(e) => return Err(kube_error(format!("create ECSInstance {}", new.name))(e)),
            }
        }
        Ok(())
    }

    /// Writes the template's in-place properties, labels and annotations to the members that
    /// stay and differ ([`decide`]).
    async fn apply_in_place(&self, patches: &[(String, Value)]) -> Result<(), FleetError> {
        for (member, patch) in patches {
            self.instances
                .patch(member, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map_err(kube_error(format!("update ECSInstance {member}")))?;
        }
        Ok(())
    }

    /// Deletes a member by name with its UID as a precondition; whether the delete was accepted.
    async fn delete_member(&self, name: &str, uid: Option<String>) -> Result<bool, FleetError> {
        let params = DeleteParams {
            preconditions: uid.clone().map(|uid| Preconditions {
                uid: Some(uid),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match self.instances.delete(name, &params).await {
            Ok(_) => {
                if let Some(uid) = uid {
                    self.ctx.expectations.record(
                        self.key,
                        Vec::new(),
                        vec![(name.to_owned(), uid)],
                    );
                }
                Ok(true)
            }
            // Gone already, or replaced by another object of that name: not ours to delete.
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(false),
            Err(e) => Err(kube_error(format!("delete ECSInstance {name}"))(e)),
        }
    }
}

fn until(now: Timestamp, at: Timestamp) -> Duration {
    Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO)
}

async fn write_invalid(
    fleets: &Api<ECSFleet>,
    fleet: &ECSFleet,
    previous: &ECSFleetStatus,
    message: String,
    now: Timestamp,
) -> Result<Action, FleetError> {
    let desired: Vec<Desired> = status::invalid(message);
    let new_status = ECSFleetStatus {
        conditions: conditions::merge(
            &previous.conditions,
            &desired,
            fleet.metadata.generation,
            now,
        ),
        observed_generation: fleet.metadata.generation,
        ..previous.clone()
    };
    write_status(fleets, fleet, new_status, 0).await?;
    Ok(Action::await_change())
}

/// How many times a status write that conflicts is redone on the fleet read again.
const STATUS_CONFLICT_RETRIES: usize = 3;

/// Writes `new_status`, with `lost` added to the stored `lostReplaced`, unless the status says
/// just that. Under the resourceVersion the reconcile read: a write from an older read of the
/// fleet would put an older count back. On a conflict the fleet is read again and the sum
/// redone on what it stores, so members this reconcile replaced are counted once.
async fn write_status(
    fleets: &Api<ECSFleet>,
    fleet: &ECSFleet,
    new_status: ECSFleetStatus,
    lost: u32,
) -> Result<(), FleetError> {
    let mut stored = fleet.status.clone();
    let mut version = fleet.metadata.resource_version.clone();
    for _ in 0..STATUS_CONFLICT_RETRIES {
        let base = stored.clone().unwrap_or_default();
        let status = ECSFleetStatus {
            lost_replaced: base.lost_replaced + lost,
            ..new_status.clone()
        };
        if stored.is_some() && status == base {
            return Ok(());
        }
        // A merge patch leaves out what is omitted: a field the new status no longer has (an
        // empty list of refusals) is sent as null.
        let mut body = serde_json::to_value(&status)?;
        if let (Some(new), Ok(serde_json::Value::Object(old))) =
            (body.as_object_mut(), serde_json::to_value(&base))
        {
            for key in old.keys() {
                new.entry(key.clone()).or_insert(serde_json::Value::Null);
            }
        }
        let patch = json!({"metadata": {"resourceVersion": version}, "status": body});
        match fleets
            .patch_status(
                &fleet.name_any(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => {
                let fresh = fleets
                    .get_status(&fleet.name_any())
                    .await
                    .map_err(kube_error("read the fleet again after a conflict"))?;
                stored = fresh.status;
                version = fresh.metadata.resource_version;
            }
            Err(e) => return Err(kube_error("write the fleet's status")(e)),
        }
    }
    Err(FleetError::StatusConflict {
        attempts: STATUS_CONFLICT_RETRIES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_testkit::{TestCluster, install_crds, samples};
    use kube::CustomResourceExt;

    /// A reconcile woken by its members may run on a cached fleet older than the last status
    /// write: what it writes keeps the stored count and adds its own.
    #[tokio::test]
    async fn a_stale_fleet_never_writes_an_older_lost_count_back() {
        let cluster = TestCluster::start().await;
        install_crds(&cluster.client(), [ECSFleet::crd()]).await;
        let fleets: Api<ECSFleet> = cluster.api();
        let sample: ECSFleet =
            serde_saphyr::from_str(&samples::without_namespace("fleet.yaml")).expect("sample");
        let stale = fleets
            .create(&PostParams::default(), &sample)
            .await
            .expect("fleet created");
        let status = |ready| ECSFleetStatus {
            ready_replicas: ready,
            ..ECSFleetStatus::default()
        };

        write_status(&fleets, &stale, status(1), 1)
            .await
            .expect("first write");
        // `stale` still shows no status: written again under its resourceVersion, it conflicts
        // and is redone on the stored count.
        write_status(&fleets, &stale, status(2), 0)
            .await
            .expect("write from the stale fleet");
        let stored = fleets.get_status("web").await.expect("read").status;
        assert_eq!(
            stored.as_ref().map(|s| (s.lost_replaced, s.ready_replicas)),
            Some((1, 2))
        );
        write_status(&fleets, &stale, status(2), 2)
            .await
            .expect("two more lost");
        let stored = fleets.get_status("web").await.expect("read").status;
        assert_eq!(stored.map(|s| s.lost_replaced), Some(3));
    }
}
