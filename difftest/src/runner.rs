//! Running one program in every mode of the `tern` driver and comparing
//! the outcomes: with each other, and with what the program was generated
//! to do.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::generator::Intent;

/// An optimization level of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// `-O0`
    O0,
    /// `-O1`
    O1,
    /// `-O2`
    O2,
}

impl Level {
    fn flag(self) -> &'static str {
        match self {
            Level::O0 => "-O0",
            Level::O1 => "-O1",
            Level::O2 => "-O2",
        }
    }
}

/// A way of running a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `tern run --interp FILE`: the reference interpreter.
    Interp,
    /// `tern run -O<level> FILE`: in-process JIT.
    Jit(Level),
    /// `tern build -O<level> FILE -o EXE`, then `EXE`.
    Aot(Level),
    /// One of the above with `--sanitize` (name: its name and `+sanitize`):
    /// a program without stale uses must do exactly what it does without.
    Sanitized(Engine),
}

/// A [`Mode`] without `--sanitize` (what [`Mode::Sanitized`] wraps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// As [`Mode::Interp`].
    Interp,
    /// As [`Mode::Jit`].
    Jit(Level),
    /// As [`Mode::Aot`].
    Aot(Level),
}

/// The suffix of a sanitized mode's name.
const SANITIZE_SUFFIX: &str = "+sanitize";

/// The modes run by default: the reference interpreter first (it wins ties
/// as the reference), then JIT and AOT, and the JIT again under `--sanitize`
/// (generated programs have no stale uses, so it must change nothing).
pub const DEFAULT_MODES: [Mode; 7] = [
    Mode::Interp,
    Mode::Jit(Level::O0),
    Mode::Jit(Level::O1),
    Mode::Jit(Level::O2),
    Mode::Aot(Level::O0),
    Mode::Aot(Level::O2),
    Mode::Sanitized(Engine::Jit(Level::O2)),
];

impl Mode {
    /// `interp`, `jit-O0` ... `aot-O2`.
    pub fn name(self) -> String {
        let (engine, sanitize) = self.split();
        let base = match engine {
            Engine::Interp => "interp".into(),
            Engine::Jit(l) => format!("jit{}", l.flag()),
            Engine::Aot(l) => format!("aot{}", l.flag()),
        };
        if sanitize {
            base + SANITIZE_SUFFIX
        } else {
            base
        }
    }

    /// The engine, and whether the run is sanitized.
    fn split(self) -> (Engine, bool) {
        match self {
            Mode::Interp => (Engine::Interp, false),
            Mode::Jit(l) => (Engine::Jit(l), false),
            Mode::Aot(l) => (Engine::Aot(l), false),
            Mode::Sanitized(e) => (e, true),
        }
    }

    /// Parses a mode name as printed by [`Mode::name`].
    pub fn parse(s: &str) -> Result<Mode, String> {
        if let Some(base) = s.strip_suffix(SANITIZE_SUFFIX) {
            return match Mode::parse(base)?.split() {
                (e, false) => Ok(Mode::Sanitized(e)),
                (_, true) => Err(format!("unknown mode `{s}`")),
            };
        }
        let level = |l: &str| match l {
            "O0" => Ok(Level::O0),
            "O1" => Ok(Level::O1),
            "O2" => Ok(Level::O2),
            _ => Err(format!(
                "unknown optimization level `{l}` in mode `{s}` (use O0, O1 or O2)"
            )),
        };
        match s.split_once('-') {
            None if s == "interp" => Ok(Mode::Interp),
            Some(("jit", l)) => Ok(Mode::Jit(level(l)?)),
            Some(("aot", l)) => Ok(Mode::Aot(level(l)?)),
            _ => Err(format!(
                "unknown mode `{s}` (modes: interp, jit-O0, jit-O1, jit-O2, aot-O0, aot-O1, aot-O2, each also with `+sanitize`)"
            )),
        }
    }
}

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Exit status (`None` when killed by a signal or the timeout).
    pub status: Option<i32>,
    /// The signal that ended the process (Unix).
    pub signal: Option<i32>,
    /// Killed after running past the timeout.
    pub timed_out: bool,
    /// `tern build` failed (then the fields describe the build).
    pub build_failed: bool,
    /// Standard output (cut at [`OUTPUT_CAP`] bytes).
    pub stdout: String,
    /// Standard error (cut at [`OUTPUT_CAP`] bytes).
    pub stderr: String,
}

