//! End-to-end tests of the ferroplane binary and library, one binary: kubectl against the sandbox
//! (or a real cluster via FERROPLANE_E2E_KUBECONFIG), bad input, and the reliability runs.
//! `tests/real_control_plane` runs the same suites against the real control plane.

mod support;

/// The API server of this binary's suites.
const SERVER: support::Server = support::Server::Sandbox;

mod bad_input;
mod e2e_ecs;
mod e2e_in_cluster;
mod e2e_network;
mod rbac;
mod reliability;
mod reliability_network;
