//! The kubelet of Job pods the runner knows how to run: with kwok's `pod-complete` stage dropped
//! (see [`crate::builder::KWOK_DROPPED_STAGE`]) a Job's pod stays Running until something runs
//! it. For each such pod this runs its init containers one after the other, then its containers,
//! each as a process on this machine (volumes where [`super::launch`] puts them, paths in
//! arguments rewritten, `/etc/hosts` naming the members as for the members themselves), stops at
//! the first that fails, and writes the pod's phase and container states as a kubelet would:
//! `Succeeded`, or `Failed` with the exit code, and the termination message (the file at the
//! container's `terminationMessagePath`, or the end of its output when it failed with
//! `FallbackToLogsOnError`). The Job controller then does the rest (a new pod after a failure, the
//! Job's `Complete` or `Failed` condition). A pod that goes while a container runs (deleted: a
//! server that runs until then) has it stopped, SIGTERM then SIGKILL, and reports nothing. Pods
//! with a host name under a headless Service are found by that name, as cluster DNS would.
//!
//! Programs: `etcdutl` runs the release of the container's image tag (built when missing);
//! `ferroplane` runs the program the runner was given. A container of any other program fails
//! its pod, as an image without the program would.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, Pod};
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use super::launch::{self, HostVolume};
use crate::builder::Builder;
use crate::process::Processes;

/// Bytes of a failed container's output kept in its terminated state's message.
const MESSAGE_TAIL: usize = 2048;
/// Bytes of a termination message file a kubelet keeps.
const MESSAGE_LIMIT: usize = 4096;
/// How long a container of a pod that went has to stop after SIGTERM.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
/// How often a running container is looked at (ended, or its pod gone).
const WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether `pod` belongs to a Job.
pub(super) fn is_job_pod(pod: &Pod) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "Job")
}

/// How one container ended.
struct Ended {
    name: String,
    image: String,
    exit_code: i32,
    message: Option<String>,
    started: Timestamp,
    finished: Timestamp,
}

/// Runs one Job pod to its end and reports it.
pub(super) struct JobPod {
    pub pods: Api<Pod>,
    pub pod: Pod,
    pub volumes: BTreeMap<String, HostVolume>,
    pub address: Ipv4Addr,
    pub builder: Arc<Builder>,
    pub ferroplane: Option<PathBuf>,
    pub log_dir: PathBuf,
    /// The pod's own files (termination messages).
    pub pod_dir: PathBuf,
    /// The members' hosts file: the containers find the members by their DNS names.
    pub hosts_file: PathBuf,
    /// Starts the containers' processes, which die with the runner.
    pub spawner: Arc<Processes>,
    /// Set when the pod is gone: the running container is stopped, nothing more runs.
    pub stop: Arc<AtomicBool>,
}

impl JobPod {
    pub async fn run(self) {
        let name = self.pod.metadata.name.clone().unwrap_or_default();
        let spec = self.pod.spec.clone().unwrap_or_default();
        let mut init_statuses = Vec::new();
        let mut statuses = Vec::new();
        let mut failed = false;
        let steps = spec
            .init_containers
            .iter()
            .flatten()
            .map(|c| (true, c.clone()))
            .chain(spec.containers.iter().map(|c| (false, c.clone())));
        for (init, container) in steps {
            if failed || self.stop.load(Ordering::Relaxed) {
                break;
            }
            let this = self.clone_parts();
            let ended = tokio::task::spawn_blocking(move || this.run_container(&container))
                .await
                .unwrap_or_else(|e| Ended {
                    name: "?".into(),
                    image: String::new(),
                    exit_code: 128,
                    message: Some(format!("runner task failed: {e}")),
                    started: Timestamp::now(),
                    finished: Timestamp::now(),
                });
            failed = ended.exit_code != 0;
            tracing::info!(pod = %name, container = %ended.name, exit_code = ended.exit_code, "job container ended");
            if init {
                init_statuses.push(ended);
            } else {
                statuses.push(ended);
            }
        }
        if self.stop.load(Ordering::Relaxed) {
            tracing::info!(pod = %name, "job pod went: its containers were stopped");
            return;
        }
        let phase = if failed { "Failed" } else { "Succeeded" };
        let patch = json!({"status": {
            "phase": phase,
            "initContainerStatuses": init_statuses.iter().map(terminated).collect::<Vec<_>>(),
            "containerStatuses": statuses.iter().map(terminated).collect::<Vec<_>>(),
        }});
        if let Err(error) = self
            .pods
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            tracing::warn!(pod = %name, %error, "cannot report the Job pod's end");
        }
    }

    fn clone_parts(&self) -> ContainerRun {
        ContainerRun {
            pod: self.pod.clone(),
            volumes: self.volumes.clone(),
            address: self.address,
            builder: self.builder.clone(),
            ferroplane: self.ferroplane.clone(),
            log_dir: self.log_dir.clone(),
            pod_dir: self.pod_dir.clone(),
            hosts_file: self.hosts_file.clone(),
            spawner: self.spawner.clone(),
            stop: self.stop.clone(),
        }
    }
}

