//! Builds the control plane's programs from their Go modules, once per pinned version.
//!
//! For each component: `go mod download -json MODULE@VERSION` fetches it and names its go.mod;
//! a wrapper module (see `gomod`) is written into `<cache>/build/<component>-<version>/`; `go
//! build` writes the programs into `<cache>/<component>-<version>/`, which is only renamed into
//! place once complete. A present directory is reused as it is; a lock file keeps two processes
//! (two test binaries, a test and `ferroplane-testenv build`) from building the same thing twice.
//! From empty Go caches all three components took 10 min 43 s on 2 cores; with Go's build cache
//! warm, seconds.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::error::{BuildFailure, Error, Result, tail};
use crate::gomod;
use crate::versions::{Component, Versions, parse_semver};

/// kwok's own Stage definitions that make its nodes Ready, keep their Leases fresh, and move
/// pods bound to them to Running (and away once deleted), read from the kwok module at the pinned
/// version: the same set kwokctl configures by default.
const KWOK_STAGES: [&str; 5] = [
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
];

/// The stage a control plane drops from the set above: kwok's `pod-complete` marks every pod of a
/// Job Succeeded without running anything, which would pass a Job that a real kubelet fails (a
/// restore that could not fetch its snapshot, say). Job pods stay Running until something plays
/// their kubelet ([`crate::etcd_members`] does for the pods it knows how to run).
pub const KWOK_DROPPED_STAGE: &str = "pod-complete";

/// `stages` (YAML documents separated by `---` lines) without the Stage named `name`.
pub fn stages_without(stages: &str, name: &str) -> String {
    let wanted = format!("name: {name}");
    stages
        .split("\n---\n")
        .filter(|doc| !doc.lines().any(|l| l.trim() == wanted))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The file, beside the kwok binary, that holds the stages above.
pub const KWOK_STAGES_FILE: &str = "kwok-stages.yaml";

/// The directory, beside the `crossplane` core binary, that holds the CRDs of its module
/// (`cluster/crds`), which a control plane needs before core starts.
pub const CROSSPLANE_CRDS_DIR: &str = "crds";

/// Written last into a component's directory: its presence means the build completed.
const BUILD_INFO: &str = "BUILD-INFO";

/// Paths of every program the control plane runs.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub kube_apiserver: PathBuf,
    pub kube_controller_manager: PathBuf,
    pub kube_scheduler: PathBuf,
    pub etcd: PathBuf,
    pub kwok: PathBuf,
    pub kwok_stages: PathBuf,
}

/// Builds and finds the programs under one cache directory.
#[derive(Debug, Clone)]
pub struct Builder {
    cache: PathBuf,
    versions: Versions,
}

impl Builder {
    /// A builder for the pinned versions; `cache` defaults to [`Builder::default_cache_dir`].
    pub fn new(cache: Option<PathBuf>) -> Self {
        Self {
            cache: cache.unwrap_or_else(Self::default_cache_dir),
            versions: Versions::pinned(),
        }
    }

    /// `$FERROPLANE_TESTENV_CACHE`, else `$XDG_CACHE_HOME/ferroplane/testenv`, else
    /// `~/.cache/ferroplane/testenv`.
    pub fn default_cache_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("FERROPLANE_TESTENV_CACHE").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("ferroplane").join("testenv")
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    pub fn versions(&self) -> &Versions {
        &self.versions
    }

    /// Where a component's programs live once built.
    pub fn component_dir(&self, c: Component) -> PathBuf {
        self.component_dir_at(c, self.versions.of(c))
    }

    fn component_dir_at(&self, c: Component, version: &str) -> PathBuf {
        self.cache.join(format!("{}-{version}", c.name()))
    }

    pub fn is_built(&self, c: Component) -> bool {
        self.is_built_at(c, self.versions.of(c))
    }

    fn is_built_at(&self, c: Component, version: &str) -> bool {
        self.component_dir_at(c, version).join(BUILD_INFO).is_file()
    }

    /// The `etcd` program of any release `vMAJOR.MINOR.PATCH` (an EtcdCluster member's
    /// version), built from `go.etcd.io/etcd/server/v3` first when missing and cached like the
    /// pinned components.
    pub fn ensure_etcd(&self, version: &str) -> Result<PathBuf> {
        if parse_semver(version).is_none() {
            return Err(Error::Versions(format!(
                "etcd version {version:?} is not vMAJOR.MINOR.PATCH"
            )));
        }
        Ok(self.ensure_at(Component::Etcd, version)?.join("etcd"))
    }

