//! Process entry and exit for Tern programs, shared by AOT (the object's C
//! `main` calls [`tern_rt_main`]) and the JIT (the driver calls it with the
//! compiled entry).

use crate::stdout;

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
    stdout::flush();
    crate::stats::write_if_requested();
    status as i32
}

/// Ends the program with status `code` after everything a normal end does
/// (stdout flushed, the pool statistics written): `io::exit`.
pub(crate) fn end(code: i64) -> ! {
    stdout::flush();
    crate::stats::write_if_requested();
    // The low 8 bits are the status, as for `main`'s result.
    std::process::exit(code as i32)
}

/// Registers the program's backtrace table (see
/// [`crate::backtrace::table`]), so runtime errors print its call stack. An
/// AOT `main` calls it before [`tern_rt_main`]; a table that is not in the
/// layout this runtime reads is ignored (errors then print no stack).
///
/// # Safety
/// `table` is null or points to a table that lives as long as the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_rt_debug_table(table: *const u8) {
    if !table.is_null() {
        // SAFETY: the caller's contract.
        unsafe { crate::backtrace::table::register(table) };
    }
}

/// Flushes the buffered stdout (also done at exit and before any failure).
#[unsafe(no_mangle)]
pub extern "C" fn tern_rt_flush() {
    stdout::flush();
}

/// Opens `/dev/null` on any of fds 0, 1 and 2 that the program was started
/// without (`prog >&-`), as Rust's own start-up does for `tern` itself: so
/// JIT and AOT agree (output to a closed stdout is discarded, as a C
/// program's `printf` fails silently, and the status is `main`'s), and no
/// file the program opens can become its stdout. Read-write, as Rust opens
/// it: a write to a closed stdin, or a read from a closed stdout, then
/// succeeds with nothing in both modes (the JIT inherits `tern`'s).
fn open_closed_standard_fds() {
    for fd in 0..=2 {
        // SAFETY: fcntl/open on constant arguments; the descriptor `open`
        // returns is the lowest free one, `fd` itself, and is kept.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
            {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
}

/// The stack a program's main thread gets when `RLIMIT_STACK` is
/// unlimited (`ulimit -s unlimited`): the usual Linux default. The
/// interpreter's simulated stack takes the same figure then.
pub const UNLIMITED_STACK_BOUND: u64 = 8 << 20;

/// Lowers an unlimited soft `RLIMIT_STACK` to [`UNLIMITED_STACK_BOUND`]
/// (the kernel checks the limit each time the main thread's stack grows,
/// so it binds from here on). Unbounded, a runaway recursion grew the
/// stack until memory ran out: under a cap on address space the fault
/// handler could not allocate its report and the run ended in an abort
/// with a Rust backtrace, and without one it takes all the machine's
/// memory first. The hard limit is left as it was.
fn bound_unlimited_stack() {
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_STACK, &mut rl) == 0 && rl.rlim_cur == libc::RLIM_INFINITY {
            rl.rlim_cur = UNLIMITED_STACK_BOUND as libc::rlim_t;
            libc::setrlimit(libc::RLIMIT_STACK, &rl);
        }
    }
}

/// Runtime state a program needs before its first instruction: the builtin
/// pool is created now (not on first use) so that a bad `TERN_POOL_BYTES` or
/// a failed reservation is reported before the program prints anything.
fn set_up() {
    open_closed_standard_fds();
    bound_unlimited_stack();
    // A write to a pipe whose reader is gone is the status `-EPIPE` for
    // `io` (`try_write_to` returns it, `write_to` reports it), as in the
    // JIT, whose driver ignores SIGPIPE like every Rust program; without
    // this an AOT executable died by the signal. Stdout alone still ends
    // the run by SIGPIPE, as C's stdio programs do (`stdout::write_failed`).
    // SAFETY: setting a signal's disposition to SIG_IGN.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    if let Err(msg) = crate::builtin::with_pool(|_| ()) {
        super::fail::report_at("<runtime>", msg);
    }
    install_fault_handler();
    // libc's `exit` (reachable through `extern fn exit`) ends the process
    // without returning here: flush from its handlers too.
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain `extern "C" fn()`.
        unsafe { libc::atexit(stdout::flush_at_exit) };
    });
}

