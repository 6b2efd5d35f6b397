//! `tern run`: compile in-process with the JIT and run `main`.

use std::time::Instant;

use tern_codegen::{OptLevel, Options};

use crate::Failure;
use crate::frontend::compile_file;

/// Runs `file` and returns the program's exit status. With `time`, prints
/// front-end, Cranelift and execution times to stderr after the run.
pub fn run(file: &str, level: OptLevel, time: bool) -> Result<i32, Failure> {
    let (program, front) = compile_file(file)?;
    let start = Instant::now();
    let symbols = tern_runtime::abi::symbols();
    let jit = crate::stack::jit(&program, &Options::new(level), &symbols)
        .map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let cranelift = start.elapsed();
    let start = Instant::now();
    let cpu_start = process_cpu_time();
    // SAFETY: `entry` is the compiled wrapper around Tern `main` with the
    // signature `tern_rt_main` expects; the JIT memory lives in `jit`.
    let status = unsafe { tern_runtime::abi::process::tern_rt_main(jit.entry()) };
    let exec = start.elapsed();
    let exec_cpu = process_cpu_time().saturating_sub(cpu_start);
    if time {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        eprintln!("time: front end {:9.3} ms", ms(front));
        eprintln!("time: cranelift {:9.3} ms", ms(cranelift));
        eprintln!("time: execution {:9.3} ms", ms(exec));
        // CPU time of the execution, for `tern bench` (JIT exec mode), which
        // sets TERN_TIME_CPU=1; the three lines above stay the default report.
        if std::env::var_os("TERN_TIME_CPU").is_some_and(|v| v == "1") {
            eprintln!("time: execution cpu {:9.3} ms", ms(exec_cpu));
        }
    }
    Ok(status)
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
