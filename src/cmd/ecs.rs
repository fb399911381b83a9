//! `ferroplane ecs call ACTION`: `ferroplane cloud call --product ecs ACTION` under its first
//! name (see [`super::api_call`]).

use std::process::ExitCode;

use super::api_call::product::Product;
use super::api_call::{self, CallArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: EcsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum EcsCommand {
    /// Sign and send one ECS API action, e.g. `ferroplane ecs call DescribeRegions` (for the VPC
    /// API: `ferroplane cloud call --product vpc`).
    Call(CallArgs),
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        EcsCommand::Call(args) => api_call::run(Product::Ecs, args).await,
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn ecs_call_keeps_its_arguments() {
        let cli = Cli::try_parse_from(["ecs", "call", "DescribeRegions", "--param", "PageSize=5"])
            .unwrap();
        let EcsCommand::Call(args) = cli.args.command;
        assert!(format!("{args:?}").contains("DescribeRegions"));
        assert!(Cli::try_parse_from(["ecs", "call", "--product", "vpc", "DescribeVpcs"]).is_err());
    }
}
