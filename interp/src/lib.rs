#![warn(missing_docs)]
//! Tern's reference interpreter: runs a typed program (`tern_compiler::tir::Program`,
//! the one the backend lowers) by evaluating it directly, with the exact
//! semantics of `tern-codegen`'s translator. It is the semantics' second
//! opinion, written for clarity rather than speed: `tern run --interp FILE`
//! must print the same stdout and stderr and exit with the same status as
//! `tern run FILE`. See `docs/interpreter.md`.
//!
//! This crate never imports Cranelift or `tern-codegen`; it shares the
//! runtime with compiled code instead: output, every failure message, the
//! builtin pool and the span externs are the runtime's own functions, and the
//! program runs inside the runtime's `tern_rt_main` (pool setup and the
//! `TERN_POOL_BYTES` check, the fault handler, the final flush).
//!
//! Module map:
//! * `ops` — integer and bool semantics (pure functions, unit-tested);
//! * `memory` — loads, stores and copies at real addresses; the simulated stack;
//! * `code` — frame layouts (locals and temporaries), strings, extern resolution;
//! * `externs` — `extern fn` calls (the runtime's table, `dlsym` for the rest);
//! * `eval` — the evaluator, construct by construct after `codegen/src/lower/`.

mod code;
mod eval;
mod externs;
mod memory;
mod ops;

use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use tern_compiler::tir::Program;
use tern_runtime::abi::{fail, process};

use crate::code::Code;
use crate::eval::{Machine, host_sp};
use crate::memory::Stack;

/// Why a program could not be run (before its first instruction).
#[derive(Debug)]
pub enum Error {
    /// An `extern fn` names a symbol that neither the runtime nor the process
    /// defines. The text is the JIT's for the same program (`linking failed:
    /// undefined symbol ...`).
    Link(String),
    /// The thread the program runs on could not be started.
    Thread(std::io::Error),
    /// The simulated stack could not be allocated.
    Memory(u64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Link(msg) => write!(f, "{msg}"),
            Error::Thread(e) => write!(f, "cannot start the interpreter's thread: {e}"),
            Error::Memory(bytes) => {
                write!(f, "cannot allocate the interpreter's {bytes}-byte stack")
            }
        }
    }
}

impl std::error::Error for Error {}

/// A program prepared for interpretation: frames laid out, externs resolved.
pub struct Interpreter<'p> {
    code: Code<'p>,
    sanitize: bool,
}

impl<'p> Interpreter<'p> {
    /// Prepares `program`. Fails, as the JIT does, when an `extern fn` symbol
    /// cannot be found.
    pub fn new(program: &'p Program) -> Result<Interpreter<'p>, Error> {
        Code::prepare(program)
            .map(|code| Interpreter {
                code,
                sanitize: false,
            })
            .map_err(Error::Link)
    }

    /// Runs with the semantics of `--sanitize` (`tern run --interp --sanitize`):
    /// the checks, tags and call sites compiled code has with `--sanitize`
    /// (docs/interpreter.md).
    pub fn sanitized(mut self, on: bool) -> Interpreter<'p> {
        self.sanitize = on;
        self
    }

    /// Runs `main` exactly as `tern run` runs compiled code and returns the
    /// exit status `tern run` would exit with: `main`'s `i64` result (0 for
    /// `fn main()`) truncated to 32 bits, of which the OS keeps the low 8.
    ///
    /// The program runs on a thread of its own with a large stack (so the
    /// evaluator's recursion cannot overflow the host stack before the
    /// simulated Tern stack does), inside the runtime's `tern_rt_main`. A
    /// runtime error, a stack overflow or a fault ends the process through the
    /// runtime's failure path (stdout flushed, one `error:` line, status 101)
    /// and does not return.
    pub fn run_main(&self) -> Result<i32, Error> {
        self.on_interpreter_thread(run_in_runtime)
    }

