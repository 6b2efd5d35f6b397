//! The program's stdout: a fixed buffer owned by the runtime, written to fd 1
//! with `write(2)`.
//!
//! Policy (what every Unix program does, and what JIT and AOT must share):
//! * **line-buffered** when fd 1 is a terminal (each `print` appears as it
//!   runs), **block-buffered** (64 KiB) otherwise;
//! * flushed whenever the process ends: normally ([`flush`] from
//!   `tern_rt_main`), through libc's `exit` (an `atexit` handler, see
//!   [`flush_at_exit`]), before any runtime error, and from the fault handler
//!   even when the fault hit inside `print` itself ([`flush_in_signal`]);
//! * a closed pipe (`EPIPE`, as under `| head -1`) ends the process by
//!   `SIGPIPE`, as C's stdio programs end; any other write error (a full
//!   device) is a runtime error with status 101.
//!
//! Why a fixed buffer with two atomic cursors instead of a `Mutex<Vec<u8>>`:
//! the fault handler must flush without taking a lock the faulting code may
//! hold, and must see a consistent buffer. Bytes `[start, end)` are pending;
//! a writer copies new bytes past `end` before publishing the new `end`, and
//! a flush advances `start` after each `write(2)`, so at any instant the
//! handler can write exactly the pending bytes, never a torn or repeated
//! part. The lock is a flag rather than a `Mutex` so that a host that jumps a
//! faulted thread out of its frames (the REPL) can release it
//! ([`recover_after_fault`]).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// Buffer size: large enough that a printing loop costs one `write(2)` per
/// many lines.
const CAP: usize = 64 * 1024;

use crate::exit_status::{FAILURE_STATUS, SIGPIPE_STATUS};

struct Buffer {
    bytes: UnsafeCell<[u8; CAP]>,
    /// First pending byte.
    start: AtomicUsize,
    /// One past the last pending byte.
    end: AtomicUsize,
    /// Held by the writer that is appending or flushing.
    locked: AtomicBool,
    /// 0: not yet known; 1: fd 1 is a terminal (line-buffered); 2: it is not.
    mode: AtomicU8,
}

// SAFETY: `bytes` is written only by the holder of `locked`, and beyond
// `end`; readers without the lock (the fault handler) read only
// `[start, end)`, which is never written while published.
unsafe impl Sync for Buffer {}

static OUT: Buffer = Buffer {
    bytes: UnsafeCell::new([0; CAP]),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    locked: AtomicBool::new(false),
    mode: AtomicU8::new(0),
};

/// The lock: released on drop.
struct Guard;

fn lock() -> Guard {
    while OUT
        .locked
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
    Guard
}

impl Drop for Guard {
    fn drop(&mut self) {
        OUT.locked.store(false, Ordering::Release);
    }
}

/// Appends `parts` (one `print`'s bytes) and flushes as the policy says.
pub(crate) fn write(parts: &[&[u8]]) {
    let _guard = lock();
    for part in parts {
        append(part);
    }
    if line_buffered() {
        drain();
    }
}

/// Writes everything pending to fd 1 now.
pub(crate) fn flush() {
    let _guard = lock();
    drain();
}

/// A runtime error on its way out ([`flush_before_error`]): written first
/// if the flush before it fails, so the program's own error is not lost
/// behind the output's (stdout on a full device, or a closed pipe).
static PENDING_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// [`flush`] before the runtime error `line` (with its newline) is written.
pub(crate) fn flush_before_error(line: &str) {
    if let Ok(mut p) = PENDING_ERROR.lock() {
        *p = Some(line.to_string());
    }
    flush();
    if let Ok(mut p) = PENDING_ERROR.lock() {
        *p = None;
    }
}

/// `atexit` handler: libc's `exit` (which a program may call through
/// `extern fn exit`) flushes like a normal end.
pub(crate) extern "C" fn flush_at_exit() {
    flush();
}

