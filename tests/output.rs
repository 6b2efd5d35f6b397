//! Program output behaves like every other Unix program's, identically in
//! JIT and AOT: a closed pipe ends the program by SIGPIPE, a full device is an
//! error with status 101, a terminal gets each line as it is printed, and no
//! buffered line is lost when the stack overflows inside `print`.

mod pool_support;
mod pty_support;

use std::io::{BufRead, BufReader};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pool_support::child::{self, PATIENCE};
use pool_support::{Mode, program_command, scratch};
use pty_support::open_pty;

fn program(dir: &Path, name: &str, text: &str) -> PathBuf {
    let file = dir.join(format!("{name}.tern"));
    std::fs::write(&file, text).unwrap();
    file
}

/// Waits for `child` (killed, and the test failed, after [`PATIENCE`]): its
/// status, and what it wrote to the pipes the test did not take.
fn wait(child: Child) -> Output {
    child::wait(child)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The commands that run `file` in the JIT and AOT (at `levels`) and the
/// interpreter, each with its label.
fn every_mode(file: &Path, dir: &Path, levels: [&str; 2]) -> [(&'static str, Command); 3] {
    let mut interp = Command::new(env!("CARGO_BIN_EXE_tern"));
    interp.args(["run", "--interp", file.to_str().unwrap()]);
    [
        (
            "JIT",
            program_command(file, Mode::Jit, levels[0], dir).unwrap(),
        ),
        (
            "AOT",
            program_command(file, Mode::Aot, levels[1], dir).unwrap(),
        ),
        ("interp", interp),
    ]
}

#[test]
fn a_closed_pipe_ends_the_program_by_sigpipe() {
    let dir = scratch("output-pipe");
    let file = program(
        &dir,
        "forever",
        "fn main() {\n    var i = 0;\n    while true { print(i); i += 1; }\n}\n",
    );
    for mode in [Mode::Jit, Mode::Aot] {
        let mut cmd = program_command(&file, mode, "-O2", &dir).unwrap();
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -1`: read one line, then close the pipe (on a thread, so
        // a program that never prints fails after PATIENCE).
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut first = String::new();
            let _ = BufReader::new(stdout).read_line(&mut first);
            let _ = tx.send(first);
        });
        let Ok(first) = rx.recv_timeout(PATIENCE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{mode:?}: no line within {} s", PATIENCE.as_secs());
        };
        assert_eq!(first, "0\n", "{mode:?}");
        let o = wait(child);
        let (status, err) = (o.status, text(&o.stderr));
        assert_eq!(status.signal(), Some(libc::SIGPIPE), "{mode:?}: {status}");
        assert_eq!(err, "", "{mode:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_device_is_an_error() {
    let dir = scratch("output-full");
    let file = program(&dir, "hello", "fn main() {\n    print(1);\n}\n");
    for mode in [Mode::Jit, Mode::Aot] {
        let mut cmd = program_command(&file, mode, "-O0", &dir).unwrap();
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let child = cmd.stdout(full).stderr(Stdio::piped()).spawn().unwrap();
        let o = wait(child);
        let (status, err) = (o.status, text(&o.stderr));
        assert_eq!(status.code(), Some(101), "{mode:?}");
        assert_eq!(
            err,
            "error: <runtime>: cannot write the program's output: No space left on device (os error 28)\n",
            "{mode:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stack_overflow_inside_print_loses_no_printed_line() {
    // Every level prints, so the deepest frames (where the stack runs out)
    // are inside `print` itself.
    let dir = scratch("output-overflow");
    let file = program(
        &dir,
        "deep",
        "fn down(n: i64) -> i64 {\n    print(n);\n    return down(n + 1) + 1;\n}\nfn main() {\n    print(down(0));\n}\n",
    );
    for mode in [Mode::Jit, Mode::Aot] {
        let mut cmd = program_command(&file, mode, "-O1", &dir).unwrap();
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait(child);
        let (status, out, err) = (o.status, text(&o.stdout), text(&o.stderr));
        assert_eq!(status.code(), Some(101), "{mode:?}");
        // The stack runs out inside `print` (runtime code) or, less often,
        // in `down` itself: either way the report is located at the
        // recursive call.
        assert!(
            err.starts_with(&format!("error: {}:3:12: stack overflow\n", file.display())),
            "{mode:?}: {err}"
        );
        // Complete lines 0, 1, 2, ... in order: nothing dropped, nothing torn.
        assert!(out.ends_with('\n'), "{mode:?}: torn last line");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1000, "{mode:?}: only {} lines", lines.len());
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(*l, i.to_string(), "{mode:?}: line {i}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_terminal_gets_each_line_as_it_is_printed() {
    // The program prints one line and then waits forever (`pause`): the line
    // reaches the terminal only if output to a terminal is line-buffered.
    let dir = scratch("output-tty");
    let file = program(
        &dir,
        "waits",
        "extern fn pause() -> i32;\nfn main() {\n    print(42);\n    pause();\n}\n",
    );
    for mode in [Mode::Jit, Mode::Aot] {
        let (master, slave) = open_pty();
        let mut cmd = program_command(&file, mode, "-O2", &dir).unwrap();
        let mut child = cmd
            .stdout(slave)
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let line = read_line_within(&master, PATIENCE);
        // It waits forever: killed here, whatever it printed.
        let _ = child.kill();
        let _ = child.wait();
        // The terminal turns "\n" into "\r\n".
        assert_eq!(line.as_deref(), Some("42\r\n"), "{mode:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads from `fd` until a newline, waiting at most `limit` in all.
fn read_line_within(fd: &OwnedFd, limit: Duration) -> Option<String> {
    use std::os::fd::AsRawFd;
    let start = Instant::now();
    let mut got = Vec::new();
    while !got.ends_with(b"\n") {
        let left = limit.checked_sub(start.elapsed())?;
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, left.as_millis() as i32) };
        if ready <= 0 {
            return None;
        }
        let mut buf = [0u8; 256];
        // SAFETY: reading into a local buffer.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return None;
        }
        got.extend_from_slice(&buf[..n as usize]);
    }
    Some(String::from_utf8_lossy(&got).into_owned())
}

/// Started with stdout closed (`prog >&-`), every mode does what a C program
/// does: the output is discarded, the status is `main`'s, nothing on stderr.
#[test]
fn a_closed_stdout_discards_the_output_in_every_mode() {
    use std::os::unix::process::CommandExt as _;
    let dir = scratch("output-closed");
    let file = program(
        &dir,
        "closed",
        "fn main() -> i64 {\n    print(1);\n    print(2);\n    return 7;\n}\n",
    );
    for (label, mut cmd) in every_mode(&file, &dir, ["-O2", "-O2"]) {
        // SAFETY: only `close`, async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        let child = cmd.stderr(Stdio::piped()).spawn().unwrap();
        let o = wait(child);
        let (status, err) = (o.status, text(&o.stderr));
        assert_eq!(status.code(), Some(7), "{label}: {err}");
        assert_eq!(err, "", "{label}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under `ulimit -s unlimited` a runaway recursion is the same located
/// stack overflow in every mode: the runtime bounds an unlimited stack at
/// 8 MiB, the interpreter's figure. (Unbounded, the JIT's stack grew until
/// address space ran out, 6.9 GB resident under a cap of 8 GB, and the
/// fault handler, unable to allocate its report, aborted with a Rust
/// backtrace.) The cap on address space here keeps a regression from
/// taking the machine's memory.
#[test]
fn an_unlimited_stack_overflows_like_the_default_one() {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: getrlimit into a local struct.
    let hard = unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_STACK, &mut rl);
        rl.rlim_max
    };
    if hard != libc::RLIM_INFINITY {
        eprintln!("skipped: the hard stack limit here is {hard}, not unlimited");
        return;
    }
    let dir = scratch("output-unlimited-stack");
    let file = program(
        &dir,
        "runaway",
        "fn down(n: i64) -> i64 {\n    var pad = [n; 32];\n    pad[n % 32] = 1;\n    return down(n + 1) + pad[3];\n}\nfn main() {\n    print(1);\n    print(down(0));\n}\n",
    );
    for (label, mut cmd) in every_mode(&file, &dir, ["-O2", "-O0"]) {
        // SAFETY: only `setrlimit`, async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let unlimited = libc::rlimit {
                    rlim_cur: libc::RLIM_INFINITY,
                    rlim_max: libc::RLIM_INFINITY,
                };
                let space = libc::rlimit {
                    rlim_cur: 8 << 30,
                    rlim_max: 8 << 30,
                };
                if libc::setrlimit(libc::RLIMIT_STACK, &unlimited) != 0
                    || libc::setrlimit(libc::RLIMIT_AS, &space) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.env("TERN_POOL_BYTES", "1048576");
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait(child);
        let (status, out, err) = (o.status, text(&o.stdout), text(&o.stderr));
        assert_eq!(status.code(), Some(101), "{label}: {err}");
        assert_eq!(out, "1\n", "{label}");
        assert!(
            err.starts_with(&format!("error: {}:4:12: stack overflow\n", file.display())),
            "{label}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
