//! The EtcdCluster controller on ferroplane-runtime. The "external resource" is the set of
//! children (bootstrap ConfigMap, Services, StatefulSet, PodDisruptionBudget):
//!
//! - `observe` validates the spec, reads the children and etcd's membership, plans the next
//!   membership step and reports drift (a child differing from its rendering, or a step to take)
//!   and the status;
//! - `create` applies the children of a new cluster (all members bootstrap together);
//! - `update` carries out one membership step, then applies the children (server-side apply,
//!   forced, so hand edits are reverted);
//! - `delete` removes the children that are this cluster's (member volumes are kept:
//!   `whenDeleted: Retain`).
//!
//! With deletion policy Orphan the children carry no owner reference, so the framework's orphan
//! path (drop the finalizer, touch nothing) leaves them running.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::{self, Child, Children, owned};
use ferroplane_runtime::events::Events;
use ferroplane_runtime::{
    ConnectionDetails, Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, ReconcileError, Update,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod};
use kube::api::{Api, DeleteParams, ListParams};
use kube::{Client, ResourceExt};
use tracing::info;

use crate::auth::{self as etcd_auth, AuthSecrets, AuthStep, Passwords};
use crate::defrag::{self, DefragPolicy};
use crate::error::{Error, SpecError};
use crate::membership::{GatewayClient, Membership, MembershipError};
use crate::names::{ClusterNames, MAX_NAME_LEN, REPLICAS_ANNOTATION, VERSION_ANNOTATION};
use crate::planner::{self, Step};
use crate::render::bootstrap::Bootstrap;
use crate::render::{self, BootstrapFiles, RenderInput};
use crate::restore::{Progress, RestoreSources, Restorer};
use crate::scaling::{self, Observed};
use crate::status::{self, Membership as MembershipState};
use crate::tls::certs::CaPolicy;
use crate::tls::rotation::{Next, Phase, TRUST_GENERATION_ANNOTATION};
use crate::tls::{self, ClientTls, TlsSecrets};
use crate::version::{self, Release, Version};

/// Field manager of every server-side apply of an EtcdCluster's children: one per kind, so that
/// the Application controller never silently takes this kind's fields, nor this kind its.
pub const FIELD_MANAGER: &str = "ferroplane-etcdcluster";

/// Event reason: a removed member's data volume was deleted.
pub const VOLUME_DELETED: &str = "VolumeDeleted";

/// Event reason: a step of a generated CA's rotation was taken ([`tls::rotation`]).
pub const CA_ROTATING: &str = "CARotating";
/// Event reason: a generated CA's rotation is complete.
pub const CA_ROTATED: &str = "CARotated";

/// Reason of the error naming a child that exists and is not this cluster's.
pub const CHILD_NOT_OURS: &str = "ChildNotOurs";

/// Restarts after which a pod that is not ready counts as crash-looping.
const CRASH_LOOP_RESTARTS: i32 = 3;

/// Gives the controller a membership client for a cluster. The production one talks to the
/// client Service through the JSON gateway; tests inject others. `tls` is the client
/// certificate of a TLS cluster (`None` when it has no TLS, or its Secret is not there yet).
pub trait MembershipFactory: Send + Sync + 'static {
    type Client: Membership;
    fn for_cluster(
        &self,
        names: &ClusterNames,
        tls: Option<&ClientTls>,
    ) -> Result<Self::Client, MembershipError>;
}

/// Makes the HTTP client builder each membership client starts from (a test's resolver, say).
pub type HttpBuilder = Arc<dyn Fn() -> reqwest::ClientBuilder + Send + Sync>;

/// The HTTP client of each TLS cluster (by namespace and name) and the certificate it presents.
type TlsClients = HashMap<(String, String), (ClientTls, reqwest::Client)>;

/// [`GatewayClient`]s: clusters without TLS share one connection pool; each TLS cluster has a
/// client of its own with its client certificate, kept until the certificate changes.
#[derive(Clone)]
pub struct GatewayFactory {
    http: reqwest::Client,
    builder: HttpBuilder,
    config: crate::membership::GatewayConfig,
    with_tls: Arc<Mutex<TlsClients>>,
}

impl GatewayFactory {
    pub fn new(config: &crate::membership::GatewayConfig) -> Result<Self, reqwest::Error> {
        Self::with_builder(config, Arc::new(reqwest::Client::builder))
    }

    /// Clients built from `builder` (plus the timeouts of `config` and, for TLS clusters,
    /// their certificates).
    pub fn with_builder(
        config: &crate::membership::GatewayConfig,
        builder: HttpBuilder,
    ) -> Result<Self, reqwest::Error> {
        let http = builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .build()?;
        Ok(Self {
            http,
            builder,
            config: config.clone(),
            with_tls: Arc::default(),
        })
    }

    fn tls_client(&self, tls: &ClientTls) -> Result<reqwest::Client, MembershipError> {
        let builder = (self.builder)()
            .connect_timeout(self.config.connect_timeout)
            .timeout(self.config.request_timeout);
        crate::membership::http_with_tls(builder, tls)
    }
}