/// Stack overflow (deep recursion, a huge array on the stack) and invalid
/// accesses through `unsafe` end the run the same way in JIT and AOT: output
/// so far is flushed, one `error:` line, status 101. Without this the AOT
/// executable would die by SIGSEGV while the JIT (inside the Rust driver)
/// would abort with Rust's own message.
#[cfg(unix)]
fn install_fault_handler() {
    // SAFETY: `on_fault` only uses async-signal-safe operations, but for the
    // report of a stack overflow, built only where no lock it takes can be
    // held (`overflow_in_tern_code`, `overflow_in_runtime_code`).
    unsafe { install_fault_handler_with(on_fault) }
}

/// Gives the calling thread an alternate signal stack of 256 KiB unless it
/// already has one at least that large, so a SIGSEGV handler can run after
/// a stack overflow. The stack is never freed (it lives as long as its
/// thread may fault). Returns whether the thread has one afterwards. The
/// REPL calls it for its worker threads.
///
/// The report of an overflow inside runtime code runs the system unwinder
/// on this stack, and its first call resolves `_dl_find_object` lazily (the
/// dynamic linker saves the whole vector register state there, about 2.7
/// KiB with AVX-512). The alternate stack Rust's standard library gives
/// each thread of `tern` is a few KiB: with the unoptimized runtime of a
/// debug `tern` on an AVX-512 machine the handler overflowed it and died by
/// SIGSEGV, so a smaller stack is replaced. Pages never touched cost nothing.
#[cfg(unix)]
pub fn ensure_alt_stack() -> bool {
    const ALT_STACK: usize = 256 * 1024;
    // SAFETY: sigaltstack/mmap on memory this function owns.
    unsafe {
        let mut old: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut old) == 0
            && old.ss_flags & libc::SS_DISABLE == 0
            && old.ss_size >= ALT_STACK
        {
            return true;
        }
        let stack = libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return false;
        }
        let ss = libc::stack_t {
            ss_sp: stack,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        libc::sigaltstack(&ss, std::ptr::null_mut()) == 0
    }
}

/// Installs `handler` for SIGSEGV and SIGBUS, run on the alternate signal
/// stack (given to the calling thread by [`ensure_alt_stack`]).
///
/// # Safety
/// `handler` must only use async-signal-safe operations, and
/// [`fault_report`].
#[cfg(unix)]
pub unsafe fn install_fault_handler_with(
    handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void),
) {
    if !ensure_alt_stack() {
        return;
    }
    // For `fault_report`, which a handler may call.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    find_runtime_text();
    // SAFETY: the caller's contract on `handler`; plain libc calls.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_ONSTACK | libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
fn install_fault_handler() {}

/// Ends the run after SIGSEGV/SIGBUS: a stack overflow in Tern code, or in
/// runtime code that Tern code called, is reported with its location and
/// the Tern stack ([`super::fail::overflow_report`]); any other fault (an
/// invalid access through `unsafe`, an overflow inside the C library) with
/// [`super::fail::STACK_OVERFLOW_LINE`]. Output so far is flushed first.
#[cfg(unix)]
extern "C" fn on_fault(_sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    stdout::flush_in_signal();
    // SAFETY: the handler's arguments, on the faulting thread.
    let report = unsafe { fault_report(info, ctx) };
    let msg = report
        .as_deref()
        .unwrap_or(super::fail::STACK_OVERFLOW_LINE);
    // SAFETY: write(2) and _exit are async-signal-safe.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(super::fail::FAILURE_STATUS);
    }
}

/// The report of a SIGSEGV or SIGBUS that is a stack overflow in Tern code
/// or in runtime code Tern code called (`error: LOC: stack overflow` and the
/// Tern stack, [`super::fail::overflow_report`]); `None` for any other
/// fault, or where building the report could wait on a lock the fault left
/// held. What `tern_rt_main`'s handler prints, for a host with a fault
/// handler of its own (the REPL).
///
/// # Safety
/// `info` and `ctx` are the arguments of a SIGSEGV or SIGBUS handler, and
/// this is called from that handler, on the thread that faulted.
#[cfg(unix)]
pub unsafe fn fault_report(info: *mut libc::siginfo_t, ctx: *mut libc::c_void) -> Option<String> {
    // SAFETY: the caller's contract.
    let frames = unsafe { overflow_site(info, ctx) }.and_then(|site| {
        // SAFETY: the site of this fault, on this thread's stack.
        unsafe { overflow_in_tern_code(site) }.or_else(|| overflow_in_runtime_code(site))
    })?;
    super::fail::overflow_report(&frames)
}

