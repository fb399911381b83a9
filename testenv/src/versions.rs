//! What the control plane is built from: the three Go components, their pinned versions (read
//! from `versions.yaml`, the one file that lists them) and the facts the builder needs about each
//! (module, binaries, linker flags). Pure: nothing here touches the disk or the network.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::Error;

/// The pinned versions, as `versions.yaml` in this crate lists them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Versions {
    pub kubernetes: String,
    pub etcd: String,
    pub kwok: String,
    /// The older etcd of the EtcdCluster member tests (the latest 3.5 release); not part of the
    /// control plane, built by [`crate::Builder::ensure_etcd`] when first needed.
    pub etcd_upgrade_from: String,
    /// Helm, for the tests of the chart in `deploy/helm/` (`helm lint`, `helm template`); not
    /// part of the control plane, built by [`crate::Builder::ensure_helm`] when first needed.
    pub helm: String,
    /// Crossplane core (`github.com/crossplane/crossplane/v2`), for the composition tests; not
    /// part of the control plane, built by [`crate::Builder::ensure_crossplane`] when first needed.
    pub crossplane: String,
    /// The Crossplane CLI (`github.com/crossplane/cli/v2`: `resource trace`, `xpkg build`).
    pub crossplane_cli: String,
}

impl Versions {
    /// The versions this crate was built with.
    pub fn pinned() -> Self {
        Self::parse(include_str!("../versions.yaml")).expect("testenv/versions.yaml is valid")
    }

    pub fn parse(text: &str) -> Result<Self, Error> {
        let versions: Versions = serde_saphyr::from_str(text)
            .map_err(|e| Error::Versions(format!("versions.yaml: {e}")))?;
        for c in Component::ALL {
            let v = versions.of(c);
            if parse_semver(v).is_none() {
                return Err(Error::Versions(format!(
                    "versions.yaml: {} version {v:?} is not vMAJOR.MINOR.PATCH",
                    c.name()
                )));
            }
        }
        for (name, version) in [
            ("etcd_upgrade_from", &versions.etcd_upgrade_from),
            ("helm", &versions.helm),
            ("crossplane", &versions.crossplane),
            ("crossplane_cli", &versions.crossplane_cli),
        ] {
            if parse_semver(version).is_none() {
                return Err(Error::Versions(format!(
                    "versions.yaml: {name} {version:?} is not vMAJOR.MINOR.PATCH"
                )));
            }
        }
        Ok(versions)
    }

    pub fn of(&self, component: Component) -> &str {
        match component {
            Component::Kubernetes => &self.kubernetes,
            // etcdutl restores snapshots of the members, whose versions vary: no pin of its own.
            Component::Etcd | Component::Etcdutl => &self.etcd,
            Component::Kwok => &self.kwok,
            Component::Helm => &self.helm,
            Component::Crossplane => &self.crossplane,
            Component::CrossplaneCli => &self.crossplane_cli,
        }
    }
}

/// One Go module the control plane is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    Kubernetes,
    Etcd,
    /// etcd's offline tool (`etcdutl snapshot restore`), of any etcd release, for the tests
    /// that restore an EtcdBackup's snapshot; not part of the control plane.
    Etcdutl,
    Kwok,
    /// The Helm CLI (`helm.sh/helm/v3`), for the chart's tests; not part of the control plane.
    Helm,
    /// Crossplane core (`crossplane core start`), for the composition tests.
    Crossplane,
    /// The Crossplane CLI (`crossplane resource trace`, `crossplane xpkg build`).
    CrossplaneCli,
}

/// A program built from a component: its Go package and the file name it gets in the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    pub package: &'static str,
    pub binary: &'static str,
}

impl Component {
    pub const ALL: [Component; 3] = [Component::Kubernetes, Component::Etcd, Component::Kwok];

