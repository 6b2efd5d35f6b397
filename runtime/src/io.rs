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

use std::sync::{Mutex, RwLock};

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

/// Bytes a file reads ahead for [`read_line`].
const AHEAD: usize = 65536;

/// Handles name open files: a slot of [`FILES`] in the low bits, the slot's
/// generation above them, so a handle kept after its file was closed (a
/// copy of an `io::File`) names nothing, even once the slot is reused.
const SLOT_BITS: u32 = 24;

/// An open file of the program, owned by the runtime: what a handle names.
/// The program holds only the handle, so a copy of its `io::File` cannot
/// keep a buffer or a descriptor alive past `close`.
struct OpenFile {
    fd: libc::c_int,
    /// The path it was opened by (`<stdin>`, ...), for error messages.
    name: Vec<u8>,
    /// Bytes read ahead by [`read_line`]: `ahead[start..end]` are not
    /// consumed yet (empty until a line is read).
    ahead: Vec<u8>,
    start: usize,
    end: usize,
}

/// One slot of [`FILES`].
struct Slot {
    generation: i64,
    file: Option<OpenFile>,
}

/// The handle of standard input: slot 0, generation 1 (stdout and stderr
/// follow). Generation 0 names nothing, so a zero-filled `io::File` (an
/// element of a fresh `reusable[]io::File`) is a closed file, not stdin.
pub const STDIN_HANDLE: i64 = 1 << SLOT_BITS;

/// The open files. Slots 0-2 are the standard streams ([`STDIN_HANDLE`]
/// and the two after it); every `io::stdin()` shares slot 0 and its
/// read-ahead. The lock is never held across a system call that can block.
static FILES: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

fn files() -> std::sync::MutexGuard<'static, Vec<Slot>> {
    let mut t = FILES.lock().unwrap_or_else(|e| e.into_inner());
    if t.is_empty() {
        for (fd, name) in [(0, "<stdin>"), (1, "<stdout>"), (2, "<stderr>")] {
            t.push(Slot {
                generation: 1,
                file: Some(OpenFile {
                    fd,
                    name: name.into(),
                    ahead: Vec::new(),
                    start: 0,
                    end: 0,
                }),
            });
        }
    }
    t
}

/// The slot a handle names (its low bits).
fn slot_of(handle: i64) -> usize {
    (handle & ((1 << SLOT_BITS) - 1)) as usize
}

/// The open file `handle` names in `t`, if any.
fn file(t: &mut [Slot], handle: i64) -> Option<&mut OpenFile> {
    let slot = t.get_mut(slot_of(handle))?;
    if handle < 0 || handle >> SLOT_BITS != slot.generation {
        return None;
    }
    slot.file.as_mut()
}

/// `-EBADF`: what every call on a closed (or never opened) handle returns.
fn bad_handle() -> i64 {
    -i64::from(libc::EBADF)
}

/// Opens `path` (bytes, no NUL) in `mode`, close-on-exec, new files with
/// mode 0666 less the umask. Returns the file's handle or `-errno`
/// (`-EINVAL` for a path holding NUL, `-ENOENT` for an empty one).
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
    let fd = loop {
        // SAFETY: `c_path` is NUL-terminated; the mode argument is read
        // only with O_CREAT.
        let fd = unsafe { libc::open(c_path.as_ptr(), flags, 0o666 as libc::c_uint) };
        if fd >= 0 {
            break fd;
        }
        let e = last_error();
        if e != -i64::from(libc::EINTR) {
            return e;
        }
    };
    let file = OpenFile {
        fd,
        name: path.to_vec(),
        ahead: Vec::new(),
        start: 0,
        end: 0,
    };
    let mut t = files();
    let at = match t.iter().skip(3).position(|s| s.file.is_none()) {
        Some(i) => i + 3,
        None if t.len() < 1 << SLOT_BITS => {
            t.push(Slot {
                generation: 0,
                file: None,
            });
            t.len() - 1
        }
        None => {
            drop(t);
            // SAFETY: the descriptor was just opened here.
            unsafe { libc::close(fd) };
            return -i64::from(libc::EMFILE);
        }
    };
    let slot = &mut t[at];
    slot.generation += 1;
    slot.file = Some(file);
    at as i64 | slot.generation << SLOT_BITS
}

