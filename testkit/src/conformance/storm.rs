//! The crash storm: on an API server of its own (its controllers are killed, which would disturb
//! the other cases), every kind's objects are created, then deleted, while the controllers are
//! killed and started again right after each change the cloud makes, as a crash would.

use std::sync::Arc;
use std::time::Duration;

use alibaba_mock::MockServer;
use tokio::sync::Barrier;

use super::case_run::{CaseResult, CaseRun};
use super::cases::Case;
use super::objects::{ObjectSpec, is_ready};
use super::registration::Registration;
use super::server::{Server, SuiteCluster};
use super::start::StartControllers;
use crate::controllers::Controllers;
use crate::wait::eventually;

/// How hard the storm blows.
#[derive(Debug, Clone, Copy)]
pub struct Strength {
    /// Objects per kind.
    pub objects: usize,
    /// Kills while they are created, and again while they are deleted.
    pub kills: usize,
}

/// Changes the cloud made so far (creates, changes, deletes).
fn changes(mock: &MockServer) -> usize {
    mock.ledger().len()
}

fn spawn(cluster: &SuiteCluster, mock: &MockServer, start: &StartControllers) -> Controllers {
    let start = Arc::clone(start);
    let endpoint = mock.endpoint();
    Controllers::spawn(cluster.runtime(), move |runtime, stop| {
        start(runtime, endpoint, stop)
    })
}

/// Kills the controllers `kills` times, each right after the cloud made a change (between a
/// step and the next one: after a create, before its name or Secret is written), or after a
/// second without any, and starts them again.
async fn blow(
    controllers: &mut Option<Controllers>,
    cluster: &SuiteCluster,
    mock: &MockServer,
    start: &StartControllers,
    kills: usize,
) {
    for _ in 0..kills {
        let before = changes(mock);
        // No change within the second: kill anyway (a crash needs no reason).
        let _ = eventually("a change in the cloud")
            .within(Duration::from_secs(1))
            .every(Duration::from_millis(2))
            .try_until_async(|| std::future::ready(changes(mock) > before))
            .await;
        if let Some(running) = controllers.take() {
            running.kill().await;
        }
        *controllers = Some(spawn(cluster, mock, start));
    }
}

/// One kind's side of the storm.
async fn storm_kind(
    run: &mut CaseRun<'_>,
    strength: Strength,
    barrier: &Barrier,
) -> Result<(), String> {
    let mut first_error: Option<String> = None;
    let mut note = |result: Result<(), String>| {
        if let Err(e) = result {
            first_error.get_or_insert(e);
        }
    };
    let base = run.build_for(strength.objects).await;
    let names: Vec<String> = (0..strength.objects)
        .map(|i| format!("storm-{i}"))
        .collect();
    let objects = run.objects.clone();
    for (index, name) in names.iter().enumerate() {
        let build = super::registration::Build {
            name: name.clone(),
            index: u8::try_from(index).unwrap_or(u8::MAX),
            ..base.clone()
        };
        let spec = ObjectSpec {
            connection_secret: run.spec().connection_secret.map(|s| format!("{name}-{s}")),
            ..run.spec()
        };
        note(run.create(&objects, &build, &spec).await.map(drop));
    }
    barrier.wait().await;
    for name in &names {
        let ready = objects
            .wait(name, "Ready=True after the storm", run.timeout, |o| {
                o.is_some_and(is_ready)
            })
            .await;
        note(ready.map(drop));
        let account = run.account.id.clone();
        run.tracked
            .check_status(run.mock, run.registration, &objects, name, &account)
            .await;
    }
    barrier.wait().await;
    for name in &names {
        note(objects.delete(name).await);
    }
    barrier.wait().await;
    for name in &names {
        let gone = objects.wait(name, "gone after the storm", run.timeout, |o| o.is_none());
        note(gone.await.map(drop));
    }
    if first_error.is_some() {
        // What the cloud saw, to tell a retried create from a lost one.
        for e in run.entries_since(0) {
            let owner = e
                .tags
                .get(ferroplane_runtime::UID_TAG)
                .cloned()
                .unwrap_or_default();
            run.tracked.findings.push(format!(
                "ledger: {} {:?} {} {:?} owner {owner}",
                e.action, e.change, e.resource_id, e.name
            ));
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Runs every kind's crash storm at once on `server`; one result per registration, in order.
pub async fn crash_storms(
    server: Server,
    mock: &MockServer,
    registrations: &[Registration],
    start: &StartControllers,
    (strength, repetition): (Strength, usize),
    timeout: Duration,
) -> Vec<CaseResult> {
    let cluster = SuiteCluster::start(server).await;
    let mut controllers = Some(spawn(&cluster, mock, start));
    let barrier = Barrier::new(registrations.len() + 1);
    let kinds = registrations.iter().map(|registration| {
        let client = cluster.client();
        let barrier = &barrier;
        async move {
            let mut run = CaseRun::start(
                client,
                mock,
                registration,
                (Case::CrashStorm, repetition),
                timeout,
            )
            .await;
            let outcome = storm_kind(&mut run, strength, barrier).await;
            run.finish(outcome)
        }
    });
    let driver = async {
        barrier.wait().await;
        blow(&mut controllers, &cluster, mock, start, strength.kills).await;
        barrier.wait().await;
        barrier.wait().await;
        blow(&mut controllers, &cluster, mock, start, strength.kills).await;
    };
    let (results, ()) = futures::join!(futures::future::join_all(kinds), driver);
    if let Some(running) = controllers.take() {
        running.stop().await;
    }
    cluster.shutdown().await;
    results
}
