//! Program output (`print`, through the runtime's stdout buffer,
//! `crate::stdout`) and the failure entry points the generated code calls.
//! Every failure goes through [`super::fail::report`].

use std::ffi::c_char;

use super::fail::report;
use crate::stdout;

/// Where a `print`-family builtin writes: `print`/`write` to stdout (the
/// runtime's buffer), `eprint`/`ewrite` to stderr (unbuffered, as C's
/// stderr: each piece is written at once, errors ignored).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

fn emit(stream: Stream, parts: &[&[u8]]) {
    match stream {
        Stream::Out => stdout::write(parts),
        Stream::Err => {
            for part in parts {
                let _ = crate::io::write_fd(2, part);
            }
        }
    }
}

/// Prints `v` in decimal and a newline. `i32` and `u8` values arrive
/// widened to `i64` by the generated code.
#[unsafe(no_mangle)]
pub extern "C" fn tern_print_i64(v: i64) {
    decimal(Stream::Out, v.unsigned_abs(), v < 0, true);
}

/// Prints `v` (a `u64`) in unsigned decimal and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn tern_print_u64(v: u64) {
    decimal(Stream::Out, v, false, true);
}

/// `write(x)` of an integer: `tern_print_i64` without the newline.
#[unsafe(no_mangle)]
pub extern "C" fn tern_write_i64(v: i64) {
    decimal(Stream::Out, v.unsigned_abs(), v < 0, false);
}

/// `write(x)` of a `u64`: `tern_print_u64` without the newline.
#[unsafe(no_mangle)]
pub extern "C" fn tern_write_u64(v: u64) {
    decimal(Stream::Out, v, false, false);
}

/// `write(x)` of a bool: `true` or `false`.
#[unsafe(no_mangle)]
pub extern "C" fn tern_write_bool(v: u8) {
    boolean(Stream::Out, v, false);
}

/// `write(x)` of text: `len` bytes at `ptr`.
///
/// # Safety
/// `ptr` points to `len` readable bytes, or `len <= 0`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_write_str(ptr: *const u8, len: i64) {
    // SAFETY: caller contract.
    emit(Stream::Out, &[unsafe { bytes(ptr, len) }]);
}

/// `eprint(x)` of an integer: `tern_print_i64` on stderr.
#[unsafe(no_mangle)]
pub extern "C" fn tern_eprint_i64(v: i64) {
    decimal(Stream::Err, v.unsigned_abs(), v < 0, true);
}

/// `eprint(x)` of a `u64`.
#[unsafe(no_mangle)]
pub extern "C" fn tern_eprint_u64(v: u64) {
    decimal(Stream::Err, v, false, true);
}

/// `eprint(x)` of a bool.
#[unsafe(no_mangle)]
pub extern "C" fn tern_eprint_bool(v: u8) {
    boolean(Stream::Err, v, true);
}

/// `eprint(x)` of text.
///
/// # Safety
/// As [`tern_write_str`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_eprint_str(ptr: *const u8, len: i64) {
    // SAFETY: caller contract.
    emit(Stream::Err, &[unsafe { bytes(ptr, len) }, b"\n"]);
}

/// `ewrite(x)` of an integer: `tern_eprint_i64` without the newline.
#[unsafe(no_mangle)]
pub extern "C" fn tern_ewrite_i64(v: i64) {
    decimal(Stream::Err, v.unsigned_abs(), v < 0, false);
}

/// `ewrite(x)` of a `u64`.
#[unsafe(no_mangle)]
pub extern "C" fn tern_ewrite_u64(v: u64) {
    decimal(Stream::Err, v, false, false);
}

/// `ewrite(x)` of a bool.
#[unsafe(no_mangle)]
pub extern "C" fn tern_ewrite_bool(v: u8) {
    boolean(Stream::Err, v, false);
}

/// `ewrite(x)` of text.
///
/// # Safety
/// As [`tern_write_str`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_ewrite_str(ptr: *const u8, len: i64) {
    // SAFETY: caller contract.
    emit(Stream::Err, &[unsafe { bytes(ptr, len) }]);
}

