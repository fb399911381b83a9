//! From a member pod to the etcd command that plays its container, as a kubelet would run it:
//! the container's command and args with `$(VAR)` expanded from its env, every path under a
//! volume mount moved to where that volume lives on this machine, and the pod's own address
//! wherever the container would listen on all interfaces (`0.0.0.0`). Files of ConfigMap
//! volumes (etcd's `--config-file`) get the same rewriting. Pure: the caller fetches the
//! volumes and writes the files.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Container, Pod};
use serde_json::Value;

/// Where a pod volume is on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostVolume {
    /// A directory (a PersistentVolume's hostPath, an emptyDir).
    Dir(PathBuf),
    /// Files to materialize into `dir` (a ConfigMap's data, key → content).
    Files {
        dir: PathBuf,
        data: BTreeMap<String, String>,
    },
}

/// What to run for one member pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The etcd release, from the image tag (`v3.6.16`).
    pub version: String,
    /// The arguments after the program name.
    pub args: Vec<String>,
    /// Files to write before starting (rewritten ConfigMap files).
    pub files: Vec<(PathBuf, String)>,
}

/// The pod's etcd container: the first whose command starts with `etcd`.
pub fn etcd_container(pod: &Pod) -> Option<&Container> {
    pod.spec.as_ref()?.containers.iter().find(|c| {
        c.command
            .as_ref()
            .and_then(|c| c.first())
            .is_some_and(|p| p == "etcd" || p.ends_with("/etcd"))
    })
}

/// `registry/etcd:v3.5.35` → `v3.5.35`.
pub fn image_version(image: &str) -> Option<String> {
    let tag = image.rsplit_once(':')?.1;
    if tag.contains('/') {
        return None;
    }
    let bare = tag.strip_prefix('v').unwrap_or(tag);
    let parts: Vec<&str> = bare.split('.').collect();
    (parts.len() == 3 && parts.iter().all(|p| p.parse::<u64>().is_ok())).then(|| format!("v{bare}"))
}

/// The launch of `pod`'s etcd container at `ip` with its volumes at `volumes` (by volume name).
pub fn plan(
    pod: &Pod,
    volumes: &BTreeMap<String, HostVolume>,
    ip: Ipv4Addr,
) -> Result<Launch, String> {
    let container = etcd_container(pod).ok_or("the pod has no etcd container")?;
    plan_container(pod, container, volumes, ip)
}

/// The launch of `container` of `pod` (any container: a Job's init containers too), as
/// [`plan`] does for the etcd container.
pub fn plan_container(
    pod: &Pod,
    container: &Container,
    volumes: &BTreeMap<String, HostVolume>,
    ip: Ipv4Addr,
) -> Result<Launch, String> {
    let image = container.image.as_deref().unwrap_or_default();
    let version = image_version(image)
        .ok_or_else(|| format!("image {image:?} has no vMAJOR.MINOR.PATCH tag"))?;
    let env = environment(pod, container);
    let mut mounts: Vec<(String, PathBuf)> = Vec::new();
    for mount in container.volume_mounts.iter().flatten() {
        let volume = volumes
            .get(&mount.name)
            .ok_or_else(|| format!("volume {:?} is not available yet", mount.name))?;
        let base = match volume {
            HostVolume::Dir(dir) => dir.clone(),
            HostVolume::Files { dir, .. } => dir.clone(),
        };
        let host = match mount.sub_path.as_deref() {
            Some(sub) if !sub.is_empty() => base.join(sub),
            _ => base,
        };
        mounts.push((mount.mount_path.trim_end_matches('/').to_owned(), host));
    }
    // Longest mount path first: the most specific mount wins.
    mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let rewrite = |s: &str| rewrite_value(&expand(s, &env), &mounts, ip);

    let command = container.command.as_deref().unwrap_or_default();
    let args: Vec<String> = command
        .iter()
        .skip(1)
        .chain(container.args.iter().flatten())
        .map(|a| rewrite_arg(&expand(a, &env), &mounts, ip))
        .collect();

    let mut files = Vec::new();
    for mount in container.volume_mounts.iter().flatten() {
        if let Some(HostVolume::Files { dir, data }) = volumes.get(&mount.name) {
            for (key, content) in data {
                files.push((dir.join(key), rewrite_file(content, &rewrite)));
            }
        }
    }
    Ok(Launch {
        version,
        args,
        files,
    })
}

/// The container's env with literal values and the pod-name/namespace field references.
fn environment(pod: &Pod, container: &Container) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for var in container.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(v), _) => Some(v.clone()),
            (None, Some(from)) => match from.field_ref.as_ref().map(|f| f.field_path.as_str()) {
                Some("metadata.name") => pod.metadata.name.clone(),
                Some("metadata.namespace") => pod.metadata.namespace.clone(),
                _ => None,
            },
            (None, None) => Some(String::new()),
        };
        if let Some(value) = value {
            env.insert(var.name.clone(), value);
        }
    }
    env
}