impl MembershipFactory for GatewayFactory {
    type Client = GatewayClient;
    fn for_cluster(
        &self,
        names: &ClusterNames,
        tls: Option<&ClientTls>,
    ) -> Result<GatewayClient, MembershipError> {
        let http = match tls {
            None => self.http.clone(),
            Some(tls) => {
                let key = (names.namespace.clone(), names.name.clone());
                let mut cache = self
                    .with_tls
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match cache.get(&key) {
                    Some((cached, http)) if cached == tls => http.clone(),
                    _ => {
                        let http = self.tls_client(tls)?;
                        cache.insert(key, (tls.clone(), http.clone()));
                        http
                    }
                }
            }
        };
        Ok(GatewayClient::with_http(
            http,
            vec![names.client_endpoint()],
        ))
    }
}

/// The connector: in-cluster kinds need no credentials, only the Kubernetes client.
pub struct EtcdConnector<F> {
    client: Client,
    factory: Arc<F>,
    events: Events,
    ca_policy: CaPolicy,
    restore: RestoreSetup,
}

/// What restores need: the snapshot stores (none: `spec.restore` is refused with a reason) and
/// the image of the Jobs' ferroplane steps.
#[derive(Clone)]
pub struct RestoreSetup {
    pub sources: Option<Arc<dyn RestoreSources>>,
    pub tools_image: Arc<str>,
}

/// ferroplane's own image, for the steps of restore Jobs: the release this binary is.
pub fn default_tools_image() -> String {
    format!(
        "ghcr.io/ferroplane/ferroplane:{}",
        env!("CARGO_PKG_VERSION")
    )
}

impl Default for RestoreSetup {
    fn default() -> Self {
        Self {
            sources: None,
            tools_image: default_tools_image().into(),
        }
    }
}

impl std::fmt::Debug for RestoreSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestoreSetup")
            .field("sources", &self.sources.is_some())
            .field("tools_image", &self.tools_image)
            .finish()
    }
}

impl<F: MembershipFactory> EtcdConnector<F> {
    pub fn new(client: Client, factory: F, events: Events) -> Self {
        Self {
            client,
            factory: Arc::new(factory),
            events,
            ca_policy: CaPolicy::default(),
            restore: RestoreSetup::default(),
        }
    }

    /// The same, making and rotating generated CAs by `policy`.
    pub fn with_ca_policy(self, policy: CaPolicy) -> Self {
        Self {
            ca_policy: policy,
            ..self
        }
    }

    /// Restores `spec.restore` with `setup`.
    pub fn with_restore(mut self, setup: RestoreSetup) -> Self {
        self.restore = setup;
        self
    }
}

impl<F: MembershipFactory> Connector<EtcdCluster> for EtcdConnector<F> {
    type Client = EtcdClient<F::Client>;

    async fn connect(&self, mr: &EtcdCluster) -> Result<Self::Client, ReconcileError> {
        let names = render::cluster_names(mr).map_err(to_reconcile)?;
        let children = Children::with_field_manager(self.client.clone(), FIELD_MANAGER);
        let tls = tls::secret_names(mr, &names);
        // Only read here: the Secrets are written by create and update.
        let client_tls = match &tls {
            Some(secrets) => TlsSecrets::new(&self.client, &children, &names, secrets)
                .client()
                .await
                .map_err(to_reconcile)?,
            None => None,
        };
        let mut membership = self
            .factory
            .for_cluster(&names, client_tls.as_ref())
            .map_err(|e| to_reconcile(e.into()))?;
        let passwords = match AuthSecrets::new(&self.client, &children, &names)
            .passwords(mr)
            .await
        {
            Ok(passwords) => passwords,
            // Deletion only removes children: a missing auth Secret must not stand in its way.
            Err(_) if mr.metadata.deletion_timestamp.is_some() => Passwords::default(),
            Err(e) => return Err(to_reconcile(e)),
        };
        membership.set_credentials(passwords.credentials());
        Ok(EtcdClient {
            kube: self.client.clone(),
            children,
            membership,
            events: self.events.clone(),
            names,
            tls,
            ca_policy: self.ca_policy,
            restore: self.restore.clone(),
            passwords,
        })
    }
}

/// One reconcile's view of one EtcdCluster's children and members.
pub struct EtcdClient<M> {
    kube: Client,
    children: Children,
    membership: M,
    events: Events,
    names: ClusterNames,
    /// The TLS Secrets, for a TLS cluster.
    tls: Option<tls::SecretNames>,
    ca_policy: CaPolicy,
    restore: RestoreSetup,
    /// Root's passwords (`spec.auth`'s Secret and the one in effect).
    passwords: Passwords,
}

