//! Stopping a member process: SIGTERM, then SIGKILL after a grace period.

use std::process::Child;
use std::time::{Duration, Instant};

pub(super) fn sigterm(child: &Child) {
    // SAFETY: kill(2) on a child this process started and has not reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        // A partitioned (stopped) member takes the SIGTERM once it runs again.
        libc::kill(child.id() as libc::pid_t, libc::SIGCONT);
    }
}

/// Stops `child`: SIGTERM and SIGKILL after `grace`; a zero grace kills it at once (a stopped
/// process is never continued then).
pub(super) fn stop_blocking(mut child: Child, grace: Duration) {
    if grace.is_zero() {
        let _ = child.kill();
        let _ = child.wait();
        return;
    }
    sigterm(&child);
    let deadline = Instant::now() + grace;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() >= deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.wait();
}
