//! The crate's one error type: each variant says what failed and where to look next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Versions(String),

    #[error(
        "`go` was not found on PATH: the real control plane is built from Go modules, which needs Go 1.26 or later"
    )]
    GoMissing,

    #[error("{0}")]
    Build(Box<BuildFailure>),

    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },

    #[error("generating certificates: {0}")]
    Certificates(#[from] rcgen::Error),

    #[error("{name} exited while starting ({status}); last lines of {}:\n{tail}", log.display())]
    Exited {
        name: &'static str,
        status: String,
        log: PathBuf,
        tail: String,
    },

    #[error("{what} was not ready after {seconds} s; its log is {}", log.display())]
    NotReady {
        what: String,
        seconds: u64,
        log: PathBuf,
    },

    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),

    #[error("kubeconfig: {0}")]
    Kubeconfig(String),

    #[error("{0}")]
    Dir(String),

    /// Crossplane core, its CRDs or the composition function did not come up.
    #[error("crossplane: {0}")]
    Crossplane(String),
}

/// Which `go` command failed while building a component, and the end of its log.
#[derive(Debug)]
pub struct BuildFailure {
    pub component: &'static str,
    pub version: String,
    pub command: String,
    pub status: String,
    pub log: PathBuf,
    pub tail: String,
}

impl std::fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "building {} {} failed: `{}` {}; last lines of {}:\n{}",
            self.component,
            self.version,
            self.command,
            self.status,
            self.log.display(),
            self.tail
        )
    }
}

impl Error {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let what = what.into();
        move |source| Error::Io { what, source }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The last `lines` lines of a log file, for error messages ("" when it cannot be read).
pub(crate) fn tail(path: &std::path::Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
