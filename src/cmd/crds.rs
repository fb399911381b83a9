//! `ferroplane crds`: the CRDs generated from the types in `ferroplane-apis`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub async fn run(_args: Args) -> anyhow::Result<ExitCode> {
    print!("{}", ferroplane_apis::crds_yaml()?);
    Ok(ExitCode::SUCCESS)
}
