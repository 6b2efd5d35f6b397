//! Program output (`print`) through a runtime-owned stdout buffer, and the
//! failure entry points the generated code calls. Every failure goes
//! through [`super::fail::report`].

use std::ffi::c_char;
use std::io::Write;
use std::sync::Mutex;

use super::fail::report;

/// Buffered bytes not yet written to fd 1. A `Mutex` rather than a
/// thread-local so that a flush from any thread (exit, failure) sees
/// everything printed.
static STDOUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Flush threshold: big enough that printing loops cost one `write` per
/// many lines, small enough to bound memory.
const FLUSH_AT: usize = 64 * 1024;

fn with_buffer(f: impl FnOnce(&mut Vec<u8>)) {
    let mut buf = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut buf);
    if buf.len() >= FLUSH_AT {
        write_out(&mut buf);
    }
}

fn write_out(buf: &mut Vec<u8>) {
    let mut out = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) must not turn into a crash; the
    // bytes are dropped like C's stdio would after EPIPE.
    let _ = out.write_all(buf);
    let _ = out.flush();
    buf.clear();
}

/// Writes the buffered program output to stdout now.
pub fn flush_stdout() {
    let mut buf = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    write_out(&mut buf);
}

/// Flushes from a signal handler: no locking that could deadlock (if the
/// fault hit while the buffer was locked, its bytes are dropped) and raw
/// `write(2)` instead of `std::io`.
#[cfg(unix)]
pub(crate) fn flush_stdout_in_signal() {
    let Ok(buf) = STDOUT.try_lock() else {
        return;
    };
    let mut rest: &[u8] = &buf;
    while !rest.is_empty() {
        // SAFETY: writing initialized bytes the guard keeps alive.
        let n = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// Prints `v` in decimal and a newline. `i32` and `u8` values arrive
/// widened to `i64` by the generated code.
#[unsafe(no_mangle)]
pub extern "C" fn tern_print_i64(v: i64) {
    with_buffer(|b| {
        let _ = writeln!(b, "{v}");
    });
}

/// Prints `true` or `false` (any non-zero byte is `true`) and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn tern_print_bool(v: u8) {
    with_buffer(|b| b.extend_from_slice(if v != 0 { b"true\n" } else { b"false\n" }));
}

/// Prints `len` bytes at `ptr` and a newline.
///
/// # Safety
/// `ptr` points to `len` readable bytes (a string literal of the program).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_print_str(ptr: *const u8, len: i64) {
    // SAFETY: caller contract.
    let bytes = unsafe { bytes(ptr, len) };
    with_buffer(|b| {
        b.extend_from_slice(bytes);
        b.push(b'\n');
    });
}

/// # Safety
/// `ptr` points to `len` readable bytes, or `len <= 0`.
unsafe fn bytes<'a>(ptr: *const u8, len: i64) -> &'a [u8] {
    if ptr.is_null() || len <= 0 {
        &[]
    } else {
        // SAFETY: caller contract.
        unsafe { std::slice::from_raw_parts(ptr, len as usize) }
    }
}

/// `panic("msg")` and `panic("msg", detail)`: `error: LOC: panic: MSGDETAIL`,
/// status 101. `detail` (null/0 when absent) is message text computed at run
/// time, such as a library's rendering of a span-tree error code.
///
/// # Safety
/// `msg_ptr`/`msg_len` and `detail_ptr`/`detail_len` describe readable bytes
/// (or are null/0); `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_panic(
    msg_ptr: *const u8,
    msg_len: i64,
    detail_ptr: *const u8,
    detail_len: i64,
    loc: *const c_char,
) -> ! {
    // SAFETY: caller contract.
    let msg = String::from_utf8_lossy(unsafe { bytes(msg_ptr, msg_len) });
    // SAFETY: caller contract.
    let detail = String::from_utf8_lossy(unsafe { bytes(detail_ptr, detail_len) });
    report(loc, &format!("panic: {msg}{detail}"))
}

/// A failed `assert(c, "msg")`: `error: LOC: assertion failed: MSG`.
///
/// # Safety
/// As [`tern_panic`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_assert_fail(
    msg_ptr: *const u8,
    msg_len: i64,
    loc: *const c_char,
) -> ! {
    // SAFETY: caller contract.
    let msg = String::from_utf8_lossy(unsafe { bytes(msg_ptr, msg_len) });
    report(loc, &format!("assertion failed: {msg}"))
}

/// A failed index check: `error: LOC: index out of bounds: index I, length N`.
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_bounds_fail(index: i64, len: i64, loc: *const c_char) -> ! {
    report(
        loc,
        &format!("index out of bounds: index {index}, length {len}"),
    )
}

/// A failed range check: `error: LOC: slice out of bounds: LO..HI, length N`.
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_slice_fail(lo: i64, hi: i64, len: i64, loc: *const c_char) -> ! {
    report(
        loc,
        &format!("slice out of bounds: {lo}..{hi}, length {len}"),
    )
}

/// A length whose byte count cannot exist: `error: LOC: OP: negative length N`,
/// or `error: LOC: OP: length N is too large for S-byte elements (the byte count
/// must fit in 63 bits)`. The generated code checks `len * elem_size` before
/// any pool call (`reusable::alloc`, `resize`, `append`), so a wrapped size
/// never reaches the pool.
///
/// # Safety
/// `op` and `loc` are null or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_length_fail(
    op: *const c_char,
    len: i64,
    elem_size: i64,
    loc: *const c_char,
) -> ! {
    let op = super::fail::loc_str(op);
    let msg = if len < 0 {
        format!("{op}: negative length {len}")
    } else {
        format!(
            "{op}: length {len} is too large for {elem_size}-byte elements \
             (the byte count must fit in 63 bits)"
        )
    };
    report(loc, &msg)
}

/// Division or remainder by zero: `error: LOC: division by zero`.
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_div_zero(loc: *const c_char) -> ! {
    report(loc, "division by zero")
}