/// Output kept per stream; the rest is read and dropped.
pub const OUTPUT_CAP: usize = 4 << 20;

impl Outcome {
    /// A short summary: `exit 0`, `exit 101: error: ...`, `timed out`, ...
    pub fn summary(&self) -> String {
        let first_err = self.stderr.lines().next().unwrap_or("");
        let mut s = if self.timed_out {
            "timed out".to_string()
        } else if let Some(sig) = self.signal {
            format!("killed by signal {sig}")
        } else {
            format!("exit {}", self.status.unwrap_or(-1))
        };
        if self.build_failed {
            s = format!("build failed ({s})");
        }
        if !first_err.is_empty() {
            s.push_str(&format!(": {}", clip(first_err, 120)));
        }
        s
    }

    /// The outcome as a text file (kept with a disagreeing program).
    pub fn report(&self, mode: &str) -> String {
        format!(
            "mode: {mode}\nresult: {}\nexit status: {:?}\nsignal: {:?}\ntimed out: {}\nbuild failed: {}\n--- stdout\n{}--- stderr\n{}",
            self.summary(),
            self.status,
            self.signal,
            self.timed_out,
            self.build_failed,
            self.stdout,
            self.stderr
        )
    }
}

/// Runs programs with one `tern` binary.
#[derive(Clone, Debug)]
pub struct Runner {
    /// The driver under test.
    pub tern: PathBuf,
    /// Per-run timeout of a program (and of `tern run`, which compiles too).
    pub timeout: Duration,
    /// Timeout of `tern build` and `tern check`.
    pub build_timeout: Duration,
    /// Set `TERN_VERIFY=1` (Cranelift's verifier) for every compile.
    pub verify: bool,
}

impl Runner {
    /// A runner for `tern` with the given per-run timeout.
    pub fn new(tern: PathBuf, timeout: Duration) -> Runner {
        Runner {
            tern,
            timeout,
            build_timeout: Duration::from_secs(120).max(timeout),
            verify: false,
        }
    }

    fn tern(&self, dir: &Path) -> Command {
        let mut c = Command::new(&self.tern);
        c.current_dir(dir);
        if self.verify {
            c.env("TERN_VERIFY", "1");
        }
        c
    }

    /// `tern check FILE` in `dir`: `Err` with the diagnostics when the
    /// program does not compile.
    pub fn check(&self, dir: &Path, file: &str) -> Result<(), String> {
        let mut c = self.tern(dir);
        c.args(["check", file]);
        let o = run_with_timeout(c, self.build_timeout);
        if o.status == Some(0) {
            Ok(())
        } else {
            Err(format!("{}\n{}", o.summary(), o.stderr))
        }
    }

    /// Runs `file` (in `dir`, by its relative name, so that locations in
    /// messages are identical across modes) in `mode`.
    pub fn run(&self, dir: &Path, file: &str, mode: Mode) -> Outcome {
        let (engine, sanitize) = mode.split();
        let sanitize = if sanitize { &["--sanitize"][..] } else { &[] };
        let (stdin, args) = input_of(&dir.join(file));
        match engine {
            Engine::Interp => {
                let mut c = self.tern(dir);
                c.args(["run", "--interp"]).args(sanitize).arg(file);
                c.arg("--").args(&args);
                run_with_input(c, &stdin, self.timeout)
            }
            Engine::Jit(l) => {
                let mut c = self.tern(dir);
                c.args(["run", l.flag()]).args(sanitize).arg(file);
                c.arg("--").args(&args);
                run_with_input(c, &stdin, self.timeout)
            }
            Engine::Aot(l) => {
                let exe_name = format!("{}.{}.exe", file.trim_end_matches(".tern"), mode.name());
                let exe = dir.join(&exe_name);
                let mut c = self.tern(dir);
                c.args(["build", l.flag(), file, "-o", &exe_name])
                    .args(sanitize);
                let mut built = run_with_timeout(c, self.build_timeout);
                if built.status != Some(0) {
                    built.build_failed = true;
                    let _ = std::fs::remove_file(&exe);
                    return built;
                }
                let mut c = Command::new(&exe);
                c.current_dir(dir).args(&args);
                let o = run_with_input(c, &stdin, self.timeout);
                let _ = std::fs::remove_file(&exe);
                o
            }
        }
    }

