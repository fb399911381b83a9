//! A real Kubernetes control plane for ferroplane's tests and for people: kube-apiserver,
//! kube-controller-manager and kube-scheduler from the `k8s.io/kubernetes` Go module, etcd from
//! `go.etcd.io/etcd/server/v3` and kwok's controller (fake nodes whose pods are reported Running
//! without containers), built once per pinned version and started on 127.0.0.1. The same builder
//! makes the Helm CLI of the chart's tests (`Builder::ensure_helm`), and Crossplane core, its CLI and
//! the composition function of the Crossplane tests (`Builder::ensure_crossplane`, …).
//!
//! ```no_run
//! # async fn demo() -> ferroplane_testenv::Result<()> {
//! use ferroplane_testenv::{ControlPlane, Options};
//! let cp = ControlPlane::start(Options::default()).await?;
//! let client = cp.client(); // admin
//! let sa = cp.service_account_kubeconfig("ferroplane-system", "ferroplane").await?;
//! # drop((client, sa)); Ok(()) }
//! ```
//!
//! The flow: `versions` (what) → `builder` + `gomod` (build once, cached) → `pki` and
//! `kubeconfig` → `credentials` (the files) → `components` (command lines) → `process` (children
//! that never outlive their owner) → `control_plane` (start in order, wait until healthy) →
//! `nodes` (the fake nodes kwok plays); `shared`: one control plane for a whole test binary;
//! `provisioner` (PersistentVolumes for claims) and `etcd_members` (real etcd processes for the
//! etcd pods kwok reports Running).

mod builder;
mod components;
mod composition_function;
mod control_plane;
mod credentials;
mod crossplane;
mod error;
pub mod etcd_members;
mod gomod;
mod kubeconfig;
mod layout;
mod metrics;
mod nodes;
mod pki;
mod process;
mod provisioner;
mod shared;
mod versions;

pub use builder::{Binaries, Builder, CROSSPLANE_CRDS_DIR};
pub use control_plane::{Access, ControlPlane, Options};
pub use crossplane::{CROSSPLANE_NAMESPACE, Crossplane};
pub use error::{Error, Result};
pub use etcd_members::{EtcdMembers, MemberAddresses, MemberProcess};
pub use metrics::{Writes, apiserver_writes, read_apiserver_writes};
pub use nodes::{fake_node, is_ready};
pub use provisioner::Provisioner;
pub use shared::shared;
pub use versions::{Component, Versions};
