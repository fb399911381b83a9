//! `ferroplane-testenv up --dir D` as a person runs it: D/ready and D/kubeconfig appear once the
//! control plane is healthy, SIGTERM stops every process, and when `up` itself is killed with
//! SIGKILL its children die with it. The programs are built first when missing.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferroplane_testenv::Builder;

/// How long a start may take once the programs are built (they are built before the clock runs).
const START: Duration = Duration::from_secs(240);
const STOP: Duration = Duration::from_secs(30);

#[test]
fn up_serves_until_sigterm_and_its_children_die_with_it() {
    Builder::new(None).ensure_all().expect("the programs build");

    // SIGTERM: a clean stop, exit code 0, D/ready removed, the API server's port closed.
    let dir = tempfile::tempdir().unwrap();
    let mut up = spawn_up(dir.path());
    let server = wait_ready(&mut up, dir.path());
    let nodes = kubectl(
        &dir.path().join("kubeconfig"),
        &["get", "nodes", "-o", "name"],
    );
    assert!(nodes.contains("node/fake-node-0"), "{nodes}");
    signal(&up, libc::SIGTERM);
    let status = wait_exit(&mut up);
    assert!(status.success(), "up exited with {status}");
    assert!(
        !dir.path().join("ready").exists(),
        "D/ready outlived the control plane"
    );
    assert_closed(&server);

    // SIGKILL: up cannot clean up, the kernel ends its children (PR_SET_PDEATHSIG).
    let dir = tempfile::tempdir().unwrap();
    let mut up = spawn_up(dir.path());
    let server = wait_ready(&mut up, dir.path());
    signal(&up, libc::SIGKILL);
    wait_exit(&mut up);
    assert_closed(&server);
}

struct Up {
    child: Child,
}

impl Drop for Up {
    fn drop(&mut self) {
        // A failed assertion must not leave a control plane behind: SIGTERM lets up stop its
        // children, and they would die with it anyway.
        if matches!(self.child.try_wait(), Ok(None)) {
            signal(self, libc::SIGTERM);
            let deadline = Instant::now() + STOP;
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn spawn_up(dir: &Path) -> Up {
    let child = Command::new(env!("CARGO_BIN_EXE_ferroplane-testenv"))
        .args(["up", "--dir"])
        .arg(dir)
        .stdin(Stdio::null())
        .spawn()
        .expect("ferroplane-testenv starts");
    Up { child }
}

/// Waits for D/ready and returns the API server's `host:port` from it.
fn wait_ready(up: &mut Up, dir: &Path) -> String {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("ready")) {
            let ready: serde_json::Value = serde_json::from_str(&text).expect("D/ready is JSON");
            assert!(
                dir.join("kubeconfig").is_file(),
                "D/ready before D/kubeconfig"
            );
            let server = ready["server"].as_str().expect("server in D/ready");
            return server.trim_start_matches("https://").to_string();
        }
        if let Ok(Some(status)) = up.child.try_wait() {
            panic!("up exited before it was ready: {status}");
        }
        assert!(started.elapsed() < START, "no D/ready after {START:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn signal(up: &Up, sig: libc::c_int) {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    unsafe {
        libc::kill(up.child.id() as libc::pid_t, sig);
    }
}

fn wait_exit(up: &mut Up) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = up.child.try_wait().expect("wait for up") {
            return status;
        }
        assert!(
            started.elapsed() < STOP,
            "up still running {STOP:?} after the signal"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The API server's port stops accepting connections once its process is gone.
fn assert_closed(server: &str) {
    let started = Instant::now();
    while TcpStream::connect_timeout(&server.parse().unwrap(), Duration::from_secs(1)).is_ok() {
        assert!(
            started.elapsed() < STOP,
            "{server} still accepts connections"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