/// Set by a piped REPL, which reads its own input from fd 0 ahead of the
/// program: the program's stdin then reads as ended, rather than taking
/// whatever lies past the REPL's read-ahead (a line cut in two).
static STDIN_ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, the program's standard input reads as ended (0 bytes):
/// fd 0 is the caller's (a piped REPL's input).
pub fn end_stdin() {
    STDIN_ENDED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Reads at most `buf.len()` bytes from `fd` (stdin flushes stdout first):
/// how many, or `-errno`.
fn read_fd(fd: libc::c_int, buf: &mut [u8]) -> i64 {
    if buf.is_empty() {
        return 0;
    }
    if fd == 0 {
        crate::stdout::flush();
        if STDIN_ENDED.load(std::sync::atomic::Ordering::Relaxed) {
            return 0;
        }
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

/// Reads at most `buf.len()` bytes of file `handle`, what [`read_line`]
/// read ahead first: how many (0 at the end of the input, or for an empty
/// `buf`), or `-errno`.
pub fn read(handle: i64, buf: &mut [u8]) -> i64 {
    let fd = {
        let mut t = files();
        let Some(f) = file(&mut t, handle) else {
            return bad_handle();
        };
        if f.start < f.end {
            let n = (f.end - f.start).min(buf.len());
            buf[..n].copy_from_slice(&f.ahead[f.start..f.start + n]);
            f.start += n;
            return n as i64;
        }
        f.fd
    };
    read_fd(fd, buf)
}

/// [`read_line`]'s answer: the line goes on (`out` is full, or what was
/// read ahead is used up).
pub const LINE_GOES_ON: i64 = 0;
/// [`read_line`]'s answer: the line ended at a newline (consumed, not
/// copied).
pub const LINE_ENDED: i64 = 1;
/// [`read_line`]'s answer: the input ended.
pub const INPUT_ENDED: i64 = 2;

/// Copies the next bytes of the current line of file `handle` into `out`,
/// reading ahead (one read of up to 64 KiB) when nothing is: `n << 2 |
/// state`, `n` the bytes copied and `state` one of [`LINE_GOES_ON`],
/// [`LINE_ENDED`], [`INPUT_ENDED`]; or `-errno`. The stdlib calls it until
/// the line or the input ends, growing the line between calls.
pub fn read_line(handle: i64, out: &mut [u8]) -> i64 {
    let (fd, mut ahead) = {
        let mut t = files();
        let Some(f) = file(&mut t, handle) else {
            return bad_handle();
        };
        if f.start < f.end {
            let avail = &f.ahead[f.start..f.end];
            let lim = avail.len().min(out.len());
            return match avail[..lim].iter().position(|&b| b == b'\n') {
                Some(i) => {
                    out[..i].copy_from_slice(&avail[..i]);
                    f.start += i + 1;
                    (i as i64) << 2 | LINE_ENDED
                }
                None => {
                    out[..lim].copy_from_slice(&avail[..lim]);
                    f.start += lim;
                    (lim as i64) << 2 | LINE_GOES_ON
                }
            };
        }
        // The buffer leaves the table for the read (which can block).
        (f.fd, std::mem::take(&mut f.ahead))
    };
    ahead.resize(AHEAD, 0);
    let got = read_fd(fd, &mut ahead);
    let mut t = files();
    let Some(f) = file(&mut t, handle) else {
        return bad_handle();
    };
    f.ahead = ahead;
    (f.start, f.end) = (0, got.max(0) as usize);
    match got {
        0 => INPUT_ENDED,
        g if g < 0 => g,
        _ => LINE_GOES_ON,
    }
}

/// Writes all of `bytes` to file `handle` (stdout through the stdout
/// buffer): 0, or `-errno`.
pub fn write(handle: i64, bytes: &[u8]) -> i64 {
    let fd = match file(&mut files(), handle) {
        Some(f) => f.fd,
        None => return bad_handle(),
    };
    if fd == 1 {
        crate::stdout::write(&[bytes]);
        return 0;
    }
    write_fd(fd, bytes)
}

/// Writes all of `bytes` to descriptor `fd` (not through the stdout
/// buffer; `eprint` writes fd 2 with it): 0, or `-errno`.
pub fn write_fd(fd: libc::c_int, mut bytes: &[u8]) -> i64 {
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

/// Closes file `handle`: 0 or `-errno`; every copy of the handle then names
/// nothing. The standard streams stay open (closing them would let the next
/// file opened become the program's stdout), and closing a closed file does
/// nothing. When the OS reports a failure, the descriptor is gone but the
/// handle still names the file (for the message) until it is closed again.
pub fn close(handle: i64) -> i64 {
    if (STDIN_HANDLE..=STDIN_HANDLE + 2).contains(&handle) {
        return 0;
    }
    let fd = {
        let mut t = files();
        let Some(f) = file(&mut t, handle) else {
            return 0;
        };
        let fd = std::mem::replace(&mut f.fd, -1);
        if fd < 0 {
            t[slot_of(handle)].file = None;
            return 0;
        }
        fd
    };
    // SAFETY: closing a descriptor the program opened through `open`, once
    // (its file no longer holds it).
    if unsafe { libc::close(fd) } != 0 {
        return last_error();
    }
    let mut t = files();
    t[slot_of(handle)].file = None;
    0
}

/// The path file `handle` was opened by (`<stdin>` for the standard
/// streams), or `None` when it is closed: for error messages.
pub fn name(handle: i64) -> Option<Vec<u8>> {
    file(&mut files(), handle).map(|f| f.name.clone())
}

/// Text from the program (a path, a `panic`'s detail) as a runtime error
/// shows it: its bytes as UTF-8 (a byte that is not becomes U+FFFD) with
/// every control character escaped (`\u{1b}`, `\r`, `\n`), so text the
/// program was given cannot drive the terminal the error is printed on, nor
/// break the error's one line.
pub fn shown_text(bytes: &[u8]) -> String {
    let mut shown = String::new();
    for c in String::from_utf8_lossy(bytes).chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// The OS's reason for the status `code` (`-errno`), as `strerror` says it
/// (`No such file or directory`).
pub fn message(code: i64) -> String {
    match i32::try_from(code.checked_neg().unwrap_or(0)) {
        Ok(errno) if errno > 0 => {
            let text = std::io::Error::from_raw_os_error(errno).to_string();
            // `No such file or directory (os error 2)`: the reason alone.
            match text.rfind(" (os error ") {
                // An errno the OS has no text for reads as any other code.
                Some(_) if text.starts_with("Unknown error") => format!("unknown error {code}"),
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
        assert_eq!(message(-1000), "unknown error -1000");
    }

    #[test]
    fn a_closed_handle_names_nothing_even_once_its_slot_is_reused() {
        let path = std::env::temp_dir().join(format!("tern-io-handles-{}", std::process::id()));
        std::fs::write(&path, "one\ntwo").unwrap();
        let p = path.to_str().unwrap().as_bytes();
        let h = open(p, Mode::Read);
        assert!(h > 2);
        assert_eq!(name(h).as_deref(), Some(p));
        let mut out = [0u8; 2];
        // Two bytes of "one", the rest, the newline consumed; then "two" and the end.
        assert_eq!(
            read_line(h, &mut out),
            LINE_GOES_ON,
            "read ahead, nothing copied"
        );
        assert_eq!(read_line(h, &mut out), 2 << 2 | LINE_GOES_ON);
        assert_eq!(&out, b"on");
        assert_eq!(read_line(h, &mut out), 1 << 2 | LINE_ENDED);
        let mut rest = [0u8; 8];
        assert_eq!(read(h, &mut rest), 3, "what was read ahead comes first");
        assert_eq!(&rest[..3], b"two");
        assert_eq!(read_line(h, &mut out), INPUT_ENDED);
        assert_eq!(close(h), 0);
        assert_eq!(close(h), 0, "closing twice does nothing");
        let again = open(p, Mode::Read);
        assert_eq!(slot_of(again), slot_of(h), "the slot is reused");
        assert_ne!(again, h);
        for stale in [read(h, &mut rest), read_line(h, &mut out), write(h, b"x")] {
            assert_eq!(stale, -i64::from(libc::EBADF));
        }
        assert_eq!(name(h), None);
        assert_eq!(read(again, &mut rest), 7);
        assert_eq!(close(again), 0);
        let stdout = STDIN_HANDLE + 1;
        assert_eq!(close(stdout), 0, "the standard streams stay open");
        assert_eq!(name(stdout).as_deref(), Some(&b"<stdout>"[..]));
        assert_eq!(
            write(0, b"x"),
            -i64::from(libc::EBADF),
            "a zero handle names nothing"
        );
        assert_eq!(name(0), None);
        // The stdlib's constants are these handles.
        let io_tern = include_str!("../../stdlib/io.tern");
        assert!(io_tern.contains(&format!("const STDIN_HANDLE: i64 = {STDIN_HANDLE};")));
        let _ = std::fs::remove_file(&path);
    }
}