/// The largest distance between a stack overflow's fault address and the
/// stack pointer: a frame's probes reach below it by up to the frame's size
/// (at most 512 MiB, the compiler's limit), its stores above it.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const OVERFLOW_REACH: usize = (512 << 20) + (1 << 16);

/// Where a fault that looks like a stack overflow happened: the faulting
/// instruction, the stack pointer and the frame pointer. `None` when the
/// fault address is not near the stack pointer (an invalid access).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[derive(Clone, Copy)]
struct OverflowSite {
    pc: usize,
    sp: usize,
    fp: usize,
}

/// The [`OverflowSite`] of a SIGSEGV or SIGBUS, if the fault is near the
/// stack pointer.
///
/// # Safety
/// `info` and `ctx` are the handler's arguments for a SIGSEGV or SIGBUS.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn overflow_site(
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) -> Option<OverflowSite> {
    if info.is_null() || ctx.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let (addr, regs) = unsafe {
        (
            (*info).si_addr() as usize,
            (*(ctx as *const libc::ucontext_t)).uc_mcontext.gregs,
        )
    };
    let reg = |r: libc::c_int| regs[r as usize] as usize;
    let (pc, sp, fp) = (reg(libc::REG_RIP), reg(libc::REG_RSP), reg(libc::REG_RBP));
    if addr > sp.saturating_add(OVERFLOW_REACH) || addr < sp.saturating_sub(OVERFLOW_REACH) {
        return None;
    }
    Some(OverflowSite { pc, sp, fp })
}

/// The Tern frames at a stack overflow in Tern code (the instruction is in
/// a compiled Tern function). Only then, or in
/// [`overflow_in_runtime_code`]'s case, does the handler build a report (it
/// allocates): no C library code was interrupted, so no lock of its
/// allocator is held. The stack is walked from the caller of the function
/// that faulted: its frame is either not yet made (the fault is its first
/// instruction, `push rbp`: the return address is at the stack pointer) or
/// made (the frame pointer is its own), and either way the innermost frame
/// shown is the call that did not fit, as the interpreter shows it (or,
/// when no Tern call made the frame, the faulting function's declaration).
///
/// # Safety
/// `site` is the site of a fault on this thread's stack.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn overflow_in_tern_code(site: OverflowSite) -> Option<Vec<crate::backtrace::Frame>> {
    let OverflowSite { pc, sp, fp } = site;
    let start = crate::backtrace::table::function_start(pc)?;
    let word = size_of::<usize>();
    let (ret, caller_fp) = if pc == start {
        // SAFETY: the call into this function stored its return address at
        // the stack pointer.
        (unsafe { *(sp as *const usize) }, fp)
    } else {
        // The function's own frame: above the stack pointer, aligned.
        if fp < sp || fp - sp > OVERFLOW_REACH || !fp.is_multiple_of(word) {
            return None;
        }
        // SAFETY: `fp` is this function's frame pointer, between the stack
        // pointer and the stack's top: its caller's frame pointer and the
        // return address are the two words there.
        unsafe { (*((fp + word) as *const usize), *(fp as *const usize)) }
    };
    // SAFETY: `caller_fp` is the frame pointer of the frame `ret` returns
    // into (when `ret` is in Tern code; `frames_from` checks that first).
    let frames = unsafe { crate::backtrace::native::frames_from(ret, caller_fp) };
    if frames.is_empty() {
        // No Tern code made the call: the frame that did not fit is that
        // of the function the run entered Tern code by (`main`, whose
        // locals are larger than the stack), placed at its declaration,
        // as the interpreter places it.
        return crate::backtrace::table::declaration_frame(pc).map(|f| vec![f]);
    }
    Some(frames)
}