    /// Runs `file` in every mode of `modes`, in order.
    pub fn run_all(&self, dir: &Path, file: &str, modes: &[Mode]) -> Vec<(Mode, Outcome)> {
        modes.iter().map(|&m| (m, self.run(dir, file, m))).collect()
    }
}

/// The standard input and arguments a program's header gives it: its
/// `// stdin: LINE` lines (each ending in a newline) and its `// args: A B`
/// words, the format of the test programs. None: empty input, no arguments.
pub fn input_of(file: &Path) -> (Vec<u8>, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut stdin = Vec::new();
    let mut args = Vec::new();
    for line in text.lines().take_while(|l| l.starts_with("//")) {
        if let Some(l) = line.strip_prefix("// stdin:") {
            stdin.extend_from_slice(l.strip_prefix(' ').unwrap_or(l).as_bytes());
            stdin.push(b'\n');
        } else if let Some(a) = line.strip_prefix("// args:") {
            args.extend(a.split_whitespace().map(str::to_string));
        }
    }
    (stdin, args)
}

/// Runs `cmd` to completion or until `timeout` (then kills it and every
/// process it started), with stdin closed, collecting its output.
pub fn run_with_timeout(cmd: Command, timeout: Duration) -> Outcome {
    run_with_input(cmd, &[], timeout)
}

/// [`run_with_timeout`] with `stdin` written to the program's standard
/// input (closed when empty).
pub fn run_with_input(mut cmd: Command, stdin: &[u8], timeout: Duration) -> Outcome {
    cmd.stdin(if stdin.is_empty() {
        Stdio::null()
    } else {
        Stdio::piped()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    // Its own process group, so that a timeout also ends what it started
    // (`tern build` runs the C compiler), which would otherwise keep the
    // output pipes open.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                status: None,
                signal: None,
                timed_out: false,
                build_failed: false,
                stdout: String::new(),
                stderr: format!("cannot start {:?}: {e}", cmd.get_program()),
            };
        }
    };
    // The input from a thread of its own: a program that reads nothing (or
    // less than all of it) must not block the runner.
    let input = stdin.to_vec();
    let writer = child.stdin.take().map(|mut p| {
        std::thread::spawn(move || {
            use std::io::Write as _;
            let _ = p.write_all(&input);
        })
    });
    let out = child
        .stdout
        .take()
        .map(|s| std::thread::spawn(move || drain(s)));
    let err = child
        .stderr
        .take()
        .map(|s| std::thread::spawn(move || drain(s)));
    let start = Instant::now();
    let mut timed_out = false;
    let mut pause = Duration::from_micros(500);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if start.elapsed() > timeout {
            timed_out = true;
            #[cfg(unix)]
            if let Ok(pgid) = i32::try_from(child.id()) {
                // SAFETY: plain syscall; the group is the child's own
                // (`process_group(0)` above), so only what it started dies.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    let join = |h: Option<std::thread::JoinHandle<String>>| {
        h.map(|h| h.join().unwrap_or_default()).unwrap_or_default()
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    let stdout = join(out);
    let stderr = join(err);
    #[cfg(unix)]
    let signal = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    #[cfg(not(unix))]
    let signal = None;
    Outcome {
        status: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        signal: if timed_out { None } else { signal },
        timed_out,
        build_failed: false,
        stdout,
        stderr,
    }
}

/// Reads a stream to its end, keeping the first [`OUTPUT_CAP`] bytes.
fn drain(mut r: impl Read) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// What differs between a mode's outcome and the reference.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiffKind {
    /// One timed out, the other did not.
    Timeout,
    /// One failed to build.
    Build,
    /// Killed by a signal.
    Signal,
    /// Exit status.
    Status,
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// All modes agree, but not with the program's intent; the payload is
    /// the class of what they did.
    Intent(String),
}

