//! How the CLI finds a running `ferroplane sandbox`'s ECS mock: the sandbox writes
//! `DIR/cloud-access.json` (its `--dir`, `.ferroplane` by default; readable by its owner only)
//! with the mock's endpoint and access key, and removes it when it stops; `ferroplane ecs call`,
//! `cloud call` and `import` read it when the environment has no `ALIBABA_CLOUD_ACCESS_KEY_ID`
//! and no `--endpoint` is given. `FERROPLANE_SANDBOX_DIR` names another directory. The key
//! secret is never printed: `Debug` shows it redacted.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The file's name in the sandbox's directory.
pub const FILE_NAME: &str = "cloud-access.json";
/// The environment variable that names the sandbox's directory.
pub const DIR_VARIABLE: &str = "FERROPLANE_SANDBOX_DIR";
/// The sandbox's directory when nothing else is said (as `ferroplane sandbox --dir`).
pub const DEFAULT_DIR: &str = ".ferroplane";

/// The mock's endpoint and key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxAccess {
    pub endpoint: String,
    pub access_key_id: String,
    pub access_key_secret: String,
}

impl std::fmt::Debug for SandboxAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxAccess")
            .field("endpoint", &self.endpoint)
            .field("access_key_id", &self.access_key_id)
            .field("access_key_secret", &"<redacted>")
            .finish()
    }
}

/// The directory the CLI looks in: `$FERROPLANE_SANDBOX_DIR`, else `.ferroplane`.
pub fn default_dir() -> PathBuf {
    std::env::var_os(DIR_VARIABLE).map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from)
}

impl SandboxAccess {
    /// Writes the file into `dir`, readable and writable by its owner only.
    pub fn write(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let path = dir.join(FILE_NAME);
        let _ = std::fs::remove_file(&path);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let text =
            serde_json::to_string_pretty(self).context("cannot encode the sandbox access")?;
        file.write_all(text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }

    /// The file in `dir`, if there is one.
    pub fn read(dir: &Path) -> anyhow::Result<Option<Self>> {
        let path = dir.join(FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .with_context(|| format!("{} is not a sandbox access file", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Removes the file from `dir` (the sandbox, stopping).
    pub fn remove(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(FILE_NAME));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_for_the_owner_only_and_read_back_without_showing_the_secret() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(SandboxAccess::read(dir.path()).unwrap(), None);
        let access = SandboxAccess {
            endpoint: "http://127.0.0.1:1".into(),
            access_key_id: "LTAIx".into(),
            access_key_secret: "never-shown".into(),
        };
        let path = access.write(dir.path()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            SandboxAccess::read(dir.path()).unwrap(),
            Some(access.clone())
        );
        assert!(!format!("{access:?}").contains("never-shown"));
        SandboxAccess::remove(dir.path());
        assert_eq!(SandboxAccess::read(dir.path()).unwrap(), None);
    }
}
