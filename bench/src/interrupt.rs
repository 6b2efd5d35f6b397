//! Stopping a run cleanly: SIGINT, SIGTERM or SIGHUP (Ctrl-C, `timeout`,
//! `kill`, a closed terminal) ends the child the harness is waiting for and
//! removes the harness's scratch folders before the process exits, so no
//! sample keeps running (and writing into the run folder) after the harness
//! is gone, and nothing is left in the temporary directory. What was
//! measured stays: samples are on disk as they are taken, and `report.txt`
//! says the run did not finish.
//!
//! Every child runs in a process group of its own ([`spawn_in_group`]), so
//! that the launcher's and valgrind's own children go with it; the signals
//! are blocked in every thread and taken by one watcher thread
//! (`sigwait`), which can do ordinary work (no async-signal-safety limits).

use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};

/// The process group of the child being waited for; 0 when none.
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

/// Files a stopped run leaves half written (a killed sample's profile):
/// removed when a signal stops the run.
static TRANSIENT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The run folder, once it exists: what the message of a stopped run names.
static RUN_FOLDER: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// The run folder now exists at `dir` (a stopped run's message names it).
pub fn run_folder(dir: PathBuf) {
    *RUN_FOLDER.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir);
}

/// `path` is removed if a signal stops the run (see [`TRANSIENT`]).
pub fn remove_on_stop(path: PathBuf) {
    TRANSIENT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path);
}

/// The signals that stop a run.
const STOPPING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Takes over the stopping signals for the rest of the process: call it
/// before any other thread starts (threads inherit the blocked set; child
/// processes start with none blocked, as `std::process` resets the mask).
/// `scratch`: folders to remove when a signal stops the run.
pub fn install(scratch: Vec<PathBuf>) {
    // SAFETY: plain libc calls on a local signal set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in STOPPING {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    std::thread::spawn(move || {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is a valid signal set; `sig` is writable.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            return;
        }
        // Holding both streams, the harness's other threads print nothing
        // more (a killed sample's failure, say) before the exit.
        let _out = std::io::stdout().lock();
        let mut err = std::io::stderr().lock();
        let group = CHILD_GROUP.load(Ordering::SeqCst);
        if group > 0 {
            // SAFETY: signals the child's own process group only.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        for dir in &scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
        for file in TRANSIENT.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = std::fs::remove_file(file);
        }
        use std::io::Write as _;
        let folder = RUN_FOLDER.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let _ = match folder {
            // Stopped before the report was begun: the folder holds the
            // machine's description, no samples and no report to point at.
            Some(dir) if !dir.join("report.txt").exists() => writeln!(
                err,
                "\ntern bench: stopped by signal {sig} before anything was measured; the run folder {} holds no samples",
                dir.display()
            ),
            Some(dir) => writeln!(
                err,
                "\ntern bench: stopped by signal {sig}; the run folder {} keeps the samples taken so far (report.txt says the run did not finish)",
                dir.display()
            ),
            // Stopped while reading a trace, say (a FIFO nobody writes).
            None => writeln!(
                err,
                "\ntern bench: stopped by signal {sig} before the run folder was made; nothing was measured"
            ),
        };
        let _ = err.flush();
        // SAFETY: ends the process at once: `exit` would run the atexit
        // handlers, and std's would wait for the stdout lock held here.
        unsafe { libc::_exit(128 + sig) };
    });
}

/// Spawns `cmd` as the leader of a process group of its own, recorded as
/// the child a stopping signal ends; [`finished`] forgets it.
pub fn spawn_in_group(cmd: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    let child = cmd.process_group(0).spawn()?;
    CHILD_GROUP.store(child.id() as i32, Ordering::SeqCst);
    Ok(child)
}

/// The child [`spawn_in_group`] started has been reaped.
pub fn finished() {
    CHILD_GROUP.store(0, Ordering::SeqCst);
}