    /// Runs `run` on a machine for this program, on a thread of its own
    /// whose stack is sized for the simulated stack's deepest recursion.
    fn on_interpreter_thread<T: Send>(&self, run: fn(&mut Machine<'_>) -> T) -> Result<T, Error> {
        let limit = stack_limit();
        let mut host = host_stack_bytes(limit);
        std::thread::scope(|scope| {
            loop {
                let spawned = std::thread::Builder::new()
                    .name("tern-interp".into())
                    .stack_size(host)
                    .spawn_scoped(scope, move || {
                        let stack = Stack::new(limit).ok_or(Error::Memory(limit))?;
                        // This thread's stack spans about `host` bytes below here.
                        let floor = host_sp().saturating_sub(host).saturating_add(HOST_RESERVE);
                        let mut machine =
                            Machine::new(&self.code, stack, floor).sanitized(self.sanitize);
                        Ok(run(&mut machine))
                    });
                match spawned {
                    Ok(worker) => {
                        return match worker.join() {
                            Ok(result) => result,
                            // `entry` catches panics; this is for one outside it.
                            Err(_) => fail::report_at(
                                "<interpreter>",
                                "internal error in the interpreter: its thread panicked",
                            ),
                        };
                    }
                    // Not that much address space: a smaller host stack only
                    // means the guard may stop a very deep recursion early.
                    Err(_) if host / 2 >= MIN_HOST_STACK => host /= 2,
                    Err(e) => return Err(Error::Thread(e)),
                }
            }
        })
    }
}

/// Prepares and runs `program` (see [`Interpreter::new`] and
/// [`Interpreter::run_main`]).
pub fn run_main(program: &Program) -> Result<i32, Error> {
    Interpreter::new(program)?.run_main()
}

/// The machine `entry` runs, type-erased: `tern_rt_main` takes a plain
/// `extern "C" fn() -> i64`, so the machine reaches it through this slot of
/// the running thread.
type Pending = (*mut (), unsafe fn(*mut ()) -> i64);

thread_local! {
    static PENDING: Cell<Option<Pending>> = const { Cell::new(None) };
}

/// Runs `machine` through the runtime's own program entry, so the process
/// setup (builtin pool, `TERN_POOL_BYTES`, fault handler on this thread's
/// alternate stack) and the final flush are the compiled program's.
fn run_in_runtime(machine: &mut Machine<'_>) -> i32 {
    /// # Safety
    /// `data` is the `Machine` stored by `run_in_runtime`, still borrowed by it.
    unsafe fn run(data: *mut ()) -> i64 {
        // SAFETY: the caller's contract.
        let machine = unsafe { &mut *data.cast::<Machine<'_>>() };
        machine.run_main()
    }
    let calls = machine.calls.clone();
    PENDING.set(Some((std::ptr::from_mut(machine).cast(), run)));
    // SAFETY: `entry` has the signature `tern_rt_main` expects.
    let status = tern_runtime::backtrace::with_stack_source(&*calls, || unsafe {
        process::tern_rt_main(entry)
    });
    PENDING.set(None);
    status
}

/// The program entry handed to `tern_rt_main` (the compiled entry wrapper's
/// counterpart). No panic may unwind out of an `extern "C"` function, so one
/// becomes an internal error through the failure path.
extern "C" fn entry() -> i64 {
    let Some((data, run)) = PENDING.take() else {
        fail::report_at(
            "<interpreter>",
            "internal error in the interpreter: no program to run",
        )
    };
    // SAFETY: `run_in_runtime` stored the pair and keeps the machine borrowed
    // until `tern_rt_main` returns.
    match catch_unwind(AssertUnwindSafe(|| unsafe { run(data) })) {
        Ok(status) => status,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            fail::report_at(
                "<interpreter>",
                format!("internal error in the interpreter: {what}"),
            )
        }
    }
}

// ----- stack sizes -----------------------------------------------------------

/// The main-thread stack when `RLIMIT_STACK` is unlimited or unknown: what
/// compiled code's runtime bounds an unlimited stack to.
const DEFAULT_STACK: u64 = process::UNLIMITED_STACK_BOUND;

/// Bounds on the simulated stack, whatever the limit says: the host stack
/// grows with it (see [`host_stack_bytes`]).
const MIN_STACK: u64 = 256 << 10;
const MAX_STACK: u64 = 64 << 20;

/// What `tern run` has used of the main thread's stack when the compiled
/// `main` starts (the driver, `tern_rt_main`).
const DRIVER_RESERVE: u64 = 16 << 10;

/// The simulated Tern stack: the compiled program's main-thread stack limit
/// (`RLIMIT_STACK`'s soft limit, 8 MiB when unlimited or unknown), clamped to
/// 256 KiB..64 MiB, less what the driver uses before `main`.
pub fn stack_limit() -> u64 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid out-pointer.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut rl) } == 0;
    // `rlim_t` is not `u64` on every platform.
    #[allow(clippy::unnecessary_cast)]
    let limit = if ok && rl.rlim_cur != libc::RLIM_INFINITY {
        rl.rlim_cur as u64
    } else {
        DEFAULT_STACK
    };
    limit.clamp(MIN_STACK, MAX_STACK) - DRIVER_RESERVE
}

