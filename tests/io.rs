//! What the `io` module does where the test-program format cannot reach:
//! a file the program may not open (as root the child drops to `nobody`,
//! since root opens anything), and a program started with stdin closed.
//! JIT, AOT and the interpreter alike.

mod pool_support;

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;

use pool_support::child;
use pool_support::{Mode, program_command, scratch};

/// The program `text` as a file in `dir`.
fn program(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.tern"));
    std::fs::write(&file, text).unwrap();
    file
}

/// The three ways to run `file`: JIT, AOT (built now), the interpreter.
fn every_mode(file: &Path, dir: &Path) -> Vec<(&'static str, Command)> {
    let mut interp = Command::new(env!("CARGO_BIN_EXE_tern"));
    interp
        .args(["run", "--interp", file.to_str().unwrap()])
        .env(
            "TERN_STDLIB",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib"),
        );
    vec![
        ("JIT", program_command(file, Mode::Jit, "-O2", dir).unwrap()),
        ("AOT", program_command(file, Mode::Aot, "-O2", dir).unwrap()),
        ("interp", interp),
    ]
}

#[test]
fn a_file_the_program_may_not_open_is_a_located_error() {
    let dir = scratch("io-denied");
    // Reachable by `nobody`: the scratch directory and the program.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "no").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let file = program(
        &dir,
        "denied",
        &format!(
            "use io;\nfn main() {{\n    var d = reusable::alloc::<u8>(0);\n    print(io::try_read_file(\"{0}\", ref d) == io::DENIED);\n    let x = io::read_file(\"{0}\");\n}}\n",
            secret.display()
        ),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for (mode, mut cmd) in every_mode(&file, &dir) {
        if root {
            // SAFETY: setgid/setuid only, between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let o = child::run(cmd, None, child::PATIENCE);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "true\n",
            "{mode}: {err}"
        );
        assert_eq!(o.status.code(), Some(101), "{mode}: {err}");
        let first = err.lines().next().unwrap_or_default().to_string();
        assert_eq!(
            first,
            format!(
                "error: {}:5:13: cannot open '{}': Permission denied",
                file.display(),
                secret.display()
            ),
            "{mode}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Started with stdin closed, every mode reads it as empty, and a write to it
/// goes nowhere and succeeds (the AOT runtime opened `/dev/null` read-only
/// there, where the JIT's driver, as any Rust program, opens it read-write:
/// the write failed with `Bad file descriptor` in AOT alone).
#[test]
fn a_closed_stdin_reads_as_empty() {
    let dir = scratch("io-closed-stdin");
    let file = program(
        &dir,
        "stdin",
        "use io;\nfn main() {\n    let all = io::read_stdin();\n    var f = io::stdin();\n    var line = reusable::alloc::<u8>(0);\n    print(len(all), io::read_line(ref f, ref line), io::try_write_to(ref f, \"x\"));\n}\n",
    );
    for (mode, mut cmd) in every_mode(&file, &dir) {
        // SAFETY: only `close`, async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(0);
                Ok(())
            });
        }
        let o = child::run(cmd, None, child::PATIENCE);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "0 false 0\n",
            "{mode}: {err}"
        );
        assert_eq!(o.status.code(), Some(0), "{mode}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn copies_of_a_file_are_closed_with_it_and_stdin_reads_ahead_once() {
    // A `File` is a handle the runtime resolves: a copy kept past `close`
    // names a closed file (it once wrote into the next file opened, and read
    // into a freed buffer), and every `io::stdin()` shares one read-ahead
    // (a second one lost what the first had read ahead). A zero-filled
    // `File` names no file (handle 0 was stdin).
    let dir = scratch("io-file-copies");
    let (a, c) = (dir.join("a.txt"), dir.join("c.txt"));
    let text = format!(
        r#"use io;
fn first_line() -> reusable[]u8 {{
    var f = io::stdin();
    var l = reusable::alloc::<u8>(0);
    io::read_line(ref f, ref l);
    return l;
}}
fn main() {{
    let one = first_line();
    let two = first_line();
    print(one, two);
    var w = io::create("{a}");
    var copy = w;
    io::close(ref w);
    var c = io::create("{c}");
    var buf = [0 as u8; 4];
    print(io::message(io::try_write_to(ref copy, "lost")), io::try_read(ref copy, buf[0..]));
    io::write_to(ref c, "c1");
    io::close(ref copy);
    io::write_to(ref c, "c2");
    io::close(ref c);
    print(len(io::read_file("{a}")), io::read_file("{c}"));
    var zeroed = reusable::alloc::<io::File>(1);
    print(io::try_write_to(ref zeroed[0], "not stdin"));
    io::write_to(ref copy, "x");
}}
"#,
        a = a.display(),
        c = c.display()
    );
    let file = program(&dir, "copies", &text);
    for (mode, cmd) in every_mode(&file, &dir) {
        let o = child::run(cmd, Some(b"first\nsecond\n"), child::PATIENCE);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "first second\nBad file descriptor -9\n0 c1c2\n-9\n",
            "{mode}: {err}"
        );
        assert_eq!(o.status.code(), Some(101), "{mode}: {err}");
        assert_eq!(
            err.lines().next().unwrap_or_default(),
            format!(
                "error: {}:25:5: cannot write a closed file: Bad file descriptor",
                file.display()
            ),
            "{mode}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_to_a_pipe_without_reader_is_a_status_in_every_mode() {
    // Stderr is a pipe whose reader is gone: `try_write_to` returns
    // `-EPIPE` in every mode (an AOT executable died by SIGPIPE, status 141,
    // where the JIT, whose driver ignores the signal, got the status).
    let dir = scratch("io-broken-pipe");
    let file = program(
        &dir,
        "pipe",
        "use io;\nfn main() -> i64 {\n    var e = io::stderr();\n    let r = io::try_write_to(ref e, \"lost\");\n    print(r, io::message(r));\n    return 3;\n}\n",
    );
    for (mode, mut cmd) in every_mode(&file, &dir) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(writer);
        let child_process = cmd.spawn().unwrap();
        let o = child::wait_timed(child_process, None, child::PATIENCE).0;
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "-32 Broken pipe\n",
            "{mode}"
        );
        assert_eq!(o.status.code(), Some(3), "{mode}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_runtime_error_is_not_lost_when_stdout_cannot_be_written() {
    // The output printed before an error is flushed first; on a full device
    // that flush fails and ended the run with only the output's error.
    let dir = scratch("io-full-stdout");
    let file = program(
        &dir,
        "full",
        "use io;\nfn main() {\n    print(\"hi\");\n    let d = io::read_file(\"/no/such/file\");\n}\n",
    );
    for (mode, mut cmd) in every_mode(&file, &dir) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        cmd.stdin(std::process::Stdio::null())
            .stdout(full)
            .stderr(std::process::Stdio::piped());
        let o = child::wait_timed(cmd.spawn().unwrap(), None, child::PATIENCE).0;
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(
            lines,
            [
                format!(
                    "error: {}:4:13: cannot open '/no/such/file': No such file or directory",
                    file.display()
                )
                .as_str(),
                "error: <runtime>: cannot write the program's output: No space left on device (os error 28)",
            ],
            "{mode}"
        );
        assert_eq!(o.status.code(), Some(101), "{mode}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A path in a runtime error has its control characters escaped, so a name
/// the program was given (an argument, a line it read) cannot drive the
/// terminal the error is printed on: `\x1b[31m` and `\r` were printed raw.
#[test]
fn control_characters_of_a_path_are_escaped_in_its_error() {
    let dir = scratch("io-control-path");
    let file = program(
        &dir,
        "control",
        "use io;\nfn main() {\n    let d = io::read_file(\"nope\\x1b[31mred\\r\\ttab\");\n}\n",
    );
    for (mode, mut cmd) in every_mode(&file, &dir) {
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let o = child::wait_timed(cmd.spawn().unwrap(), None, child::PATIENCE).0;
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.lines().next().unwrap_or_default(),
            format!(
                "error: {}:3:13: cannot open 'nope\\u{{1b}}[31mred\\r\\ttab': No such file or directory",
                file.display()
            ),
            "{mode}"
        );
        assert_eq!(o.status.code(), Some(101), "{mode}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
