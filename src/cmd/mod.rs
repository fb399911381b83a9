//! One module per subcommand; each exposes `Args` (clap) and `async fn run(Args) -> anyhow::Result<ExitCode>`.

pub mod crds;
pub mod ecs;
pub mod ecs_mock;
pub mod etcd_restore;
pub mod etcd_snapshot;
pub mod run;
pub mod sandbox;
