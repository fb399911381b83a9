//! `ferroplane import`: manifests of existing Alibaba Cloud resources (VPCs, vSwitches, security
//! groups with their rules, instances, data disks, key pairs), with references between them
//! wired, `ferroplane.io/external-name` set, and a spec that matches the cloud, so that the
//! first reconcile of every object changes nothing in the cloud's configuration (see README,
//! "Import").
//!
//! - `selector` and `selection`: what `--tag`, `--vpc-id`, `--instance-ids` and `--all` take;
//! - `inventory`: the reads, batched and paced by alibaba-sdk's clients;
//! - `assemble`: skip what ferroplane owns, name the rest (`object_names`), map each kind
//!   (`network`, `compute`, on `fields` and `manifest`);
//! - `output`: stdout or one file per kind.
//!
//! Credentials as `ferroplane ecs call` takes them: `ALIBABA_CLOUD_*`, or a running sandbox's
//! mock.

mod assemble;
mod compute;
mod fields;
mod inventory;
mod manifest;
mod network;
mod object_names;
mod output;
mod selection;
mod selector;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use alibaba_sdk::credentials::{Credentials, EnvProvider};
use alibaba_sdk::ecs::EcsClient;
use alibaba_sdk::endpoint::{Network, parse_endpoint};
use alibaba_sdk::vpc::{VpcClient, vpc_endpoint};
use anyhow::Context as _;
use ferroplane_apis::common::{ProviderConfigKind, ProviderConfigReference};

use self::manifest::{Common, Management};
use self::selector::{Selector, TagFilter};
use super::api_call::sandbox_fallback;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("selector").required(true).args(["tag", "vpc_id", "instance_ids", "all"])))]
pub struct Args {
    /// Region ID.
    #[arg(long, env = "ALIBABA_CLOUD_REGION_ID")]
    region: String,

    /// Resources carrying this tag, repeatable (all must match), and what they stand on.
    #[arg(long, value_name = "KEY=VALUE")]
    tag: Vec<TagFilter>,

    /// A VPC with its vSwitches, security groups, instances, their disks and key pairs.
    #[arg(long)]
    vpc_id: Option<String>,

    /// These instances (comma-separated), their disks and what they stand on.
    #[arg(long, value_delimiter = ',')]
    instance_ids: Vec<String>,

    /// Everything in the region.
    #[arg(long)]
    all: bool,

    /// A directory for one file per kind; stdout when absent.
    #[arg(short = 'o', long = "output-dir")]
    output_dir: Option<PathBuf>,

    /// Manage fully: `managementPolicies: ["*"]` and `deletionPolicy: Delete`. Without it the
    /// objects only observe (`[Observe]`, `Orphan`).
    #[arg(long)]
    manage: bool,

    /// Namespace of the objects; absent, none is written (kubectl's current one applies).
    #[arg(short = 'n', long)]
    namespace: Option<String>,

    /// The ProviderConfig the objects use.
    #[arg(long, default_value = "default")]
    provider_config: String,

    /// Endpoint URL of both APIs instead of the region's (the mock, for example).
    #[arg(long)]
    endpoint: Option<String>,
}

impl Args {
    fn selector(&self) -> Selector {
        if self.all {
            Selector::All
        } else if let Some(id) = &self.vpc_id {
            Selector::Vpc(id.clone())
        } else if !self.instance_ids.is_empty() {
            Selector::Instances(self.instance_ids.clone())
        } else {
            Selector::Tags(self.tag.clone())
        }
    }
}

/// Signed ECS and VPC clients of the region: of the environment's key, or a running sandbox's.
fn clients(args: &Args) -> anyhow::Result<(EcsClient, VpcClient)> {
    let builder = EcsClient::builder(&args.region).request_timeout(Duration::from_secs(30));
    let (builder, endpoint) = match sandbox_fallback(args.endpoint.is_some())? {
        Some(access) => (
            builder.credentials(Credentials::new(
                access.access_key_id,
                access.access_key_secret,
            )),
            Some(access.endpoint),
        ),
        None => (
            builder.credentials(EnvProvider::new()),
            args.endpoint.clone(),
        ),
    };
    let (ecs, vpc_url) = match endpoint {
        Some(endpoint) => (
            builder.endpoint(&endpoint).build()?,
            parse_endpoint(&endpoint)?,
        ),
        None => (
            builder.build()?,
            vpc_endpoint(&args.region, Network::Public)?,
        ),
    };
    let vpc = VpcClient::with_settings_of(&ecs, vpc_url).context("cannot set up the VPC client")?;
    Ok((ecs, vpc))
}

/// Reads, selects and maps: the whole import but the writing.
async fn import(
    ecs: &EcsClient,
    vpc: &VpcClient,
    selector: &Selector,
    region: &str,
    common: &Common,
) -> anyhow::Result<assemble::Imported> {
    let mut inventory = inventory::read(ecs, vpc, selector)
        .await
        .context("cannot read the region's resources")?;
    let selection = selection::select(&inventory, selector);
    inventory::read_rules(ecs, &mut inventory, &selection.groups)
        .await
        .context("cannot read the security groups' rules")?;
    Ok(assemble::assemble(&inventory, &selection, region, common))
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let (ecs, vpc) = clients(&args)?;
    let common = Common {
        namespace: args.namespace.clone(),
        management: if args.manage {
            Management::Full
        } else {
            Management::ObserveOnly
        },
        provider_config: ProviderConfigReference {
            kind: ProviderConfigKind::default(),
            name: args.provider_config.clone(),
        },
    };
    let imported = import(&ecs, &vpc, &args.selector(), &args.region, &common).await?;
    for note in &imported.notes {
        eprintln!("note: {note}");
    }
    match &args.output_dir {
        Some(dir) => {
            let files = output::write_dir(&imported.manifests, dir)?;
            eprintln!(
                "wrote {} objects to {} ({}) in {:.1}s",
                imported.manifests.len(),
                dir.display(),
                files.join(", "),
                started.elapsed().as_secs_f64()
            );
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            output::write_stream(&imported.manifests, &mut out)?;
            std::io::Write::flush(&mut out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests;
