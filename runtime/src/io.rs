//! Input and output for programs beyond `print`: the arguments after the
//! program, the environment, files and the standard streams, for the
//! stdlib module `io` (`stdlib/io.tern`, over the externs of
//! [`crate::abi::io`]).
//!
//! Conventions every function here keeps:
//! * a failure is a value, `-errno` (negative; user-space results are never
//!   negative), never a crash: the stdlib turns it into a status the program
//!   tests or a located error;
//! * a read never writes more than the slice it was given, and every length
//!   comes with its slice;
//! * pointers may carry the sanitizer's tag (`--sanitize`): it is removed
//!   before the OS sees them ([`untagged`]);
//! * fd 1 is the runtime's stdout buffer (`crate::stdout`), so `io` writes
//!   and `print` keep their order; reading fd 0 flushes it first, so a prompt
//!   shows before the program waits.

use std::sync::RwLock;

use crate::sanitize::ADDR_MASK;

/// The program's arguments (what follows the program on its command line).
static ARGS: RwLock<Vec<Vec<u8>>> = RwLock::new(Vec::new());

/// Sets the arguments the program sees (`tern run FILE -- ARGS`; an AOT
/// executable's `argv[1..]` through `tern_rt_args`).
pub fn set_args(args: Vec<Vec<u8>>) {
    *ARGS.write().unwrap_or_else(|e| e.into_inner()) = args;
}

/// How many arguments the program has.
pub fn arg_count() -> usize {
    ARGS.read().unwrap_or_else(|e| e.into_inner()).len()
}

/// Argument `i`, copied into `out` (at most `out.len()` bytes); its full
/// length, or `None` if there is no argument `i`.
pub fn arg(i: i64, out: &mut [u8]) -> Option<usize> {
    let args = ARGS.read().unwrap_or_else(|e| e.into_inner());
    let a = args.get(usize::try_from(i).ok()?)?;
    copy_into(a, out);
    Some(a.len())
}

/// The environment variable `name`, copied into `out`; its full length, or
/// `None` when it is unset (or `name` is empty or holds `=` or NUL).
pub fn env(name: &[u8], out: &mut [u8]) -> Option<usize> {
    use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
    if name.is_empty() || name.contains(&b'=') || name.contains(&0) {
        return None;
    }
    let value = std::env::var_os(std::ffi::OsStr::from_bytes(name))?.into_vec();
    copy_into(&value, out);
    Some(value.len())
}

fn copy_into(from: &[u8], out: &mut [u8]) {
    let n = from.len().min(out.len());
    out[..n].copy_from_slice(&from[..n]);
}

/// How a file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Reading.
    Read,
    /// Writing from the start: created if missing, truncated if not.
    Create,
    /// Writing at the end: created if missing.
    Append,
}

impl Mode {
    /// The stdlib's numbering (`io::READ`, `io::CREATE`, `io::APPEND`).
    pub fn from_code(code: i64) -> Option<Mode> {
        match code {
            0 => Some(Mode::Read),
            1 => Some(Mode::Create),
            2 => Some(Mode::Append),
            _ => None,
        }
    }
}

/// The last OS error as `-errno`.
fn last_error() -> i64 {
    -i64::from(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    )
}

/// Opens `path` (bytes, no NUL) in `mode`, close-on-exec, new files with
/// mode 0666 less the umask. Returns the descriptor or `-errno`
/// (`-EINVAL` for a path holding NUL or empty).
pub fn open(path: &[u8], mode: Mode) -> i64 {
    let Ok(c_path) = std::ffi::CString::new(path) else {
        return -i64::from(libc::EINVAL);
    };
    if path.is_empty() {
        return -i64::from(libc::ENOENT);
    }
    let flags = libc::O_CLOEXEC
        | match mode {
            Mode::Read => libc::O_RDONLY,
            Mode::Create => libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
            Mode::Append => libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        };
    loop {
        // SAFETY: `c_path` is NUL-terminated; the mode argument is read
        // only with O_CREAT.
        let fd = unsafe { libc::open(c_path.as_ptr(), flags, 0o666 as libc::c_uint) };
        if fd >= 0 {
            return i64::from(fd);
        }
        let e = last_error();
        if e != -i64::from(libc::EINTR) {
            return e;
        }
    }
}

/// Reads at most `buf.len()` bytes from `fd`: how many (0 at the end of the
/// input, or for an empty `buf`), or `-errno`.
pub fn read(fd: i64, buf: &mut [u8]) -> i64 {
    let Ok(fd) = libc::c_int::try_from(fd) else {
        return -i64::from(libc::EBADF);
    };
    if buf.is_empty() {
        return 0;
    }
    if fd == 0 {
        crate::stdout::flush();
    }
    loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return n as i64;
        }
        let e = last_error();
        if e != -i64::from(libc::EINTR) {
            return e;
        }
    }
}