/// One disagreement: a mode (or `intent`) and what differed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// A mode name, or `intent`.
    pub mode: String,
    /// The first thing that differs.
    pub kind: DiffKind,
    /// A one-line description.
    pub what: String,
}

/// Compares the outcomes of one program: the largest group of identical
/// outcomes is the reference (ties go to the group of the earliest mode);
/// every mode outside it is a difference. Then the reference is checked
/// against the intent.
///
/// When the program's error reads differently under `--sanitize`
/// ([`Intent::sanitized`]), the sanitized modes are a group of their own,
/// compared with each other and with that intent.
pub fn compare(results: &[(Mode, Outcome)], intent: &Intent) -> Vec<Difference> {
    let Some(sanitized_intent) = intent.sanitized() else {
        return compare_group(results, intent, true);
    };
    let (sanitized, plain): (Vec<_>, Vec<_>) =
        results.iter().cloned().partition(|(m, _)| m.split().1);
    let mut out = compare_group(&plain, intent, false);
    out.extend(compare_group(&sanitized, &sanitized_intent, false));
    out
}

/// [`compare`] over one group of modes held to one intent (`whole`: the
/// group is every mode the program ran in).
fn compare_group(results: &[(Mode, Outcome)], intent: &Intent, whole: bool) -> Vec<Difference> {
    if results.is_empty() {
        return Vec::new();
    }
    // Groups of identical outcomes, in order of first appearance.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, (_, o)) in results.iter().enumerate() {
        match groups.iter_mut().find(|g| same(&results[g[0]].1, o)) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    let best = groups
        .iter()
        .enumerate()
        .max_by_key(|(k, g)| (g.len(), std::cmp::Reverse(*k)))
        .map(|(k, _)| k)
        .expect("at least one group");
    let reference = &results[groups[best][0]].1;
    let ref_modes: Vec<String> = groups[best].iter().map(|&i| results[i].0.name()).collect();
    let mut out = Vec::new();
    for (k, g) in groups.iter().enumerate() {
        if k == best {
            continue;
        }
        for &i in g {
            let (mode, o) = &results[i];
            let (kind, what) = describe(reference, o);
            out.push(Difference {
                mode: mode.name(),
                kind,
                what: format!("{what} (reference: {})", ref_modes.join(", ")),
            });
        }
    }
    if let Some((class, what)) = intent_mismatch(intent, reference) {
        let scope = if groups.len() == 1 && whole {
            "all modes".to_string()
        } else {
            ref_modes.join(", ")
        };
        out.push(Difference {
            mode: "intent".into(),
            kind: DiffKind::Intent(class),
            what: format!("{what} ({scope})"),
        });
    }
    out
}

/// Identical outcomes: a compile error reported by `tern run` and by
/// `tern build` is the same outcome (only the build flag differs).
fn same(a: &Outcome, b: &Outcome) -> bool {
    a.status == b.status
        && a.signal == b.signal
        && a.timed_out == b.timed_out
        && a.stdout == b.stdout
        && a.stderr == b.stderr
}

