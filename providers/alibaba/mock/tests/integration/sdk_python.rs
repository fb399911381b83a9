//! The Python interpreter with Alibaba Cloud's official SDKs, for `mock_official_sdk`:
//! `$FERROPLANE_SDK_PYTHON` when set, else the virtual environment at `$FERROPLANE_SDK_VENV`
//! (by default `~/.cache/ferroplane/sdk-venv`), made when its interpreter cannot import the SDKs
//! the way `.ci/run` makes it (`python3 -m venv`, then `pip install`). Making it is guarded by a
//! lock file beside the environment, so that test binaries running at once do not race; the
//! second one waits, then finds the SDKs there.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The modules the script imports.
const SDK_MODULES: &str = "aliyunsdkcore, aliyunsdkecs, aliyunsdkvpc, alibabacloud_ecs20140526";

/// The packages that provide them.
const SDK_PACKAGES: &[&str] = &[
    "aliyun-python-sdk-core",
    "aliyun-python-sdk-ecs",
    "aliyun-python-sdk-vpc",
    "alibabacloud_ecs20140526",
];

/// Why no interpreter with the SDKs could be had.
#[derive(Debug, thiserror::Error)]
pub enum SdkPythonError {
    #[error("neither FERROPLANE_SDK_VENV nor HOME is set: no place for the SDK venv")]
    NoVenvPlace,
    #[error("cannot prepare {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` failed ({status}):\n{stderr}")]
    Failed {
        command: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    #[error("{python} still cannot import {SDK_MODULES} after installing {SDK_PACKAGES:?}")]
    StillMissing { python: PathBuf },
}

/// The interpreter to run the official-SDK script with; makes the venv when it lacks the SDKs.
pub fn sdk_python() -> Result<PathBuf, SdkPythonError> {
    if let Some(python) = std::env::var_os("FERROPLANE_SDK_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    let venv = match std::env::var_os("FERROPLANE_SDK_VENV") {
        Some(venv) => PathBuf::from(venv),
        None => PathBuf::from(
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .ok_or(SdkPythonError::NoVenvPlace)?,
        )
        .join(".cache/ferroplane/sdk-venv"),
    };
    let python = venv.join("bin/python");
    if imports_sdks(&python) {
        return Ok(python);
    }
    let parent = venv.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|source| SdkPythonError::Io {
        path: parent.to_owned(),
        source,
    })?;
    let lock_path = venv.with_extension("lock");
    let lock = File::create(&lock_path).map_err(|source| SdkPythonError::Io {
        path: lock_path.clone(),
        source,
    })?;
    lock.lock().map_err(|source| SdkPythonError::Io {
        path: lock_path,
        source,
    })?;
    // Another test binary may have made it while this one waited for the lock.
    if !imports_sdks(&python) {
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        run(Command::new(venv.join("bin/pip"))
            .args(["install", "-q"])
            .args(SDK_PACKAGES))?;
        if !imports_sdks(&python) {
            return Err(SdkPythonError::StillMissing { python });
        }
    }
    Ok(python)
}

/// Whether `python` runs and imports every SDK module.
fn imports_sdks(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {SDK_MODULES}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs `command` to its end; an error when it cannot start or fails.
fn run(command: &mut Command) -> Result<(), SdkPythonError> {
    let shown = format!("{command:?}");
    let output = command.output().map_err(|source| SdkPythonError::Spawn {
        command: shown.clone(),
        source,
    })?;
    if !output.status.success() {
        return Err(SdkPythonError::Failed {
            command: shown,
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(())
}
