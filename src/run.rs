//! `tern run`: compile in-process with the JIT and run `main`, or, with
//! `--interp`, run it with the reference interpreter (`tern-interp`).

use std::time::Instant;

use tern_codegen::Options;

use crate::Failure;
use crate::frontend::compile_file;

/// Runs `file` and returns the program's exit status. With `time`, prints
/// front-end, Cranelift and execution times to stderr after the run. With
/// `interp`, the reference interpreter runs it instead of the JIT (the code
/// generation options are then irrelevant).
pub fn run(
    file: &str,
    opts: Options,
    time: bool,
    interp: bool,
    perf_map: bool,
) -> Result<i32, Failure> {
    let (program, front) = compile_file(file)?;
    if interp {
        return run_interp(&program, front, time, opts.sanitize);
    }
    let start = Instant::now();
    let symbols = tern_runtime::abi::symbols();
    let jit = crate::stack::jit(&program, &opts, &symbols)
        .map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let cranelift = start.elapsed();
    // A note on the command line is shown before the program runs; a
    // budget's note is about compiling: shown with the other compile
    // reports (`--time`), never mixed into the program's own stderr.
    for note in &jit.listing.usage_notes {
        say!("{note}");
    }
    if time {
        for note in &jit.listing.notes {
            say!("{note}");
        }
    }
    if perf_map {
        write_perf_map(&jit.functions)?;
    }
    let start = Instant::now();
    let cpu_start = process_cpu_time();
    // SAFETY: the table and the code it describes live in `jit` until the
    // end of the process.
    unsafe { tern_runtime::backtrace::table::register(jit.debug_table) };
    // SAFETY: `entry` is the compiled wrapper around Tern `main` with the
    // signature `tern_rt_main` expects; the JIT memory lives in `jit`.
    let status = unsafe { tern_runtime::abi::process::tern_rt_main(jit.entry()) };
    let exec = start.elapsed();
    let exec_cpu = process_cpu_time().saturating_sub(cpu_start);
    if time {
        say!("time: front end {:9.3} ms", ms(front));
        say!("time: cranelift {:9.3} ms", ms(cranelift));
        report_execution(exec, exec_cpu);
    }
    Ok(status)
}

/// `--perf-map`: the JIT's functions in the format `perf` reads from
/// `/tmp/perf-PID.map` (`START SIZE NAME`, hexadecimal, one per line). The
/// file is created fresh (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0644, as perf's
/// own tools expect): a file or link another user placed at the name is an
/// error, never followed or truncated; a regular file of the user's own there
/// is a stale map of an earlier process with the same id, and is replaced.
fn write_perf_map(functions: &[(String, *const u8, usize)]) -> Result<(), Failure> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let mut text = String::new();
    for (name, addr, size) in functions {
        text.push_str(&format!("{:x} {size:x} {name}\n", *addr as usize));
    }
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
    };
    let file = match create() {
        // A regular file of this user's at the name is an earlier process's
        // map under the same process id (ids are reused): stale, replaced.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && own_regular_file(&path) => {
            std::fs::remove_file(&path).and_then(|()| create())
        }
        other => other,
    };
    file.and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::AlreadyExists {
                " (not a file of yours: remove it, or run again under another process id)"
            } else {
                ""
            };
            Failure::new(
                1,
                format!("error: cannot write the perf map {path}: {e}{hint}"),
            )
        })
}

/// Whether `path` is a regular file (not a link) the effective user owns.
fn own_regular_file(path: &str) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path)
        // SAFETY: `geteuid` has no preconditions and cannot fail.
        .is_ok_and(|m| m.is_file() && m.uid() == unsafe { libc::geteuid() })
}

/// `tern run --interp`: the reference interpreter runs `program` with the
/// same process setup (`tern_rt_main`) as compiled code. An `extern fn` that
/// cannot be resolved is the JIT's error, with its text and status.
fn run_interp(
    program: &tern_compiler::tir::Program,
    front: std::time::Duration,
    time: bool,
    sanitize: bool,
) -> Result<i32, Failure> {
    let interp = tern_interp::Interpreter::new(program)
        .map_err(|e| Failure::new(1, format!("error: {e}")))?
        .sanitized(sanitize);
    let start = Instant::now();
    let cpu_start = process_cpu_time();
    let status = interp
        .run_main()
        .map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let exec = start.elapsed();
    let exec_cpu = process_cpu_time().saturating_sub(cpu_start);
    if time {
        say!("time: front end {:9.3} ms", ms(front));
        report_execution(exec, exec_cpu);
    }
    Ok(status)
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `--time` lines of the execution.
fn report_execution(exec: std::time::Duration, exec_cpu: std::time::Duration) {
    say!("time: execution {:9.3} ms", ms(exec));
    // CPU time of the execution, for `tern bench` (JIT exec mode), which
    // sets TERN_TIME_CPU=1; the lines above stay the default report.
    if crate::config::time_cpu() {
        say!("time: execution cpu {:9.3} ms", ms(exec_cpu));
    }
}

/// CPU time (user + system) this process has used so far.
fn process_cpu_time() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
