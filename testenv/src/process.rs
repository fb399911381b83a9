//! The control plane's child processes, and the guarantee that none outlives its owner.
//!
//! Each child is started in its own process group (a Ctrl-C in the terminal reaches only
//! `ferroplane-testenv`, which then stops them in order) and with `PR_SET_PDEATHSIG`, so the
//! kernel kills it when the thread that started it ends, even if the owner is killed with
//! SIGKILL. That signal follows the starting *thread*, not the process, so every child of one
//! control plane is started by one thread kept for that purpose, which lives exactly as long as
//! the [`Processes`] that own them (a tokio blocking-pool thread, for one, may exit at any time).

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Error, Result, tail};

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Makes the kernel SIGKILL the program once the thread that starts it ends (the process being
/// killed included).
pub fn die_with_starting_thread(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and only makes
    // async-signal-safe system calls (prctl, getppid), allocating nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The owner may have died before the prctl took effect.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// One running program of the control plane.
pub struct Supervised {
    pub name: &'static str,
    pub log: PathBuf,
    child: Child,
}

impl Supervised {
    /// Ok while it runs; the error says how it ended and shows the end of its log.
    pub fn check_running(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(self.exited(status)),
            Err(e) => Err(Error::io(format!("waiting for {}", self.name))(e)),
        }
    }

    fn exited(&self, status: ExitStatus) -> Error {
        Error::Exited {
            name: self.name,
            status: status.to_string(),
            log: self.log.clone(),
            tail: tail(&self.log, 20),
        }
    }
}

/// Starts programs and stops them all, last started first.
pub struct Processes {
    children: Vec<Supervised>,
    requests: Option<mpsc::Sender<SpawnRequest>>,
    spawner: Option<JoinHandle<()>>,
}

impl Processes {
    pub fn new() -> Result<Self> {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        let spawner = std::thread::Builder::new()
            .name("testenv-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .map_err(Error::io("starting the spawner thread"))?;
        Ok(Self {
            children: Vec::new(),
            requests: Some(tx),
            spawner: Some(spawner),
        })
    }

    /// Starts `cmd` through the spawner thread (in a process group of its own, dying with that
    /// thread) without supervising it: the caller owns the child, stops and reaps it.
    pub fn spawn_owned(&self, mut cmd: Command) -> Result<Child> {
        cmd.process_group(0);
        die_with_starting_thread(&mut cmd);
        let (reply_tx, reply_rx) = mpsc::channel();
        let requests = self.requests.as_ref().expect("spawner runs until drop");
        requests
            .send((cmd, reply_tx))
            .map_err(|_| Error::io("starting a process")(std::io::Error::other("spawner gone")))?;
        reply_rx
            .recv()
            .map_err(|_| Error::io("starting a process")(std::io::Error::other("spawner gone")))?
            .map_err(Error::io("starting a process"))
    }

    /// Starts `program` with `args`, stdout and stderr appended to `log`.
    pub fn start(
        &mut self,
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> Result<&mut Supervised> {
        let mut cmd = Command::new(program);
        cmd.args(args);
        self.start_command(name, cmd, log)
    }

    /// Starts `cmd` (its program, arguments and environment), stdout and stderr appended to
    /// `log`.
    pub fn start_command(
        &mut self,
        name: &'static str,
        mut cmd: Command,
        log: PathBuf,
    ) -> Result<&mut Supervised> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(Error::io(format!("opening {}", log.display())))?;
        let err = out.try_clone().map_err(Error::io("log file"))?;
        let program = cmd.get_program().to_string_lossy().into_owned();
        cmd.stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        die_with_starting_thread(&mut cmd);
        let (reply_tx, reply_rx) = mpsc::channel();
        let requests = self.requests.as_ref().expect("spawner runs until drop");
        requests
            .send((cmd, reply_tx))
            .map_err(|_| Error::io("starting a process")(std::io::Error::other("spawner gone")))?;
        let child = reply_rx
            .recv()
            .map_err(|_| Error::io("starting a process")(std::io::Error::other("spawner gone")))?
            .map_err(Error::io(format!("starting {program}")))?;
        tracing::info!(name, pid = child.id(), log = %log.display(), "started");
        self.children.push(Supervised { name, log, child });
        Ok(self.children.last_mut().expect("just pushed"))
    }

    /// Ok while every program runs; else the first that ended.
    pub fn check_all_running(&mut self) -> Result<()> {
        self.children
            .iter_mut()
            .try_for_each(Supervised::check_running)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Supervised> {
        self.children.iter_mut().find(|c| c.name == name)
    }

    /// Stops them one by one, newest first (kwok and the controllers before the API server,
    /// the API server before etcd, which it still writes to while it shuts down): SIGTERM, then
    /// SIGKILL if it still runs after `grace`.
    pub fn stop_all(&mut self, grace: Duration) {
        while let Some(mut c) = self.children.pop() {
            // SAFETY: kill(2) on a pid this process started and has not reaped yet.
            unsafe {
                libc::kill(c.child.id() as libc::pid_t, libc::SIGTERM);
            }
            let deadline = Instant::now() + grace;
            loop {
                match c.child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() >= deadline => {
                        tracing::warn!(name = c.name, "still running after SIGTERM; killing it");
                        let _ = c.child.kill();
                        let _ = c.child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        self.stop_all(Duration::from_secs(5));
        self.requests.take();
        if let Some(t) = self.spawner.take() {
            let _ = t.join();
        }
    }
}