/// The first thing that differs between `reference` and `o`.
fn describe(reference: &Outcome, o: &Outcome) -> (DiffKind, String) {
    if o.timed_out != reference.timed_out {
        let what = if o.timed_out {
            "timed out (a hang)".to_string()
        } else {
            format!("finished ({}) where the reference timed out", o.summary())
        };
        return (DiffKind::Timeout, what);
    }
    if o.build_failed != reference.build_failed && !same(o, reference) {
        return (DiffKind::Build, format!("build: {}", o.summary()));
    }
    if o.signal != reference.signal {
        return (
            DiffKind::Signal,
            format!(
                "{} where the reference gave {}",
                o.summary(),
                reference.summary()
            ),
        );
    }
    if o.status != reference.status {
        return (
            DiffKind::Status,
            format!(
                "exit status {} vs {}",
                o.status.map_or("none".into(), |s| s.to_string()),
                reference.status.map_or("none".into(), |s| s.to_string())
            ),
        );
    }
    if o.stdout != reference.stdout {
        return (
            DiffKind::Stdout,
            format!(
                "stdout {}",
                first_line_difference(&o.stdout, &reference.stdout)
            ),
        );
    }
    (
        DiffKind::Stderr,
        format!(
            "stderr {}",
            first_line_difference(&o.stderr, &reference.stderr)
        ),
    )
}