    /// The `etcdutl` program of etcd release `vMAJOR.MINOR.PATCH` (3.5 or later, where the
    /// offline commands such as `snapshot restore` moved out of etcdctl), built from
    /// `go.etcd.io/etcd/etcdutl/v3` first when missing.
    pub fn ensure_etcdutl(&self, version: &str) -> Result<PathBuf> {
        if parse_semver(version).is_none_or(|(major, minor, _)| (major, minor) < (3, 5)) {
            return Err(Error::Versions(format!(
                "etcdutl version {version:?} is not v3.5.0 or later"
            )));
        }
        Ok(self.ensure_at(Component::Etcdutl, version)?.join("etcdutl"))
    }

    /// The `helm` program of the pinned version (`helm.sh/helm/v3`), built first when missing.
    pub fn ensure_helm(&self) -> Result<PathBuf> {
        Ok(self.ensure(Component::Helm)?.join("helm"))
    }

    /// Crossplane core of the pinned version, built first when missing: the `crossplane` binary
    /// and the directory of its CRDs ([`CROSSPLANE_CRDS_DIR`]).
    pub fn ensure_crossplane(&self) -> Result<(PathBuf, PathBuf)> {
        let dir = self.ensure(Component::Crossplane)?;
        Ok((dir.join("crossplane"), dir.join(CROSSPLANE_CRDS_DIR)))
    }

    /// The Crossplane CLI of the pinned version, built first when missing.
    pub fn ensure_crossplane_cli(&self) -> Result<PathBuf> {
        Ok(self.ensure(Component::CrossplaneCli)?.join("crossplane"))
    }

    /// The programs, building whatever is missing first.
    pub fn ensure_all(&self) -> Result<Binaries> {
        for c in Component::ALL {
            self.ensure(c)?;
        }
        let k = self.component_dir(Component::Kubernetes);
        let kwok = self.component_dir(Component::Kwok);
        Ok(Binaries {
            kube_apiserver: k.join("kube-apiserver"),
            kube_controller_manager: k.join("kube-controller-manager"),
            kube_scheduler: k.join("kube-scheduler"),
            etcd: self.component_dir(Component::Etcd).join("etcd"),
            kwok: kwok.join("kwok"),
            kwok_stages: kwok.join(KWOK_STAGES_FILE),
        })
    }

    /// The component's directory, built first when missing.
    pub fn ensure(&self, c: Component) -> Result<PathBuf> {
        self.ensure_at(c, self.versions.of(c))
    }

    fn ensure_at(&self, c: Component, version: &str) -> Result<PathBuf> {
        let dir = self.component_dir_at(c, version);
        if self.is_built_at(c, version) {
            return Ok(dir);
        }
        let _lock = self.lock()?;
        // Another process may have finished it while this one waited.
        if self.is_built_at(c, version) {
            return Ok(dir);
        }
        self.build(c, version)?;
        Ok(dir)
    }

