//! The `etcd` program the real-etcd tests run: `FERROPLANE_ETCD_BIN` when set, else the release
//! pinned in testenv/versions.yaml, built from Go modules by ferroplane-testenv the first time
//! (and cached, like the real control plane that runs the same release). A test that needs etcd
//! therefore provisions it on a fresh machine, or fails saying why: it never skips.

use std::path::PathBuf;

use ferroplane_testenv::{Builder, Versions};

/// The etcd program, built first when missing (several minutes the first time on 2 cores; the
/// build is locked, so concurrent test binaries wait for one build). Panics with the builder's
/// error when it can be neither found nor built.
pub fn etcd_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("FERROPLANE_ETCD_BIN").map(PathBuf::from) {
        assert!(
            path.is_file(),
            "FERROPLANE_ETCD_BIN names {}, which is not a file; unset it to use the pinned etcd \
             that ferroplane-testenv builds",
            path.display()
        );
        return path;
    }
    let version = Versions::pinned().etcd;
    Builder::new(None)
        .ensure_etcd(&version)
        .unwrap_or_else(|e| {
            panic!(
                "etcd {version} could not be built from Go modules for the real-etcd tests \
             (ferroplane-testenv; needs Go 1.26+ and the Go module proxy): {e}"
            )
        })
}

/// etcd and etcdutl of release `version` (`vMAJOR.MINOR.PATCH`, 3.5 or later), built first when
/// missing, as [`etcd_binary`] does. Panics with the builder's error.
pub fn release_with_etcdutl(version: &str) -> (PathBuf, PathBuf) {
    let builder = Builder::new(None);
    let built = builder
        .ensure_etcd(version)
        .and_then(|etcd| Ok((etcd, builder.ensure_etcdutl(version)?)));
    built.unwrap_or_else(|e| {
        panic!(
            "etcd and etcdutl {version} could not be built from Go modules (ferroplane-testenv; \
             needs Go 1.26+ and the Go module proxy): {e}"
        )
    })
}

/// The latest 3.5 release testenv/versions.yaml pins (`etcd_upgrade_from`).
pub fn pinned_3_5_release() -> String {
    Versions::pinned().etcd_upgrade_from
}

/// The release testenv/versions.yaml pins for the control plane (`etcd`, a 3.6 release).
pub fn pinned_release() -> String {
    Versions::pinned().etcd
}
