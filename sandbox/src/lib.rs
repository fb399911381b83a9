//! ferroplane-sandbox: an in-memory, kubectl-compatible Kubernetes API server.
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
//! Layers, request to storage: `handler` (HTTP, routing via `route`, encoding via `codec`,
//! `render`, `watch`) → `ops` (apiserver write semantics; `admission`, `apply`, `patch`) →
//! `state` (objects, resourceVersions, history). `registry`, `discovery` and `openapi` describe
//! what is served; `simulate` plays the workload controllers.

pub mod admission;
pub mod app;
pub mod apply;
pub mod codec;
pub mod discovery;
pub mod error;
pub mod handler;
pub mod meta;
pub mod openapi;
pub mod ops;
pub mod ownership;
pub mod patch;
pub mod protobuf;
pub mod registry;
pub mod render;
pub mod route;
pub mod scale;
pub mod schema;
pub mod selector;
pub mod server;
pub mod simulate;
pub mod state;
pub mod table;
pub mod view;
pub mod watch;

pub use app::SandboxConfig;
pub use server::{Sandbox, SandboxError};