    pub fn name(self) -> &'static str {
        match self {
            Component::Kubernetes => "kubernetes",
            Component::Etcd => "etcd",
            Component::Etcdutl => "etcdutl",
            Component::Kwok => "kwok",
            Component::Helm => "helm",
            Component::Crossplane => "crossplane",
            Component::CrossplaneCli => "crossplane-cli",
        }
    }

    pub fn module(self) -> &'static str {
        match self {
            Component::Kubernetes => "k8s.io/kubernetes",
            Component::Etcd => "go.etcd.io/etcd/server/v3",
            Component::Etcdutl => "go.etcd.io/etcd/etcdutl/v3",
            Component::Kwok => "sigs.k8s.io/kwok",
            Component::Helm => "helm.sh/helm/v3",
            Component::Crossplane => "github.com/crossplane/crossplane/v2",
            Component::CrossplaneCli => "github.com/crossplane/cli/v2",
        }
    }

    pub fn programs(self) -> &'static [Program] {
        match self {
            Component::Kubernetes => &[
                Program {
                    package: "k8s.io/kubernetes/cmd/kube-apiserver",
                    binary: "kube-apiserver",
                },
                Program {
                    package: "k8s.io/kubernetes/cmd/kube-controller-manager",
                    binary: "kube-controller-manager",
                },
                Program {
                    package: "k8s.io/kubernetes/cmd/kube-scheduler",
                    binary: "kube-scheduler",
                },
            ],
            // etcd's server module has its `main` package at the module root.
            Component::Etcd => &[Program {
                package: "go.etcd.io/etcd/server/v3",
                binary: "etcd",
            }],
            Component::Etcdutl => &[Program {
                package: "go.etcd.io/etcd/etcdutl/v3",
                binary: "etcdutl",
            }],
            Component::Kwok => &[Program {
                package: "sigs.k8s.io/kwok/cmd/kwok",
                binary: "kwok",
            }],
            Component::Helm => &[Program {
                package: "helm.sh/helm/v3/cmd/helm",
                binary: "helm",
            }],
            Component::Crossplane => &[Program {
                package: "github.com/crossplane/crossplane/v2/cmd/crossplane",
                binary: "crossplane",
            }],
            Component::CrossplaneCli => &[Program {
                package: "github.com/crossplane/cli/v2/cmd/crossplane",
                binary: "crossplane",
            }],
        }
    }

    /// The version to pin the modules that the component's own go.mod replaces with a path inside
    /// its repository (`=> ./staging/src/k8s.io/api`, `=> ../api`): those paths do not exist in
    /// the module the proxy serves, so the wrapper replaces each with its published tag.
    /// Kubernetes publishes its staging modules as v0.MINOR.PATCH of the release (k8s.io/api
    /// v0.37.2 belongs to v1.37.2); etcd tags its modules with the release's own version.
    pub fn published_tag_of_local_modules(self, version: &str) -> String {
        match self {
            Component::Kubernetes => {
                let (_, minor, patch) = parse_semver(version).unwrap_or((1, 0, 0));
                format!("v0.{minor}.{patch}")
            }
            Component::Etcd
            | Component::Etcdutl
            | Component::Kwok
            | Component::Helm
            | Component::Crossplane
            | Component::CrossplaneCli => version.to_string(),
        }
    }

    /// The arguments that make a built program print its version.
    pub fn version_args(self) -> &'static [&'static str] {
        match self {
            Component::Helm => &["version", "--short"],
            Component::Crossplane => &["--version"],
            Component::CrossplaneCli => &["version", "--client"],
            _ => &["--version"],
        }
    }

    /// `-ldflags` for `go build`: stripped (-s -w), and the version the programs report. Without
    /// the gitVersion a kube-apiserver built from the module says `v0.0.0-master+$Format:%H$`,
    /// which kubectl fails to parse; etcd's version is a constant in its source. `required` is
    /// what the component's go.mod requires (module → version).
    pub fn ldflags(self, version: &str, required: &BTreeMap<String, String>) -> String {
        let mut flags = vec!["-s".to_string(), "-w".to_string()];
        match self {
            Component::Kubernetes => {
                let (major, minor, _) = parse_semver(version).unwrap_or((0, 0, 0));
                let pkg = "k8s.io/component-base/version";
                flags.push(format!("-X {pkg}.gitVersion={version}"));
                flags.push(format!("-X {pkg}.gitMajor={major}"));
                flags.push(format!("-X {pkg}.gitMinor={minor}"));
                flags.push(format!("-X {pkg}.gitTreeState=clean"));
            }
            Component::Etcd | Component::Etcdutl => {}
            Component::Kwok => {
                let bare = version.trim_start_matches('v');
                flags.push(format!("-X sigs.k8s.io/kwok/pkg/consts.Version={bare}"));
            }
            // What helm's own Makefile sets: the version `helm version` reports, and the
            // Kubernetes version that `helm template` and `helm lint` assume without a cluster
            // (`.Capabilities.KubeVersion`, a chart's `kubeVersion`), 1.MINOR of the client-go
            // v0.MINOR.x helm is built with; left unset it is 1.20.
            Component::Helm => {
                flags.push(format!(
                    "-X helm.sh/helm/v3/internal/version.version={version}"
                ));
                let client_go = required.get("k8s.io/client-go").map(|v| v.as_str());
                if let Some((0, minor, _)) = client_go.and_then(parse_semver) {
                    for package in ["pkg/lint/rules", "pkg/chartutil"] {
                        let var = format!("helm.sh/helm/v3/{package}");
                        flags.push(format!("-X {var}.k8sVersionMajor=1"));
                        flags.push(format!("-X {var}.k8sVersionMinor={minor}"));
                    }
                }
            }
            // What both modules' nix builds set: the version `crossplane version` reports.
            Component::Crossplane | Component::CrossplaneCli => flags.push(format!(
                "-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version={version}"
            )),
        }
        flags.join(" ")
    }
}

