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
    /// Sign and send one ECS API action, e.g. `ferroplane ecs call DescribeRegions`, or with
    /// `--product vpc` one of the VPC API (`ferroplane ecs call --product vpc DescribeVpcs`).
    Call {
        /// The API: `ecs` (version 2014-05-26) or `vpc` (version 2016-04-28).
        #[arg(long, value_enum, default_value_t = Product::Ecs)]
        product: Product,
        #[command(flatten)]
        args: CallArgs,
    },
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        EcsCommand::Call { product, args } => api_call::run(product, args).await,
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
        let EcsCommand::Call { product, args } = cli.args.command;
        assert!(format!("{args:?}").contains("DescribeRegions"));
        assert_eq!(product, Product::Ecs);
        let cli = Cli::try_parse_from(["ecs", "call", "--product", "vpc", "DescribeVpcs"]).unwrap();
        let EcsCommand::Call { product, .. } = cli.args.command;
        assert_eq!(product, Product::Vpc);
    }
}