/// `-`, if `negative`, then `n` in decimal, then a newline if `newline`.
fn decimal(stream: Stream, mut n: u64, negative: bool, newline: bool) {
    // Formatted on the stack: no allocation per `print`.
    let mut text = [0u8; 22];
    let mut at = text.len() - 1;
    text[at] = b'\n';
    let end = if newline { text.len() } else { text.len() - 1 };
    loop {
        at -= 1;
        text[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        text[at] = b'-';
    }
    emit(stream, &[&text[at..end]]);
}

/// `true` or `false` (any non-zero byte is `true`), then a newline if
/// `newline`.
fn boolean(stream: Stream, v: u8, newline: bool) {
    let text: &[u8] = match (v != 0, newline) {
        (true, true) => b"true\n",
        (true, false) => b"true",
        (false, true) => b"false\n",
        (false, false) => b"false",
    };
    emit(stream, &[text]);
}

/// Prints `true` or `false` (any non-zero byte is `true`) and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn tern_print_bool(v: u8) {
    boolean(Stream::Out, v, true);
}

/// Prints `len` bytes at `ptr` and a newline.
///
/// # Safety
/// `ptr` points to `len` readable bytes (a string literal, or a `[]u8` or
/// `[N]u8` of the program), or `len <= 0`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_print_str(ptr: *const u8, len: i64) {
    // SAFETY: caller contract.
    let bytes = unsafe { bytes(ptr, len) };
    emit(Stream::Out, &[bytes, b"\n"]);
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
    // The texts are temporaries of this statement, dropped before the report.
    let msg = format!(
        "panic: {}{}",
        // SAFETY: the caller's contract (the message).
        unsafe { text(msg_ptr, msg_len) },
        // SAFETY: the caller's contract (the detail). Escaped: the detail is
        // run-time text, often the program's input (`text::to_int`'s).
        crate::io::shown_text(unsafe { bytes(detail_ptr, detail_len) })
    );
    report(loc, msg)
}

/// The bytes at `ptr` (see [`bytes`]) as text, invalid UTF-8 replaced.
/// Owned, so a failure entry point holds nothing borrowed when it reports
/// (`super::fail`, "Why owned").
///
/// # Safety
/// As [`bytes`].
unsafe fn text(ptr: *const u8, len: i64) -> String {
    // SAFETY: caller contract.
    String::from_utf8_lossy(unsafe { bytes(ptr, len) }).into_owned()
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
    let msg = format!("assertion failed: {}", unsafe { text(msg_ptr, msg_len) });
    report(loc, msg)
}

/// A failed index check: `error: LOC: index out of bounds: index I, length N`.
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_bounds_fail(index: i64, len: i64, loc: *const c_char) -> ! {
    report(
        loc,
        format!("index out of bounds: index {index}, length {len}"),
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
        format!("slice out of bounds: {lo}..{hi}, length {len}"),
    )
}

/// A length whose byte count cannot exist: `error: LOC: OP: negative length N`
/// (for an `append` past the largest length, `OP: the length is already
/// 9223372036854775807, the largest`), or `error: LOC: OP: length N is too large for S-byte elements (the byte count
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
    let msg = {
        let op = super::fail::loc_str(op);
        // `append` asks for `len + 1`, which wraps only at the largest length.
        if len == i64::MIN && op.ends_with("append") {
            format!("{op}: the length is already {}, the largest", i64::MAX)
        } else if len < 0 {
            format!("{op}: negative length {len}")
        } else {
            format!(
                "{op}: length {len} is too large for {elem_size}-byte elements \
                 (the byte count must fit in 63 bits)"
            )
        }
    };
    report(loc, msg)
}

/// A function entry of code compiled with `Options::stack_limit` (the
/// REPL's: it keeps room below for the runtime calls the code makes) found
/// the stack pointer below the limit: `error: LOC: stack overflow`, or
/// `error: LOC: interrupted` when the host raised the limit to stop the code
/// (the interrupt flag is set; see `super::interrupt`).
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_stack_fail(loc: *const c_char) -> ! {
    if super::interrupt::take_interrupt() {
        report(loc, "interrupted".into())
    }
    report(loc, "stack overflow".into())
}

/// Division or remainder by zero: `error: LOC: division by zero`.
///
/// # Safety
/// `loc` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_div_zero(loc: *const c_char) -> ! {
    report(loc, "division by zero".into())
}