/// Everything `observe` and `update` look at.
struct Snapshot {
    release: Release,
    statefulset: Option<StatefulSet>,
    /// The StatefulSet replicas ferroplane decided (its annotation; the live value for a
    /// StatefulSet rendered before the annotation existed), whatever a hand edit set since.
    replicas: Option<u32>,
    membership: Result<Observed, String>,
    step: Step,
    /// The member configuration files to apply while membership is unknown.
    kept_bootstrap: Option<BootstrapFiles>,
    /// The generated CA's trust generation and rotation phase ([`tls::rotation`]).
    trust: (u64, Phase),
}

fn to_reconcile(e: Error) -> ReconcileError {
    let reason = e.reason();
    match &e {
        Error::Spec(_) | Error::NotOurs(_) => ReconcileError::terminal(reason, e.to_string()),
        _ => ReconcileError::retryable(reason, e.to_string()).with_source(e),
    }
}

fn desired_size(mr: &EtcdCluster) -> Result<u32, ReconcileError> {
    u32::try_from(mr.spec.size)
        .ok()
        .filter(|s| (1..=9).contains(s))
        .ok_or_else(|| to_reconcile(SpecError::BadSize(mr.spec.size).into()))
}

/// The replicas ferroplane last set on the StatefulSet: its annotation, else (rendered before
/// the annotation existed) the live value.
fn intended_replicas(sts: &StatefulSet) -> u32 {
    sts.annotations()
        .get(REPLICAS_ANNOTATION)
        .and_then(|r| r.parse().ok())
        .or_else(|| {
            sts.spec
                .as_ref()
                .and_then(|s| s.replicas)
                .and_then(|r| u32::try_from(r).ok())
        })
        .unwrap_or(0)
}

/// The oldest version a member that answered reports running: what an upgrade starts from.
fn running_version(observed: &Observed) -> Option<Version> {
    observed
        .members
        .iter()
        .filter_map(|m| m.status.as_ref())
        .filter_map(|s| Version::parse(&s.version))
        .min()
}

fn crash_looping(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|statuses| {
            statuses.iter().any(|c| {
                let waiting_crash = c
                    .state
                    .as_ref()
                    .and_then(|s| s.waiting.as_ref())
                    .and_then(|w| w.reason.as_deref())
                    == Some("CrashLoopBackOff");
                !c.ready && (waiting_crash || c.restart_count >= CRASH_LOOP_RESTARTS)
            })
        })
}

