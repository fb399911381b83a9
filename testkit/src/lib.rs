//! ferroplane-testkit: the one harness of ferroplane's integration tests, end-to-end tests and
//! benchmarks (never published, never a normal dependency).
//!
//! - [`TestCluster`]: a sandbox API server with an admin client, a kubeconfig and a kubectl of
//!   its own, the CRDs a test installs and the controllers it runs ([`Controllers`]: spawned
//!   with a shutdown signal, stopped and joined).
//! - [`kubectl`]: the binary from PATH with a kubeconfig, a private cache dir and a namespace;
//!   success or failure output, jsonpath.
//! - [`wait`]: waiting on a watch or on a re-checked predicate, with a deadline and a message
//!   that says what was awaited. Tests never sleep a fixed time and then assert.
//! - [`conditions`], [`events`]: what the framework writes on any managed kind.
//! - [`ecs_mock`], [`secrets`], [`mock_requests`]: the ECS mock as the Alibaba controllers'
//!   cloud (credentials Secret, ProviderConfig), and raw signed requests to it.
//! - [`widget`]: the framework's own test kind and its fake cloud; [`faulty_client`]: a kube
//!   client that fails where a crash would.
//! - [`conformance`]: the managed-resource conformance suite every Alibaba managed kind runs
//!   (one registration per kind; the guarantees checked from the mock's own records).
//! - [`samples`]: the manifests in `deploy/samples/`.
//! - [`etcd`]: the real etcd program for tests that run etcd processes (built when missing).
//! - [`ingress`]: a stand-in ingress controller that gives Ingresses an address on the real
//!   control plane (which runs none), as the sandbox's simulator does.
//! - [`real_cluster`]: the real control plane of `ferroplane-testenv` with ferroplane installed
//!   as deploy/ installs it (one per test binary, or one of a test's own).
//!
//! # Dependencies
//! Any of ferroplane's library crates except the providers and the binary: a provider's or the
//! binary's tests pass their own `run` to [`Controllers::spawn`]. Only tests and benchmarks
//! depend on this crate (as a dev-dependency); a crate's unit tests (inside `src/`) never do.

mod client;
mod cluster;
pub mod conditions;
pub mod conformance;
mod controllers;
mod crds;
pub mod ecs_mock;
pub mod etcd;
pub mod events;
pub mod faulty_client;
pub mod ingress;
pub mod kubectl;
pub mod mock_requests;
pub mod real_cluster;
pub mod samples;
pub mod secrets;
pub mod wait;
pub mod widget;

pub use client::{client_for, client_from_kubeconfig};
pub use cluster::{Rbac, TestCluster};
pub use controllers::{Controllers, test_runtime};
pub use crds::{apply as apply_crds, install as install_crds};
/// What [`TestCluster::start_with`] takes.
pub use ferroplane_sandbox::SandboxConfig;
pub use kubectl::{Kubectl, KubectlOutput};
pub use wait::eventually;
