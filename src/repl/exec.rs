//! Running one input's JIT code so that nothing it does can end the session.
//!
//! Generated code has no unwind information and a Rust panic cannot cross its
//! `extern "C"` frames, so nothing may unwind out of a failing input. Instead
//! one long-lived **worker thread** enters every input's code through
//! `tern_repl_call` (`escape.c`, a `sigsetjmp`), and every way out of a
//! failing input jumps back there (`tern_repl_escape`, a `siglongjmp`):
//! * a runtime error reaches the runtime's failure hook (`abi::fail`), which
//!   moves the location and message into [`FAILED`] and jumps. The frames
//!   jumped over are generated code (nothing to drop) and the failing runtime
//!   entry point, which by the runtime's contract holds nothing to drop or
//!   unlock at that moment (`abi::fail`, "Why owned");
//! * a stack overflow or invalid access raises SIGSEGV/SIGBUS on the worker;
//!   the signal handler (on the worker's alternate signal stack) jumps out of
//!   itself. The fault may have hit inside `print` holding the output lock:
//!   the worker releases it ([`tern_runtime::stdout::recover_after_fault`])
//!   before anything prints again. A fault on any other thread is not ours:
//!   the handler restores the default action and the fault repeats, ending
//!   the process as it would have;
//! * Ctrl-C: SIGINT sets the runtime's interrupt flag, which REPL code polls
//!   at function entries and loop iterations (`Options::interrupt_flag`); the
//!   poll fails the input with `interrupted` like any runtime error.
//!
//! After the jump the worker reports the outcome and waits for the next
//! input: no thread, stack or JIT code outlives a failed input (the session
//! frees each input's code once the worker is back), so a session survives
//! any number of failures in bounded memory. Session state lives in memory no
//! thread owns, so it stays intact.

use std::os::raw::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};

unsafe extern "C" {
    /// Calls `entry`; 0 when it returned, else the code given to
    /// [`tern_repl_escape`].
    fn tern_repl_call(entry: extern "C" fn() -> i64) -> c_int;
    /// Whether this thread is inside `tern_repl_call`.
    fn tern_repl_inside() -> c_int;
    /// Returns from the innermost `tern_repl_call` of this thread.
    fn tern_repl_escape(code: c_int) -> !;
    /// Its own frame address: the caller's stack pointer at the call, less
    /// the return address and the saved frame pointer.
    fn tern_repl_stack_here() -> usize;
}

/// `tern_repl_escape` code of a runtime error (its text is in [`FAILED`]).
const ESCAPE_FAILED: c_int = 1;
/// `tern_repl_escape` code of a fault (stack overflow, invalid access).
const ESCAPE_FAULT: c_int = 2;

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// The entry returned.
    Done,
    /// A runtime error: location (as the runtime gave it) and message.
    Failed { loc: String, msg: String },
    /// Stack overflow or invalid memory access: the runtime's report when
    /// it could place the fault (`abi::process::fault_report`).
    Fault(Option<String>),
}

/// Stack size of the worker: as much as a main thread usually gets.
const WORKER_STACK: usize = 8 << 20;

/// Stack the generated code leaves below itself for the runtime functions it
/// calls (`Options::stack_limit`): their frames then never reach the guard
/// page, so a deep recursion stops at a Tern function entry with `stack
/// overflow`, never halfway through a pool operation or a `print`.
const RUNTIME_MARGIN: usize = 256 << 10;

/// Stack an input may use below the worker's loop. Measured from the loop's
/// frame, not from the stack's base, so that the frames above the loop
/// (thread start-up, whose size depends on the build profile) do not change
/// how deep an input may recurse: a deep recursion reports the same frame
/// count in every build. The rest of the worker's stack covers those frames
/// and [`RUNTIME_MARGIN`].
const INPUT_STACK: usize = WORKER_STACK - RUNTIME_MARGIN - (128 << 10);

