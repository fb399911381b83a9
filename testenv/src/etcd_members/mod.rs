//! Real etcd members for the pods of a namespace: kwok reports pods Running without running
//! anything; this runner plays their kubelet for etcd. For every Running pod (not being deleted)
//! with an etcd container it starts the etcd release of the pod's image tag with the container's
//! command and args ([`launch`]), its volumes where they live here (a claim's PersistentVolume
//! hostPath — see [`crate::Provisioner`] — so data survives the pod and goes with the claim),
//! and its own loopback address ([`addresses`]). A pod that goes, or is replaced, has its etcd
//! stopped (SIGTERM, then SIGKILL after the grace period); an etcd that exits on its own is
//! started again after a second, as a kubelet restarts a container. A running member's Secret
//! volumes follow their Secret, as a kubelet refreshes them (within its sync period; here every
//! [`REFRESH`]): all files of a volume change at once. A test can cut a member off the others
//! and let it back ([`EtcdMembers::partition`], in `partition`).
//!
//! Each etcd runs in a mount namespace of its own (`unshare --mount`, which needs root or user
//! namespaces) whose `/etc/hosts` is the runner's hosts file: the members find each other by the
//! names the cluster DNS would give them. The test's controller resolves the same names through
//! [`MemberAddresses`].

mod addresses;
mod jobs;
pub mod launch;
mod partition;
mod stopping;
mod swap;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{
    ConfigMap, PersistentVolume, PersistentVolumeClaim, Pod, Secret, Service,
};
use kube::api::{Api, ListParams};

pub use addresses::MemberAddresses;
use addresses::PodKey;
use launch::{HostVolume, Launch};
use stopping::stop_blocking;
use swap::swap_in;

use crate::builder::Builder;
use crate::error::{Error, Result};
use crate::process::Processes;

/// How often the runner looks at the pods.
const INTERVAL: Duration = Duration::from_millis(250);
/// How long a stopped member may take before SIGKILL (a pod's default grace is 30 s).
const GRACE: Duration = Duration::from_secs(10);
/// How long after an exit the member is started again.
const RESTART_DELAY: Duration = Duration::from_secs(1);
/// How often running members' Secret volumes are brought up to date.
const REFRESH: Duration = Duration::from_secs(5);

/// One running member, as [`EtcdMembers::members`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberProcess {
    pub namespace: String,
    pub pod: String,
    pub pod_uid: String,
    /// The etcd release running, from the pod's image tag.
    pub version: String,
    pub address: std::net::Ipv4Addr,
    pub pid: u32,
    /// How often this pod's etcd exited and was started again.
    pub restarts: u32,
    pub log: PathBuf,
}

struct Running {
    info: MemberProcess,
    child: Child,
    /// Cut off ([`EtcdMembers::partition`]) and not reconnected since.
    partitioned: bool,
}

#[derive(Default)]
struct State {
    running: BTreeMap<PodKey, Running>,
    /// Pods whose etcd exited: when, and how often.
    exited: BTreeMap<PodKey, (String, Instant, u32)>,
    /// Why a member could not be started (yet), by pod; why the last step failed.
    problems: BTreeMap<String, String>,
    /// When the Secret volumes were last refreshed.
    refreshed: Option<Instant>,
    /// Job pods started, by UID (each runs once, to its end or until its pod goes): the flag
    /// that stops it.
    job_pods: BTreeMap<String, Arc<AtomicBool>>,
}

/// The runner for one namespace. Dropping it stops every member it started.
pub struct EtcdMembers {
    addresses: MemberAddresses,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
    dir: PathBuf,
    // Last: the spawner thread the members die with.
    _spawner: Arc<Processes>,
}