/// Writes all of `bytes` to `fd` (fd 1: through the stdout buffer): 0, or
/// `-errno`.
pub fn write(fd: i64, mut bytes: &[u8]) -> i64 {
    if fd == 1 {
        crate::stdout::write(&[bytes]);
        return 0;
    }
    let Ok(fd) = libc::c_int::try_from(fd) else {
        return -i64::from(libc::EBADF);
    };
    while !bytes.is_empty() {
        // SAFETY: `bytes` is readable for its length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else {
            let e = last_error();
            if e != -i64::from(libc::EINTR) {
                return e;
            }
        }
    }
    0
}

/// Closes `fd`: 0 or `-errno`. The standard streams stay open (closing
/// them would let the next file opened become the program's stdout).
pub fn close(fd: i64) -> i64 {
    let Ok(fd) = libc::c_int::try_from(fd) else {
        return -i64::from(libc::EBADF);
    };
    if (0..=2).contains(&fd) {
        return 0;
    }
    // SAFETY: closing a descriptor the program opened through `open`.
    if unsafe { libc::close(fd) } == 0 {
        0
    } else {
        last_error()
    }
}

/// The OS's reason for the status `code` (`-errno`), as `strerror` says it
/// (`No such file or directory`).
pub fn message(code: i64) -> String {
    match i32::try_from(code.checked_neg().unwrap_or(0)) {
        Ok(errno) if errno > 0 => {
            let text = std::io::Error::from_raw_os_error(errno).to_string();
            // `No such file or directory (os error 2)`: the reason alone.
            match text.rfind(" (os error ") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        }
        _ => format!("unknown error {code}"),
    }
}

/// The bytes at `ptr` (a pointer the program passed, perhaps tagged) for
/// `len` bytes, or an empty slice for `len <= 0` or null.
///
/// # Safety
/// `ptr` (untagged) must be valid for reads of `len` bytes.
pub unsafe fn bytes<'a>(ptr: *const u8, len: i64) -> &'a [u8] {
    let p = untagged(ptr);
    if len <= 0 || p.is_null() {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, len as usize) }
}

/// [`bytes`], writable.
///
/// # Safety
/// `ptr` (untagged) must be valid for writes of `len` bytes.
pub unsafe fn bytes_mut<'a>(ptr: *mut u8, len: i64) -> &'a mut [u8] {
    let p = untagged(ptr).cast_mut();
    if len <= 0 || p.is_null() {
        return &mut [];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(p, len as usize) }
}

/// `ptr` without the sanitizer's tag bits: the address the OS may see.
pub fn untagged(ptr: *const u8) -> *const u8 {
    (ptr as i64 & ADDR_MASK) as *const u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_and_environment_are_copied_up_to_the_slice() {
        set_args(vec![b"one".to_vec(), b"twenty".to_vec()]);
        assert_eq!(arg_count(), 2);
        let mut out = [0u8; 4];
        assert_eq!(arg(1, &mut out), Some(6));
        assert_eq!(&out, b"twen");
        assert_eq!(arg(2, &mut out), None);
        assert_eq!(arg(-1, &mut out), None);
        let mut out = [0u8; 64];
        let n = env(b"PATH", &mut out).expect("PATH is set");
        assert!(n > 0);
        assert_eq!(env(b"TERN_NO_SUCH_VARIABLE_HERE", &mut out), None);
        assert_eq!(env(b"A=B", &mut out), None);
        set_args(Vec::new());
    }

    #[test]
    fn failures_are_negative_errno_with_the_os_reason() {
        let e = open(b"/no/such/file", Mode::Read);
        assert_eq!(e, -i64::from(libc::ENOENT));
        assert_eq!(message(e), "No such file or directory");
        assert_eq!(open(b"a\0b", Mode::Read), -i64::from(libc::EINVAL));
        let dir = open(b"/", Mode::Read);
        assert!(dir >= 0);
        let mut buf = [0u8; 8];
        assert_eq!(read(dir, &mut buf), -i64::from(libc::EISDIR));
        assert_eq!(read(dir, &mut []), 0, "an empty slice reads nothing");
        assert_eq!(close(dir), 0);
        assert_eq!(read(dir, &mut buf), -i64::from(libc::EBADF));
        assert_eq!(message(1), "unknown error 1");
    }
}
