//! `ferroplane cloud call --product ecs|vpc ACTION`: signs and sends any action of the ECS or
//! VPC API and prints the JSON response (see [`super::api_call`]).

use std::process::ExitCode;

use super::api_call::product::Product;
use super::api_call::{self, CallArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: CloudCommand,
}

#[derive(Debug, clap::Subcommand)]
enum CloudCommand {
    /// Sign and send one API action, e.g. `ferroplane cloud call --product vpc DescribeVpcs`.
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
        CloudCommand::Call { product, args } => api_call::run(product, args).await,
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
    fn the_product_defaults_to_ecs() {
        let parse = |argv: &[&str]| {
            let cli =
                Cli::try_parse_from(std::iter::once("cloud").chain(argv.iter().copied())).unwrap();
            let CloudCommand::Call { product, .. } = cli.args.command;
            product
        };
        assert_eq!(
            parse(&["call", "--product", "vpc", "DescribeVpcs"]),
            Product::Vpc
        );
        assert_eq!(parse(&["call", "DescribeRegions"]), Product::Ecs);
        assert!(Cli::try_parse_from(["cloud", "call", "--product", "oss", "ListBuckets"]).is_err());
    }
}