impl<M: Membership> EtcdClient<M> {
    async fn snapshot(&self, mr: &EtcdCluster) -> Result<Snapshot, ReconcileError> {
        if self.names.name.len() > MAX_NAME_LEN {
            let e = SpecError::NameTooLong {
                name: self.names.name.clone(),
                len: self.names.name.len(),
                max: MAX_NAME_LEN,
            };
            return Err(to_reconcile(e.into()));
        }
        let size = desired_size(mr)?;
        let release = version::resolve(&mr.spec).map_err(|e| to_reconcile(e.into()))?;
        let sts_api: Api<StatefulSet> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let statefulset = sts_api
            .get_opt(&self.names.statefulset())
            .await
            .map_err(|e| to_reconcile(Error::kube("reading the StatefulSet", e)))?;
        let trust = match &self.tls {
            Some(secrets) => self
                .tls_secrets(secrets)
                .trust()
                .await
                .map_err(to_reconcile)?,
            None => (0, Phase::Steady),
        };
        let Some(sts) = statefulset.as_ref() else {
            return Ok(Snapshot {
                release,
                statefulset,
                replicas: None,
                membership: Err("the StatefulSet does not exist yet".into()),
                step: Step::Steady,
                kept_bootstrap: None,
                trust,
            });
        };
        let replicas = intended_replicas(sts);
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let selector = self
            .names
            .selector()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let failing: Vec<String> = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| to_reconcile(Error::kube("listing the member pods", e)))?
            .items
            .iter()
            .filter(|p| crash_looping(p))
            .map(|p| p.name_any())
            .collect();
        // A password etcd refuses must show as such, not as a cluster that does not answer.
        if self.passwords.involved()
            && let Err(
                e
                @ (MembershipError::AuthFailed { .. } | MembershipError::CommonNameRefused { .. }),
            ) = self.membership.auth_status().await
        {
            return Err(to_reconcile(e.into()));
        }
        let membership = scaling::observe(&self.membership, &self.names, |o| {
            failing.contains(&self.names.member(o))
        })
        .await;
        // The version the members run, as they report it; the StatefulSet's annotation says
        // only what was last rendered (a rollout may not have reached every member).
        let running = membership
            .as_ref()
            .ok()
            .and_then(running_version)
            .or_else(|| {
                sts.annotations()
                    .get(VERSION_ANNOTATION)
                    .and_then(|v| Version::parse(v))
            });
        if let Some(running) = running {
            version::check_change(running, release.version).map_err(|e| to_reconcile(e.into()))?;
        }
        let (membership, step, kept_bootstrap) = match membership {
            Ok(observed) => {
                let view = observed
                    .planner_view(size, replicas)
                    .replacing_failed(mr.spec.replace_failed_members);
                let step = planner::plan(&view);
                (Ok(observed), step, None)
            }
            Err(e) => {
                let kept = self.kept_bootstrap(mr, replicas).await?;
                (Err(e.to_string()), Step::Steady, Some(kept))
            }
        };
        Ok(Snapshot {
            release,
            statefulset,
            replicas: Some(replicas),
            membership,
            step,
            kept_bootstrap,
            trust,
        })
    }

    /// The bootstrap files while etcd cannot be asked: the live ConfigMap's, or, when it was
    /// deleted, the configuration of the members the status last listed (of a new cluster of
    /// the current replicas when it never listed any).
    async fn kept_bootstrap(
        &self,
        mr: &EtcdCluster,
        replicas: u32,
    ) -> Result<BootstrapFiles, ReconcileError> {
        let api: Api<ConfigMap> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let live = api
            .get_opt(&self.names.bootstrap_config())
            .await
            .map_err(|e| to_reconcile(Error::kube("reading the bootstrap ConfigMap", e)))?;
        if let Some(data) = live.and_then(|cm| cm.data) {
            return Ok(BootstrapFiles::Keep(data));
        }
        let known: BTreeSet<u32> = mr
            .status
            .as_ref()
            .map(|s| {
                s.members
                    .iter()
                    .filter_map(|m| self.names.ordinal_of(&m.name))
                    .collect()
            })
            .unwrap_or_default();
        Ok(BootstrapFiles::Render(if known.is_empty() {
            Bootstrap::New { size: replicas }
        } else {
            Bootstrap::Existing { members: known }
        }))
    }

    /// Whether a data volume of `ordinals` is still being deleted: a pod created now would
    /// mount it (and lose it under itself, or start on a removed member's data).
    async fn volume_being_deleted(
        &self,
        mr: &EtcdCluster,
        ordinals: std::ops::Range<u32>,
    ) -> Result<Option<String>, ReconcileError> {
        if mr.spec.storage.is_none() {
            return Ok(None);
        }
        let pvcs: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        for ordinal in ordinals {
            let name = self.names.data_volume(ordinal);
            let live = pvcs
                .get_opt(&name)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("reading volume {name}"), e)))?;
            if live.is_some_and(|pvc| pvc.metadata.deletion_timestamp.is_some()) {
                return Ok(Some(name));
            }
        }
        Ok(None)
    }

    /// Deletes the data volumes of `ordinals` (their members were removed from etcd).
    async fn delete_volumes(
        &self,
        mr: &EtcdCluster,
        ordinals: &[u32],
    ) -> Result<(), ReconcileError> {
        if mr.spec.storage.is_none() {
            return Ok(());
        }
        let pvcs: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        for &ordinal in ordinals {
            let name = self.names.data_volume(ordinal);
            let deleted = match pvcs.delete(&name, &DeleteParams::default()).await {
                Ok(_) => true,
                Err(kube::Error::Api(s)) if s.code == 404 => false,
                Err(e) => {
                    return Err(to_reconcile(Error::kube(
                        format!("deleting volume {name} of a removed member"),
                        e,
                    )));
                }
            };
            if deleted {
                info!(cluster = %self.names.name, volume = %name, "deleted the volume of a removed member");
                self.events
                    .normal(
                        mr,
                        VOLUME_DELETED,
                        format!(
                            "deleted volume {name}: its member was removed from etcd, which refuses to start a pod on a removed member's data"
                        ),
                    )
                    .await;
            }
        }
        Ok(())
    }

    fn restorer(&self) -> Restorer<'_> {
        Restorer {
            kube: &self.kube,
            names: &self.names,
            sources: self.restore.sources.as_deref(),
            tools_image: &self.restore.tools_image,
        }
    }

    /// Where the restore stands, its due steps taken.
    async fn restore_progress(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<Progress, ReconcileError> {
        let restore = self
            .restorer()
            .look(mr, snap.statefulset.is_some(), jiff::Timestamp::now())
            .await?;
        if matches!(restore, Progress::Act { .. }) {
            self.advance_restore(mr, snap).await?;
        }
        Ok(restore)
    }

    /// Takes the restore's due steps, recording their events.
    async fn advance_restore(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<(), ReconcileError> {
        let events = self
            .restorer()
            .act(
                mr,
                &snap.release,
                snap.statefulset.is_some(),
                jiff::Timestamp::now(),
            )
            .await?;
        for (reason, message) in events {
            self.events.normal(mr, reason, message).await;
        }
        Ok(())
    }

    /// The children to apply, with the StatefulSet at `replicas`.
    fn desired(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        replicas: Option<u32>,
    ) -> Result<Vec<Child>, ReconcileError> {
        let size = desired_size(mr)?;
        let (replicas, bootstrap) = match (&snap.membership, snap.replicas) {
            (_, None) => (size, BootstrapFiles::Render(Bootstrap::New { size })),
            (Ok(observed), Some(current)) => (
                replicas.unwrap_or(current),
                BootstrapFiles::Render(Bootstrap::Existing {
                    members: observed.ordinals(),
                }),
            ),
            // Without membership, nothing changes size and the member configuration stays.
            (Err(_), Some(current)) => (
                current,
                snap.kept_bootstrap
                    .clone()
                    .unwrap_or(BootstrapFiles::Render(Bootstrap::New { size: current })),
            ),
        };
        let input = RenderInput {
            release: snap.release.clone(),
            replicas,
            bootstrap,
            owned: owned(mr),
            trust_generation: snap.trust.0,
        };
        render::render(mr, &input)
            .and_then(render::Rendered::into_children)
            .map_err(to_reconcile)
    }

    async fn apply_all(&self, children: &[Child]) -> Result<(), ReconcileError> {
        for child in children {
            self.children
                .apply(child)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("applying {}", child.key()), e)))?;
        }
        Ok(())
    }

    fn tls_secrets<'a>(&'a self, secrets: &'a tls::SecretNames) -> TlsSecrets<'a> {
        TlsSecrets::new(&self.kube, &self.children, &self.names, secrets)
            .with_policy(self.ca_policy)
    }

    /// Why the TLS Secrets must be written (a generated certificate missing or due for
    /// renewal, a CA rotation step due); an error for a user Secret that is missing or
    /// incomplete.
    async fn tls_drift(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<Vec<String>, ReconcileError> {
        let Some(secrets) = &self.tls else {
            return Ok(Vec::new());
        };
        self.tls_secrets(secrets)
            .check(mr, jiff::Timestamp::now(), members_caught_up(snap))
            .await
            .map_err(to_reconcile)
    }

    /// Makes or renews the generated TLS Secrets (checks the user's), before the pods that
    /// mount them are applied, and takes the next CA rotation step when one is due (`snap`
    /// says whether every member caught up with the last one); says so in an event.
    async fn ensure_tls(
        &self,
        mr: &EtcdCluster,
        snap: Option<&Snapshot>,
    ) -> Result<bool, ReconcileError> {
        let Some(secrets) = &self.tls else {
            return Ok(false);
        };
        let caught_up = snap.is_some_and(members_caught_up);
        let Some(step) = self
            .tls_secrets(secrets)
            .ensure(mr, jiff::Timestamp::now(), caught_up)
            .await
            .map_err(to_reconcile)?
        else {
            return Ok(false);
        };
        info!(cluster = %self.names.name, step = ?step.next, "CA rotation");
        let reason = if step.next == Next::Finish {
            CA_ROTATED
        } else {
            CA_ROTATING
        };
        self.events.normal(mr, reason, step.message).await;
        Ok(true)
    }

    /// The member to defragment now and why ([`defrag`]): only while membership is steady.
    fn defrag_due(&self, mr: &EtcdCluster, snap: &Snapshot) -> Option<(String, String)> {
        let observed = snap.membership.as_ref().ok()?;
        if snap.step != Step::Steady {
            return None;
        }
        let quota = render::options::effective(mr)
            .ok()?
            .get("quota-backend-bytes")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let member = DefragPolicy::default().pick(observed, quota)?;
        let status = member.status.as_ref()?;
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        Some((
            member.member.name.clone(),
            format!(
                "{:.1} MiB of its {:.1} MiB database are free (space quota {:.0} MiB)",
                mib(status.db_size.saturating_sub(status.db_size_in_use)),
                mib(status.db_size),
                mib(quota)
            ),
        ))
    }

    /// Defragments the member [`Self::defrag_due`] names, and says so in an event.
    async fn defragment(&self, mr: &EtcdCluster, snap: &Snapshot) -> Result<(), ReconcileError> {
        let Some((name, why)) = self.defrag_due(mr, snap) else {
            return Ok(());
        };
        let Some(url) = snap.membership.as_ref().ok().and_then(|o| {
            let m = o.members.iter().find(|m| m.member.name == name)?;
            m.member
                .client_urls
                .first()
                .cloned()
                .or_else(|| m.ordinal.map(|o| self.names.member_client_url(o)))
        }) else {
            return Ok(());
        };
        self.membership.defragment(&url).await.map_err(|e| {
            let err = Error::from(e);
            ReconcileError::retryable(err.reason(), format!("defragmenting {name}: {err}"))
        })?;
        info!(cluster = %self.names.name, member = %name, "defragmented");
        self.events
            .normal(
                mr,
                defrag::MEMBER_DEFRAGMENTED,
                format!("defragmented {name}: {why}"),
            )
            .await;
        Ok(())
    }

    /// What etcd says about authentication, when it matters (`spec.auth` is or was set) and
    /// etcd answers; `None` otherwise. Refusing every password is an error.
    async fn auth_status(
        &self,
        snap: &Snapshot,
    ) -> Result<Option<crate::membership::AuthStatus>, ReconcileError> {
        if !self.passwords.involved() || snap.membership.is_err() {
            return Ok(None);
        }
        match self.membership.auth_status().await {
            Ok(status) => Ok(Some(status)),
            Err(e) if e.is_unreachable() => Ok(None),
            Err(e) => Err(to_reconcile(e.into())),
        }
    }

    /// Takes the authentication step `spec.auth` asks for, and records the password in
    /// effect.
    async fn reconcile_auth(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<(), ReconcileError> {
        let Some(status) = self.auth_status(snap).await? else {
            return Ok(());
        };
        let step = etcd_auth::plan_with_owner(&self.passwords, status);
        let failed = |what: &str, e: MembershipError| {
            let err = Error::from(e);
            ReconcileError::retryable(err.reason(), format!("{what}: {err}"))
        };
        let secrets = AuthSecrets::new(&self.kube, &self.children, &self.names);
        let record =
            |password| async move { secrets.record(mr, password).await.map_err(to_reconcile) };
        let (reason, message) = match &step {
            AuthStep::Steady => return Ok(()),
            AuthStep::Record(password) => return record(password).await,
            AuthStep::Enable(password) => {
                self.membership
                    .enable_auth(password)
                    .await
                    .map_err(|e| failed("enabling authentication", e))?;
                record(password).await?;
                (
                    etcd_auth::AUTH_ENABLED,
                    "enabled etcd authentication with user root (password from the auth Secret)",
                )
            }
            AuthStep::ChangePassword(password) => {
                self.membership
                    .change_root_password(password)
                    .await
                    .map_err(|e| failed("changing root's password", e))?;
                record(password).await?;
                (
                    etcd_auth::ROOT_PASSWORD_CHANGED,
                    "changed root's password to the auth Secret's",
                )
            }
            AuthStep::Disable => {
                self.membership
                    .disable_auth()
                    .await
                    .map_err(|e| failed("disabling authentication", e))?;
                (
                    etcd_auth::AUTH_DISABLED,
                    "disabled etcd authentication: spec.auth was removed (user root keeps its password)",
                )
            }
        };
        info!(cluster = %self.names.name, "{message}");
        self.events.normal(mr, reason, message.to_owned()).await;
        Ok(())
    }

    /// Deletes a member's pod and data volume so that it starts empty.
    async fn restart_empty(&self, mr: &EtcdCluster, ordinal: u32) -> Result<(), ReconcileError> {
        let pod = self.names.member(ordinal);
        if mr.spec.storage.is_some() {
            let pvcs: Api<PersistentVolumeClaim> =
                Api::namespaced(self.kube.clone(), &self.names.namespace);
            crate::jobs::ignore_missing(
                pvcs.delete(&self.names.data_volume(ordinal), &DeleteParams::default())
                    .await,
            )
            .map_err(|e| to_reconcile(Error::kube(format!("deleting the volume of {pod}"), e)))?;
        }
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        crate::jobs::ignore_missing(pods.delete(&pod, &DeleteParams::default()).await)
            .map_err(|e| to_reconcile(Error::kube(format!("deleting pod {pod}"), e)))
    }
}

/// Whether every member picked up the current trust generation: the StatefulSet's template
/// carries it and its rollout is complete (every replica updated and ready), etcd reports
/// every member healthy, and no membership change is under way. Each CA rotation phase waits
/// for this ([`tls::rotation::Progress::rolled_out`]).
fn members_caught_up(snap: &Snapshot) -> bool {
    let Some(sts) = &snap.statefulset else {
        return false;
    };
    let template = sts
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get(TRUST_GENERATION_ANNOTATION))
        .and_then(|g| g.parse::<u64>().ok())
        .unwrap_or(0);
    let replicas = sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let rolled_out = sts.status.as_ref().is_some_and(|status| {
        status.observed_generation >= sts.metadata.generation
            && status.update_revision.is_some()
            && status.current_revision == status.update_revision
            && status.updated_replicas == Some(replicas)
            && status.ready_replicas == Some(replicas)
    });
    let healthy = snap.membership.as_ref().is_ok_and(|observed| {
        observed.members.len() == usize::try_from(replicas).unwrap_or(0)
            && observed
                .members
                .iter()
                .all(|m| m.health == planner::Health::Healthy)
    });
    template == snap.trust.0 && rolled_out && healthy && snap.step == Step::Steady
}

