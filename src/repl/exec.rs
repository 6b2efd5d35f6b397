//! Running one input's JIT code so that a runtime error cannot end the session.
//!
//! Generated code has no unwind information and a Rust panic cannot cross its
//! `extern "C"` frames, so nothing may unwind out of a failing input. Instead
//! every input runs on a fresh worker thread:
//! * a runtime error reaches the runtime's failure hook (`abi::fail`), which
//!   sends the error to the REPL thread and parks the worker for good: its
//!   frames never resume, its stack (8 MiB reserved, only touched pages
//!   resident) and the JIT code it was running are leaked;
//! * a stack overflow or invalid access raises SIGSEGV/SIGBUS on the worker;
//!   the REPL's signal handler marks the fault and parks the worker inside the
//!   handler (on the thread's alternate signal stack) the same way. A fault on
//!   any other thread is not ours: the handler restores the default action
//!   and the fault repeats, ending the process as it would have.
//!
//! The REPL thread waits for a result message or the fault flag. Session state
//! lives in memory no thread owns, so it stays intact.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// The entry returned.
    Done,
    /// A runtime error: location (as the runtime gave it) and message.
    Failed { loc: String, msg: String },
    /// Stack overflow or invalid memory access.
    Fault,
}

/// Stack size of a worker: as much as a main thread usually gets.
const WORKER_STACK: usize = 8 << 20;

/// `pthread_self` of the worker currently running an input (0: none).
static WORKER: AtomicUsize = AtomicUsize::new(0);
/// Set by the signal handler when the current worker faulted.
static FAULTED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The channel of the worker thread this is, for the failure hook.
    static REPORT: std::cell::RefCell<Option<Sender<Outcome>>> = const { std::cell::RefCell::new(None) };
}

/// Installs the failure hook and the fault handler; call once per process.
pub fn install() {
    tern_runtime::abi::fail::set_failure_hook(Some(on_failure));
    install_fault_handler();
}

/// Runs `entry` on a worker thread and waits for it.
pub fn run(entry: extern "C" fn() -> i64) -> Outcome {
    let (tx, rx) = mpsc::channel();
    FAULTED.store(false, Ordering::SeqCst);
    let worker_tx = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("tern-repl-eval".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            tern_runtime::abi::process::ensure_alt_stack();
            // SAFETY: pthread_self has no preconditions.
            WORKER.store(unsafe { libc::pthread_self() } as usize, Ordering::SeqCst);
            REPORT.with(|r| *r.borrow_mut() = Some(worker_tx.clone()));
            entry();
            tern_runtime::abi::process::tern_rt_flush();
            WORKER.store(0, Ordering::SeqCst);
            let _ = worker_tx.send(Outcome::Done);
        });
    let handle = match spawned {
        Ok(h) => h,
        Err(e) => {
            return Outcome::Failed {
                loc: "<repl>".into(),
                msg: format!("cannot start the evaluation thread: {e}"),
            };
        }
    };
    drop(tx);
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(Outcome::Done) => {
                let _ = handle.join();
                return Outcome::Done;
            }
            // The worker is parked for good; never join it.
            Ok(other) => return other,
            Err(RecvTimeoutError::Timeout) if FAULTED.load(Ordering::SeqCst) => {
                WORKER.store(0, Ordering::SeqCst);
                // The worker may have faulted inside `print`, holding the
                // output lock; it never runs again, so release it.
                tern_runtime::stdout::recover_after_fault();
                tern_runtime::abi::process::tern_rt_flush();
                return Outcome::Fault;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Outcome::Failed {
                    loc: "<repl>".into(),
                    msg: "the evaluation thread ended unexpectedly".into(),
                };
            }
        }
    }
}

/// The runtime's failure hook: hand the error to the REPL thread, then park
/// this worker forever (see the module docs).
fn on_failure(loc: &str, msg: &str) -> ! {
    let sender = REPORT.with(|r| r.borrow().clone());
    let Some(sender) = sender else {
        // Not an evaluation thread: behave like the runtime without a hook.
        eprintln!("error: {loc}: {msg}");
        std::process::exit(tern_runtime::abi::fail::FAILURE_STATUS);
    };
    WORKER.store(0, Ordering::SeqCst);
    let _ = sender.send(Outcome::Failed {
        loc: loc.to_string(),
        msg: msg.to_string(),
    });
    loop {
        std::thread::park();
    }
}

fn install_fault_handler() {
    // SAFETY: `on_fault` only uses async-signal-safe operations.
    unsafe { tern_runtime::abi::process::install_fault_handler_with(on_fault) }
}

extern "C" fn on_fault(sig: libc::c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: only async-signal-safe operations: atomics, pthread_self,
    // signal, sleep.
    unsafe {
        let me = libc::pthread_self() as usize;
        if me != 0 && WORKER.load(Ordering::SeqCst) == me {
            FAULTED.store(true, Ordering::SeqCst);
            loop {
                libc::sleep(3600);
            }
        }
        // Not a REPL worker: let the fault happen again with the default
        // action (the process ends by the signal, as without this handler).
        libc::signal(sig, libc::SIG_DFL);
    }
}
