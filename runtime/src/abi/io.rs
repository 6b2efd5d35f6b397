//! The externs behind the stdlib module `io` (`stdlib/io.tern`): files,
//! the standard streams, the program's arguments and environment, and
//! `exit`. Every slice arrives as two words (address, length) and is read or
//! written within them; a failure is a negative `-errno` the stdlib turns
//! into a status or a located error (`tern_io_fail`). See `crate::io`.

use crate::io;

/// Opens the file at the `path_len` bytes `path` in `mode` (0 read, 1
/// create or truncate for writing, 2 create or append): the file's handle
/// (`2^24`, `2^24 + 1` and `2^24 + 2` name the standard streams; 0 names
/// nothing), or `-errno` (`-EINVAL` for an
/// unknown mode or a path holding NUL).
///
/// # Safety
/// `path` must be readable for `path_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_open(path: *const u8, path_len: i64, mode: i64) -> i64 {
    let Some(mode) = io::Mode::from_code(mode) else {
        return -i64::from(libc::EINVAL);
    };
    // SAFETY: the caller's contract.
    io::open(unsafe { io::bytes(path, path_len) }, mode)
}

/// Reads at most `len` bytes of file `handle` into `buf` (what
/// `tern_io_read_line` read ahead first): how many (0 at the end of the
/// input), or `-errno` (`-EBADF` for a closed file). Reading stdin flushes
/// stdout first.
///
/// # Safety
/// `buf` must be writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_read(handle: i64, buf: *mut u8, len: i64) -> i64 {
    // SAFETY: the caller's contract.
    io::read(handle, unsafe { io::bytes_mut(buf, len) })
}

/// Copies the next bytes of the current line of file `handle` into `buf`
/// (at most `len`), reading ahead when nothing is: `n << 2 | state` (state
/// 0: the line goes on, 1: it ended at a newline, consumed; 2: the input
/// ended), or `-errno`. See `crate::io::read_line`.
///
/// # Safety
/// `buf` must be writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_read_line(handle: i64, buf: *mut u8, len: i64) -> i64 {
    // SAFETY: the caller's contract.
    io::read_line(handle, unsafe { io::bytes_mut(buf, len) })
}

/// Writes the `len` bytes at `bytes` to file `handle` (stdout through the
/// program's stdout buffer, after everything `print` wrote): 0, or `-errno`.
///
/// # Safety
/// `bytes` must be readable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_write(handle: i64, bytes: *const u8, len: i64) -> i64 {
    // SAFETY: the caller's contract.
    io::write(handle, unsafe { io::bytes(bytes, len) })
}

/// Closes file `handle` (the standard streams stay open; a closed file
/// stays closed): 0, or `-errno`. Every copy of the handle names nothing
/// afterwards.
#[unsafe(no_mangle)]
pub extern "C" fn tern_io_close(handle: i64) -> i64 {
    io::close(handle)
}

/// How many arguments follow the program on its command line.
#[unsafe(no_mangle)]
pub extern "C" fn tern_io_arg_count() -> i64 {
    io::arg_count() as i64
}

/// Copies argument `i` (counted from 0, after the program) into `buf`, at
/// most `len` bytes; returns its full length, or -1 if there is none.
///
/// # Safety
/// `buf` must be writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_arg(i: i64, buf: *mut u8, len: i64) -> i64 {
    // SAFETY: the caller's contract.
    io::arg(i, unsafe { io::bytes_mut(buf, len) }).map_or(-1, |n| n as i64)
}

/// Copies the value of the environment variable named by the `name_len`
/// bytes at `name` into `buf`, at most `len` bytes; returns its full
/// length, or -1 when it is unset.
///
/// # Safety
/// `name` must be readable for `name_len` bytes, `buf` writable for `len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_env(
    name: *const u8,
    name_len: i64,
    buf: *mut u8,
    len: i64,
) -> i64 {
    // SAFETY: the caller's contract.
    let (name, out) = unsafe { (io::bytes(name, name_len), io::bytes_mut(buf, len)) };
    io::env(name, out).map_or(-1, |n| n as i64)
}

/// Copies the OS's reason for status `code` (`-errno`: `No such file or
/// directory`) into `buf`, at most `len` bytes; returns its full length.
///
/// # Safety
/// `buf` must be writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_message(code: i64, buf: *mut u8, len: i64) -> i64 {
    let text = io::message(code);
    // SAFETY: the caller's contract.
    let out = unsafe { io::bytes_mut(buf, len) };
    let n = text.len().min(out.len());
    out[..n].copy_from_slice(&text.as_bytes()[..n]);
    text.len() as i64
}

/// Ends the run with the runtime error `cannot WHAT 'PATH': REASON` (the
/// OS's reason for status `code`), located at the program's own call into
/// the stdlib: the innermost frame of the user's code (docs/stdlib.md).
///
/// # Safety
/// `what` and `path` must be readable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_fail(
    what: *const u8,
    what_len: i64,
    path: *const u8,
    path_len: i64,
    code: i64,
) -> ! {
    // SAFETY: the caller's contract.
    let (what, path) = unsafe { (io::bytes(what, what_len), io::bytes(path, path_len)) };
    let msg = format!(
        "cannot {} '{}': {}",
        String::from_utf8_lossy(what),
        io::shown_text(path),
        io::message(code)
    );
    super::fail::report_at_caller(msg)
}

/// [`tern_io_fail`] on file `handle`, named by the path it was opened by
/// (`cannot read a closed file: Bad file descriptor` once it is closed).
///
/// # Safety
/// `what` must be readable for `what_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_fail_file(
    what: *const u8,
    what_len: i64,
    handle: i64,
    code: i64,
) -> ! {
    // SAFETY: the caller's contract.
    let what = String::from_utf8_lossy(unsafe { io::bytes(what, what_len) }).into_owned();
    let msg = match io::name(handle) {
        Some(path) => format!(
            "cannot {what} '{}': {}",
            io::shown_text(&path),
            io::message(code)
        ),
        None => format!("cannot {what} a closed file: {}", io::message(code)),
    };
    super::fail::report_at_caller(msg)
}

/// Ends the run with the runtime error `MSG` (the `msg_len` bytes at
/// `msg`), located as [`tern_io_fail`] is: the `io` module's errors that
/// have no OS reason (`io::arg` past the last argument).
///
/// # Safety
/// `msg` must be readable for `msg_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_io_error(msg: *const u8, msg_len: i64) -> ! {
    // SAFETY: the caller's contract.
    let msg = String::from_utf8_lossy(unsafe { io::bytes(msg, msg_len) }).into_owned();
    super::fail::report_at_caller(msg)
}

/// Ends the program with status `code` (its low 8 bits, as the OS keeps
/// them) after flushing its output, as returning it from `main` would.
#[unsafe(no_mangle)]
pub extern "C" fn tern_io_exit(code: i64) -> ! {
    super::process::end(code)
}

/// Stores the program's arguments (`argv[1..argc]`) for `io::arg`: what an
/// AOT executable's `main` calls first.
///
/// # Safety
/// `argv` must hold `argc` NUL-terminated strings (C's `main` contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_rt_args(argc: i32, argv: *const *const u8) {
    let mut args = Vec::new();
    for i in 1..usize::try_from(argc).unwrap_or(0) {
        // SAFETY: the caller's contract.
        let p = unsafe { *argv.add(i) };
        if !p.is_null() {
            // SAFETY: the caller's contract: NUL-terminated.
            args.push(
                unsafe { std::ffi::CStr::from_ptr(p.cast()) }
                    .to_bytes()
                    .to_vec(),
            );
        }
    }
    io::set_args(args);
}
