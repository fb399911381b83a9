//! Shared helpers for the sandbox integration tests: one server per test, a kube client, and a
//! kubectl runner with its own kubeconfig and `--cache-dir`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use ferroplane_sandbox::{Sandbox, SandboxConfig};
use tokio::io::AsyncWriteExt as _;

/// A CRD with a schema (required, bounds, enum, default, CEL transition rule), a status
/// subresource and printer columns.
pub const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.io
spec:
  group: example.io
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd], listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: SIZE, type: integer, jsonPath: .spec.size}
    - {name: READY, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: AGE, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A widget for tests.
        properties:
          spec:
            type: object
            description: What the widget should be.
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 9, description: Number of parts.}
              policy: {type: string, default: Delete, enum: [Delete, Orphan]}
              region:
                type: string
                x-kubernetes-validations:
                - {rule: self == oldSelf, message: region is immutable}
          status:
            type: object
            properties:
              phase: {type: string}
              conditions:
                type: array
                items: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

pub struct Harness {
    pub sandbox: Sandbox,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

pub async fn start() -> Harness {
    start_with(SandboxConfig {
        workload_delay: Duration::from_millis(50),
        ..SandboxConfig::default()
    })
    .await
}

pub async fn start_with(config: SandboxConfig) -> Harness {
    let sandbox = Sandbox::start(config).await.expect("sandbox starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = sandbox
        .write_kubeconfig(dir.path())
        .expect("kubeconfig written");
    Harness {
        sandbox,
        dir,
        kubeconfig,
    }
}

impl Harness {
    pub fn client(&self) -> kube::Client {
        let url = self.sandbox.url().parse().expect("valid url");
        kube::Client::try_from(kube::Config::new(url)).expect("client")
    }

    pub async fn shutdown(self) {
        self.sandbox.shutdown().await;
    }

    /// Runs kubectl with this server's kubeconfig and a fresh cache dir; stdin is optional.
    pub async fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Kubectl {
        let kubectl = kubectl_path();
        let cache = self.dir.path().join("cache");
        let mut command = tokio::process::Command::new(kubectl);
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&cache)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("kubectl starts");
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(input.as_bytes())
                .await
                .expect("stdin written");
            drop(pipe);
        }
        let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
            .await
            .expect("kubectl finished within 30s")
            .expect("kubectl ran");
        Kubectl {
            args: args.join(" "),
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// kubectl that must succeed; returns stdout.
    pub async fn kubectl_ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let run = self.kubectl(args, stdin).await;
        assert_eq!(
            run.code, 0,
            "kubectl {} failed:\nstdout: {}\nstderr: {}",
            run.args, run.stdout, run.stderr
        );
        run.stdout
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }
}

pub struct Kubectl {
    pub args: String,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// kubectl on PATH; panics with what to do when it is missing (CI installs it).
pub fn kubectl_path() -> PathBuf {
    let candidates = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("kubectl"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    candidates
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or_else(|| panic!("kubectl is not on PATH: install kubectl 1.32+ to run the kubectl conformance tests (CI installs it)"))
}

/// Polls `check` every 20ms for up to 5s.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..250 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}