struct ContainerRun {
    pod: Pod,
    volumes: BTreeMap<String, HostVolume>,
    address: Ipv4Addr,
    builder: Arc<Builder>,
    ferroplane: Option<PathBuf>,
    log_dir: PathBuf,
    pod_dir: PathBuf,
    hosts_file: PathBuf,
    spawner: Arc<Processes>,
    stop: Arc<AtomicBool>,
}

impl ContainerRun {
    fn run_container(&self, container: &Container) -> Ended {
        let started = Timestamp::now();
        let image = container.image.clone().unwrap_or_default();
        let fail = |message: String| Ended {
            name: container.name.clone(),
            image: image.clone(),
            exit_code: 127,
            message: Some(message),
            started,
            finished: Timestamp::now(),
        };
        let plan = match launch::plan_container(&self.pod, container, &self.volumes, self.address) {
            Ok(plan) => plan,
            Err(why) => return fail(why),
        };
        let program = container
            .command
            .as_ref()
            .and_then(|c| c.first())
            .cloned()
            .unwrap_or_default();
        let path = match program.rsplit('/').next().unwrap_or_default() {
            "etcdutl" => match self.builder.ensure_etcdutl(&plan.version) {
                Ok(path) => path,
                Err(e) => return fail(format!("etcdutl {}: {e}", plan.version)),
            },
            "ferroplane" => match &self.ferroplane {
                Some(path) => path.clone(),
                None => return fail("the runner was given no ferroplane program".into()),
            },
            other => {
                return fail(format!(
                    "exec: {other:?}: the runner does not run this program"
                ));
            }
        };
        for volume in self.volumes.values() {
            if let HostVolume::Dir(dir) = volume
                && let Err(e) = std::fs::create_dir_all(dir)
            {
                return fail(format!("creating {}: {e}", dir.display()));
            }
        }
        for (file, content) in &plan.files {
            let written = file
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(file, content));
            if let Err(e) = written {
                return fail(format!("writing {}: {e}", file.display()));
            }
        }
        let pod_name = self.pod.metadata.name.as_deref().unwrap_or_default();
        let log = self
            .log_dir
            .join(format!("{pod_name}.{}.log", container.name));
        // The termination message file, where the container's own path would be.
        let message_path = container
            .termination_message_path
            .clone()
            .unwrap_or_else(|| "/dev/termination-log".to_owned());
        let message_file = self.pod_dir.join(format!("termination-{}", container.name));
        if let Err(e) =
            std::fs::create_dir_all(&self.pod_dir).and_then(|()| std::fs::write(&message_file, b""))
        {
            return fail(format!("creating {}: {e}", message_file.display()));
        }
        let args: Vec<String> = plan
            .args
            .iter()
            .map(|a| {
                if *a == message_path {
                    message_file.to_string_lossy().into_owned()
                } else {
                    a.clone()
                }
            })
            .collect();
        // As the members do: a mount namespace whose /etc/hosts names the members.
        let mut command = Command::new("unshare");
        command
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$0" /etc/hosts && exec "$@""#)
            .arg(&self.hosts_file)
            .arg(&path)
            .args(&args)
            .stdin(Stdio::null());
        let output = std::fs::File::create(&log)
            .and_then(|out| Ok((out.try_clone()?, out)))
            .map_err(|e| e.to_string())
            .and_then(|(out, err)| {
                command.stdout(out).stderr(err);
                self.spawner.spawn_owned(command).map_err(|e| e.to_string())
            })
            .map(|child| self.wait(child));
        let finished = Timestamp::now();
        match output {
            Ok(status) => {
                let text = std::fs::read(&log).unwrap_or_default();
                let exit_code = status.code().unwrap_or(128);
                let written = std::fs::read(&message_file).unwrap_or_default();
                let fallback = container.termination_message_policy.as_deref()
                    == Some("FallbackToLogsOnError");
                // A kubelet's rule: the file's content; the end of the output instead only for
                // a failed container whose policy says so and whose file is empty.
                let message = if !written.is_empty() {
                    Some(
                        String::from_utf8_lossy(&written[..written.len().min(MESSAGE_LIMIT)])
                            .into_owned(),
                    )
                } else if exit_code != 0 && fallback {
                    Some(tail(&text))
                } else {
                    None
                };
                Ended {
                    name: container.name.clone(),
                    image,
                    exit_code,
                    message,
                    started,
                    finished,
                }
            }
            Err(e) => fail(format!("starting {}: {e}", display(&path))),
        }
    }

    /// Waits for the container's process to end; stops it when its pod goes (SIGTERM, then
    /// SIGKILL after a grace period, as a kubelet does).
    fn wait(&self, mut child: Child) -> ExitStatus {
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) if self.stop.load(Ordering::Relaxed) => {
                    super::stopping::stop_blocking(child, STOP_GRACE);
                    // Nothing reports it: the pod is gone.
                    return ExitStatus::from_raw(libc::SIGTERM);
                }
                Ok(None) => std::thread::sleep(WAIT_STEP),
                Err(_) => return ExitStatus::from_raw(128 << 8),
            }
        }
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