/// Flushes from a signal handler: no lock, raw `write(2)`, errors ignored.
/// Writes exactly the published pending bytes (see the module docs).
pub(crate) fn flush_in_signal() {
    let start = OUT.start.load(Ordering::Acquire);
    let end = OUT.end.load(Ordering::Acquire);
    if start < end {
        let _ = write_fd(published(start, end));
    }
}

/// For a host that jumps a faulted thread out of its frames, possibly while
/// it held the lock (the REPL): releases it. The buffer itself is consistent
/// at any instant (module docs). Only call it once the frames that faulted
/// will never run again.
pub fn recover_after_fault() {
    OUT.locked.store(false, Ordering::Release);
}

/// Copies `bytes` into the buffer (lock held), draining first when they do
/// not fit; bytes larger than the buffer go straight to fd 1.
fn append(bytes: &[u8]) {
    let end = OUT.end.load(Ordering::Relaxed);
    if bytes.len() > CAP - end {
        drain();
        if bytes.len() > CAP {
            if let Err(e) = write_fd(bytes) {
                write_failed(e);
            }
            return;
        }
    }
    let end = OUT.end.load(Ordering::Relaxed);
    // SAFETY: lock held; `[end, end + len)` is inside the buffer and not yet
    // published, so nobody reads it.
    unsafe {
        let dst = OUT.bytes.get().cast::<u8>().add(end);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
    }
    OUT.end.store(end + bytes.len(), Ordering::Release);
}

/// Writes the pending bytes (lock held), advancing `start` after each
/// `write(2)` so a fault mid-way never repeats bytes.
fn drain() {
    loop {
        let start = OUT.start.load(Ordering::Relaxed);
        let end = OUT.end.load(Ordering::Relaxed);
        if start >= end {
            break;
        }
        let pending = published(start, end);
        // SAFETY: writing initialized bytes.
        let n = unsafe { libc::write(1, pending.as_ptr().cast(), pending.len()) };
        if n > 0 {
            OUT.start.store(start + n as usize, Ordering::Release);
        } else {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                write_failed(e);
            }
        }
    }
    // `end` first: a handler that sees the old `start` with the new `end`
    // writes nothing.
    OUT.end.store(0, Ordering::Release);
    OUT.start.store(0, Ordering::Release);
}

/// The published bytes `[start, end)` (`start < end <= CAP`, read from the
/// cursors): never written while published.
fn published(start: usize, end: usize) -> &'static [u8] {
    // SAFETY: inside the buffer; published bytes are not written (module docs).
    unsafe { std::slice::from_raw_parts(OUT.bytes.get().cast::<u8>().add(start), end - start) }
}

/// Writes all of `bytes` to fd 1.
fn write_fd(mut bytes: &[u8]) -> Result<(), std::io::Error> {
    while !bytes.is_empty() {
        // SAFETY: writing initialized bytes.
        let n = unsafe { libc::write(1, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// A write to fd 1 failed: end the process the way a Unix program does.
fn write_failed(e: std::io::Error) -> ! {
    // Nothing pending may be written again (this may run inside `exit`).
    OUT.end.store(0, Ordering::Release);
    OUT.start.store(0, Ordering::Release);
    let pending = PENDING_ERROR.try_lock().ok().and_then(|mut p| p.take());
    // SAFETY: plain libc calls; `_exit` does not return.
    unsafe {
        if let Some(line) = pending {
            libc::write(2, line.as_ptr().cast(), line.len());
        }
        if e.raw_os_error() == Some(libc::EPIPE) {
            // The reader is gone (`| head`): die by SIGPIPE, as the AOT
            // executable would; the driver process ignores SIGPIPE like every
            // Rust program, so restore the default first.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
            libc::_exit(SIGPIPE_STATUS);
        }
        let msg = format!("error: <runtime>: cannot write the program's output: {e}\n");
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(FAILURE_STATUS);
    }
}

/// Whether fd 1 is a terminal (asked once).
fn line_buffered() -> bool {
    match OUT.mode.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            // SAFETY: isatty on a constant descriptor.
            let tty = unsafe { libc::isatty(1) } == 1;
            OUT.mode.store(if tty { 1 } else { 2 }, Ordering::Relaxed);
            tty
        }
    }
}
