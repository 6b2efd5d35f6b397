//! One sample: a child process, its exit status and output, and what it
//! cost: CPU time (user+sys) from the OS via `wait4`'s rusage, wall time,
//! or (under callgrind) the instructions it executed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::config::Side;

/// What one child process did and cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Exit status, or 128 + signal number when a signal ended it.
    pub status: i32,
    /// Everything the child wrote on stdout.
    pub stdout: String,
    /// Everything the child wrote on stderr.
    pub stderr: String,
    /// User + system CPU seconds of the child, from the OS.
    pub cpu_s: f64,
    /// Wall-clock seconds from spawn to reaping.
    pub wall_s: f64,
}

/// Runs `cmd` to completion, capturing stdout and stderr, and measures it.
pub fn run(cmd: &mut Command) -> Result<Outcome, String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let start = Instant::now();
    let mut child = super::interrupt::spawn_in_group(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    // stderr is read on a thread so a chatty child can never block on a
    // full pipe while we read stdout.
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let mut stdout = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_string(&mut stdout);
    let waited = wait4(child.id() as libc::pid_t);
    super::interrupt::finished();
    let (status, usage) = waited.map_err(|e| format!("waiting for `{program}`: {e}"))?;
    let wall_s = start.elapsed().as_secs_f64();
    let stderr = err_thread.join().unwrap_or_default();
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok(Outcome {
        status,
        stdout,
        stderr,
        cpu_s: tv(usage.ru_utime) + tv(usage.ru_stime),
        wall_s,
    })
}