/// Every child an EtcdCluster can have, whatever its spec says (names and kinds are what
/// matter): deletion must work even for a spec ferroplane refuses to act on.
fn all_children(mr: &EtcdCluster) -> Result<Vec<Child>, ReconcileError> {
    let mut mr = mr.clone();
    mr.spec.options.clear();
    let mr = &mr;
    let release = version::resolve(&mr.spec).unwrap_or_else(|_| Release {
        version: Version::new(3, 5, 0),
        image: String::new(),
    });
    let input = RenderInput {
        release,
        replicas: 0,
        bootstrap: BootstrapFiles::Render(Bootstrap::New { size: 0 }),
        owned: true,
        trust_generation: 0,
    };
    render::render(mr, &input)
        .and_then(render::Rendered::into_children)
        .map_err(to_reconcile)
}

impl<M: Membership> EtcdClient<M> {
    /// While the object is being deleted only existence matters, and nothing about the spec
    /// (an invalid version, say) may stand in the way. Objects that are not this cluster's do
    /// not count: they are never deleted with it.
    async fn observe_deletion(&self, mr: &EtcdCluster) -> Result<Observation, ReconcileError> {
        let uid = mr.uid().unwrap_or_default();
        for child in all_children(mr)? {
            let live =
                self.children.get(&child).await.map_err(|e| {
                    to_reconcile(Error::kube(format!("reading {}", child.key()), e))
                })?;
            if live.is_some_and(|l| children::holder(&l, &uid) == children::Holder::Us) {
                return Ok(Observation::found(self.names.name.clone()));
            }
        }
        Ok(Observation::missing())
    }

