//! The single failure path for runtime errors reported on behalf of generated code.
//!
//! Every runtime error that ends the run goes through [`report`]; it prints
//! `error: LOC: MESSAGE` on stderr and exits with status 101. Keeping it the only
//! exit point lets the REPL replace what happens (recovery instead of exit) in one
//! place. (The backend extends it with stdout flushing and REPL recovery.)

use std::ffi::{CStr, c_char};

/// The source location string `loc` (NUL-terminated UTF-8, `file:line:col`), or
/// `?` for null.
// `loc` is the backend's read-only string constant for the call site; this is the
// documented contract of every `tern_*` function taking a `loc`, so the function
// stays safe to call from the runtime's own code.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn loc_str(loc: *const c_char) -> String {
    if loc.is_null() {
        return "?".into();
    }
    // SAFETY: the backend emits `loc` as a NUL-terminated read-only string.
    unsafe { CStr::from_ptr(loc) }
        .to_string_lossy()
        .into_owned()
}

/// Reports a runtime error at `loc` and ends the run with status 101.
pub fn report(loc: *const c_char, msg: &str) -> ! {
    use std::io::Write;
    // Not `eprintln!`: it panics when stderr is closed, and this runs under `extern "C"`.
    let _ = writeln!(std::io::stderr(), "error: {}: {msg}", loc_str(loc));
    std::process::exit(101)
}
