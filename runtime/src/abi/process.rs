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
    install_fault_handler();
}

/// Stack overflow (deep recursion, a huge array on the stack) and invalid
/// accesses through `unsafe` end the run the same way in JIT and AOT: output
/// so far is flushed, one `error:` line, status 101. Without this the AOT
/// executable would die by SIGSEGV while the JIT (inside the Rust driver)
/// would abort with Rust's own message.
#[cfg(unix)]
fn install_fault_handler() {
    use std::ptr::null_mut;
    const ALT_STACK: usize = 64 * 1024;
    // SAFETY: plain libc calls on memory this function owns; the handler
    // only uses async-signal-safe operations (see `on_fault`).
    unsafe {
        let stack = libc::mmap(
            null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return;
        }
        let ss = libc::stack_t {
            ss_sp: stack,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        if libc::sigaltstack(&ss, null_mut()) != 0 {
            return;
        }
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_fault as *const () as usize;
        sa.sa_flags = libc::SA_ONSTACK | libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSEGV, &sa, null_mut());
        libc::sigaction(libc::SIGBUS, &sa, null_mut());
    }
}

#[cfg(not(unix))]
fn install_fault_handler() {}

#[cfg(unix)]
extern "C" fn on_fault(_sig: libc::c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    super::output::flush_stdout_in_signal();
    let msg = b"error: stack overflow or invalid memory access\n";
    // SAFETY: write(2) and _exit are async-signal-safe.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(super::fail::FAILURE_STATUS);
    }
}