fn tail(text: &[u8]) -> String {
    let start = text.len().saturating_sub(MESSAGE_TAIL);
    String::from_utf8_lossy(&text[start..]).trim().to_owned()
}

fn terminated(ended: &Ended) -> Value {
    let mut state = json!({
        "exitCode": ended.exit_code,
        "reason": if ended.exit_code == 0 { "Completed" } else { "Error" },
        "startedAt": ended.started.to_string(),
        "finishedAt": ended.finished.to_string(),
    });
    if let Some(message) = &ended.message {
        state["message"] = json!(message);
    }
    json!({
        "name": ended.name,
        "image": ended.image,
        "imageID": "",
        "ready": false,
        "restartCount": 0,
        "started": false,
        "state": {"terminated": state},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    #[test]
    fn job_pods_are_told_by_their_owner() {
        let mut pod = Pod::default();
        assert!(!is_job_pod(&pod));
        pod.metadata.owner_references = Some(vec![OwnerReference {
            kind: "Job".into(),
            ..OwnerReference::default()
        }]);
        assert!(is_job_pod(&pod));
    }

    #[test]
    fn a_failed_container_reports_its_code_and_the_end_of_its_output() {
        let ended = Ended {
            name: "fetch".into(),
            image: "i:v1.0.0".into(),
            exit_code: 1,
            message: Some(tail(&vec![b'x'; 5000])),
            started: Timestamp::UNIX_EPOCH,
            finished: Timestamp::UNIX_EPOCH,
        };
        let status = terminated(&ended);
        assert_eq!(status["state"]["terminated"]["exitCode"], 1);
        assert_eq!(status["state"]["terminated"]["reason"], "Error");
        assert_eq!(
            status["state"]["terminated"]["message"]
                .as_str()
                .map(str::len),
            Some(MESSAGE_TAIL)
        );
    }
}
