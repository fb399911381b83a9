//! The ECSFleet controller: `replicas` ECSInstance objects from one template, owned by the
//! fleet as a Deployment owns its pods, so every guarantee of an ECSInstance (idempotent
//! create, batched reads, quota pacing, no leak) holds for each of them unchanged.
//!
//! - `template`: the template hash (what only a new instance can take) and the member objects;
//! - `members`: the fleet's members, read from the ECSInstance controller's cache (no watch or
//!   cache of its own), and those ECS refused to place;
//! - `placement`: where new members go (zones and instance types in order, refusals skipped);
//! - `rollout`: how many to create and which to delete (scale, rolling update, `OnDelete`);
//! - `rebalance`: which members of a steady fleet stand where the placement rules would not put
//!   them now (a zone open again, a preferred type offered again), moved new-first;
//! - `decision`: what one reconcile does, from the fleet and its members, with no I/O (the
//!   reconcile carries it out, `ferroplane plan` shows it);
//! - `status`: counts and the `Ready` / `Progressing` conditions;
//! - `expectations`: what the last reconcile did that the cache has not shown yet;
//! - `reconcile`: one reconcile, putting these together.

mod decision;

pub use self::decision::{FleetPreview, preview};
mod expectations;
mod members;
mod placement;
mod rebalance;
mod reconcile;
mod rollout;
mod status;
mod template;

use std::future::Future;
use std::sync::Arc;

use ferroplane_apis::alibabacloud::{ECSFleet, ECSInstance};
use ferroplane_runtime::events::Events;
use ferroplane_runtime::{Connector, ManagedController, Runtime};
use futures::StreamExt;
use futures::future::{BoxFuture, Shared};
use kube::ResourceExt;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tracing::{info, warn};

use self::reconcile::{Context, error_policy, reconcile};
use crate::options::Options;

/// Runs the ECSFleet controller until `shutdown` completes. It follows the fleets' members
/// through the ECSInstance controller's watch and store (`instances`), and starts once that
/// store has been filled, so that it never plans from an empty view of its members.
pub(crate) fn run<C>(
    runtime: &Runtime,
    options: &Options,
    instances: &ManagedController<ECSInstance, C>,
    shutdown: Shared<BoxFuture<'static, ()>>,
) -> impl Future<Output = ()> + Send + use<C>
where
    C: Connector<ECSInstance>,
{
    let client = runtime.client().clone();
    let (changed, member_changes) = futures::channel::mpsc::unbounded();
    instances.observe_objects(move |instance: &ECSInstance| {
        if let Some(fleet) = owning_fleet(instance) {
            // A send fails only once the fleet controller has stopped.
            let _ = changed.unbounded_send(fleet);
        }
    });
    let store = instances.store();
    let context = Arc::new(Context {
        client: client.clone(),
        instances: store.clone(),
        events: Events::new(runtime.recorder()),
        poll: options.poll_interval,
        replacing: template::replacing_properties(),
        expectations: expectations::Expectations::default(),
        uncounted_losses: expectations::UncountedLosses::default(),
    });
    let fleets = options.api::<ECSFleet>(&client);
    async move {
        let ready = futures::future::select(
            Box::pin(store.wait_until_ready()),
            Box::pin(shutdown.clone()),
        )
        .await;
        if let futures::future::Either::Right(_) = ready {
            return;
        }
        info!(kind = "ECSFleet", "starting controller");
        let controller = Controller::new(fleets, watcher::Config::default());
        let ready_gate = controller.store();
        let main = controller
            .reconcile_on(member_changes)
            .graceful_shutdown_on(shutdown.clone())
            .run(reconcile, error_policy, context)
            .for_each(|result| {
                if let Err(err) = result {
                    warn!(error = %err, "fleet reconcile failed");
                }
                futures::future::ready(())
            });
        // A controller whose first list never came (no CRD, no permission) has nothing to drain.
        let unready_stop = ferroplane_runtime::shutdown::stopped_before_ready(ready_gate, shutdown);
        futures::pin_mut!(main, unready_stop);
        futures::future::select(main, unready_stop).await;
        info!(kind = "ECSFleet", "controller stopped");
    }
}

/// The fleet that controls `instance`, if any.
fn owning_fleet(instance: &ECSInstance) -> Option<ObjectRef<ECSFleet>> {
    let owner = instance
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true) && o.kind == "ECSFleet")?;
    let namespace = instance.namespace()?;
    Some(ObjectRef::new(&owner.name).within(&namespace))
}
