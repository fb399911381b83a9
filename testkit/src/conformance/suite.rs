//! The suite: one API server (a sandbox or a real control plane) with ferroplane's CRDs, one
//! mock, one set of controllers, and every (kind, case) running at once, each in namespaces and
//! a cloud account of its own; the crash storms beside them on an API server of their own. Its result is the [`Matrix`].

use std::sync::Arc;
use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer};
use futures::StreamExt as _;

use super::case_run::{CaseResult, CaseRun, OBJECT};
use super::cases::Case;
use super::matrix::{Cell, Matrix};
use super::objects::Objects;
use super::registration::Registration;
use super::scripts;
use super::server::{Server, SuiteCluster};
use super::start::StartControllers;
use super::storm::{Strength, crash_storms};

/// The environment variable that selects the long form: `FERROPLANE_CONFORMANCE=long`.
pub const FORM_VARIABLE: &str = "FERROPLANE_CONFORMANCE";

/// How much the suite does.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    /// Runs of every case.
    pub repetitions: usize,
    pub storm: Strength,
    /// Longest wait of one step.
    pub timeout: Duration,
    /// Cases running at once (the machine's cores are few; too many at once only wait).
    pub concurrency: usize,
}

impl Form {
    /// The short form of `cargo test`, or the long one with `FERROPLANE_CONFORMANCE=long`.
    pub fn from_env() -> Self {
        match std::env::var(FORM_VARIABLE).as_deref() {
            Ok("long") => Self {
                repetitions: 3,
                storm: Strength {
                    objects: 5,
                    kills: 25,
                },
                timeout: Duration::from_secs(120),
                concurrency: 16,
            },
            _ => Self {
                repetitions: 1,
                storm: Strength {
                    objects: 2,
                    kills: 4,
                },
                // As long as the long form's: sixteen cases share two loaded cores in CI, and a
                // step that passes takes only what it needs.
                timeout: Duration::from_secs(120),
                concurrency: 16,
            },
        }
    }
}

/// Deletes what a failed case left and waits until it is gone, so that the audit sees the
/// end of every object.
async fn clean_up(run: &CaseRun<'_>) {
    for suffix in ["", "-b", "-seed"] {
        let namespace = format!("{}{suffix}", run.namespace);
        let objects = Objects::new(&run.client, run.registration.kind, &namespace);
        if objects.get(OBJECT).await.is_some() {
            let _ = objects.delete_and_wait(OBJECT, run.timeout).await;
        }
    }
}

async fn run_case(
    client: kube::Client,
    mock: &MockServer,
    registration: &Registration,
    case: Case,
    repetition: usize,
    timeout: Duration,
) -> CaseResult {
    let mut run = CaseRun::start(client, mock, registration, (case, repetition), timeout).await;
    let outcome = scripts::run(&mut run).await;
    if outcome.is_err() {
        clean_up(&run).await;
    }
    run.finish(outcome)
}

/// Runs every registration through every case on `server`; `start` runs the provider's
/// controllers.
pub async fn run(
    registrations: &[Registration],
    start: StartControllers,
    form: Form,
    server: Server,
) -> Matrix {
    let mut cluster = SuiteCluster::start(server).await;
    let mock = crate::ecs_mock::start(
        MockConfig::new("LTAIconformanceunused", "unused")
            .with_transition_delay(Duration::from_millis(100)),
    )
    .await;
    let endpoint = mock.endpoint();
    let controllers = Arc::clone(&start);
    cluster.spawn_controllers(move |runtime, stop| controllers(runtime, endpoint, stop));
    let mut matrix = Matrix::default();
    let mut pending = Vec::new();
    for registration in registrations {
        for case in Case::all() {
            if let Some(why) = case.not_applicable(registration) {
                matrix.record(registration.kind, case, Cell::NotApplicable(why));
                continue;
            }
            if case == Case::CrashStorm {
                continue;
            }
            for repetition in 0..form.repetitions {
                let client = cluster.client();
                let mock = &mock;
                pending.push(async move {
                    let result =
                        run_case(client, mock, registration, case, repetition, form.timeout).await;
                    (registration.kind, case, result)
                });
            }
        }
    }
    let storms = async {
        let mut results = Vec::new();
        for repetition in 0..form.repetitions {
            let strength = form.storm;
            let timeout = form.timeout;
            results.extend(
                crash_storms(
                    server,
                    &mock,
                    registrations,
                    &start,
                    (strength, repetition),
                    timeout,
                )
                .await,
            );
        }
        results
    };
    let cases = futures::stream::iter(pending)
        .buffer_unordered(form.concurrency)
        .collect::<Vec<_>>();
    let (cases, storms) = futures::join!(cases, storms);
    for (kind, case, result) in cases {
        matrix.record(kind, case, Cell::Ran(result));
    }
    let kinds = registrations.iter().cycle();
    for (registration, result) in kinds.zip(storms) {
        matrix.record(registration.kind, Case::CrashStorm, Cell::Ran(result));
    }
    cluster.shutdown().await;
    mock.shutdown().await;
    matrix
}