    /// Holds the cache's build lock (waiting for another process that holds it) until dropped.
    pub(crate) fn lock(&self) -> Result<File> {
        fs::create_dir_all(&self.cache)
            .map_err(Error::io(format!("creating {}", self.cache.display())))?;
        let lock_path = self.cache.join(".build.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(Error::io(format!("opening {}", lock_path.display())))?;
        if lock.try_lock().is_err() {
            say(&format!(
                "waiting for another process that is building into {}",
                self.cache.display()
            ));
            lock.lock()
                .map_err(Error::io(format!("locking {}", lock_path.display())))?;
        }
        Ok(lock)
    }

    fn build(&self, c: Component, version: &str) -> Result<()> {
        let version = version.to_owned();
        let started = Instant::now();
        let work = self
            .cache
            .join("build")
            .join(format!("{}-{version}", c.name()));
        let partial = self.cache.join(format!("{}-{version}.partial", c.name()));
        let final_dir = self.component_dir_at(c, &version);
        for d in [&partial, &final_dir] {
            if d.exists() {
                fs::remove_dir_all(d).map_err(Error::io(format!("removing {}", d.display())))?;
            }
        }
        fs::create_dir_all(&work).map_err(Error::io(format!("creating {}", work.display())))?;
        fs::create_dir_all(&partial)
            .map_err(Error::io(format!("creating {}", partial.display())))?;
        let log = work.join("build.log");
        File::create(&log).map_err(Error::io(format!("creating {}", log.display())))?;
        let programs: Vec<&str> = c.programs().iter().map(|p| p.binary).collect();
        let expect = match c {
            Component::Kubernetes => "about 8 minutes on 2 cores with a cold Go cache",
            Component::Etcd | Component::Etcdutl => {
                "about a minute on 2 cores with a cold Go cache"
            }
            Component::Kwok | Component::Helm => "about 2 minutes on 2 cores with a cold Go cache",
            Component::Crossplane | Component::CrossplaneCli => {
                "about 6 minutes on 2 cores with a cold Go cache"
            }
        };
        say(&format!(
            "building {} {version} ({}) from the Go module proxy into {}, once: {expect}; log: {}",
            c.module(),
            programs.join(", "),
            final_dir.display(),
            log.display()
        ));

        let go = GoRunner {
            component: c.name(),
            version: &version,
            cwd: &work,
            log: &log,
        };
        // A go.mod left by an interrupted build would make the download run inside it.
        let _ = fs::remove_file(work.join("go.mod"));
        let module = go.download(c.module(), &version)?;
        let facts = write_wrapper(c, &version, &module.go_mod, &work.join("go.mod"))?;

        let ldflags = c.ldflags(&version, &facts.required);
        let mut reported = Vec::new();
        for p in c.programs() {
            let t = Instant::now();
            let out = partial.join(p.binary);
            let out_arg = out.to_string_lossy().into_owned();
            go.run(&[
                "build",
                "-mod=mod",
                "-trimpath",
                "-buildvcs=false",
                "-ldflags",
                &ldflags,
                "-o",
                &out_arg,
                p.package,
            ])?;
            let reports = version_of(&out, c.version_args());
            say(&format!(
                "built {} in {} ({})",
                p.binary,
                human(t.elapsed()),
                reports.as_deref().unwrap_or("no version output")
            ));
            reported.push(format!("{}: {}", p.binary, reports.unwrap_or_default()));
        }

        if c == Component::Kwok {
            write_kwok_stages(&module.dir, &partial.join(KWOK_STAGES_FILE))?;
        }
        if c == Component::Crossplane {
            copy_crds(
                &module.dir.join("cluster").join("crds"),
                &partial.join(CROSSPLANE_CRDS_DIR),
            )?;
        }

        let info = format!(
            "module: {} {version}\nldflags: {ldflags}\nbuilt in: {}\n{}\n",
            c.module(),
            human(started.elapsed()),
            reported.join("\n")
        );
        fs::write(partial.join(BUILD_INFO), info).map_err(Error::io("writing BUILD-INFO"))?;
        fs::rename(&partial, &final_dir).map_err(Error::io(format!(
            "renaming {} to {}",
            partial.display(),
            final_dir.display()
        )))?;
        say(&format!(
            "{} {version} ready in {}",
            c.name(),
            human(started.elapsed())
        ));
        Ok(())
    }
}

/// Writes the wrapper module that builds `c` (see `gomod`), from the component's own go.mod,
/// and returns what that go.mod says.
fn write_wrapper(
    c: Component,
    version: &str,
    component_go_mod: &Path,
    out: &Path,
) -> Result<gomod::GoModFacts> {
    let text = fs::read_to_string(component_go_mod)
        .map_err(Error::io(format!("reading {}", component_go_mod.display())))?;
    let facts = gomod::parse_go_mod(&text);
    let wrapper = gomod::wrapper_go_mod(
        &format!("ferroplane.invalid/testenv/{}", c.name()),
        facts.go.as_deref(),
        c.module(),
        version,
        &facts,
        &c.published_tag_of_local_modules(version),
    );
    fs::write(out, wrapper).map_err(Error::io(format!("writing {}", out.display())))?;
    Ok(facts)
}

/// Gathers kwok's stages from its module into one `--config` file.
fn write_kwok_stages(module_dir: &Path, out: &Path) -> Result<()> {
    let mut stages = String::new();
    for rel in KWOK_STAGES {
        let path = module_dir.join(rel);
        let text = fs::read_to_string(&path).map_err(Error::io(format!(
            "reading kwok's stage {}",
            path.display()
        )))?;
        stages.push_str("---\n");
        stages.push_str(&text);
        if !text.ends_with('\n') {
            stages.push('\n');
        }
    }
    fs::write(out, stages).map_err(Error::io("writing kwok's stages"))
}

/// Copies the YAML files of core's `cluster/crds` (read-only in Go's module cache, which may be
/// emptied later) beside the binary.
fn copy_crds(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).map_err(Error::io(format!("creating {}", to.display())))?;
    let entries = fs::read_dir(from).map_err(Error::io(format!("reading {}", from.display())))?;
    for entry in entries {
        let path = entry.map_err(Error::io("listing core's CRDs"))?.path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = fs::read(&path).map_err(Error::io(format!("reading {}", path.display())))?;
            let name = path.file_name().unwrap_or_default();
            fs::write(to.join(name), text).map_err(Error::io("writing core's CRDs"))?;
        }
    }
    Ok(())
}

/// What `go mod download -json` says about one module.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Downloaded {
    go_mod: Option<PathBuf>,
    dir: Option<PathBuf>,
    error: Option<String>,
}

struct Module {
    go_mod: PathBuf,
    dir: PathBuf,
}

