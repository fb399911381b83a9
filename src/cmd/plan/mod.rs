//! `ferroplane plan`: what the next reconcile of each object would do, with reads only (see
//! README, "Plan"). ECSInstances take the steps below; the other cloud kinds take the same ones
//! through one generic path (`cloud_kinds`: their controllers' connect and observe); ECSFleets
//! are planned from the cluster alone (`fleets`: the fleet controller's decision over its
//! members). The steps, as the reconcile takes them:
//!
//! 1. the objects (`manifests`: `-f`, or the cluster's with `-n`/`-l`/`--all-namespaces`); a
//!    manifest is dry-run through the API server's admission (`admission`: `refused` with its
//!    message) and taken as applied over the object the cluster has (`live_object`);
//! 2. per object, what stops a reconcile before the cloud (`cluster_reads`: deletion,
//!    references, the password Secret; `access`: the ProviderConfig and its credentials);
//! 3. one `DescribeInstances` per 100 named instances per client group (configuration version
//!    and region, as the controller's batcher groups them), then per instance the extra reads
//!    its spec needs, as the observe step makes them (`DescribeInstanceRamRole`,
//!    `DescribeDisks`, `DescribeInstanceAutoRenewAttribute`, only for the fields that need them);
//! 4. provider-alibaba's `ecs_instance_preview_with` (the observe step's own diff) per instance,
//!    with the ownership step (the runtime's `preview_ownership` on the instance's
//!    `ferroplane.io/uid` tag), made an [`outcome::ObjectPlan`] (`no change`, with what waits, for a paused object: the
//!    reconciler leaves it alone), and `render`ed.
//!
//! Exit code 0 when nothing would change, 2 when something would, 1 on error.

mod access;
mod admission;
mod change_actions;
mod cloud_kinds;
mod cluster_reads;
mod fleets;
mod importers;
mod live_object;
mod manifests;
mod outcome;
mod render;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;

use alibaba_sdk::ecs::{EcsClient, Instance};
use anyhow::Context as _;
use ferroplane_apis::alibabacloud::{ECSInstance, ECSInstanceParameters};
use ferroplane_apis::common::{DeletionPolicy, ManagementAction, names::EXTERNAL_NAME};
use ferroplane_runtime::reasons::EXTERNAL_RESOURCE_NOT_FOUND;
use ferroplane_runtime::{ExternalOwner, OwnershipPreview, UID_TAG, preview_ownership};
use futures::StreamExt as _;
use kube::ResourceExt as _;
use provider_alibaba::{
    CloudPreviews, EndpointAllowList, PlanAccess, ecs_instance_extra_reads,
    ecs_instance_launch_refusal, ecs_instance_preview_with,
};

use self::access::CloudAccess;
use self::admission::Admission;
use self::cloud_kinds::Reads;
use self::importers::ImporterLists;
use self::outcome::{Action, Identity, Launch, ObjectPlan};

/// Instances whose extra reads are under way at once.
const EXTRA_READS_AT_ONCE: usize = 8;

/// The reason of an object whose extra read (RAM role, disks, renewal) failed.
const EXTRA_READ_FAILED: &str = "ExtraReadFailed";

/// Where credentials come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CredentialSource {
    /// Each object's ProviderConfig and Secret, from the cluster (as the controller).
    Cluster,
    /// `ALIBABA_CLOUD_*` (with `--endpoint`), or a running sandbox's mock.
    Local,
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("objects").args(["filename", "all_namespaces"])))]
pub struct Args {
    /// Manifests: a file, a directory of `.yaml`/`.yml`/`.json` files, or `-` for stdin.
    #[arg(short = 'f', long)]
    filename: Option<PathBuf>,

    /// Namespace of the cluster's objects to plan, or of manifests that name none.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,

    /// Label selector of the cluster's objects (`app=web,tier!=db`).
    #[arg(short = 'l', long, conflicts_with = "filename")]
    selector: Option<String>,

    /// The cluster's objects of every namespace.
    #[arg(short = 'A', long)]
    all_namespaces: bool,

    #[arg(short = 'o', long, value_enum, default_value_t = Format::Table)]
    output: Format,

    #[arg(long, value_enum, default_value_t = CredentialSource::Cluster)]
    credentials: CredentialSource,

