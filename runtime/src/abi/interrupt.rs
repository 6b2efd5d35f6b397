//! Stopping a running program from outside (the REPL's Ctrl-C).
//!
//! Code compiled with `Options::interrupt_flag` (the REPL's only: `tern run`
//! and AOT code never pay for it) reads one byte, [`INTERRUPT_REQUESTED`], at
//! every loop iteration (and function entry, unless its stack check stands
//! in: `tern_stack_fail`), and calls [`tern_rt_interrupted`] when it is set.
//! Setting it is one atomic store, so a signal handler may do it
//! ([`request_interrupt`]).

use std::ffi::c_char;
use std::sync::atomic::{AtomicU8, Ordering};

use super::fail::report;

/// Nonzero: the running program should stop at its next poll.
pub static INTERRUPT_REQUESTED: AtomicU8 = AtomicU8::new(0);

/// Asks the running program to stop (async-signal-safe).
pub fn request_interrupt() {
    INTERRUPT_REQUESTED.store(1, Ordering::SeqCst);
}

/// Withdraws a request (before an input starts, so a Ctrl-C meant for an
/// earlier one does not stop it).
pub fn clear_interrupt() {
    INTERRUPT_REQUESTED.store(0, Ordering::SeqCst);
}

/// Address of [`INTERRUPT_REQUESTED`], for `Options::interrupt_flag`.
pub fn interrupt_flag_address() -> usize {
    INTERRUPT_REQUESTED.as_ptr() as usize
}

/// Whether an interrupt was requested; clears the request.
pub fn take_interrupt() -> bool {
    INTERRUPT_REQUESTED.swap(0, Ordering::SeqCst) != 0
}

/// Called by polling code that found the flag set: clears it and fails the
/// run with `error: LOC: interrupted`.
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_rt_interrupted(loc: *const c_char) -> ! {
    clear_interrupt();
    report(loc, "interrupted".into())
}
