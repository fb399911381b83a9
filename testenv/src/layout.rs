//! The control plane's directory D and what sits where in it: `kubeconfig` and `ready` for
//! whoever uses the control plane, `pki/`, `kubeconfigs/`, `logs/`, `etcd/` for the programs.
//! A start makes D or clears what an earlier start wrote there, and refuses a directory holding
//! anything else.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where a control plane keeps its files, all under one directory D.
#[derive(Debug, Clone)]
pub struct Layout {
    pub dir: PathBuf,
}

impl Layout {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }
    /// The admin's kubeconfig.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }
    /// Written once every component is healthy.
    pub fn ready(&self) -> PathBuf {
        self.dir.join("ready")
    }
    /// Marks D as a control plane's directory, so a later start may clear it.
    pub fn marker(&self) -> PathBuf {
        self.dir.join(".ferroplane-testenv")
    }
    pub fn pki(&self, file: &str) -> PathBuf {
        self.dir.join("pki").join(file)
    }
    pub fn etcd_data(&self) -> PathBuf {
        self.dir.join("etcd")
    }
    pub fn component_kubeconfig(&self, component: &str) -> PathBuf {
        self.dir
            .join("kubeconfigs")
            .join(format!("{component}.kubeconfig"))
    }
    pub fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> PathBuf {
        self.dir
            .join("serviceaccounts")
            .join(format!("{namespace}.{name}.kubeconfig"))
    }
    pub fn log(&self, program: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{program}.log"))
    }
    /// kwok's stages as this control plane runs them (see `builder::stages_without`).
    pub fn kwok_stages(&self) -> PathBuf {
        self.dir.join("kwok-stages.yaml")
    }
    /// Everything a start writes, for clearing a directory a previous run left.
    pub fn entries(&self) -> Vec<PathBuf> {
        [
            "kubeconfig",
            "ready",
            "pki",
            "etcd",
            "kubeconfigs",
            "serviceaccounts",
            "logs",
            "kwok-stages.yaml",
        ]
        .iter()
        .map(|e| self.dir.join(e))
        .collect()
    }
}

/// D, made or cleared; a directory with other files in it is refused rather than emptied.
pub fn prepare_dir(dir: Option<&Path>) -> Result<(Layout, Option<tempfile::TempDir>)> {
    let (layout, tempdir) = match dir {
        Some(d) => (Layout::new(d), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("ferroplane-testenv-")
                .tempdir()
                .map_err(Error::io("creating a temporary directory"))?;
            (Layout::new(t.path()), Some(t))
        }
    };
    let d = &layout.dir;
    let has_files = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some());
    if has_files {
        if !layout.marker().exists() {
            return Err(Error::Dir(format!(
                "{} is not empty and no control plane made it: give `--dir` a new or empty directory",
                d.display()
            )));
        }
        for entry in layout.entries() {
            if entry.is_dir() {
                std::fs::remove_dir_all(&entry)
            } else if entry.exists() {
                std::fs::remove_file(&entry)
            } else {
                Ok(())
            }
            .map_err(Error::io(format!("clearing {}", entry.display())))?;
        }
    }
    for sub in [
        d.join("pki"),
        d.join("kubeconfigs"),
        d.join("logs"),
        d.join("serviceaccounts"),
    ] {
        std::fs::create_dir_all(&sub).map_err(Error::io(format!("creating {}", sub.display())))?;
    }
    std::fs::write(
        layout.marker(),
        "made by ferroplane-testenv: `up --dir` clears what it wrote here before starting again\n",
    )
    .map_err(Error::io("writing the directory marker"))?;
    Ok((layout, tempdir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_with_foreign_files_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
        let err = prepare_dir(Some(t.path())).expect_err("refused");
        assert!(err.to_string().contains("not empty"), "{err}");
        assert!(t.path().join("notes.txt").exists());
    }

    #[test]
    fn a_directory_of_an_earlier_run_is_cleared() {
        let t = tempfile::tempdir().unwrap();
        prepare_dir(Some(t.path())).unwrap();
        std::fs::write(t.path().join("ready"), "{}").unwrap();
        prepare_dir(Some(t.path())).unwrap();
        assert!(!t.path().join("ready").exists());
        assert!(t.path().join("logs").is_dir());
    }
}