    /// With `--credentials local`: the endpoint instead of the region's (the mock, for example).
    #[arg(long)]
    endpoint: Option<String>,

    /// Endpoints a namespaced ProviderConfig may name, as `ferroplane run --allow-endpoint`.
    #[arg(long = "allow-endpoint", value_name = "URL_OR_HOST")]
    allow_endpoint: Vec<String>,
}

/// An object whose instance must be read before it is planned.
struct Pending {
    who: Identity,
    /// The object as planned (for the ownership step's lookup of the tag's owner).
    object: Box<ECSInstance>,
    id: String,
    group: String,
    spec: ECSInstanceParameters,
    may_update: bool,
}

/// Everything before the cloud reads: an object's plan, or what to read for it.
enum Step {
    Done(Box<ObjectPlan>),
    Read(Box<(Pending, EcsClient)>),
}

impl Step {
    fn done(plan: ObjectPlan) -> Self {
        Self::Done(Box::new(plan))
    }
}

fn identity(instance: &ECSInstance) -> Identity {
    Identity {
        namespace: instance.namespace().unwrap_or_default(),
        name: instance.name_any(),
        external_name: instance
            .annotations()
            .get(EXTERNAL_NAME)
            .filter(|n| !n.is_empty())
            .cloned(),
    }
}

/// Steps 2 of the module doc for one object.
async fn prepare(instance: &ECSInstance, kube: Option<&kube::Client>, cloud: &CloudAccess) -> Step {
    let who = identity(instance);
    let policies = &instance.spec.management_policies;
    if instance.metadata.deletion_timestamp.is_some() {
        let may_delete = outcome::allows(policies, ManagementAction::Delete);
        let deletion: DeletionPolicy = instance.spec.deletion_policy;
        return Step::done(outcome::deleting(who, deletion, may_delete));
    }
    let mut spec = instance.spec.for_provider.clone();
    if let Some(kube) = kube {
        match cluster_reads::resolved_spec(kube, instance).await {
            Ok(resolved) => spec = resolved,
            Err(w) => return Step::done(ObjectPlan::blocked(who, &w.reason, w.message)),
        }
        if let Err(w) = cluster_reads::password_ready(kube, instance).await {
            return Step::done(ObjectPlan::blocked(who, &w.reason, w.message));
        }
    }
    let client = match cloud.client(instance).await {
        Ok(client) => client,
        Err(b) => return Step::done(ObjectPlan::blocked(who, b.reason, b.message)),
    };
    let Some(id) = who.external_name.clone() else {
        if !outcome::allows(policies, ManagementAction::Create) {
            return Step::done(ObjectPlan::new(who, Action::NoChange).with_note(
                "no instance named and managementPolicies do not include Create: nothing is created",
            ));
        }
        if let Some(refusal) = ecs_instance_launch_refusal(&spec) {
            return Step::done(ObjectPlan::new(who, Action::Refused).with_note(refusal));
        }
        let mut plan = ObjectPlan::new(who, Action::Create);
        plan.launch = Some(Launch {
            region_id: spec.region_id.clone(),
            zone_id: spec.zone_id.clone().unwrap_or_default(),
            instance_type: spec.instance_type.clone(),
            image_id: spec.image_id.clone(),
        });
        return Step::done(plan);
    };
    Step::Read(Box::new((
        Pending {
            who,
            object: Box::new(instance.clone()),
            id,
            group: client.group,
            spec,
            may_update: outcome::allows(policies, ManagementAction::Update),
        },
        client.ecs,
    )))
}

/// Step 3: the instances of every group, at most 100 IDs per call.
async fn read_instances(
    groups: BTreeMap<String, (EcsClient, Vec<String>)>,
) -> anyhow::Result<HashMap<String, Instance>> {
    let mut found = HashMap::new();
    for (group, (ecs, mut ids)) in groups {
        ids.sort();
        ids.dedup();
        let instances = ecs
            .describe_instances_by_ids(&ids)
            .await
            .with_context(|| format!("DescribeInstances of {} instance(s) failed", ids.len()))
            .with_context(|| format!("client group {group}"))?;
        found.extend(instances.into_iter().map(|i| (i.instance_id.clone(), i)));
    }
    Ok(found)
}

