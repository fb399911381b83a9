//! One control plane for a whole test binary, shared by its tests.
//!
//! Each `#[tokio::test]` has a runtime of its own that ends with the test, and a kube client is
//! bound to the runtime that made it; the processes' `PR_SET_PDEATHSIG` follows the thread that
//! started them. So the shared control plane is started and owned by a thread of its own, with
//! its own runtime, that lives until the test binary exits; tests get an [`Access`] and make
//! their clients in their own runtime. At exit (an `atexit` hook: libtest returns from `main` or
//! calls `exit`) that thread is told to stop the control plane and is joined, so the processes
//! stop and the temporary directory goes; were the hook skipped (the binary killed), the kernel
//! still kills every process when that thread dies.

use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use crate::control_plane::{Access, ControlPlane, Options};

/// The first start's outcome, for every test of the binary (an error as text: every test that
/// asks fails with the same message).
static SHARED: OnceLock<Result<Access, String>> = OnceLock::new();

/// What the exit hook needs: the owner thread's stop signal and its handle.
static OWNER: Mutex<Option<(mpsc::Sender<()>, JoinHandle<()>)>> = Mutex::new(None);

/// The control plane shared by every test of this binary, started (with [`Options::default`])
/// by the first caller; the others wait for that start. Never stopped before the binary exits:
/// tests isolate themselves with a namespace of their own.
pub fn shared() -> Result<&'static Access, String> {
    SHARED
        .get_or_init(start_owned)
        .as_ref()
        .map_err(|e| format!("the shared control plane did not start: {e}"))
}

fn start_owned() -> Result<Access, String> {
    let (started_tx, started_rx) = mpsc::channel::<Result<Access, String>>();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let owner = std::thread::Builder::new()
        .name("testenv-shared".into())
        .spawn(move || own(started_tx, stop_rx))
        .map_err(|e| format!("cannot start the thread that owns it: {e}"))?;
    let started = started_rx
        .recv()
        .unwrap_or_else(|_| Err("its owner thread ended before it started".to_owned()));
    if started.is_ok() {
        *OWNER.lock().unwrap_or_else(|p| p.into_inner()) = Some((stop_tx, owner));
        // SAFETY: registers a plain `extern "C"` function without arguments, as atexit expects.
        unsafe {
            libc::atexit(stop_at_exit);
        }
    }
    started
}

/// The owner thread: starts the control plane, reports, then holds it until told to stop.
fn own(started: mpsc::Sender<Result<Access, String>>, stop: mpsc::Receiver<()>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = started.send(Err(format!("cannot build its tokio runtime: {e}")));
            return;
        }
    };
    let control_plane = match runtime.block_on(ControlPlane::start(Options::default())) {
        Ok(cp) => cp,
        Err(e) => {
            let _ = started.send(Err(e.to_string()));
            return;
        }
    };
    if started.send(Ok(control_plane.access())).is_err() {
        return;
    }
    // Ends on the stop signal, or when the sender is gone.
    let _ = stop.recv();
    control_plane.stop();
}

extern "C" fn stop_at_exit() {
    let owner = OWNER.lock().ok().and_then(|mut o| o.take());
    if let Some((stop, thread)) = owner {
        let _ = stop.send(());
        let _ = thread.join();
    }
}
