//! The end-to-end suites of `tests/integration`, the same test bodies (included from there),
//! against the real Kubernetes control plane that `ferroplane-testenv` builds and starts:
//! kube-apiserver, kube-controller-manager (the real StatefulSet, Deployment, garbage-collector
//! controllers), kube-scheduler, etcd and kwok's fake nodes. The controllers run as ferroplane's
//! ServiceAccount with deploy/'s RBAC, so a missing permission fails a test here.
//!
//! The tests share one control plane (one namespace each); the reliability tests, which use
//! `default` and list cluster-wide, start one of their own. The first run builds the control
//! plane (about 10 minutes on 2 cores); later starts take about 9 s.

#[path = "../integration/support/mod.rs"]
mod support;

#[path = "../integration/bad_input.rs"]
mod bad_input;
#[path = "../integration/e2e_ecs.rs"]
mod e2e_ecs;
#[path = "../integration/e2e_in_cluster.rs"]
mod e2e_in_cluster;
#[path = "../integration/e2e_network.rs"]
mod e2e_network;
#[path = "../integration/reliability.rs"]
mod reliability;
#[path = "../integration/reliability_network.rs"]
mod reliability_network;

// Only here: EtcdCluster with real etcd members behind the real StatefulSet controller.
mod etcd_members;

// Not here: `rbac.rs` edits the ferroplane-alibaba ClusterRole, which every test of the shared
// control plane's controllers relies on.

/// The API server of this binary's suites.
const SERVER: support::Server = support::Server::RealControlPlane;
