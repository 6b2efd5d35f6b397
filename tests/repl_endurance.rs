//! A session that fails 10 000 times: every failed input must give back its
//! thread, stack and JIT code, so the session neither dies (it used to panic
//! in Cranelift's JIT after ~9 000 failures: the process ran out of memory
//! mappings) nor grows (each stack overflow kept ~8 MB resident). Alone in
//! its test binary so that the children's peak RSS it reads is its own.

mod child_support;

use std::process::Command;
use std::time::Duration;

/// Index errors, runtime errors from inside a function, and stack overflows.
const FAILURES: usize = 10_000;
/// Every this many failures one is a stack overflow (the dear kind).
const OVERFLOW_EVERY: usize = 50;

#[test]
fn ten_thousand_failing_inputs_in_one_session() {
    let mut input = String::from(
        "let xs = [1, 2, 3];\nfn deep(n: i64) -> i64 { return deep(n + 1) + 1; }\nfn half(n: i64) -> i64 { return 100 / n; }\n",
    );
    for k in 0..FAILURES {
        input.push_str(match k % OVERFLOW_EVERY {
            0 => "deep(0)\n",
            1 => "half(0)\n",
            _ => "xs[7]\n",
        });
    }
    input.push_str("xs[0] + xs[2]\n");
    let mut repl = Command::new(env!("CARGO_BIN_EXE_tern"));
    repl.arg("repl").env_remove("TERN_STDLIB");
    // The debug session takes about 5 minutes alone on this project's
    // 2-core machine: four times that before it counts as a hang.
    let (out, timed_out) =
        child_support::run_timed(repl, Some(input.as_bytes()), Duration::from_secs(1200));
    assert!(
        !timed_out,
        "the session ran past 1200 s; stderr ends: {}",
        tail(&String::from_utf8_lossy(&out.stderr))
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr ends: {}", tail(&stderr));
    assert_eq!(
        stdout, "4\n",
        "the session still evaluates after every failure"
    );
    let count = |text: &str| stderr.lines().filter(|l| l.contains(text)).count();
    let overflows = FAILURES / OVERFLOW_EVERY;
    assert_eq!(count("<repl:deep>:1:4: stack overflow"), overflows);
    assert_eq!(count("division by zero"), overflows);
    assert_eq!(
        count("index out of bounds: index 7, length 3"),
        FAILURES - 2 * overflows
    );
    // One error line per failure, each followed by its backtrace only.
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error: ")).count(),
        FAILURES,
        "{}",
        tail(&stderr)
    );
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("error: ") || l.starts_with("  in ") || l.starts_with("  ... ")),
        "nothing else: {}",
        tail(&stderr)
    );
    // Peak resident memory of the session. Leaking one worker stack per
    // overflow would be 200 x 8 MB; the bound leaves room for a debug build.
    // SAFETY: getrusage fills the struct it is given.
    let peak_kib = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    };
    assert!(peak_kib < 256 * 1024, "peak RSS {peak_kib} KiB");
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}