/// `differs at line N: "got" vs "expected"`.
pub fn first_line_difference(got: &str, want: &str) -> String {
    let g: Vec<&str> = got.lines().collect();
    let w: Vec<&str> = want.lines().collect();
    for i in 0..g.len().max(w.len()) {
        let (a, b) = (g.get(i), w.get(i));
        if a != b {
            let show =
                |x: Option<&&str>| x.map_or("<end>".to_string(), |s| format!("{:?}", clip(s, 80)));
            return format!("differs at line {}: {} vs {}", i + 1, show(a), show(b));
        }
    }
    "differs in line endings".into()
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

/// The class of an outcome, for intent mismatches: `exit`, `timeout`,
/// `signal N`, `compile error`, or the error message without its location.
fn class(o: &Outcome) -> String {
    if o.timed_out {
        return "timeout".into();
    }
    if let Some(s) = o.signal {
        return format!("signal {s}");
    }
    if o.build_failed || o.status == Some(1) && !o.stderr.is_empty() {
        return "compile error".into();
    }
    if o.stderr.is_empty() {
        return "exit".into();
    }
    let line = o.stderr.lines().next().unwrap_or("");
    // `error: FILE:L:C: message` -> the message's first words.
    let msg = line.splitn(3, ": ").nth(2).unwrap_or(line);
    msg.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

/// `Some((class, description))` when `o` is not what `intent` says.
fn intent_mismatch(intent: &Intent, o: &Outcome) -> Option<(String, String)> {
    let ok = match intent {
        Intent::Exit => {
            !o.timed_out && o.signal.is_none() && !o.build_failed && o.stderr.is_empty()
        }
        Intent::Error { fragment, .. } => {
            // One error line, then the Tern call stack down to `main`.
            let lines: Vec<&str> = o.stderr.lines().collect();
            !o.timed_out
                && o.status == Some(101)
                && lines.len() >= 2
                && lines[0].starts_with("error: ")
                && lines[0].contains(fragment.as_str())
                && lines[1..]
                    .iter()
                    .all(|l| l.starts_with("  in ") || l.starts_with("  ... "))
                && lines.last().is_some_and(|l| l.starts_with("  in main "))
        }
    };
    if ok {
        return None;
    }
    let expected = match intent {
        Intent::Exit => "to run to the end".to_string(),
        Intent::Error { fragment, .. } => format!("an error containing {fragment:?}"),
    };
    Some((
        class(o),
        format!("expected {expected}, got {}", o.summary()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(status: i32, stdout: &str, stderr: &str) -> Outcome {
        Outcome {
            status: Some(status),
            signal: None,
            timed_out: false,
            build_failed: false,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn mode_names_round_trip() {
        for m in DEFAULT_MODES.iter().copied().chain([
            Mode::Interp,
            Mode::Aot(Level::O1),
            Mode::Sanitized(Engine::Interp),
            Mode::Sanitized(Engine::Aot(Level::O0)),
        ]) {
            assert_eq!(Mode::parse(&m.name()), Ok(m));
        }
        assert_eq!(Mode::Jit(Level::O2).name(), "jit-O2");
        assert_eq!(
            Mode::Sanitized(Engine::Jit(Level::O2)).name(),
            "jit-O2+sanitize"
        );
        assert!(Mode::parse("jit-O2+sanitize+sanitize").is_err());
        assert!(Mode::parse("jit-O3").is_err());
        assert!(Mode::parse("vm").is_err());
    }

    #[test]
    fn the_majority_is_the_reference() {
        let ok = out(0, "1\n2\n", "");
        let bad = out(0, "1\n3\n", "");
        let results = vec![
            (Mode::Jit(Level::O0), ok.clone()),
            (Mode::Jit(Level::O2), bad),
            (Mode::Aot(Level::O0), ok.clone()),
        ];
        let d = compare(&results, &Intent::Exit);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].mode, "jit-O2");
        assert_eq!(d[0].kind, DiffKind::Stdout);
        assert!(
            d[0].what.contains("line 2: \"3\" vs \"2\""),
            "{}",
            d[0].what
        );
    }

    #[test]
    fn sanitized_modes_are_held_to_the_sanitizer_s_error_when_it_names_it() {
        let intent = Intent::Error {
            kind: "reusable double free",
            fragment: "double free".into(),
            sanitized: Some("use of a freed slice"),
        };
        let plain = out(
            101,
            "",
            "error: p.tern:5:5: double free: the span overlaps free space\n  in main at p.tern:5:5\n",
        );
        let san = out(
            101,
            "",
            "error: p.tern:5:5: use of a freed slice (freed at p.tern:4:5)\n  in main at p.tern:5:5\n",
        );
        let sanitized = Mode::Sanitized(Engine::Jit(Level::O2));
        let results = vec![
            (Mode::Jit(Level::O0), plain.clone()),
            (Mode::Aot(Level::O2), plain.clone()),
            (sanitized, san),
        ];
        assert!(compare(&results, &intent).is_empty());
        // The pool's own message under --sanitize is a disagreement with the intent.
        let results = vec![(Mode::Jit(Level::O0), plain.clone()), (sanitized, plain)];
        let d = compare(&results, &intent);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].mode, "intent");
        assert!(d[0].what.contains("jit-O2+sanitize"), "{}", d[0].what);
    }

    #[test]
    fn intent_is_checked_when_all_agree() {
        let err = out(
            101,
            "",
            "error: p.tern:3:5: division by zero\n  in main at p.tern:3:5\n",
        );
        let results = vec![
            (Mode::Jit(Level::O0), err.clone()),
            (Mode::Aot(Level::O2), err),
        ];
        assert!(
            compare(
                &results,
                &Intent::Error {
                    kind: "d",
                    fragment: "division by zero".into(),
                    sanitized: None,
                }
            )
            .is_empty()
        );
        let d = compare(&results, &Intent::Exit);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].mode, "intent");
        assert_eq!(d[0].kind, DiffKind::Intent("division by zero".into()));
    }

    #[test]
    fn a_compile_error_is_the_same_in_run_and_build() {
        let jit = out(1, "", "p.tern:1:1: error: no `main` function\n");
        let mut aot = jit.clone();
        aot.build_failed = true;
        let results = vec![(Mode::Jit(Level::O0), jit), (Mode::Aot(Level::O0), aot)];
        let d = compare(&results, &Intent::Exit);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].mode, "intent");
        assert_eq!(d[0].kind, DiffKind::Intent("compile error".into()));
    }

    #[test]
    fn timeouts_and_statuses_are_described() {
        let ok = out(3, "", "");
        let mut hang = ok.clone();
        hang.timed_out = true;
        hang.status = None;
        let results = vec![
            (Mode::Jit(Level::O0), ok.clone()),
            (Mode::Jit(Level::O1), ok.clone()),
            (Mode::Aot(Level::O2), hang),
            (Mode::Aot(Level::O0), out(4, "", "")),
        ];
        let d = compare(&results, &Intent::Exit);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].kind, DiffKind::Timeout);
        assert_eq!(d[1].kind, DiffKind::Status);
        assert!(d[1].what.starts_with("exit status 4 vs 3"), "{}", d[1].what);
    }
}
