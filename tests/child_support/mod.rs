//! Running one child process from a test: its stdin given, its output
//! collected, and killed after a timeout, so a hang fails the test instead of
//! stalling CI. Every test that starts a child uses this one helper.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
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
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
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
    let mut out = child.stdout.take().expect("stdout pipe");
    let mut err = child.stderr.take().expect("stderr pipe");
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
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
