//! The Helm chart of `deploy/helm/ferroplane` through the real `helm` CLI, built by testenv at
//! the version `testenv/versions.yaml` pins (from the Go module proxy, once, into its cache; a
//! machine without Go fails the test saying so, as the real control plane does).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The chart's directory.
pub fn chart_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/helm/ferroplane")
}

/// The pinned `helm`, built first when missing.
pub async fn helm() -> PathBuf {
    tokio::task::spawn_blocking(|| ferroplane_testenv::Builder::new(None).ensure_helm())
        .await
        .expect("the helm build did not panic")
        .unwrap_or_else(|e| panic!("the pinned helm (testenv/versions.yaml): {e}"))
}

/// What one run of `helm` printed.
pub struct HelmOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `helm ARGS` with a home of its own (no user configuration or repositories read, nothing
/// written outside `home`).
pub async fn run(home: &Path, args: &[&str]) -> HelmOutput {
    let out = tokio::process::Command::new(helm().await)
        .args(args)
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"))
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("helm runs");
    HelmOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A file of values for `-f`, in `dir`.
pub fn values_file(dir: &Path, name: &str, yaml: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, yaml).expect("values file written");
    path
}

/// `helm template RELEASE CHART --namespace NAMESPACE --include-crds [-f VALUES]`, as objects
/// (CRDs first, as Helm installs them). Panics with helm's message when the render fails.
pub async fn template(release: &str, namespace: &str, values: Option<&Path>) -> Vec<Value> {
    match try_template(release, namespace, values).await {
        Ok(objects) => objects,
        Err(message) => panic!("helm template {release} failed: {message}"),
    }
}

/// [`template`], returning helm's message when it refuses.
pub async fn try_template(
    release: &str,
    namespace: &str,
    values: Option<&Path>,
) -> Result<Vec<Value>, String> {
    let home = tempfile::tempdir().expect("temp dir");
    let chart = chart_dir();
    let mut args = vec![
        "template",
        release,
        chart.to_str().expect("a UTF-8 path"),
        "--namespace",
        namespace,
        "--include-crds",
    ];
    let values = values.map(|v| v.to_string_lossy().into_owned());
    if let Some(values) = &values {
        args.extend(["-f", values]);
    }
    let out = run(home.path(), &args).await;
    if !out.success {
        return Err(out.stderr);
    }
    let documents: Vec<Value> = serde_saphyr::from_multiple(&out.stdout)
        .unwrap_or_else(|e| panic!("helm template printed YAML: {e}\n{}", out.stdout));
    Ok(documents.into_iter().filter(Value::is_object).collect())
}

/// The one object of `kind` named `name`.
pub fn object<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    let found: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "one {kind} {name} rendered: {found:?}");
    found[0]
}

/// Every object of `kind`.
pub fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

/// The controller container of the rendered Deployment.
pub fn container(deployment: &Value) -> &Value {
    let containers = deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("the Deployment has containers");
    assert_eq!(containers.len(), 1, "one container");
    &containers[0]
}

/// The container's arguments.
pub fn args(deployment: &Value) -> Vec<String> {
    container(deployment)["args"]
        .as_array()
        .expect("the container has args")
        .iter()
        .map(|a| a.as_str().expect("a string argument").to_owned())
        .collect()
}
