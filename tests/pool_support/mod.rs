//! Shared helpers of the stdlib pool tests (`tests/differential.rs`,
//! `tests/stdlib_*.rs`): running the `tern` binary in JIT and AOT mode with a
//! timeout, against the workspace's `stdlib/` (so an edited stdlib is tested
//! without rebuilding the driver that embeds it).

#![allow(dead_code)]

#[path = "../child_support/mod.rs"]
pub mod child;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The `tern` driver under test.
pub const TERN: &str = env!("CARGO_BIN_EXE_tern");
/// The workspace root (programs are run from here).
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// How a program is compiled and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `tern run` (in-process JIT).
    Jit,
    /// `tern build` and the linked executable.
    Aot,
}

/// Every mode and optimisation level the tests cover.
pub const MATRIX: [(Mode, &str); 6] = [
    (Mode::Jit, "-O0"),
    (Mode::Jit, "-O1"),
    (Mode::Jit, "-O2"),
    (Mode::Aot, "-O0"),
    (Mode::Aot, "-O1"),
    (Mode::Aot, "-O2"),
];

/// The outcome of one process.
#[derive(Debug)]
pub struct Outcome {
    /// Exit status, `None` if killed by a signal or the timeout.
    pub code: Option<i32>,
    /// The signal that ended the process, if any (Unix).
    pub signal: Option<i32>,
    /// True when the process was killed because it ran past the timeout.
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

/// A private scratch directory for this test process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-stdlib-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `cmd` to completion or until `timeout` (then kills it), collecting output.
pub fn run_with_timeout(cmd: Command, timeout: Duration) -> Outcome {
    outcome(child::run_timed(cmd, None, timeout))
}

/// As [`run_with_timeout`], with stdin read from the file `input`.
pub fn run_with_timeout_input(cmd: Command, input: &Path, timeout: Duration) -> Outcome {
    let bytes = std::fs::read(input).expect("read input");
    outcome(child::run_timed(cmd, Some(&bytes), timeout))
}

fn outcome((o, timed_out): (std::process::Output, bool)) -> Outcome {
    use std::os::unix::process::ExitStatusExt as _;
    Outcome {
        code: o.status.code(),
        signal: o.status.signal(),
        timed_out,
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A `tern` command with the test stdlib selected, run from the workspace root.
pub fn tern() -> Command {
    let mut c = Command::new(TERN);
    c.current_dir(ROOT).env("TERN_STDLIB", stdlib_dir());
    c
}

/// Compiles and runs the program at `file` in `mode` at `level`, with extra
/// environment `env` for the program. AOT builds go to `scratch`.
pub fn run_program(
    file: &Path,
    mode: Mode,
    level: &str,
    env: &[(&str, &str)],
    scratch: &Path,
    timeout: Duration,
) -> Result<Outcome, String> {
    let mut c = program_command(file, mode, level, scratch)?;
    for (k, v) in env {
        c.env(k, v);
    }
    let o = run_with_timeout(c, timeout);
    if mode == Mode::Aot {
        let _ = std::fs::remove_file(aot_path(file, level, scratch));
    }
    Ok(o)
}

/// The command that runs the program at `file` in `mode` at `level`: `tern
/// run`, or the executable `tern build` wrote into `scratch` (built now).
pub fn program_command(
    file: &Path,
    mode: Mode,
    level: &str,
    scratch: &Path,
) -> Result<Command, String> {
    let f = file.to_str().expect("utf-8 path");
    match mode {
        Mode::Jit => {
            let mut c = tern();
            c.args(["run", level, f]);
            Ok(c)
        }
        Mode::Aot => {
            let exe = aot_path(file, level, scratch);
            let mut c = tern();
            c.args(["build", level, f, "-o", exe.to_str().expect("utf-8 path")]);
            let built = run_with_timeout(c, Duration::from_secs(600));
            if built.code != Some(0) {
                return Err(format!(
                    "build failed ({:?}): {}",
                    built.code,
                    built.stderr.trim_end()
                ));
            }
            let mut c = Command::new(&exe);
            c.current_dir(ROOT);
            Ok(c)
        }
    }
}

fn aot_path(file: &Path, level: &str, scratch: &Path) -> PathBuf {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("prog");
    scratch.join(format!("{stem}{level}"))
}

/// The stdlib directory the tests compile against: the workspace's own.
pub fn stdlib_dir() -> PathBuf {
    Path::new(ROOT).join("stdlib")
}

/// The first line (0-based) where `got` and `want` differ, with a description
/// and context, or `None`.
pub fn first_difference(got: &str, want: &[String]) -> Option<(usize, String)> {
    let g: Vec<&str> = got.lines().collect();
    let n = g.len().max(want.len());
    for i in 0..n {
        let a = g.get(i).copied();
        let b = want.get(i).map(String::as_str);
        if a != b {
            let lo = i.saturating_sub(6);
            let ctx: Vec<String> = (lo..i).map(|j| format!("    {}", want[j])).collect();
            return Some((
                i,
                format!(
                    "line {}: got {:?}, expected {:?}\n  preceding expected lines:\n{}",
                    i + 1,
                    a,
                    b,
                    ctx.join("\n")
                ),
            ));
        }
    }
    None
}

/// splitmix64: a small seeded generator, so a failing seed reproduces exactly.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A runtime error's stderr split into its error line and its backtrace
/// (`  in NAME at LOC` lines, or `  ... N more frames`), or `None` if it is
/// not exactly that: one `error: ` line, then at least one frame, the last
/// being `main`'s.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn error_and_backtrace(stderr: &str) -> Option<(&str, Vec<&str>)> {
    let mut lines = stderr.lines();
    let first = lines.next().filter(|l| l.starts_with("error: "))?;
    let frames: Vec<&str> = lines.collect();
    let frame_lines = frames
        .iter()
        .all(|l| l.starts_with("  in ") || l.starts_with("  ... "));
    let ends_in_main = frames.last().is_some_and(|l| l.starts_with("  in main "));
    (frame_lines && ends_in_main).then_some((first, frames))
}
