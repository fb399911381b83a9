//! Runs the Go SDK check (`tests/gosdk`, a Go module pinning the official SDKs) on captured
//! answers: `go run` with the default module cache and GOCACHE, so a warm machine compiles
//! nothing. `go` is looked up on PATH and at `/usr/local/go/bin/go` (where `.ci/run` finds it);
//! without it the test fails saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

/// The Go toolchain: `go` on PATH, else `/usr/local/go/bin/go`.
fn go_binary() -> PathBuf {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("go"))
            .find(|candidate| candidate.is_file())
    });
    let fallback = Path::new("/usr/local/go/bin/go");
    on_path
        .or_else(|| fallback.is_file().then(|| fallback.to_path_buf()))
        .expect(
            "go (1.26+) is on neither PATH nor /usr/local/go/bin/go: the Go SDK check runs \
             `go run` on providers/alibaba/mock/tests/gosdk; install Go to run it",
        )
}

/// Checks `answers` (a list of `{"api", "action", "body"}`) and returns the checker's report:
/// `models` (the "API/Action" keys of its table), `answers` (per answer, its `problems`, each
/// with `path`, `kind` and `detail`) and `never_filled`.
pub fn check(answers: &[Value]) -> Value {
    let dir = tempfile::tempdir().expect("temporary directory");
    let input = dir.path().join("answers.json");
    std::fs::write(&input, serde_json::to_vec(answers).expect("answers encode"))
        .expect("answers written");
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gosdk");
    let started = Instant::now();
    let out = Command::new(go_binary())
        .args(["run", "-mod=readonly", "."])
        .arg(&input)
        .current_dir(&module)
        .output()
        .expect("go runs");
    eprintln!(
        "the Go SDK check took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "the Go SDK check failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the Go SDK check's report is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
