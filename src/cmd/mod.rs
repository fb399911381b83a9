//! One module per subcommand; each exposes `Args` (clap) and `async fn run(Args) -> anyhow::Result<ExitCode>`.
//! `api_call` is the body `cloud call` and `ecs call` share.

mod api_call;
pub mod cloud;
pub mod crds;
pub mod ecs;
pub mod ecs_mock;
pub mod etcd_restore;
pub mod etcd_snapshot;
pub mod import;
pub mod plan;
pub mod run;
pub mod sandbox;
