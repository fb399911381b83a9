//! The managed-resource conformance suite (issue 32): every managed kind, through one
//! [`Registration`] of a few lines, runs the same cases against the ECS mock on either API
//! server ([`Server`]: the sandbox, or a real control plane of its own), and the mock's own
//! records (its ledger of creates, changes and deletes per account and its live resources) say
//! whether the guarantees held: no duplicate, no leak, no change to a resource the object did
//! not own, no one-time secret lost, a status that matches the cloud.
//!
//! - [`registration`]: what a kind declares; [`cases`]: the cases and the failure classes.
//! - `suite`: one API server, one mock, one set of controllers, every (kind, case) at once,
//!   each in namespaces and a cloud account of its own; `storm`: the crash storms, on an API
//!   server of their own whose controllers are killed again and again; `server`: the two API
//!   servers behind one interface.
//! - `start` (the provider's controllers, as the test passes them), `case_run` (a running
//!   case), `scripts` (what each case does), `accounts` (the case's accounts and hand-made
//!   resources), `objects` (the kind's objects, dynamically), `audit` (the guarantees, from the
//!   mock's records), [`Matrix`] (kind × case → outcome, totals, the verdict against the cases
//!   expected to fail until their defect is fixed).
//!
//! A provider's test passes its registrations, its `run` ([`StartControllers`]) and the
//! [`Server`] to [`run`], prints [`Matrix::render`] and fails on [`Matrix::verdict`].
//! `FERROPLANE_CONFORMANCE=long` selects the long form ([`Form::from_env`]).

mod accounts;
mod audit;
mod case_run;
pub mod cases;
mod matrix;
mod objects;
pub mod registration;
mod scripts;
mod server;
mod start;
mod storm;
mod suite;

pub use audit::Audit;
pub use case_run::{CaseResult, REGION, ZONE};
pub use cases::{Case, FaultClass};
pub use matrix::{Cell, Matrix};
pub use registration::{Actions, Build, InPlaceUpdate, Naming, Prerequisite, Registration, Steps};
pub use server::Server;
pub use start::StartControllers;
pub use storm::Strength;
pub use suite::{FORM_VARIABLE, Form, run};

/// The kinds of `group` whose CRD is in the category `managed`, from ferroplane's CRDs.
pub fn managed_kinds(group: &str) -> Vec<String> {
    ferroplane_apis::crds()
        .into_iter()
        .filter(|crd| crd.spec.group == group)
        .filter(|crd| {
            crd.spec
                .names
                .categories
                .iter()
                .flatten()
                .any(|c| c == "managed")
        })
        .map(|crd| crd.spec.names.kind)
        .collect()
}