/// Step 4 for one object, with the extra reads its spec needs and the ownership step.
async fn observed(
    pending: Pending,
    found: &HashMap<String, Instance>,
    clients: &BTreeMap<String, EcsClient>,
    kube: Option<(&kube::Client, &ImporterLists)>,
) -> ObjectPlan {
    match (found.get(&pending.id), clients.get(&pending.group)) {
        (Some(instance), Some(ecs)) => {
            match ecs_instance_extra_reads(ecs, &pending.spec, instance).await {
                Ok(extra) => {
                    let plan = outcome::observed(
                        pending.who.clone(),
                        &ecs_instance_preview_with(&pending.spec, instance, &extra),
                        pending.may_update,
                    );
                    match kube {
                        Some((kube, importers)) => {
                            with_ownership(plan, kube, importers, &pending, instance).await
                        }
                        None => plan,
                    }
                }
                Err((action, error)) => ObjectPlan::blocked(
                    pending.who,
                    EXTRA_READ_FAILED,
                    format!("{action} of instance {} failed: {error}", pending.id),
                ),
            }
        }
        _ => {
            let message = format!(
                "instance {} is not listed by ECS; ferroplane does not launch another for a named instance",
                pending.id
            );
            ObjectPlan::blocked(pending.who, EXTERNAL_RESOURCE_NOT_FOUND, message)
        }
    }
}

/// The reconcile's ownership step for an observed instance, previewed by the runtime's own
/// `decide`: an instance another live object's tag names is `blocked`; an untagged or orphaned
/// one is taken over right before its first change (`TagResources` first among the changes,
/// when the controller will change it).
async fn with_ownership(
    plan: ObjectPlan,
    kube: &kube::Client,
    importers: &ImporterLists,
    pending: &Pending,
    instance: &Instance,
) -> ObjectPlan {
    let owner = ExternalOwner::from_tag(instance.tag(UID_TAG));
    match preview_ownership(kube, &*pending.object, &pending.id, &owner, true).await {
        Ok(OwnershipPreview::Ours) => plan,
        Ok(OwnershipPreview::Claim) if !pending.may_update => plan,
        Ok(OwnershipPreview::Claim) => {
            match importers.refusal(&*pending.object, &pending.id).await {
                Ok(Some(e)) | Err(e) => {
                    return ObjectPlan::blocked(
                        pending.who.clone(),
                        e.reason(),
                        e.message().to_owned(),
                    );
                }
                Ok(None) => {}
            }
            let mut plan = plan;
            if !plan.changes.is_empty() {
                plan.changes.insert(0, outcome::take_over());
            }
            plan
        }
        Ok(OwnershipPreview::Refused(e)) | Err(e) => {
            ObjectPlan::blocked(pending.who.clone(), e.reason(), e.message().to_owned())
        }
    }
}

/// Steps 2 to 4 of the module doc for every object, sorted by namespace and name.
async fn plan_objects(
    instances: &[ECSInstance],
    kube: Option<&kube::Client>,
    importers: Option<&ImporterLists>,
    cloud: &CloudAccess,
) -> anyhow::Result<Vec<ObjectPlan>> {
    let mut plans = Vec::new();
    let mut pending = Vec::new();
    let mut groups: BTreeMap<String, (EcsClient, Vec<String>)> = BTreeMap::new();
    for instance in instances {
        match prepare(instance, kube, cloud).await {
            Step::Done(plan) => plans.push(*plan),
            Step::Read(read) => {
                let (p, ecs) = *read;
                groups
                    .entry(p.group.clone())
                    .or_insert_with(|| (ecs, Vec::new()))
                    .1
                    .push(p.id.clone());
                pending.push(p);
            }
        }
    }
    let clients: BTreeMap<String, EcsClient> = groups
        .iter()
        .map(|(group, (ecs, _))| (group.clone(), ecs.clone()))
        .collect();
    let found = read_instances(groups).await?;
    let reads = kube.zip(importers);
    let observed: Vec<ObjectPlan> = futures::stream::iter(pending)
        .map(|p| observed(p, &found, &clients, reads))
        .buffered(EXTRA_READS_AT_ONCE)
        .collect()
        .await;
    plans.extend(observed);
    let paused: HashMap<(String, String), &'static str> = instances
        .iter()
        .filter_map(|i| {
            let key = ferroplane_runtime::paused_by(Some(i.annotations()))?;
            Some(((i.namespace().unwrap_or_default(), i.name_any()), key))
        })
        .collect();
    let mut plans: Vec<ObjectPlan> = plans
        .into_iter()
        .map(
            |plan| match paused.get(&(plan.namespace.clone(), plan.name.clone())) {
                Some(key) => plan.paused_by(key),
                None => plan,
            },
        )
        .collect();
    plans.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(plans)
}

