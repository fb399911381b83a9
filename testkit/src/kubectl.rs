//! kubectl as a user runs it: the binary from PATH, a kubeconfig, a cache directory of the
//! test's own (kubectl's discovery cache must not leak between servers), optionally a
//! namespace. Every run has a deadline, so a hanging kubectl fails the test instead of the CI
//! job.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

/// How long one kubectl run may take: longer than any `--timeout` the tests give kubectl.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// kubectl on PATH; panics with what to do when it is missing (CI installs it).
pub fn kubectl_path() -> PathBuf {
    std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("kubectl"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "kubectl is not on PATH: install kubectl 1.32+ to run the kubectl tests \
                 (CI installs it; see .ci/run)"
            )
        })
}

/// Runs kubectl against one API server.
#[derive(Clone, Debug)]
pub struct Kubectl {
    kubeconfig: PathBuf,
    cache_dir: PathBuf,
    namespace: Option<String>,
}

/// What one kubectl run printed and how it ended.
#[derive(Clone, Debug)]
pub struct KubectlOutput {
    /// The arguments, joined by spaces (for messages).
    pub args: String,
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl KubectlOutput {
    pub fn success(&self) -> bool {
        self.code == 0
    }

    /// stdout; panics with both outputs unless kubectl succeeded.
    #[track_caller]
    pub fn expect_success(self) -> String {
        assert!(
            self.success(),
            "kubectl {} failed:\nstdout: {}\nstderr: {}",
            self.args,
            self.stdout,
            self.stderr
        );
        self.stdout
    }
}

impl Kubectl {
    pub fn new(kubeconfig: impl Into<PathBuf>, cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            kubeconfig: kubeconfig.into(),
            cache_dir: cache_dir.into(),
            namespace: None,
        }
    }

    /// The same kubectl with `--namespace namespace` on every run.
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// The command for `args`, with the kubeconfig, cache dir and namespace set and the output
    /// piped; stdin is closed.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(kubectl_path());
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache_dir);
        if let Some(namespace) = &self.namespace {
            command.arg("--namespace").arg(namespace);
        }
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Starts a long-running kubectl (`get -w`, `wait`) in the background; see [`finish`].
    pub fn spawn(&self, args: &[&str]) -> tokio::process::Child {
        self.command(args).spawn().expect("kubectl starts")
    }

    /// Runs kubectl to its end.
    pub async fn run(&self, args: &[&str]) -> KubectlOutput {
        self.run_inner(args, None).await
    }

    /// Runs kubectl to its end with `stdin` as its input.
    pub async fn run_with_input(&self, args: &[&str], stdin: &str) -> KubectlOutput {
        self.run_inner(args, Some(stdin)).await
    }

    /// kubectl that must succeed; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        self.run_inner(args, None).await.expect_success()
    }

    /// kubectl with `stdin` as its input that must succeed; returns stdout.
    pub async fn ok_with_input(&self, args: &[&str], stdin: &str) -> String {
        self.run_inner(args, Some(stdin)).await.expect_success()
    }

    async fn run_inner(&self, args: &[&str], stdin: Option<&str>) -> KubectlOutput {
        let mut command = self.command(args);
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().expect("kubectl starts");
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(input.as_bytes())
                .await
                .expect("kubectl's stdin written");
        }
        let output = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
            .await
            .unwrap_or_else(|_| {
                panic!("kubectl {} finished within {RUN_TIMEOUT:?}", args.join(" "))
            })
            .expect("kubectl ran");
        KubectlOutput {
            args: args.join(" "),
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `kubectl apply -f -` of `yaml` that must succeed; returns stdout.
    pub async fn apply(&self, yaml: &str) -> String {
        let run = self.run_with_input(&["apply", "-f", "-"], yaml).await;
        assert!(
            run.success(),
            "kubectl apply failed: {}\n{yaml}",
            run.stderr
        );
        run.stdout
    }

    /// `kubectl get <what> -o jsonpath=<path>`: stdout, empty when the object is missing.
    pub async fn jsonpath(&self, what: &str, path: &str) -> String {
        self.run(&["get", what, "-o", &format!("jsonpath={path}")])
            .await
            .stdout
    }
}

/// Waits (at most 20 s) for a kubectl started with [`Kubectl::spawn`] to end; returns its exit
/// code, stdout and stderr.
pub async fn finish(child: tokio::process::Child) -> (i32, String, String) {
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("kubectl finished in time")
        .expect("kubectl ran");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
