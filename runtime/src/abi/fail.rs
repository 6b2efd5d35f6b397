//! The single failure path of the runtime: every runtime error of a Tern
//! program (bounds, division, panic, assert, pool errors) ends here.
//!
//! `report` flushes the program's buffered stdout, prints the line
//! `error: <loc>: <message>` on stderr, followed by the Tern call stack
//! (`  in NAME at LOC`, see [`crate::backtrace`]), and ends the process with
//! status 101.
//!
//! Host seam: a host that must survive a failing program (the REPL) installs
//! a hook with [`set_failure_hook`]. `report` still flushes stdout first,
//! then calls the hook instead of printing and exiting. The hook must not
//! return; it receives the location and message, owned, so it can keep them.
//!
//! Why owned: the REPL's hook leaves by `siglongjmp` back to where its worker
//! entered the generated code, jumping over the frames of the failing runtime
//! entry point. That is sound only over frames with nothing left to drop, so
//! every entry point builds its message in a helper (whose temporaries die on
//! return) and *moves* it here, and nothing on this path holds a lock or a
//! borrow when the hook runs. Keep it so when adding a failure.

use std::ffi::{CStr, c_char};
use std::sync::RwLock;

pub use crate::exit_status::FAILURE_STATUS;

/// The line a fault the runtime cannot place ends the run with: an invalid
/// access through `unsafe`, or a stack overflow outside Tern code (inside a
/// runtime function, `print`'s say). Shared by the fault handler of
/// [`super::process`] and [`report_fault`], so the text lives here only.
pub(crate) const STACK_OVERFLOW_LINE: &str = "error: stack overflow or invalid memory access\n";

/// The report of a stack overflow whose Tern frames are known (innermost
/// first): `error: LOC: stack overflow` at the innermost frame of the
/// user's code, then the stack with the number of collapsed frames left out
/// (it depends on the mode, the optimization level and the stack's size;
/// the rest does not), and a recursion through several functions cut to
/// whole turns ([`crate::backtrace::whole_cycles`]). `None` without frames.
pub(crate) fn overflow_report(frames: &[crate::backtrace::Frame]) -> Option<String> {
    let frames = crate::backtrace::whole_cycles(frames);
    let innermost = frames.first()?;
    let loc = &frames.iter().find(|f| !f.library).unwrap_or(innermost).loc;
    Some(format!(
        "error: {loc}: stack overflow\n{}",
        crate::backtrace::render_uncounted(frames)
    ))
}

/// What a host can substitute for "print and exit" (see the module docs).
pub type FailureHook = fn(loc: String, msg: String) -> !;

static HOOK: RwLock<Option<FailureHook>> = RwLock::new(None);

/// Installs (`Some`) or removes (`None`) the failure hook.
pub fn set_failure_hook(hook: Option<FailureHook>) {
    *HOOK.write().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// The source location string `loc` (NUL-terminated UTF-8, `file:line:col`),
/// or `?` for null.
pub(crate) fn loc_str(loc: *const c_char) -> String {
    if loc.is_null() {
        return "?".into();
    }
    // SAFETY: every caller passes a location the backend emitted as a
    // NUL-terminated read-only string (or null, handled above).
    unsafe { CStr::from_ptr(loc) }
        .to_string_lossy()
        .into_owned()
}

/// Reports a runtime error at `loc` (a NUL-terminated `file:line:col`
/// emitted by the backend, or null) and ends the run.
pub(crate) fn report(loc: *const c_char, msg: String) -> ! {
    report_at(loc_str(loc), msg)
}

/// Ends the run exactly as the fault handler does after a stack overflow:
/// flushes stdout, prints [`overflow_report`] of the Tern stack (from the
/// host's [`crate::backtrace::StackSource`]: the reference interpreter's
/// simulated stack, which it detects overflowing itself) on stderr, or
/// [`STACK_OVERFLOW_LINE`] when there is none, and exits with
/// [`FAILURE_STATUS`]. Like the fault handler, it does not consult the
/// failure hook.
pub fn report_stack_overflow() -> ! {
    let frames = crate::backtrace::capture();
    end_with(&overflow_report(&frames).unwrap_or_else(|| STACK_OVERFLOW_LINE.into()))
}

/// Ends the run as the fault handler does after a fault it cannot place
/// ([`STACK_OVERFLOW_LINE`]): for a host that would fault where compiled
/// code does (the interpreter calling a null entry point).
pub fn report_fault() -> ! {
    end_with(STACK_OVERFLOW_LINE)
}

/// Flushes stdout, writes `text` on stderr, exits with [`FAILURE_STATUS`].
fn end_with(text: &str) -> ! {
    crate::stdout::flush();
    use std::io::Write;
    // Not `eprint!`: it panics when stderr is closed.
    let _ = std::io::stderr().write_all(text.as_bytes());
    std::process::exit(FAILURE_STATUS)
}

/// [`report`] located at the program's own call into the stdlib: the
/// innermost frame of the user's code (not of a standard-library module),
/// for errors a stdlib module reports on the program's behalf (`io`: `cannot
/// open 'data.txt': ...`). `<runtime>` when the stack has no such frame.
pub fn report_at_caller(msg: String) -> ! {
    report_located(None, msg)
}

/// [`report`] with the location already as text. An error raised inside a
/// standard-library module (a `slice_pool` double free, a `vec` index) is
/// located at the program's own call into the library, the innermost frame
/// of the user's code, as Rust's `#[track_caller]` locates an `unwrap`: the
/// backtrace below still shows the library's lines and marks that frame.
pub fn report_at(loc: impl Into<String>, msg: impl Into<String>) -> ! {
    report_located(Some(loc.into()), msg.into())
}

/// [`report_at`] at `loc`, or with `None` at [`report_at_caller`]'s
/// location: one capture of the stack gives the location and the trace.
fn report_located(loc: Option<String>, mut msg: String) -> ! {
    let loc = {
        let frames = crate::backtrace::capture();
        let user = frames.iter().find(|f| !f.library).map(|f| f.loc.clone());
        let inside_library = frames.first().is_some_and(|f| f.library);
        let loc = match loc {
            Some(loc) if !inside_library => loc,
            given => user.or(given).unwrap_or_else(|| "<runtime>".to_string()),
        };
        // The backtrace joins the message, so a host's hook prints it too.
        // (Both die here: nothing is left to drop when the hook jumps.)
        let trace = crate::backtrace::render(&frames);
        if !trace.is_empty() {
            msg.push('\n');
            msg.push_str(trace.trim_end());
        }
        loc
    };
    // Output printed before the failure must appear before the error line
    // and must not be lost by the exit below; if it cannot be written, the
    // error line still is, before the output's own error.
    crate::stdout::flush_before_error(&format!("error: {loc}: {msg}\n"));
    // The read guard ends with this statement: the hook runs without it.
    let hook = *HOOK.read().unwrap_or_else(|e| e.into_inner());
    if let Some(hook) = hook {
        hook(loc, msg);
    }
    // Not `eprintln!`: it panics when stderr is closed, and this runs under `extern "C"`.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "error: {loc}: {msg}");
    std::process::exit(FAILURE_STATUS)
}