/// Host stack the evaluator uses per Tern call, with a margin: about 1.1 KiB
/// was measured for a recursive call in a `return` (the crate is built with
/// `opt-level = 1` even in debug builds, see the workspace `Cargo.toml`; a
/// release build uses less, an unoptimized one about 4 KiB).
const HOST_BYTES_PER_CALL: u64 = 2 << 10;

/// The smallest host stack worth running on (the nesting reserve and then
/// some).
const MIN_HOST_STACK: usize = 2 * HOST_RESERVE;

/// Host stack for everything else: nested expressions of any one frame
/// (thousands of levels), the runtime's own calls, the guard's margin.
const HOST_RESERVE: usize = 64 << 20;

/// The interpreter thread's stack: enough for the deepest recursion the
/// simulated stack allows (each call is charged at least 16 bytes there)
/// plus [`HOST_RESERVE`]. It is address space; only what is used is touched.
fn host_stack_bytes(limit: u64) -> usize {
    let calls = limit / code::frame_charge(0, 0);
    let bytes = calls * HOST_BYTES_PER_CALL + 2 * HOST_RESERVE as u64;
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use tern_compiler::tir::{
        BinOp, Block, Expr, ExprKind, FuncId, Function, Loc, Program, Stmt, Type,
    };

    use super::*;

    /// `main` returning `1 + (1 + (... + 1))`, `depth` operators deep
    /// (deeper than the front end accepts today: the evaluator must not
    /// depend on its limits).
    fn nested_sum(depth: usize) -> Program {
        let int = |v| Expr {
            kind: ExprKind::Int(v),
            ty: Type::I64,
            loc: Loc::default(),
            span: Default::default(),
        };
        let mut e = int(1);
        for _ in 0..depth {
            e = Expr {
                kind: ExprKind::Binary(BinOp::Add, Box::new(int(1)), Box::new(e)),
                ty: Type::I64,
                loc: Loc::default(),
                span: Default::default(),
            };
        }
        Program {
            files: vec!["nested.tern".into()],
            library: Vec::new(),
            structs: Vec::new(),
            functions: vec![Function {
                name: "main".into(),
                params: Vec::new(),
                ret: Type::I64,
                locals: Vec::new(),
                body: Block {
                    stmts: vec![Stmt::Return(Some(e))],
                },
                loc: Loc::default(),
            }],
            externs: Vec::new(),
            main: FuncId(0),
        }
    }

    #[test]
    fn deeply_nested_expressions_do_not_overflow_the_host_stack() {
        let depth = 20_000;
        let program = nested_sum(depth);
        let interp = Interpreter::new(&program).expect("no externs");
        // Without `tern_rt_main`: the test process keeps its own handlers.
        let status = interp
            .on_interpreter_thread(|m| m.run_main())
            .expect("runs");
        assert_eq!(status, depth as i64 + 1);
        drop(interp);
        // Dropping a 20,000-deep expression recurses; the test thread's
        // stack need not survive it.
        std::mem::forget(program);
    }

    #[test]
    fn the_simulated_stack_follows_the_stack_limit() {
        let limit = stack_limit();
        assert!((MIN_STACK - DRIVER_RESERVE..=MAX_STACK - DRIVER_RESERVE).contains(&limit));
        assert!(host_stack_bytes(limit) >= MIN_HOST_STACK);
    }
}