/// The lowest stack address REPL code may run at: [`INPUT_STACK`] below the
/// worker's loop, and never less than [`RUNTIME_MARGIN`] above the stack's
/// base (0 until the worker starts: no check fails), or
/// `usize::MAX` to stop the running input at its next function entry
/// (Ctrl-C; `Options::stack_limit`).
static STACK_LIMIT: AtomicUsize = AtomicUsize::new(0);
/// [`STACK_LIMIT`] when no interrupt is pending.
static WORKER_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Address of the stack limit word, for `Options::stack_limit`.
pub fn stack_limit_address() -> usize {
    STACK_LIMIT.as_ptr() as usize
}

/// `pthread_self` of the worker (0 before it starts).
static WORKER: AtomicUsize = AtomicUsize::new(0);
/// Whether the worker is inside generated code (a fault there is ours).
static RUNNING: AtomicBool = AtomicBool::new(false);
/// The runtime error the failure hook is leaving with.
static FAILED: Mutex<Option<(String, String)>> = Mutex::new(None);
/// The report of the fault the signal handler is leaving with, when the
/// runtime could place it.
static FAULTED: Mutex<Option<String>> = Mutex::new(None);

/// The worker thread: inputs go in as entry addresses, outcomes come out.
pub struct Worker {
    jobs: Sender<usize>,
    outcomes: Receiver<Outcome>,
}

impl Worker {
    /// Starts the worker and installs the failure hook and the signal
    /// handlers; call once per process.
    pub fn start() -> Result<Worker, String> {
        tern_runtime::abi::fail::set_failure_hook(Some(on_failure));
        install_handlers();
        let (jobs, job_rx) = mpsc::channel::<usize>();
        let (out_tx, outcomes) = mpsc::channel();
        std::thread::Builder::new()
            .name("tern-repl-eval".into())
            .stack_size(WORKER_STACK)
            .spawn(move || work(job_rx, out_tx))
            .map_err(|e| format!("cannot start the evaluation thread: {e}"))?;
        // The worker reports once its stack limit is set (a `Done`).
        outcomes
            .recv()
            .map_err(|_| "the evaluation thread ended at its start".to_string())?;
        Ok(Worker { jobs, outcomes })
    }

    /// Runs `entry` on the worker and waits until it is back.
    pub fn run(&self, entry: extern "C" fn() -> i64) -> Outcome {
        let lost = || Outcome::Failed {
            loc: "<repl>".into(),
            msg: "the evaluation thread ended unexpectedly".into(),
        };
        if self.jobs.send(entry as usize).is_err() {
            return lost();
        }
        self.outcomes.recv().unwrap_or_else(|_| lost())
    }
}

/// The worker's loop (see the module docs).
fn work(jobs: Receiver<usize>, outcomes: Sender<Outcome>) {
    tern_runtime::abi::process::ensure_alt_stack();
    // SAFETY: pthread_self has no preconditions.
    WORKER.store(unsafe { libc::pthread_self() } as usize, Ordering::SeqCst);
    if let Some((low, _)) = stack_bounds() {
        // SAFETY: returns an address; called from this frame, as
        // `tern_repl_call` is below, so the two see the same stack pointer.
        let here = unsafe { tern_repl_stack_here() };
        let limit = here.saturating_sub(INPUT_STACK).max(low + RUNTIME_MARGIN);
        WORKER_LIMIT.store(limit, Ordering::SeqCst);
        STACK_LIMIT.store(limit, Ordering::SeqCst);
    }
    if outcomes.send(Outcome::Done).is_err() {
        return;
    }
    for entry in jobs {
        // SAFETY: the session sends only entry addresses of JIT programs it
        // keeps alive until this run's outcome is received.
        let entry = unsafe { std::mem::transmute::<usize, extern "C" fn() -> i64>(entry) };
        RUNNING.store(true, Ordering::SeqCst);
        // SAFETY: see the module docs; escapes come only from this thread.
        let code = unsafe { tern_repl_call(entry) };
        RUNNING.store(false, Ordering::SeqCst);
        let outcome = match code {
            0 => Outcome::Done,
            ESCAPE_FAILED => match FAILED.lock().unwrap_or_else(|e| e.into_inner()).take() {
                Some((loc, msg)) => Outcome::Failed { loc, msg },
                None => Outcome::Fault(None),
            },
            _ => {
                // A fault in a runtime call (only possible past the stack
                // limit's margin, or through `unsafe`) may have hit inside
                // `print`, holding the output lock; its holder is gone.
                tern_runtime::stdout::recover_after_fault();
                Outcome::Fault(FAULTED.lock().unwrap_or_else(|e| e.into_inner()).take())
            }
        };
        if code != 0 {
            release_stack();
        }
        tern_runtime::abi::process::tern_rt_flush();
        if outcomes.send(outcome).is_err() {
            return;
        }
    }
}

