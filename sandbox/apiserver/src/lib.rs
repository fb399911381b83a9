//! ferroplane-sandbox: an in-memory, kubectl-compatible Kubernetes API server, for
//! `ferroplane sandbox` and every test that needs a cluster.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferroplane_sandbox::SandboxError> {
//! let sandbox = ferroplane_sandbox::Sandbox::start(ferroplane_sandbox::SandboxConfig::default()).await?;
//! let kubeconfig = sandbox.write_kubeconfig(std::path::Path::new(".ferroplane"))?;
//! println!("export KUBECONFIG={}", kubeconfig.display());
//! sandbox.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Layers, request to storage, each depending only on those after it:
//! - `http`: the axum handler — routing, decoding, one store call per request, encoding
//!   (objects, Tables, watch streams);
//! - `store`: the objects behind one lock and the apiserver semantics of every operation
//!   (`ops`: create, update, patch, delete, garbage collection; admission; lists; views);
//! - `fields`: patches, server-side apply and managed fields, on JSON values;
//! - `catalog`: what is served — the registry, discovery, OpenAPI and each kind's printer;
//! - `meta` and `error`: object metadata helpers and `Status` errors, shared by all.
//!
//! `simulate` plays the workload controllers against the store; `server` starts and stops it all.
//! The crate depends on `ferroplane-sandbox-schema` (CRD schemas) and on nothing else of
//! ferroplane; the rest of the workspace uses it only through [`Sandbox`] and [`SandboxConfig`].

mod app;
mod auth;
mod catalog;
mod error;
mod fields;
mod http;
mod meta;
mod server;
mod simulate;
mod store;

pub use app::SandboxConfig;
pub use server::{Sandbox, SandboxError};
