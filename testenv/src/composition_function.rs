//! The composition function of the Crossplane tests: a small Go program of this crate
//! (`composition-function/`, written with `github.com/crossplane/function-sdk-go`), a test
//! fixture and not part of the product. It composes a VPC, a VSwitch, a SecurityGroup and an
//! ECSInstance from an XR's spec (its `main.go` says how). Its source is compiled into this
//! crate, so a program built from any checkout finds it; it is built once per content of that
//! source into `<cache>/composition-function-<hash>/`, like the pinned components.

use std::fs::{self, File};
use std::path::PathBuf;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::builder::{Builder, GoRunner, human, say};
use crate::error::{Error, Result};

/// The fixture's files: (name, content).
const SOURCE: [(&str, &str); 3] = [
    ("go.mod", include_str!("../composition-function/go.mod")),
    ("go.sum", include_str!("../composition-function/go.sum")),
    ("main.go", include_str!("../composition-function/main.go")),
];

const NAME: &str = "composition-function";
/// Written last beside the program: its presence means the build completed.
const DONE: &str = "BUILD-INFO";

/// The first 12 hex digits of the SHA-256 of the fixture's files, names included.
pub fn source_hash() -> String {
    let mut hash = Sha256::new();
    for (name, text) in SOURCE {
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update(text.as_bytes());
        hash.update([0]);
    }
    hash.finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Builder {
    /// The composition function's program, built first when missing (about 2 minutes with a
    /// cold Go cache on 2 cores: function-sdk-go brings gRPC and Kubernetes' apimachinery).
    pub fn ensure_composition_function(&self) -> Result<PathBuf> {
        let version = source_hash();
        let dir = self.cache_dir().join(format!("{NAME}-{version}"));
        let program = dir.join(NAME);
        if dir.join(DONE).is_file() {
            return Ok(program);
        }
        let _lock = self.lock()?;
        if dir.join(DONE).is_file() {
            return Ok(program);
        }
        let started = Instant::now();
        let work = self
            .cache_dir()
            .join("build")
            .join(format!("{NAME}-{version}"));
        let partial = self.cache_dir().join(format!("{NAME}-{version}.partial"));
        for d in [&work, &partial] {
            if d.exists() {
                fs::remove_dir_all(d).map_err(Error::io(format!("removing {}", d.display())))?;
            }
            fs::create_dir_all(d).map_err(Error::io(format!("creating {}", d.display())))?;
        }
        for (name, text) in SOURCE {
            fs::write(work.join(name), text).map_err(Error::io(format!("writing {name}")))?;
        }
        let log = work.join("build.log");
        File::create(&log).map_err(Error::io(format!("creating {}", log.display())))?;
        say(&format!(
            "building the composition function (testenv/composition-function, {version}) into {}, once; log: {}",
            dir.display(),
            log.display()
        ));
        let out = partial.join(NAME).to_string_lossy().into_owned();
        GoRunner {
            component: NAME,
            version: &version,
            cwd: &work,
            log: &log,
        }
        // -mod=readonly: the go.sum of the fixture is complete; nothing is resolved anew.
        .run(&[
            "build",
            "-mod=readonly",
            "-trimpath",
            "-buildvcs=false",
            "-ldflags",
            "-s -w",
            "-o",
            &out,
            ".",
        ])?;
        fs::write(
            partial.join(DONE),
            format!(
                "source: {version}\nbuilt in: {}\n",
                human(started.elapsed())
            ),
        )
        .map_err(Error::io("writing BUILD-INFO"))?;
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(Error::io(format!("removing {}", dir.display())))?;
        }
        fs::rename(&partial, &dir).map_err(Error::io(format!("renaming to {}", dir.display())))?;
        say(&format!(
            "composition function ready in {}",
            human(started.elapsed())
        ));
        Ok(program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_follows_the_source() {
        let key = source_hash();
        assert_eq!(key.len(), 12);
        assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(key, source_hash());
    }
}