/// `--allow-endpoint`, as `ferroplane run` takes it.
fn endpoint_allow_list(args: &Args) -> anyhow::Result<EndpointAllowList> {
    let mut allowed = EndpointAllowList::default();
    for entry in &args.allow_endpoint {
        allowed
            .allow(entry)
            .with_context(|| format!("invalid --allow-endpoint {entry}"))?;
    }
    Ok(allowed)
}

async fn cloud_access(args: &Args, kube: Option<&kube::Client>) -> anyhow::Result<CloudAccess> {
    Ok(match (args.credentials, kube) {
        (CredentialSource::Local, _) => CloudAccess::local(args.endpoint.clone()),
        (CredentialSource::Cluster, Some(kube)) => CloudAccess::Cluster(Box::new(PlanAccess::new(
            kube.clone(),
            endpoint_allow_list(args)?,
        ))),
        (CredentialSource::Cluster, None) => anyhow::bail!("no Kubernetes client"),
    })
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Manifests planned with local credentials need no cluster; everything else does.
    let needs_cluster = args.filename.is_none() || args.credentials == CredentialSource::Cluster;
    let kube = if needs_cluster {
        Some(
            kube::Client::try_default()
                .await
                .context("cannot reach the cluster (KUBECONFIG or in-cluster config)")?,
        )
    } else {
        None
    };
    let mut objects = match (&args.filename, &kube) {
        (Some(path), _) => manifests::read(path, &args.namespace)?,
        (None, Some(kube)) => {
            let namespace = (!args.all_namespaces).then_some(args.namespace.as_str());
            manifests::list(kube, namespace, args.selector.as_deref()).await?
        }
        (None, None) => unreachable!("a cluster client is made without -f"),
    };
    let mut refused = Vec::new();
    if let (Some(_), Some(kube)) = (&args.filename, &kube) {
        let mut admitted = Vec::new();
        for instance in std::mem::take(&mut objects.instances) {
            let doc = serde_json::to_value(&instance)?;
            let applied = match live_object::live(kube, &instance).await? {
                Some(live) => live_object::applied_over(&instance, &live),
                None => instance.clone(),
            };
            match admission::dry_run(kube, &instance, &doc).await? {
                Admission::Refused(message) => refused.push(ObjectPlan::refused_by_admission(
                    identity(&applied),
                    message,
                )),
                Admission::Admitted => admitted.push(applied),
            }
        }
        objects.instances = admitted;
    }
    let cloud = cloud_access(&args, kube.as_ref()).await?;
    let importers = kube.clone().map(ImporterLists::new);
    let mut plans = plan_objects(
        &objects.instances,
        kube.as_ref(),
        importers.as_ref(),
        &cloud,
    )
    .await?;
    plans.extend(refused);
    let previews = match &kube {
        Some(kube) => Some(CloudPreviews::new(
            kube.clone(),
            endpoint_allow_list(&args)?,
        )),
        None => None,
    };
    let reads = Reads {
        kube: kube.as_ref(),
        previews: previews.as_ref(),
        importers: importers.as_ref(),
        from_manifest: args.filename.is_some(),
    };
    for (kind, doc) in std::mem::take(&mut objects.cloud) {
        plans.push(cloud_kinds::plan_document(kind, doc, &reads).await?);
    }
    for fleet in std::mem::take(&mut objects.fleets) {
        plans.push(fleets::plan(fleet, kube.as_ref(), args.filename.is_some()).await?);
    }
    plans.sort_by(|a, b| (&a.namespace, &a.name, a.kind).cmp(&(&b.namespace, &b.name, b.kind)));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.output {
        Format::Table => render::table(&plans, &objects.skipped, &mut out)?,
        Format::Json => render::json(&plans, &objects.skipped, &mut out)?,
    }
    std::io::Write::flush(&mut out)?;
    Ok(ExitCode::from(outcome::exit_code(&plans)))
}

#[cfg(test)]
mod tests;