/// Runs `go` for one component's build, its output appended to the build log.
pub(crate) struct GoRunner<'a> {
    pub(crate) component: &'static str,
    pub(crate) version: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) log: &'a Path,
}

impl GoRunner<'_> {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("go");
        cmd.args(args)
            .current_dir(self.cwd)
            // The machine's Go builds it or the build fails: no toolchain download.
            .env("GOTOOLCHAIN", "local")
            // Static programs, and no C compiler needed.
            .env("CGO_ENABLED", "0")
            .env("GOWORK", "off")
            // The user's GOFLAGS would apply to the wrapper; the flags needed are on the line.
            .env("GOFLAGS", "");
        // `up` stopped by a signal while building leaves no `go` behind: the thread that waits
        // for it ends with the process.
        crate::process::die_with_starting_thread(&mut cmd);
        cmd
    }

    fn download(&self, module: &str, version: &str) -> Result<Module> {
        let spec = format!("{module}@{version}");
        let args = ["mod", "download", "-json", &spec];
        let out = self
            .command(&args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.spawn_error(e))?;
        self.append_log(&args, &out.stderr);
        let parsed: Option<Downloaded> = serde_json::from_slice(&out.stdout).ok();
        match parsed {
            Some(Downloaded {
                go_mod: Some(go_mod),
                dir: Some(dir),
                error: None,
            }) if out.status.success() => Ok(Module { go_mod, dir }),
            other => {
                let detail = other
                    .and_then(|d| d.error)
                    .unwrap_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned());
                if let Ok(mut f) = OpenOptions::new().append(true).open(self.log) {
                    let _ = writeln!(f, "{detail}");
                }
                Err(self.failed(&args, &out.status.to_string()))
            }
        }
    }

    pub(crate) fn run(&self, args: &[&str]) -> Result<()> {
        let log = OpenOptions::new()
            .append(true)
            .open(self.log)
            .map_err(Error::io(format!("opening {}", self.log.display())))?;
        self.append_log(args, b"");
        let status = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(Error::io("log file"))?)
            .stderr(log)
            .status()
            .map_err(|e| self.spawn_error(e))?;
        if status.success() {
            Ok(())
        } else {
            Err(self.failed(args, &status.to_string()))
        }
    }

    /// Writes the command line, then what it printed (if it was captured rather than streamed).
    fn append_log(&self, args: &[&str], output: &[u8]) {
        if let Ok(mut f) = OpenOptions::new().append(true).open(self.log) {
            let _ = writeln!(f, "$ go {}", args.join(" "));
            let _ = f.write_all(output);
        }
    }

    fn spawn_error(&self, e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::GoMissing
        } else {
            Error::io("running go")(e)
        }
    }

    fn failed(&self, args: &[&str], status: &str) -> Error {
        Error::Build(Box::new(BuildFailure {
            component: self.component,
            version: self.version.to_string(),
            command: format!("go {}", args.join(" ")),
            status: status.to_string(),
            log: self.log.to_path_buf(),
            tail: tail(self.log, 30),
        }))
    }
}

/// The first line a built program prints when asked its version, as a check that it runs.
fn version_of(binary: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(binary)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(|l| l.trim().to_string())
}

/// Progress of a build goes straight to stderr, uncaptured by the test harness, so that a test
/// run that is building for minutes says why.
pub(crate) fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "ferroplane-testenv: {msg}");
}

pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        format!("{}m{:02}s", (s / 60.0) as u64, (s as u64) % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_is_dropped_by_name_only() {
        let stages = "kind: Stage\nmetadata:\n  name: pod-ready\n---\nkind: Stage\nmetadata:\n  name: pod-complete\nspec: {}\n---\nkind: Stage\nmetadata:\n  name: pod-delete\n";
        let kept = stages_without(stages, "pod-complete");
        assert!(kept.contains("name: pod-ready") && kept.contains("name: pod-delete"));
        assert!(!kept.contains("pod-complete"));
        assert_eq!(stages_without(stages, "absent"), stages);
    }

    #[test]
    fn each_component_is_cached_under_its_pinned_version() {
        let b = Builder::new(Some(PathBuf::from("/c")));
        let v = b.versions().clone();
        assert_eq!(
            b.component_dir(Component::Kubernetes),
            PathBuf::from(format!("/c/kubernetes-{}", v.kubernetes))
        );
        assert_eq!(
            b.component_dir(Component::Etcd),
            PathBuf::from(format!("/c/etcd-{}", v.etcd))
        );
    }

    #[test]
    fn durations_read_like_a_person_writes_them() {
        assert_eq!(human(Duration::from_millis(12_340)), "12.3 s");
        assert_eq!(human(Duration::from_secs(13 * 60 + 5)), "13m05s");
    }
}