impl EtcdMembers {
    /// Starts playing the kubelet of the etcd pods of `namespace`, with files (logs, pods'
    /// volumes, the hosts file) under `dir`; members' programs come from `builder` (built when
    /// missing: about a minute per release on 2 cores).
    ///
    /// Job pods of the namespace are run too ([`jobs`]), their `ferroplane` containers with
    /// `ferroplane` (none: they fail).
    pub fn start(
        client: kube::Client,
        namespace: &str,
        dir: &Path,
        builder: Builder,
        ferroplane: Option<PathBuf>,
    ) -> Result<Self> {
        for sub in ["logs", "pods"] {
            std::fs::create_dir_all(dir.join(sub))
                .map_err(Error::io(format!("creating {}", dir.join(sub).display())))?;
        }
        // 127.B.x.y: B from the process id, so that two test processes rarely share addresses.
        let second_octet = 100 + (std::process::id() % 100) as u8;
        let addresses = MemberAddresses::new(second_octet, dir.join("hosts"))?;
        let spawner = Arc::new(Processes::new()?);
        let state = Arc::new(Mutex::new(State::default()));
        let runner = Runner {
            pods: Api::namespaced(client.clone(), namespace),
            services: Api::namespaced(client.clone(), namespace),
            namespace: namespace.to_owned(),
            config_maps: Api::namespaced(client.clone(), namespace),
            secrets: Api::namespaced(client.clone(), namespace),
            claims: Api::namespaced(client.clone(), namespace),
            volumes: Api::all(client),
            addresses: addresses.clone(),
            state: state.clone(),
            spawner: spawner.clone(),
            builder: Arc::new(builder),
            dir: dir.to_owned(),
            ferroplane,
        };
        let task = tokio::spawn(runner.run());
        Ok(Self {
            addresses,
            state,
            task,
            dir: dir.to_owned(),
            _spawner: spawner,
        })
    }

    /// The members' addresses: the resolver of the controller's HTTP client.
    pub fn addresses(&self) -> MemberAddresses {
        self.addresses.clone()
    }

    /// The members running now, by pod name.
    pub fn members(&self) -> Vec<MemberProcess> {
        lock(&self.state)
            .running
            .values()
            .map(|r| r.info.clone())
            .collect()
    }

    /// Why members could not be started (yet), or why the runner's last look at the pods
    /// failed: for a test's failure message.
    pub fn problems(&self) -> Vec<String> {
        lock(&self.state)
            .problems
            .iter()
            .map(|(what, why)| format!("{what}: {why}"))
            .collect()
    }

    /// Where the members' logs are.
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }
}

