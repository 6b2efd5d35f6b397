//! Running one child process from a test: its stdin given, its output
//! collected, and killed after a timeout, so a hang fails the test instead of
//! stalling CI. Every child a test in `tests/*.rs` starts goes through this
//! module: [`run`] / [`run_timed`] (the caller judges a timeout),
//! [`output`] / [`output_with_input`] (`Command::output` with [`PATIENCE`],
//! panicking on a timeout), or, for a child whose stdio the test sets up
//! itself (a pseudo-terminal, `/dev/full`, a pipe it reads), [`wait_timed`]
//! / [`wait`] after its own `spawn`. [`mkfifo`] makes a FIFO for a child
//! to read or write.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for one child by default: long enough for a debug
/// build on a loaded 2-core machine; only a hang ever reaches it.
pub const PATIENCE: Duration = Duration::from_secs(300);

/// Runs `cmd` with `stdin` (nothing: `/dev/null`) to completion, or kills it
/// after `timeout`; then its stderr ends with a line saying so.
pub fn run(cmd: Command, stdin: Option<&[u8]>, timeout: Duration) -> Output {
    run_timed(cmd, stdin, timeout).0
}

/// [`run`], and whether the child was killed for running past `timeout`.
pub fn run_timed(mut cmd: Command, stdin: Option<&[u8]>, timeout: Duration) -> (Output, bool) {
    run_timed_mut(&mut cmd, stdin, timeout)
}

/// `cmd.output()` with a timeout: stdin `/dev/null`, stdout and stderr
/// collected; panics if `cmd` cannot start or runs past [`PATIENCE`].
pub fn output(cmd: &mut Command) -> Output {
    let r = run_timed_mut(cmd, None, PATIENCE);
    checked(cmd, r)
}

/// [`output`] with `stdin` written to the child's standard input.
pub fn output_with_input(cmd: &mut Command, stdin: &[u8]) -> Output {
    let r = run_timed_mut(cmd, Some(stdin), PATIENCE);
    checked(cmd, r)
}

/// [`wait_timed`] with [`PATIENCE`], panicking on a timeout.
pub fn wait(child: Child) -> Output {
    let (o, timed_out) = wait_timed(child, None, PATIENCE);
    assert!(!timed_out, "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn checked(cmd: &Command, (o, timed_out): (Output, bool)) -> Output {
    assert!(
        !timed_out,
        "{cmd:?} ran past {} s and was killed; its stderr:\n{}",
        PATIENCE.as_secs(),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn run_timed_mut(cmd: &mut Command, stdin: Option<&[u8]>, timeout: Duration) -> (Output, bool) {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    // Its own process group, so that a timeout also ends what it started
    // (`tern build` runs the C compiler), which would otherwise keep the
    // output pipes open.
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    wait_timed(child, stdin, timeout)
}

/// Waits for `child`, which the caller spawned with stdio of its choosing,
/// or kills it after `timeout` (then its stderr ends with a line saying so).
/// Its stdin, if piped and not taken, gets `stdin` and is closed; its stdout
/// and stderr, if piped and not taken, are collected (otherwise empty).
/// Returns the output and whether the child was killed for the timeout.
pub fn wait_timed(mut child: Child, stdin: Option<&[u8]>, timeout: Duration) -> (Output, bool) {
    let input = stdin.map(<[u8]>::to_vec);
    let mut pipe = child.stdin.take();
    // Writer and readers on their own threads, so a chatty child never
    // blocks on a full pipe and a child that reads nothing never blocks us.
    let writer = std::thread::spawn(move || {
        if let (Some(p), Some(bytes)) = (pipe.as_mut(), input) {
            let _ = p.write_all(&bytes);
        }
        drop(pipe);
    });
    let out = child.stdout.take();
    let err = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut p) = out {
            let _ = p.read_to_end(&mut v);
        }
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut p) = err {
            let _ = p.read_to_end(&mut v);
        }
        v
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for child") {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: plain syscall. A group of that id exists only if
                // the child leads one (`run_timed` makes it), so only what
                // the child started dies.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            let _ = child.kill();
            break child.wait().expect("wait for killed child");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let stdout = out_t.join().unwrap_or_default();
    let mut stderr = err_t.join().unwrap_or_default();
    if timed_out {
        stderr.extend_from_slice(
            format!("<test: killed after {} s: timed out>\n", timeout.as_secs()).as_bytes(),
        );
    }
    (
        Output {
            status,
            stdout,
            stderr,
        },
        timed_out,
    )
}

/// Makes a FIFO at `path` (mode 0600).
pub fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}
