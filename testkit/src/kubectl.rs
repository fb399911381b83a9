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

    /// `kubectl get <what> --watch` in the background: tells when the object changes, so a
    /// wait can re-run its kubectl probe on each change instead of every few hundred
    /// milliseconds (polling kubectl was most of the CPU of the end-to-end suites).
    pub fn changes(&self, what: &str) -> Changes {
        Changes::start(self.clone(), what.to_owned())
    }
}

/// How often a wait on [`Changes`] looks again with no change seen: a safety net only, the
/// watch reports every change.
const CHANGE_FALLBACK: Duration = Duration::from_secs(3);
/// How often it looks while the watch cannot run (the object does not exist yet).
const NO_WATCH_RETRY: Duration = Duration::from_millis(500);

/// The changes of one object as `kubectl get -w -o name` reports them.
pub struct Changes {
    kubectl: Kubectl,
    what: String,
    watch: Option<(
        tokio::process::Child,
        tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    )>,
}

impl Changes {
    fn start(kubectl: Kubectl, what: String) -> Self {
        let mut changes = Self {
            kubectl,
            what,
            watch: None,
        };
        changes.spawn_watch();
        changes
    }

    fn spawn_watch(&mut self) {
        use tokio::io::AsyncBufReadExt as _;
        // Its errors (NotFound while the object does not exist yet) only mean "look again".
        let mut child = self
            .kubectl
            .command(&["get", &self.what, "--watch", "-o", "name"])
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl starts");
        let stdout = child.stdout.take().expect("kubectl's stdout is piped");
        self.watch = Some((child, tokio::io::BufReader::new(stdout).lines()));
    }

    /// Returns once the object may have changed since the last call: the watch printed it
    /// (the first time: its initial listing), or the fallback interval passed. A watch that
    /// ended (the object is missing) is started again after a short pause.
    pub async fn next(&mut self) {
        let Some((_, lines)) = self.watch.as_mut() else {
            tokio::time::sleep(NO_WATCH_RETRY).await;
            self.spawn_watch();
            return;
        };
        match tokio::time::timeout(CHANGE_FALLBACK, lines.next_line()).await {
            Ok(Ok(Some(_))) => {
                // Changes that came together need one look, not one each.
                while let Ok(Ok(Some(_))) =
                    tokio::time::timeout(Duration::ZERO, lines.next_line()).await
                {}
            }
            Err(_) => {}
            Ok(Ok(None) | Err(_)) => {
                self.watch = None;
                tokio::time::sleep(NO_WATCH_RETRY).await;
                self.spawn_watch();
            }
        }
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
