//! Process entry and exit for Tern programs, shared by AOT (the object's C
//! `main` calls [`tern_rt_main`]) and the JIT (the driver calls it with the
//! compiled entry).

use super::output::flush_stdout;

/// Runs a Tern program: sets up the runtime, calls `main`, flushes the
/// buffered stdout and returns the exit status. `main` returns the
/// program's `i64` status (0 for `fn main()`); the status is its low 32
/// bits, of which the OS keeps the low 8.
///
/// # Safety
/// `main` is a generated Tern entry (`extern "C" fn() -> i64`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_rt_main(main: extern "C" fn() -> i64) -> i32 {
    set_up();
    let status = main();
    flush_stdout();
    status as i32
}

/// Flushes the buffered stdout (also done at exit and before any failure).
#[unsafe(no_mangle)]
pub extern "C" fn tern_rt_flush() {
    flush_stdout();
}

/// Runtime state a program needs before its first instruction: the builtin
/// pool is created now (not on first use) so that a bad `TERN_POOL_BYTES` or
/// a failed reservation is reported before the program prints anything.
fn set_up() {
    if let Err(msg) = crate::builtin::with_pool(|_| ()) {
        super::fail::report_at("<runtime>", &msg);
    }
}