    /// Refuses, before anything is read from or written to the cluster, when an object with a
    /// child's name exists and is not this cluster's (another object's, or made by hand): it is
    /// never adopted, changed or deleted.
    async fn refuse_foreign(&self, mr: &EtcdCluster) -> Result<(), ReconcileError> {
        let uid = mr.uid().unwrap_or_default();
        match self
            .children
            .foreign(&all_children(mr)?, &uid)
            .await
            .map_err(|e| to_reconcile(Error::kube("checking who holds the children", e)))?
        {
            Some(message) => Err(ReconcileError::terminal(CHILD_NOT_OURS, message)),
            None => Ok(()),
        }
    }
}

impl<M: Membership> ExternalClient<EtcdCluster> for EtcdClient<M> {
    async fn observe(
        &self,
        mr: &EtcdCluster,
        _ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        if mr.metadata.deletion_timestamp.is_some() {
            return self.observe_deletion(mr).await;
        }
        self.refuse_foreign(mr).await?;
        let snap = self.snapshot(mr).await?;
        let restore = self
            .restorer()
            .look(mr, snap.statefulset.is_some(), jiff::Timestamp::now())
            .await?;
        let mut desired = self.desired(mr, &snap, None)?;
        if restore.holds_members() {
            desired.retain(|c| c.kind() != "StatefulSet");
        }
        let uid = mr.uid().unwrap_or_default();
        let mut existing = 0;
        let mut diffs = Vec::new();
        for child in &desired {
            match self
                .children
                .get(child)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("reading {}", child.key()), e)))?
            {
                None => diffs.push(format!("{} is missing", child.key())),
                Some(live) => {
                    existing += 1;
                    diffs.extend(children::difference(child, &live, &uid, owned(mr)));
                }
            }
        }
        if existing == 0 {
            return Ok(Observation::missing());
        }
        diffs.extend(self.tls_drift(mr, &snap).await?);
        if let Step::Flapping { why, .. } = &snap.step {
            // Repeated on every poll while it lasts; the recorder counts repeats of one event.
            self.events
                .warning(mr, status::conditions::MEMBER_FLAPPING, why.clone())
                .await;
        }
        if snap.step.is_change() {
            diffs.push(format!(
                "membership: {}",
                status::describe(&snap.step, &self.names)
            ));
        }
        if let Some((name, why)) = self.defrag_due(mr, &snap) {
            diffs.push(format!("member {name} is due a defragmentation: {why}"));
        }
        if let Progress::Act { what, .. } = &restore {
            diffs.push(format!("restore: {what}"));
        }
        let size = desired_size(mr)?;
        let membership = match &snap.membership {
            Ok(observed) => MembershipState::Known {
                observed,
                step: &snap.step,
            },
            Err(why) => MembershipState::Unknown { why: why.clone() },
        };
        let mut report = status::report(&self.names, size, snap.statefulset.as_ref(), &membership);
        report.status.restore = restore.status().cloned();
        if let Progress::Wait { why, .. } = &restore {
            report.note = Some(match report.note.take() {
                Some(note) if !note.is_empty() => format!("{why}; {note}"),
                _ => why.clone(),
            });
            report.in_transition = true;
        }
        if let Some(auth) = self.auth_status(&snap).await? {
            report.status.auth = Some(etcd_auth::state(auth));
            if let Some(why) = etcd_auth::plan_with_owner(&self.passwords, auth).describe() {
                diffs.push(format!("auth: {why}"));
            }
        }
        let endpoints =
            ConnectionDetails::new().with("endpoints", report.status.client_endpoint.clone());
        let mut obs = Observation::found(self.names.name.clone())
            .with_readiness(report.readiness)
            .with_status(&report.status)?
            .with_connection_details(endpoints);
        for condition in report.conditions {
            obs = obs.with_condition(condition);
        }
        let notes: Vec<String> = report
            .note
            .into_iter()
            .chain(snap.trust.1.describe().map(str::to_owned))
            .collect();
        if !notes.is_empty() {
            obs = obs.with_note(notes.join("; "));
        }
        if report.in_transition
            || snap.step.is_change()
            || matches!(snap.step, Step::Wait(_))
            || snap.trust.1 != Phase::Steady
        {
            obs = obs.in_transition();
        }
        if !diffs.is_empty() {
            obs = obs.with_diff(diffs.join("; "));
        }
        Ok(obs)
    }

    async fn create(
        &self,
        mr: &EtcdCluster,
        _key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        self.refuse_foreign(mr).await?;
        let snap = self.snapshot(mr).await?;
        let restore = self.restore_progress(mr, &snap).await?;
        let mut desired = self.desired(mr, &snap, None)?;
        if restore.holds_members() {
            desired.retain(|c| c.kind() != "StatefulSet");
        }
        self.ensure_tls(mr, None).await?;
        self.apply_all(&desired).await?;
        info!(cluster = %self.names.name, size = mr.spec.size, restore = restore.holds_members(), "created etcd cluster");
        Ok(Creation::new(self.names.name.clone()))
    }

    async fn update(&self, mr: &EtcdCluster, _ext: &ExternalRef) -> Result<Update, ReconcileError> {
        self.refuse_foreign(mr).await?;
        let snap = self.snapshot(mr).await?;
        let restore = self.restore_progress(mr, &snap).await?;
        if restore.holds_members() {
            let mut desired = self.desired(mr, &snap, None)?;
            desired.retain(|c| c.kind() != "StatefulSet");
            self.ensure_tls(mr, None).await?;
            self.apply_all(&desired).await?;
            return Ok(Update::in_progress());
        }
        let replicas = snap.replicas.unwrap_or(0);
        let applied = if snap.membership.is_ok() && snap.step.is_change() {
            scaling::apply(&snap.step, &self.membership, &self.names, replicas)
                .await
                .map_err(|e| {
                    let transient = e.is_transient();
                    let err = Error::from(e);
                    if transient {
                        ReconcileError::retryable(err.reason(), err.to_string())
                    } else {
                        to_reconcile(err)
                    }
                })?
        } else {
            scaling::Applied::default()
        };
        if let Some((reason, message)) = &applied.event {
            self.events.normal(mr, reason, message.clone()).await;
        }
        // After a membership change the bootstrap configuration must list the new membership.
        let snap = if applied.changed_membership {
            self.snapshot(mr).await?
        } else {
            snap
        };
        let mut scale_to = applied.scale_to;
        if let Some(to) = scale_to.filter(|to| *to > replicas)
            && let Some(volume) = self.volume_being_deleted(mr, replicas..to).await?
        {
            info!(cluster = %self.names.name, %volume, "scale-up waits for a removed member's volume to go");
            scale_to = None;
        }
        let desired = self.desired(mr, &snap, scale_to)?;
        // The pods of a new trust generation roll in the next reconcile, once the Secrets of
        // this one are written.
        let rotated = self.ensure_tls(mr, Some(&snap)).await?;
        self.apply_all(&desired).await?;
        self.reconcile_auth(mr, &snap).await?;
        if !applied.changed_membership && scale_to.is_none() {
            self.defragment(mr, &snap).await?;
        }
        self.delete_volumes(mr, &applied.delete_volumes).await?;
        if let Some(ordinal) = applied.restart_empty {
            self.restart_empty(mr, ordinal).await?;
        }
        Ok(
            if applied.changed_membership
                || applied.scale_to.is_some()
                || applied.restart_empty.is_some()
                || rotated
            {
                Update::in_progress()
            } else {
                Update::done()
            },
        )
    }

    async fn delete(
        &self,
        mr: &EtcdCluster,
        _ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let children = all_children(mr)?;
        let uid = mr.uid().unwrap_or_default();
        // Only this cluster's children go with it; an object that merely has a child's name is
        // left alone.
        Ok(self.children.delete_owned(&children, &uid).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateWaiting, ContainerStatus, PodStatus,
    };

    fn pod(ready: bool, restarts: i32, waiting: Option<&str>) -> Pod {
        Pod {
            status: Some(PodStatus {
                container_statuses: Some(vec![ContainerStatus {
                    name: "etcd".into(),
                    ready,
                    restart_count: restarts,
                    state: waiting.map(|r| ContainerState {
                        waiting: Some(ContainerStateWaiting {
                            reason: Some(r.into()),
                            ..ContainerStateWaiting::default()
                        }),
                        ..ContainerState::default()
                    }),
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn crash_loops_are_recognised() {
        assert!(crash_looping(&pod(false, 1, Some("CrashLoopBackOff"))));
        assert!(crash_looping(&pod(false, 5, None)));
        assert!(
            !crash_looping(&pod(true, 5, None)),
            "restarted long ago, fine now"
        );
        assert!(!crash_looping(&pod(false, 0, Some("ContainerCreating"))));
    }
}