/// Kubernetes' `$(VAR)` expansion; an unknown variable stays as written.
fn expand(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("$(") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find(')') {
            Some(end) if env.contains_key(&after[..end]) => {
                out.push_str(&env[&after[..end]]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("$(");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `--flag=value`: the value rewritten; anything else as a value.
fn rewrite_arg(arg: &str, mounts: &[(String, PathBuf)], ip: Ipv4Addr) -> String {
    match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with('-') => {
            format!("{flag}={}", rewrite_value(value, mounts, ip))
        }
        _ => rewrite_value(arg, mounts, ip),
    }
}

/// A path under a mount moves to the host side; `0.0.0.0` (all interfaces) becomes the pod's
/// address.
fn rewrite_value(value: &str, mounts: &[(String, PathBuf)], ip: Ipv4Addr) -> String {
    for (mount_path, host) in mounts {
        if value == mount_path {
            return host.to_string_lossy().into_owned();
        }
        if let Some(rest) = value.strip_prefix(&format!("{mount_path}/")) {
            return host.join(rest).to_string_lossy().into_owned();
        }
    }
    value.replace("0.0.0.0", &ip.to_string())
}

/// A YAML or JSON mapping has each string value rewritten, nested ones included (etcd's
/// `client-transport-security` and `peer-transport-security` hold file paths), and is written
/// back as JSON, which etcd reads as YAML; any other file (a certificate) is kept as it is.
fn rewrite_file(content: &str, rewrite: &impl Fn(&str) -> String) -> String {
    let parsed: Option<Value> = serde_json::from_str(content)
        .ok()
        .or_else(|| serde_saphyr::from_str(content).ok());
    match parsed {
        Some(map @ Value::Object(_)) => {
            serde_json::to_string_pretty(&rewrite_strings(map, rewrite)).unwrap_or_default()
        }
        _ => content.to_owned(),
    }
}

fn rewrite_strings(value: Value, rewrite: &impl Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(rewrite(&s)),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, rewrite_strings(v, rewrite)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| rewrite_strings(v, rewrite))
                .collect(),
        ),
        other => other,
    }
}

/// Where a pod's own (emptyDir, ConfigMap) volumes go under `root`.
pub fn pod_dir(root: &Path, namespace: &str, pod: &str, uid: &str) -> PathBuf {
    root.join("pods").join(format!("{namespace}.{pod}.{uid}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "e-1", "namespace": "ns"},
            "spec": {"containers": [{
                "name": "etcd",
                "image": "gcr.io/etcd-development/etcd:v3.5.35",
                "command": ["etcd", "--config-file=/etc/etcd/$(POD_NAME).json"],
                "args": ["--log-level=info", "$(UNKNOWN)"],
                "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "volumeMounts": [
                    {"name": "data", "mountPath": "/var/lib/etcd"},
                    {"name": "config", "mountPath": "/etc/etcd", "readOnly": true}
                ]
            }]}
        }))
        .unwrap()
    }

    #[test]
    fn nested_tls_paths_are_rewritten_and_certificates_kept() {
        let mounts = vec![("/etc/etcd-tls/peer".to_owned(), PathBuf::from("/h/peer"))];
        let ip = Ipv4Addr::new(127, 150, 0, 3);
        let rewrite = |s: &str| rewrite_value(s, &mounts, ip);
        let config = json!({
            "listen-peer-urls": "https://0.0.0.0:2380",
            "peer-transport-security": {"cert-file": "/etc/etcd-tls/peer/tls.crt", "client-cert-auth": true},
        });
        let file: Value =
            serde_json::from_str(&rewrite_file(&config.to_string(), &rewrite)).unwrap();
        assert_eq!(file["listen-peer-urls"], "https://127.150.0.3:2380");
        assert_eq!(
            file["peer-transport-security"]["cert-file"],
            "/h/peer/tls.crt"
        );
        assert_eq!(file["peer-transport-security"]["client-cert-auth"], true);
        let pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";
        assert_eq!(rewrite_file(pem, &rewrite), pem);
    }

    #[test]
    fn the_container_runs_with_host_paths_and_the_pods_address() {
        let config = json!({
            "name": "e-1",
            "data-dir": "/var/lib/etcd/data",
            "listen-peer-urls": "http://0.0.0.0:2380",
            "listen-client-urls": "http://0.0.0.0:2379",
            "initial-advertise-peer-urls": "http://e-1.e.ns.svc:2380",
            "enable-grpc-gateway": true
        });
        let volumes = BTreeMap::from([
            ("data".to_owned(), HostVolume::Dir("/h/pv-1".into())),
            (
                "config".to_owned(),
                HostVolume::Files {
                    dir: "/h/pod/config".into(),
                    data: BTreeMap::from([("e-1.json".to_owned(), config.to_string())]),
                },
            ),
        ]);
        let launch = plan(&pod(), &volumes, Ipv4Addr::new(127, 150, 0, 2)).unwrap();
        assert_eq!(launch.version, "v3.5.35");
        assert_eq!(
            launch.args,
            [
                "--config-file=/h/pod/config/e-1.json",
                "--log-level=info",
                "$(UNKNOWN)"
            ]
        );
        let (path, text) = &launch.files[0];
        assert_eq!(path, Path::new("/h/pod/config/e-1.json"));
        let file: Value = serde_json::from_str(text).unwrap();
        assert_eq!(file["data-dir"], "/h/pv-1/data");
        assert_eq!(file["listen-peer-urls"], "http://127.150.0.2:2380");
        assert_eq!(file["listen-client-urls"], "http://127.150.0.2:2379");
        assert_eq!(
            file["initial-advertise-peer-urls"],
            "http://e-1.e.ns.svc:2380"
        );
        assert_eq!(file["enable-grpc-gateway"], true);
    }

    #[test]
    fn a_volume_not_there_yet_or_an_untagged_image_is_said() {
        let err = plan(&pod(), &BTreeMap::new(), Ipv4Addr::LOCALHOST).unwrap_err();
        assert!(err.contains("\"data\""), "{err}");
        assert_eq!(
            image_version("quay.io/coreos/etcd:3.6.16").unwrap(),
            "v3.6.16"
        );
        assert_eq!(image_version("localhost:5000/etcd"), None);
        assert_eq!(image_version("etcd:latest"), None);
    }
}
