//! What the evaluator precomputes once per program: the layout of every
//! function's frame (where each local and each temporary lives), how each
//! `extern fn` is called, and the bytes of every string literal.
//!
//! The frame is the frame plan's (`tern_compiler::tir::frame`), the same
//! plan the backend reads: a temporary belongs to one expression *site* and
//! is reused every time that site runs, and a `let` of a fresh aggregate
//! adopts its temporary instead of copying it, so aliasing and lifetimes
//! are the backend's by construction.

use std::collections::HashMap;

use tern_compiler::tir::arg_sharing::ArgSharing;
use tern_compiler::tir::visit::{self, Part};
use tern_compiler::tir::{Block, Expr, ExprKind, Function, Program, frame};

pub use tern_compiler::tir::frame::{Home, is_mem, site};

use crate::externs::{self, Extern};
use crate::memory;

/// Everything the evaluator precomputes from a program; immutable during the
/// run.
pub struct Code<'p> {
    /// The program being run.
    pub program: &'p Program,
    /// The frame layout of every function, indexed by `FuncId`.
    pub frames: Vec<FrameLayout>,
    /// How each `extern fn` is called, indexed by `ExternId`.
    pub externs: Vec<Extern>,
    /// The bytes of every string literal, by content (stable addresses).
    pub strings: HashMap<String, Box<[u8]>>,
}

impl<'p> Code<'p> {
    /// Lays out every frame and resolves every `extern fn`. `Err` is the
    /// JIT's message for an extern symbol that cannot be found.
    pub fn prepare(program: &'p Program) -> Result<Code<'p>, String> {
        let mut strings = HashMap::new();
        let sharing = ArgSharing::of(program);
        let frames = program
            .functions
            .iter()
            .map(|f| {
                collect_strings(&f.body, &mut strings);
                layout_frame(program, f, &sharing)
            })
            .collect();
        let externs = program
            .externs
            .iter()
            .map(externs::resolve)
            .collect::<Result<_, _>>()?;
        Ok(Code {
            program,
            frames,
            externs,
            strings,
        })
    }
}

/// The frame of one function.
#[derive(Debug, Default)]
pub struct FrameLayout {
    /// Bytes of locals and temporaries (each at an 8-byte boundary).
    pub size: u64,
    /// What a call is charged on the simulated stack: an estimate of the
    /// compiled frame (see [`frame_charge`]).
    pub charge: u64,
    /// The home of every local, indexed by `LocalId`.
    pub homes: Vec<Home>,
    /// The temporary of each expression site that needs one, keyed by
    /// [`site`] (the program is borrowed for the whole run, so the addresses
    /// are stable).
    pub temps: HashMap<usize, u64>,
}

/// The frame of `f` from its plan. The charge leaves out the temporaries
/// of arguments compiled code passes as the place itself (`sharing`): the
/// interpreter copies every by-value argument, compiled code only those.
fn layout_frame(program: &Program, f: &Function, sharing: &ArgSharing) -> FrameLayout {
    let plan = frame::plan(program, f);
    let shared: u64 = plan
        .place_args
        .iter()
        .filter(|a| sharing.shares_place_arg(a))
        .map(|a| a.bytes)
        .sum();
    FrameLayout {
        size: plan.size,
        charge: frame_charge(plan.register_words, plan.slot_bytes.saturating_sub(shared)),
        homes: plan.homes,
        temps: plan.temps,
    }
}

/// Collects the string literals of `body` into `strings`, without
/// recursion (a body of any nesting depth). An empty literal still gets
/// one byte, so that every string has a distinct, valid address (as the
/// backend's data objects).
fn collect_strings(body: &Block, strings: &mut HashMap<String, Box<[u8]>>) {
    let mut exprs: Vec<&Expr> = Vec::new();
    let mut blocks = vec![body];
    while let Some(b) = blocks.pop() {
        for stmt in &b.stmts {
            visit::stmt_parts(stmt, &mut |p| match p {
                Part::Expr(e) => exprs.push(e),
                Part::Block(b) => blocks.push(b),
            });
        }
        while let Some(e) = exprs.pop() {
            if let ExprKind::Str(s) = &e.kind
                && !strings.contains_key(s)
            {
                let bytes: Box<[u8]> = if s.is_empty() {
                    Box::new([0])
                } else {
                    s.as_bytes().into()
                };
                strings.insert(s.clone(), bytes);
            }
            visit::expr_children(e, &mut |x| exprs.push(x));
        }
    }
}

/// Bytes of a compiled frame: return address and saved frame pointer, the
/// callee-saved registers its locals need, its stack slots.
const FRAME_LINKAGE: u64 = 16;

/// Callee-saved integer registers a frame can need at most (x86-64 has
/// five besides the frame pointer: rbx, r12-r15).
const CALLEE_SAVED_WORDS: u64 = 5;

/// The estimate of a compiled frame that a call is charged on the simulated
/// stack: [`FRAME_LINKAGE`], one callee-saved register per word of locals
/// held in registers (at most [`CALLEE_SAVED_WORDS`]), and the stack slots,
/// rounded up to the 16-byte frame alignment. On x86-64 this matches the
/// depth at which compiled recursion overflows to within a few percent for
/// the shapes of `tests/interp.rs`; spill slots, which depend on register
/// allocation, are not modelled.
pub fn frame_charge(register_words: u64, slot_bytes: u64) -> u64 {
    (FRAME_LINKAGE + 8 * register_words.min(CALLEE_SAVED_WORDS))
        .saturating_add(slot_bytes)
        .next_multiple_of(memory::FRAME_ALIGN)
}
