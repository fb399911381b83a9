//! Cutting a member off from the others without touching its data: its process is stopped
//! (`SIGSTOP`) and continued later (`SIGCONT`). A stopped etcd neither answers nor sends, as a
//! member behind a network partition; its pod stays Running and its volume stays mounted,
//! so what comes back is the same member on the same data.

use super::{EtcdMembers, lock};
use crate::error::{Error, Result};

impl EtcdMembers {
    /// Cuts the member of `pod` off until [`EtcdMembers::reconnect`].
    pub fn partition(&self, pod: &str) -> Result<()> {
        self.signal(pod, libc::SIGSTOP, true)
    }

    /// Lets the member of `pod` answer and send again.
    pub fn reconnect(&self, pod: &str) -> Result<()> {
        self.signal(pod, libc::SIGCONT, false)
    }

    fn signal(&self, pod: &str, signal: libc::c_int, partitioned: bool) -> Result<()> {
        let mut state = lock(&self.state);
        let member = state
            .running
            .values_mut()
            .find(|r| r.info.pod == pod)
            .ok_or_else(|| {
                Error::io(format!("signalling the member of pod {pod}"))(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no etcd runs for this pod",
                ))
            })?;
        // The child is etcd itself: `unshare` and `sh` exec into it. Signalled while the lock
        // is held, so that it is not reaped (and its pid reused) in between.
        // SAFETY: kill(2) on a child this process started and has not reaped.
        let sent = unsafe { libc::kill(member.child.id() as libc::pid_t, signal) };
        if sent != 0 {
            return Err(Error::io(format!("signalling the member of pod {pod}"))(
                std::io::Error::last_os_error(),
            ));
        }
        member.partitioned = partitioned;
        Ok(())
    }
}