/// `v1.37.2` → (1, 37, 2); anything else (pre-releases included) → None.
pub fn parse_semver(version: &str) -> Option<(u64, u64, u64)> {
    let mut parts = version.strip_prefix('v')?.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_file_parses_and_meets_the_issue_floor() {
        let v = Versions::pinned();
        let (major, minor, _) = parse_semver(&v.kubernetes).unwrap();
        assert!(
            major == 1 && minor >= 34,
            "kubernetes {} is older than 1.34",
            v.kubernetes
        );
        let (major, minor, _) = parse_semver(&v.etcd).unwrap();
        assert!(
            major == 3 && minor >= 6,
            "etcd {} is older than 3.6",
            v.etcd
        );
        // etcd's floor for leaving 3.5 for 3.6 (blog of 2025-12-21): the upgrade test's middle step.
        let (major, minor, patch) = parse_semver(&v.etcd_upgrade_from).unwrap();
        assert_eq!((major, minor), (3, 5), "{}", v.etcd_upgrade_from);
        assert!(patch >= 26, "{} is below 3.5.26", v.etcd_upgrade_from);
    }

    #[test]
    fn a_version_that_is_not_semver_is_refused() {
        let err = Versions::parse(
            "kubernetes: v1.37\netcd: v3.6.16\nkwok: v0.8.0\netcd_upgrade_from: v3.5.35\nhelm: v3.22.0\ncrossplane: v2.3.4\ncrossplane_cli: v2.5.0\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("kubernetes"), "{err}");
        assert!(Versions::parse("kubernetes: v1.37.2\netcd: v3.6.16\n").is_err());
    }

    #[test]
    fn staging_modules_take_the_v0_tag_of_the_release() {
        assert_eq!(
            Component::Kubernetes.published_tag_of_local_modules("v1.37.2"),
            "v0.37.2"
        );
        assert_eq!(
            Component::Etcd.published_tag_of_local_modules("v3.6.16"),
            "v3.6.16"
        );
    }

    #[test]
    fn helm_assumes_the_kubernetes_of_its_client_go() {
        let required = BTreeMap::from([("k8s.io/client-go".to_owned(), "v0.37.0".to_owned())]);
        let flags = Component::Helm.ldflags("v3.22.0", &required);
        assert!(flags.contains("-X helm.sh/helm/v3/internal/version.version=v3.22.0"));
        assert!(flags.contains("-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 "));
        assert!(flags.contains("-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37"));
        assert!(flags.contains("-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37"));
    }

    #[test]
    fn kubernetes_reports_its_real_version() {
        let flags = Component::Kubernetes.ldflags("v1.37.2", &BTreeMap::new());
        assert!(flags.starts_with("-s -w "));
        assert!(flags.contains("-X k8s.io/component-base/version.gitVersion=v1.37.2"));
        assert!(flags.contains("version.gitMajor=1 "));
        assert!(flags.contains("version.gitMinor=37 "));
    }
}