/// The Tern frames at a stack overflow inside the runtime's own code (a
/// `print`, an allocation, any runtime function a recursion calls at every
/// level, whose frame is the one that no longer fits). The instruction must
/// lie in the executable segment that holds the runtime ([`runtime_text`]),
/// so the C library was not interrupted (its allocator may hold a lock that
/// the report's allocations would wait for forever), and the backtrace
/// tables must be free (a fault while they were being read stays
/// unlocated). The system unwinder then steps from this handler through the
/// signal frame and the runtime's frames (its DWARF CFI) to the first Tern
/// frame, as for a runtime error ([`crate::backtrace::capture`]); the
/// innermost frame shown is the Tern call into the runtime, which the
/// report leaves out when it is part of the recursion's deepest level
/// ([`crate::backtrace::whole_cycles`]).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn overflow_in_runtime_code(site: OverflowSite) -> Option<Vec<crate::backtrace::Frame>> {
    let (lo, hi) = runtime_text();
    // (In AOT the segment holds the Tern code too: that is the other case's.)
    let in_runtime =
        (lo..hi).contains(&site.pc) && crate::backtrace::table::function_start(site.pc).is_none();
    if !in_runtime || !crate::backtrace::table::is_free() {
        return None;
    }
    let frames = crate::backtrace::capture();
    (!frames.is_empty()).then_some(frames)
}

/// The bounds of the executable segment holding the runtime's code (`tern`'s
/// in the JIT, the program's executable in AOT), found when the fault
/// handler is installed (`dl_iterate_phdr` is not for signal handlers);
/// `(0, 0)` before that or when not found.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn runtime_text() -> (usize, usize) {
    use std::sync::atomic::Ordering::Relaxed;
    (RUNTIME_TEXT[0].load(Relaxed), RUNTIME_TEXT[1].load(Relaxed))
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
static RUNTIME_TEXT: [std::sync::atomic::AtomicUsize; 2] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 2];

/// Finds [`runtime_text`]'s segment: the loaded, executable segment that
/// contains [`on_fault`].
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn find_runtime_text() {
    extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `dl_iterate_phdr` passes a valid `info` whose `dlpi_phdr`
        // has `dlpi_phnum` entries; `data` is the `usize` passed below.
        unsafe {
            let target = *(data as *const usize);
            let info = &*info;
            for i in 0..usize::from(info.dlpi_phnum) {
                let ph = &*info.dlpi_phdr.add(i);
                if ph.p_type != libc::PT_LOAD || ph.p_flags & libc::PF_X == 0 {
                    continue;
                }
                let lo = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
                let hi = lo.wrapping_add(ph.p_memsz as usize);
                if (lo..hi).contains(&target) {
                    use std::sync::atomic::Ordering::Relaxed;
                    RUNTIME_TEXT[0].store(lo, Relaxed);
                    RUNTIME_TEXT[1].store(hi, Relaxed);
                    return 1;
                }
            }
        }
        0
    }
    let mut target = on_fault as *const () as usize;
    // SAFETY: `visit` only reads what `dl_iterate_phdr` hands it and
    // `target`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut target as *mut usize).cast()) };
}

/// Elsewhere every fault reports the line without a location.
///
/// # Safety
/// None needed.
#[cfg(all(unix, not(all(target_os = "linux", target_arch = "x86_64"))))]
unsafe fn overflow_site(_info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) -> Option<()> {
    None
}

#[cfg(all(unix, not(all(target_os = "linux", target_arch = "x86_64"))))]
unsafe fn overflow_in_tern_code(_site: ()) -> Option<Vec<crate::backtrace::Frame>> {
    None
}

#[cfg(all(unix, not(all(target_os = "linux", target_arch = "x86_64"))))]
fn overflow_in_runtime_code(_site: ()) -> Option<Vec<crate::backtrace::Frame>> {
    None
}

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_text_holds_the_runtime_and_not_the_c_library() {
        find_runtime_text();
        let (lo, hi) = runtime_text();
        assert!(lo < hi, "no segment found");
        for f in [
            tern_rt_flush as *const () as usize,
            on_fault as *const () as usize,
        ] {
            assert!((lo..hi).contains(&f), "{f:#x} outside {lo:#x}..{hi:#x}");
        }
        // A fault in the C library (its allocator may hold a lock) is not
        // taken for runtime code.
        let malloc = libc::malloc as *const () as usize;
        assert!(
            !(lo..hi).contains(&malloc),
            "malloc {malloc:#x} inside {lo:#x}..{hi:#x}"
        );
    }
}