impl Drop for EtcdMembers {
    fn drop(&mut self) {
        self.task.abort();
        // Job pods still running (a server) stop too; their tasks kill and reap them.
        for stop in lock(&self.state).job_pods.values() {
            stop.store(true, Ordering::Relaxed);
        }
        let running = std::mem::take(&mut lock(&self.state).running);
        for (_, member) in running {
            stop_blocking(member.child, Duration::from_secs(5));
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

struct Runner {
    pods: Api<Pod>,
    services: Api<Service>,
    namespace: String,
    config_maps: Api<ConfigMap>,
    secrets: Api<Secret>,
    claims: Api<PersistentVolumeClaim>,
    volumes: Api<PersistentVolume>,
    addresses: MemberAddresses,
    state: Arc<Mutex<State>>,
    spawner: Arc<Processes>,
    builder: Arc<Builder>,
    dir: PathBuf,
    ferroplane: Option<PathBuf>,
}

impl Runner {
    async fn run(self) {
        loop {
            let outcome = self.step().await;
            {
                let mut state = lock(&self.state);
                match outcome {
                    Ok(()) => state.problems.remove("runner"),
                    Err(error) => state.problems.insert("runner".into(), error.to_string()),
                };
            }
            tokio::time::sleep(INTERVAL).await;
        }
    }

    async fn step(&self) -> Result<()> {
        let services = self.services.list(&ListParams::default()).await?.items;
        self.addresses.set_services(
            &self.namespace,
            services
                .into_iter()
                .map(|s| {
                    let selector = s.spec.and_then(|s| s.selector).unwrap_or_default();
                    (s.metadata.name.unwrap_or_default(), selector)
                })
                .collect(),
        );
        let pods = self.pods.list(&ListParams::default()).await?.items;
        self.stop_gone_job_pods(&pods);
        let mut wanted: BTreeMap<PodKey, Pod> = BTreeMap::new();
        for pod in pods {
            if jobs::is_job_pod(&pod) {
                if let Err(error) = self.start_job_pod(&pod).await {
                    let name = pod.metadata.name.clone().unwrap_or_default();
                    lock(&self.state).problems.insert(name, error.to_string());
                }
                continue;
            }
            if launch::etcd_container(&pod).is_none() {
                continue;
            }
            let key = (
                pod.metadata.namespace.clone().unwrap_or_default(),
                pod.metadata.name.clone().unwrap_or_default(),
            );
            let spec = pod.spec.as_ref();
            let dns_name = spec
                .and_then(|s| Some((s.hostname.clone()?, s.subdomain.clone()?)))
                .map(|(host, sub)| format!("{host}.{sub}.{}.svc", key.0));
            self.addresses.register(&key, dns_name)?;
            self.addresses
                .set_labels(&key, pod.metadata.labels.clone().unwrap_or_default());
            let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
            if running && pod.metadata.deletion_timestamp.is_none() {
                wanted.insert(key, pod);
            }
        }
        self.stop_unwanted(&wanted).await;
        self.reap_exited();
        for (key, pod) in &wanted {
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            let is_running = lock(&self.state).running.contains_key(key);
            let restart_due =
                lock(&self.state)
                    .exited
                    .get(key)
                    .is_none_or(|(exited_uid, at, _)| {
                        *exited_uid != uid || at.elapsed() >= RESTART_DELAY
                    });
            if !is_running && restart_due {
                let outcome = self.start_member(key, pod).await;
                let mut state = lock(&self.state);
                match outcome {
                    Ok(()) => state.problems.remove(&key.1),
                    Err(error) => state.problems.insert(key.1.clone(), error.to_string()),
                };
            }
        }
        let due = lock(&self.state)
            .refreshed
            .is_none_or(|at| at.elapsed() >= REFRESH);
        if due {
            self.refresh_secret_volumes(&wanted).await?;
            lock(&self.state).refreshed = Some(Instant::now());
        }
        Ok(())
    }

    /// Rewrites the Secret volumes of running members whose Secret changed. A kubelet swaps a
    /// volume's files all at once (a symlink to a new directory), so that a reader never sees
    /// a new certificate with an old key; here the new directory is exchanged with the old one
    /// (`renameat2(RENAME_EXCHANGE)`). A Secret that is gone leaves its files as they are.
    async fn refresh_secret_volumes(&self, wanted: &BTreeMap<PodKey, Pod>) -> Result<()> {
        let secrets: BTreeMap<String, Secret> = self
            .secrets
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .map(|s| (s.metadata.name.clone().unwrap_or_default(), s))
            .collect();
        for (key, pod) in wanted {
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            let running = lock(&self.state)
                .running
                .get(key)
                .is_some_and(|r| r.info.pod_uid == uid);
            if !running {
                continue;
            }
            let pod_dir = launch::pod_dir(&self.dir, &key.0, &key.1, &uid);
            for volume in pod.spec.iter().flat_map(|s| s.volumes.iter().flatten()) {
                let Some(secret) = volume
                    .secret
                    .as_ref()
                    .and_then(|v| secrets.get(v.secret_name.as_deref().unwrap_or_default()))
                else {
                    continue;
                };
                let files: BTreeMap<String, Vec<u8>> = secret
                    .data
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, v.0))
                    .collect();
                swap_in(&pod_dir.join(&volume.name), &files)?;
            }
        }
        Ok(())
    }

    /// Stops the members whose pod is gone, replaced or no longer Running.
    async fn stop_unwanted(&self, wanted: &BTreeMap<PodKey, Pod>) {
        let unwanted: Vec<(PodKey, Running)> = {
            let mut state = lock(&self.state);
            let keys: Vec<PodKey> = state
                .running
                .iter()
                .filter(|(key, r)| {
                    wanted.get(*key).and_then(|p| p.metadata.uid.as_deref())
                        != Some(r.info.pod_uid.as_str())
                })
                .map(|(key, _)| key.clone())
                .collect();
            keys.into_iter()
                .filter_map(|k| state.running.remove(&k).map(|r| (k, r)))
                .collect()
        };
        for (key, member) in unwanted {
            self.addresses.set_running(&key, false);
            tracing::info!(pod = %key.1, "etcd member's pod went: stopping it");
            // A kubelet keeps a deleted pod until its container is gone, so nothing new (a
            // claim, a pod) takes its place while it runs; kwok removes the pod at once. A
            // member cut off is killed where it stands: continued for a graceful stop, it would
            // answer again for a moment beside its replacement's new claim.
            let grace = if member.partitioned {
                Duration::ZERO
            } else {
                GRACE
            };
            let _ = tokio::task::spawn_blocking(move || stop_blocking(member.child, grace)).await;
            let pod_dir = launch::pod_dir(&self.dir, &key.0, &key.1, &member.info.pod_uid);
            let _ = std::fs::remove_dir_all(pod_dir);
        }
    }

    /// Notes the members that exited on their own.
    fn reap_exited(&self) {
        let mut state = lock(&self.state);
        let exited: Vec<PodKey> = state
            .running
            .iter_mut()
            .filter_map(|(k, r)| (!matches!(r.child.try_wait(), Ok(None))).then(|| k.clone()))
            .collect();
        for key in exited {
            if let Some(member) = state.running.remove(&key) {
                self.addresses.set_running(&key, false);
                tracing::warn!(pod = %key.1, log = %member.info.log.display(), "etcd member exited");
                let restarts = member.info.restarts + 1;
                state
                    .exited
                    .insert(key, (member.info.pod_uid, Instant::now(), restarts));
            }
        }
    }

    async fn start_member(&self, key: &PodKey, pod: &Pod) -> Result<()> {
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let pod_dir = launch::pod_dir(&self.dir, &key.0, &key.1, &uid);
        let volumes = self.host_volumes(pod, &pod_dir).await?;
        let address = self.addresses.register(key, None)?;
        let Launch {
            version,
            args,
            files,
        } = launch::plan(pod, &volumes, address).map_err(Error::Dir)?;
        for volume in volumes.values() {
            if let HostVolume::Dir(dir) = volume {
                std::fs::create_dir_all(dir)
                    .map_err(Error::io(format!("creating {}", dir.display())))?;
            }
        }
        for (path, content) in files {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(Error::io(format!("creating {}", parent.display())))?;
            }
            std::fs::write(&path, content)
                .map_err(Error::io(format!("writing {}", path.display())))?;
        }
        let builder = self.builder.clone();
        let wanted = version.clone();
        let program = tokio::task::spawn_blocking(move || builder.ensure_etcd(&wanted))
            .await
            .map_err(|e| Error::io("building etcd")(std::io::Error::other(e)))??;
        let log = self
            .dir
            .join("logs")
            .join(format!("{}.{}.log", key.0, key.1));
        let out = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(Error::io(format!("opening {}", log.display())))?;
        let err = out.try_clone().map_err(Error::io("log file"))?;
        // A kubelet never starts a container of a pod being deleted. The pod was listed at the
        // top of the step and may have been deleted since, its configuration rewritten for its
        // successor (a learner's file names its peers: started on this pod's volume, which goes
        // with it, the learner would be lost). Read after the volumes were: the pod still there
        // and not being deleted means what they hold predates any deletion.
        if !self.still_wanted(key, &uid).await? {
            return Ok(());
        }
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$0" /etc/hosts && exec "$@""#)
            .arg(self.addresses.hosts_file())
            .arg(&program)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let child = self.spawner.spawn_owned(cmd)?;
        let restarts = lock(&self.state)
            .exited
            .get(key)
            .filter(|(exited_uid, _, _)| *exited_uid == uid)
            .map_or(0, |(_, _, n)| *n);
        tracing::info!(pod = %key.1, %version, %address, pid = child.id(), "etcd member started");
        let info = MemberProcess {
            namespace: key.0.clone(),
            pod: key.1.clone(),
            pod_uid: uid,
            version,
            address,
            pid: child.id(),
            restarts,
            log,
        };
        self.addresses.set_running(key, true);
        lock(&self.state).running.insert(
            key.clone(),
            Running {
                info,
                child,
                partitioned: false,
            },
        );
        Ok(())
    }