/// Reaps `pid` and returns its status and resource usage (the child's own,
/// not its descendants').
fn wait4(pid: libc::pid_t) -> std::io::Result<(i32, libc::rusage)> {
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value to be overwritten.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: both out-pointers are valid for writes for the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            };
            return Ok((code, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Wraps `cmd` to run under `valgrind --tool=callgrind`, writing its
/// profile to `profile`. With `only` set, counts instructions only inside
/// that function (and what it calls).
pub fn under_callgrind(cmd: &Command, profile: &Path, only: Option<&str>) -> Command {
    let mut v = Command::new("valgrind");
    // `--vgdb=no`: no gdbserver, whose FIFOs and shared file in `$TMPDIR`
    // an interrupted sample left behind.
    v.arg("--tool=callgrind")
        .arg("-q")
        .arg("--vgdb=no")
        .arg(format!("--callgrind-out-file={}", profile.display()));
    if let Some(f) = only {
        v.arg(format!("--toggle-collect={f}"));
    }
    v.arg(cmd.get_program()).args(cmd.get_args());
    with_setting_of(cmd, v)
}

/// Keeps what a sample inherits from the user's environment to what the
/// run means to measure: the pool statistics file (`TERN_POOL_STATS`: every
/// JIT sample overwrote a user's report with its own) and the verifier
/// (`TERN_VERIFY`: it slows every compile, so the JIT's figures were not
/// the compiler's) are dropped unless the sample sets them itself, and
/// relative `TERN_STDLIB` and `TERN_RUNTIME_LIB` paths are made absolute
/// (the trace replays run in their own folder, where a relative one named
/// nothing).
pub fn settle_environment(cmd: &mut Command) {
    let own: Vec<std::ffi::OsString> = cmd.get_envs().map(|(k, _)| k.to_owned()).collect();
    let set_here = |k: &str| own.iter().any(|o| o == k);
    for k in ["TERN_POOL_STATS", "TERN_VERIFY"] {
        if !set_here(k) {
            cmd.env_remove(k);
        }
    }
    for k in ["TERN_STDLIB", "TERN_RUNTIME_LIB"] {
        let inherited = std::env::var_os(k).map(std::path::PathBuf::from);
        if let Some(p) = inherited.filter(|p| p.is_relative() && !set_here(k))
            && let Ok(abs) = std::path::absolute(&p)
        {
            cmd.env(k, abs);
        }
    }
}

/// A new command running what `cmd` runs, with the same arguments, folder
/// and environment (`Command` is not `Clone`).
pub fn copy(cmd: &Command) -> Command {
    let mut c = Command::new(cmd.get_program());
    c.args(cmd.get_args());
    with_setting_of(cmd, c)
}

/// `c` with `cmd`'s folder and environment changes.
fn with_setting_of(cmd: &Command, mut c: Command) -> Command {
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    for (k, val) in cmd.get_envs() {
        match val {
            Some(val) => c.env(k, val),
            None => c.env_remove(k),
        };
    }
    c
}

/// The total instruction count (`Ir`) of a callgrind profile.
pub fn callgrind_total(profile: &str) -> Option<u64> {
    profile
        .lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

/// The instructions a callgrind profile counts in the functions whose name
/// satisfies `pick` (their own instructions, not what they call): what
/// `memset` and `memcpy` cost, for figures without them.
pub fn callgrind_self(profile: &str, pick: impl Fn(&str) -> bool) -> u64 {
    // Names are compressed: `fn=(id) name` the first time, `fn=(id)` after;
    // a `calls=` line is followed by the callee's inclusive cost, which is
    // not the caller's own.
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let (mut counting, mut after_calls, mut total) = (false, false, 0u64);
    for line in profile.lines() {
        if let Some(rest) = line
            .strip_prefix("fn=")
            .or_else(|| line.strip_prefix("cfn="))
        {
            let (id, name) = match rest.split_once(' ') {
                Some((id, name)) => {
                    names.insert(id, name);
                    (id, name)
                }
                None => (rest, names.get(rest).copied().unwrap_or(rest)),
            };
            let _ = id;
            if line.starts_with("fn=") {
                counting = pick(name);
            }
            continue;
        }
        if line.starts_with("calls=") {
            after_calls = true;
            continue;
        }
        let first = line.bytes().next();
        let is_cost = matches!(first, Some(b'0'..=b'9' | b'+' | b'-' | b'*'));
        if !is_cost {
            continue;
        }
        if after_calls {
            after_calls = false;
            continue;
        }
        if counting {
            // `POSITION... COST`: the last field is the instruction count.
            total += line
                .split_whitespace()
                .last()
                .and_then(|c| c.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

/// Whether a function is one of the C library's fills and copies.
pub fn is_memset_or_memcpy(name: &str) -> bool {
    name.contains("memset") || name.contains("memcpy") || name.contains("memmove")
}

/// The figures `tern run --time` reports on stderr, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JitTimes {
    /// Front end (parse, check, monomorphize).
    pub front_ms: f64,
    /// Cranelift compilation.
    pub cranelift_ms: f64,
    /// Wall time of the execution of `main`.
    pub exec_ms: f64,
    /// CPU time of the execution (process CPU clock around `main`).
    pub exec_cpu_ms: f64,
}

/// `tern run --time` stderr split: the time report (`None` when
/// incomplete), the compiler's notes (`note: ...` lines, such as the
/// inliner's budget note under `--calls inline`) and the program's own
/// stderr lines.
pub struct JitStderr {
    pub times: Option<JitTimes>,
    pub notes: String,
    pub rest: String,
}

/// Splits `tern run --time` stderr (see [`JitStderr`]).
pub fn parse_jit_times(stderr: &str) -> JitStderr {
    let mut t = JitTimes::default();
    let mut seen = 0u8;
    let (mut notes, mut rest) = (String::new(), String::new());
    for line in stderr.lines() {
        let field = line
            .strip_prefix("time: ")
            .and_then(|l| l.strip_suffix(" ms"))
            .and_then(|l| l.trim_end().rsplit_once(char::is_whitespace))
            .and_then(|(name, value)| Some((name.trim().to_string(), value.parse::<f64>().ok()?)));
        match field {
            Some((name, v)) if name == "front end" => (t.front_ms, seen) = (v, seen | 1),
            Some((name, v)) if name == "cranelift" => (t.cranelift_ms, seen) = (v, seen | 2),
            Some((name, v)) if name == "execution" => (t.exec_ms, seen) = (v, seen | 4),
            Some((name, v)) if name == "execution cpu" => (t.exec_cpu_ms, seen) = (v, seen | 8),
            _ => {
                let to = if line.starts_with("note: ") {
                    &mut notes
                } else {
                    &mut rest
                };
                to.push_str(line);
                to.push('\n');
            }
        }
    }
    JitStderr {
        times: (seen == 15).then_some(t),
        notes,
        rest,
    }
}

/// The arena a side's pools reached, from the runtime's report (written to
/// the file `TERN_POOL_STATS` names: `KIND BYTES` lines, one per kind of
/// pool, each its high-water mark): the builtin side's builtin pool; a
/// library side's pools plus the builtin pool, where every side keeps the
/// workload's tables; `None` for C (no pool) or a report without the side's
/// own pool.
pub fn pool_high_water(report: &str, side: Side) -> Option<u64> {
    let mark = |kind: &str| {
        report.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == kind).then(|| v.trim().parse::<u64>().ok())?
        })
    };
    let own = match side {
        Side::Builtin => return mark("builtin"),
        Side::Library => mark("library")?,
        Side::Pure => mark("pure")?,
        Side::C | Side::CZeroed => return None,
    };
    Some(own + mark("builtin").unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_time_report_and_keeps_other_lines() {
        let err = "note: inlining stopped\ntime: front end     5.547 ms\ntime: cranelift    35.078 ms\n\
                   warning: x\ntime: execution     0.127 ms\ntime: execution cpu     0.120 ms\n";
        let JitStderr { times, notes, rest } = parse_jit_times(err);
        assert_eq!(
            times,
            Some(JitTimes {
                front_ms: 5.547,
                cranelift_ms: 35.078,
                exec_ms: 0.127,
                exec_cpu_ms: 0.12
            })
        );
        assert_eq!(rest, "warning: x\n");
        assert_eq!(notes, "note: inlining stopped\n");
        assert_eq!(parse_jit_times("time: front end 1.0 ms\n").times, None);
    }

    #[test]
    fn reads_each_sides_pool_high_water() {
        let report = "builtin 4096\nlibrary 1048576\n";
        assert_eq!(pool_high_water(report, Side::Builtin), Some(4096));
        assert_eq!(
            pool_high_water(report, Side::Library),
            Some((1 << 20) + 4096)
        );
        assert_eq!(pool_high_water(report, Side::Pure), None);
        assert_eq!(pool_high_water(report, Side::C), None);
        assert_eq!(pool_high_water("builtin x\n", Side::Builtin), None);
    }

    #[test]
    fn reads_callgrind_totals() {
        let profile =
            "# callgrind format\nevents: Ir\nfn=(1) main\n3 10\nsummary: 123456\ntotals: 123456\n";
        assert_eq!(callgrind_total(profile), Some(123456));
        assert_eq!(callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn counts_the_own_instructions_of_chosen_functions() {
        // Positions `instr line`; a call's inclusive cost follows `calls=`.
        let profile = concat!(
            "events: Ir\nfn=(1) main\n0x10 1 5\ncfn=(2) __memset_avx2\ncalls=1 0x20\n",
            "0x11 1 300\n+1 1 2\nfn=(2)\n0x20 0 290\n+3 0 10\nfn=(3) memcpy@plt\n0x30 0 4\n",
            "fn=(1)\n0x12 2 1\nsummary: 312\n"
        );
        assert_eq!(callgrind_self(profile, is_memset_or_memcpy), 304);
        assert_eq!(callgrind_self(profile, |n| n == "main"), 8);
        assert_eq!(callgrind_self(profile, |_| false), 0);
    }

    #[test]
    fn measures_a_child_and_reports_its_status() {
        let o = run(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"])).unwrap();
        assert_eq!(
            (o.status, o.stdout.as_str(), o.stderr.as_str()),
            (3, "out\n", "err\n")
        );
        assert!(o.cpu_s >= 0.0 && o.wall_s > 0.0);
        let e = run(&mut Command::new("/nonexistent/tern-bench-test")).unwrap_err();
        assert!(
            e.starts_with("cannot start `/nonexistent/tern-bench-test`"),
            "{e}"
        );
    }
}