/// The calling thread's stack: its lowest address and size.
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: reads this thread's own attributes into locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut low: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let got = libc::pthread_attr_getstack(&attr, &mut low, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (got == 0).then_some((low as usize, size))
    }
}

/// After a deep recursion: gives the pages of the worker's stack below the
/// current frame back to the system (they are touched and would stay
/// resident; the next deep recursion gets fresh zero pages).
fn release_stack() {
    let Some((low, _)) = stack_bounds() else {
        return;
    };
    let page = 4096usize;
    let here = &low as *const _ as usize;
    // Keep a margin below this frame for the calls still to come.
    let top = here.saturating_sub(64 << 10) & !(page - 1);
    let low = low.div_ceil(page) * page;
    if top > low {
        // SAFETY: the part of this thread's stack below the current frame,
        // which no live frame uses (the generated code's frames there were
        // abandoned).
        unsafe { libc::madvise(low as *mut libc::c_void, top - low, libc::MADV_DONTNEED) };
    }
}

/// The runtime's failure hook: hand the error over and leave the input.
fn on_failure(loc: String, msg: String) -> ! {
    // SAFETY: tern_repl_inside only reads a thread-local.
    if unsafe { tern_repl_inside() } == 0 {
        // Not inside an input: behave like the runtime without a hook.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "error: {loc}: {msg}");
        std::process::exit(tern_runtime::abi::fail::FAILURE_STATUS);
    }
    // The guard is a temporary of this statement: nothing is held below.
    *FAILED.lock().unwrap_or_else(|e| e.into_inner()) = Some((loc, msg));
    // SAFETY: inside tern_repl_call on this thread (checked above); this
    // frame holds nothing to drop (the strings were moved).
    unsafe { tern_repl_escape(ESCAPE_FAILED) }
}

fn install_handlers() {
    // SAFETY: both handlers only use async-signal-safe operations.
    unsafe {
        tern_runtime::abi::process::install_fault_handler_with(on_fault);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_interrupt as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

/// Ctrl-C: ask the running input (or the next one, if it is being compiled)
/// to stop: the flag loops poll, and a stack limit no function entry passes.
/// The session clears the request when it reads a new input
/// ([`clear_interrupt`]).
extern "C" fn on_interrupt(_sig: c_int) {
    tern_runtime::abi::interrupt::request_interrupt();
    STACK_LIMIT.store(usize::MAX, Ordering::SeqCst);
}

/// Withdraws a Ctrl-C not meant for the next input (one at the prompt).
pub fn clear_interrupt() {
    tern_runtime::abi::interrupt::clear_interrupt();
    STACK_LIMIT.store(WORKER_LIMIT.load(Ordering::SeqCst), Ordering::SeqCst);
}

extern "C" fn on_fault(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: only async-signal-safe operations (atomics, pthread_self,
    // signal, siglongjmp), but for the runtime's report, which it builds
    // only where no lock it takes can be held.
    unsafe {
        let me = libc::pthread_self() as usize;
        if me != 0 && WORKER.load(Ordering::SeqCst) == me && RUNNING.load(Ordering::SeqCst) {
            let report = tern_runtime::abi::process::fault_report(info, ctx);
            // Moved into the slot (or dropped) before the jump, which skips
            // this frame's destructors; only the worker takes the slot.
            match FAULTED.try_lock() {
                Ok(mut slot) => *slot = report,
                Err(_) => drop(report),
            }
            tern_repl_escape(ESCAPE_FAULT);
        }
        // Not a REPL input: let the fault happen again with the default
        // action (the process ends by the signal, as without this handler).
        libc::signal(sig, libc::SIG_DFL);
    }
}