    /// Whether pod `key` is still the one with `uid`, Running and not being deleted (read from
    /// the API server now, not from the step's list).
    async fn still_wanted(&self, key: &PodKey, uid: &str) -> Result<bool> {
        Ok(self.pods.get_opt(&key.1).await?.is_some_and(|pod| {
            pod.metadata.uid.as_deref() == Some(uid)
                && pod.metadata.deletion_timestamp.is_none()
                && pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
        }))
    }

    /// Stops the Job pods that run while their pod is gone or being deleted (a kubelet kills
    /// a deleted pod's containers).
    fn stop_gone_job_pods(&self, pods: &[Pod]) {
        let live: std::collections::BTreeSet<&str> = pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| p.metadata.uid.as_deref())
            .collect();
        for (uid, stop) in &lock(&self.state).job_pods {
            if !live.contains(uid.as_str()) {
                stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Starts running a Job pod that is Running (scheduled, and marked so by kwok) and has not
    /// been run, once its volumes are there.
    async fn start_job_pod(&self, pod: &Pod) -> Result<()> {
        let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        if !running
            || pod.metadata.deletion_timestamp.is_some()
            || lock(&self.state).job_pods.contains_key(&uid)
        {
            return Ok(());
        }
        let name = pod.metadata.name.clone().unwrap_or_default();
        let pod_dir = launch::pod_dir(&self.dir, &self.namespace, &name, &uid);
        let volumes = self.host_volumes(pod, &pod_dir).await?;
        let wanted = pod
            .spec
            .iter()
            .flat_map(|s| s.volumes.iter().flatten())
            .count();
        if volumes.len() < wanted {
            // A claim not bound yet, a Secret not there yet: a kubelet waits too.
            return Ok(());
        }
        let stop = Arc::new(AtomicBool::new(false));
        lock(&self.state).job_pods.insert(uid, stop.clone());
        let key = (self.namespace.clone(), name);
        // A pod with a host name under a headless Service is found by that name (a server).
        let dns_name = pod
            .spec
            .as_ref()
            .and_then(|s| Some((s.hostname.clone()?, s.subdomain.clone()?)))
            .map(|(host, sub)| format!("{host}.{sub}.{}.svc", key.0));
        let address = self.addresses.register(&key, dns_name)?;
        let job_pod = jobs::JobPod {
            pods: self.pods.clone(),
            pod: pod.clone(),
            volumes,
            address,
            builder: self.builder.clone(),
            ferroplane: self.ferroplane.clone(),
            log_dir: self.dir.join("logs"),
            pod_dir,
            hosts_file: self.addresses.hosts_file().to_path_buf(),
            spawner: self.spawner.clone(),
            stop,
        };
        tracing::info!(pod = %key.1, "running a Job pod");
        tokio::spawn(job_pod.run());
        Ok(())
    }

    /// The pod's volumes on this machine: a claim's PersistentVolume hostPath, a ConfigMap's
    /// files to write under the pod's directory, a directory there for any other volume.
    async fn host_volumes(
        &self,
        pod: &Pod,
        pod_dir: &Path,
    ) -> Result<BTreeMap<String, HostVolume>> {
        let mut out = BTreeMap::new();
        for volume in pod.spec.iter().flat_map(|s| s.volumes.iter().flatten()) {
            let host = if let Some(claim) = &volume.persistent_volume_claim {
                let Some(found) = self.claims.get_opt(&claim.claim_name).await? else {
                    continue;
                };
                // A kubelet mounts no claim that is being deleted (the pod may have been
                // scheduled on it from a stale cache): its volume would go with it.
                if found.metadata.deletion_timestamp.is_some() {
                    return Err(Error::Dir(format!(
                        "claim {} is being deleted: the pod is not started on it",
                        claim.claim_name
                    )));
                }
                let bound = found.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
                let Some(pv_name) = found.spec.and_then(|s| s.volume_name).filter(|_| bound) else {
                    continue;
                };
                let Some(path) = self
                    .volumes
                    .get_opt(&pv_name)
                    .await?
                    .and_then(|pv| pv.spec?.host_path)
                    .map(|h| PathBuf::from(h.path))
                else {
                    continue;
                };
                HostVolume::Dir(path)
            } else if let Some(source) = &volume.config_map {
                let Some(config_map) = self.config_maps.get_opt(&source.name).await? else {
                    continue;
                };
                HostVolume::Files {
                    dir: pod_dir.join(&volume.name),
                    data: config_map.data.unwrap_or_default(),
                }
            } else if let Some(source) = &volume.secret {
                // A kubelet waits for a Secret volume's Secret (TLS certificates); so does this.
                let name = source.secret_name.clone().unwrap_or_default();
                let secret = match self.secrets.get_opt(&name).await? {
                    Some(secret) => secret,
                    // An optional Secret that is not there is an empty volume.
                    None if source.optional == Some(true) => Secret::default(),
                    None => continue,
                };
                HostVolume::Files {
                    dir: pod_dir.join(&volume.name),
                    data: secret
                        .data
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                        .collect(),
                }
            } else {
                // An emptyDir; or a volume etcd does not read (the projected ServiceAccount
                // token): an empty directory of the pod's.
                HostVolume::Dir(pod_dir.join(&volume.name))
            };
            out.insert(volume.name.clone(), host);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_volume_changes_all_at_once_and_only_when_its_secret_did() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("server-tls");
        let files = |cert: &str, key: &str| {
            BTreeMap::from([
                ("tls.crt".to_owned(), cert.as_bytes().to_vec()),
                ("tls.key".to_owned(), key.as_bytes().to_vec()),
            ])
        };
        // A volume the member never had is not made here.
        swap_in(&dir, &files("c1", "k1")).expect("nothing to do");
        assert!(!dir.exists());
        std::fs::create_dir_all(&dir).expect("volume");
        std::fs::write(dir.join("tls.crt"), "c1").expect("write");
        std::fs::write(dir.join("tls.key"), "k1").expect("write");
        std::fs::write(dir.join("next.crt"), "gone").expect("write");
        swap_in(&dir, &files("c2", "k2")).expect("swapped");
        let read = |k: &str| std::fs::read_to_string(dir.join(k)).expect("file");
        assert_eq!(
            (read("tls.crt"), read("tls.key")),
            ("c2".into(), "k2".into())
        );
        assert!(!dir.join("next.crt").exists(), "a key the Secret lost goes");
        assert!(
            !dir.with_extension("refresh").exists(),
            "the old files went"
        );
    }
}
