//! What the evaluator precomputes once per program: the layout of every
//! function's frame (where each local and each temporary lives), how each
//! `extern fn` is called, and the bytes of every string literal.
//!
//! The frame mirrors the backend's stack slots (`codegen/src/lower/`):
//! a temporary belongs to one expression *site* and is reused every time that
//! site runs, and a `let` of a fresh aggregate adopts its temporary instead of
//! copying it, so aliasing and lifetimes are the backend's. The walk is
//! iterative, so a program of any nesting depth is laid out without recursion.

use std::collections::{HashMap, HashSet};

use tern_compiler::tir::visit::{self, Part};
use tern_compiler::tir::{
    Arg, Block, Builtin, Expr, ExprKind, Function, LocalId, Program, Stmt, Type,
};

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
        let frames = program
            .functions
            .iter()
            .map(|f| layout_frame(program, f, &mut strings))
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

/// Where a local lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// At this byte offset in the frame.
    Slot(u64),
    /// At the address the caller passes: a `ref` parameter, or an aggregate
    /// value parameter (the caller's fresh copy, used in place).
    Passed,
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

/// The key of an expression site: its address in the program.
pub fn site(e: &Expr) -> usize {
    e as *const Expr as usize
}

/// Whether values of `ty` live in memory and are handled by address (the
/// backend's `Repr::Mem`): fixed arrays and structs.
pub fn is_mem(ty: &Type) -> bool {
    matches!(ty, Type::Array(..) | Type::Struct(_))
}

/// Lays out the frame of `f`, and collects its string literals into `strings`.
fn layout_frame(
    program: &Program,
    f: &Function,
    strings: &mut HashMap<String, Box<[u8]>>,
) -> FrameLayout {
    let mut b = LayoutBuilder {
        program,
        frame: FrameLayout::default(),
        adopted: HashMap::new(),
        seen_let: HashSet::new(),
        addressed: HashSet::new(),
        temp_bytes: 0,
    };
    let mut passed = vec![false; f.locals.len()];
    for p in &f.params {
        let ty = &f.locals[p.local.0 as usize].ty;
        if p.by_ref || is_mem(ty) {
            passed[p.local.0 as usize] = true;
        }
    }
    b.walk(&f.body, strings);
    // What the compiled frame holds besides linkage: the backend's stack
    // slots (temporaries, aggregates, address-taken locals) and, in
    // callee-saved registers, the other locals (a slice takes two).
    let mut slot_bytes = b.temp_bytes;
    let mut register_words = 0;
    let mut homes = Vec::with_capacity(f.locals.len());
    for (i, local) in f.locals.iter().enumerate() {
        let id = LocalId(i as u32);
        let home = if passed[i] {
            register_words += 1;
            Home::Passed
        } else if let Some(&offset) = b.adopted.get(&id) {
            Home::Slot(offset)
        } else {
            let size = program.layout(&local.ty).size;
            if is_mem(&local.ty) || b.addressed.contains(&id) {
                slot_bytes = slot_bytes.saturating_add(size.next_multiple_of(8));
            } else {
                register_words += size.div_ceil(8);
            }
            Home::Slot(b.slot(&local.ty))
        };
        homes.push(home);
    }
    b.frame.homes = homes;
    b.frame.charge = frame_charge(register_words, slot_bytes);
    b.frame
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

/// A node still to visit, in program order.
enum Node<'p> {
    Block(&'p Block),
    Stmt(&'p Stmt),
    Expr(&'p Expr),
}

struct LayoutBuilder<'p> {
    program: &'p Program,
    frame: FrameLayout,
    /// Locals whose first `let` adopts its initialiser's temporary.
    adopted: HashMap<LocalId, u64>,
    /// Locals whose `let` was seen (only the first one can adopt).
    seen_let: HashSet<LocalId>,
    /// Locals whose address is taken (`ref x`, `unsafe::addr(x)` of a
    /// non-slice): the backend gives them a stack slot.
    addressed: HashSet<LocalId>,
    /// Bytes of all temporaries.
    temp_bytes: u64,
}

impl<'p> LayoutBuilder<'p> {
    /// A fresh 8-byte-aligned slot for a value of type `ty`.
    fn slot(&mut self, ty: &Type) -> u64 {
        let offset = self.frame.size.next_multiple_of(8);
        let size = self.program.layout(ty).size;
        self.frame.size = offset.saturating_add(size);
        offset
    }

    fn temp(&mut self, e: &'p Expr) -> u64 {
        let key = site(e);
        if let Some(&offset) = self.frame.temps.get(&key) {
            return offset;
        }
        let offset = self.slot(&e.ty);
        let size = self.program.layout(&e.ty).size;
        self.temp_bytes = self.temp_bytes.saturating_add(size.next_multiple_of(8));
        self.frame.temps.insert(key, offset);
        offset
    }

    /// Visits the body in program order (a pre-order walk with an explicit
    /// stack, children pushed in reverse), so that the first `let` of a
    /// local is the one the backend translates first.
    fn walk(&mut self, body: &'p Block, strings: &mut HashMap<String, Box<[u8]>>) {
        let mut todo = vec![Node::Block(body)];
        while let Some(node) = todo.pop() {
            let mut children: Vec<Node<'p>> = Vec::new();
            match node {
                Node::Block(block) => children.extend(block.stmts.iter().map(Node::Stmt)),
                Node::Stmt(stmt) => self.stmt(stmt, &mut children),
                Node::Expr(e) => self.expr(e, &mut children, strings),
            }
            todo.extend(children.into_iter().rev());
        }
    }

    fn stmt(&mut self, stmt: &'p Stmt, children: &mut Vec<Node<'p>>) {
        if let Stmt::Let { local, init } = stmt {
            // The backend's `Stmt::Let`: a fresh aggregate's temporary
            // becomes the local's storage.
            let first_let = self.seen_let.insert(*local);
            if first_let && is_mem(&init.ty) && init.is_fresh_aggregate() {
                let offset = self.temp(init);
                self.adopted.insert(*local, offset);
            }
        }
        match stmt {
            // The value before the place, as the evaluator runs them (so
            // temporaries get their offsets in the order they are made).
            Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
                children.push(Node::Expr(value));
                children.push(Node::Expr(place));
            }
            _ => visit::stmt_parts(stmt, &mut |p| {
                children.push(match p {
                    Part::Expr(e) => Node::Expr(e),
                    Part::Block(b) => Node::Block(b),
                })
            }),
        }
    }

    fn expr(
        &mut self,
        e: &'p Expr,
        children: &mut Vec<Node<'p>>,
        strings: &mut HashMap<String, Box<[u8]>>,
    ) {
        // What each expression lays out itself; its children follow
        // (`visit::expr_children`, in evaluation order).
        match &e.kind {
            // An empty literal still gets one byte, so that every string has
            // a distinct, valid address (as the backend's data objects).
            ExprKind::Str(s) if !strings.contains_key(s) => {
                let bytes: Box<[u8]> = if s.is_empty() {
                    Box::new([0])
                } else {
                    s.as_bytes().into()
                };
                strings.insert(s.clone(), bytes);
            }
            ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
                // An aggregate result: the caller's slot the callee writes.
                if matches!(e.kind, ExprKind::Call { .. }) && is_mem(&e.ty) {
                    self.temp(e);
                }
                for arg in args {
                    match arg {
                        // A place passed by value is copied at the call.
                        Arg::Value(x) if is_mem(&x.ty) && !x.is_fresh_aggregate() => {
                            self.temp(x);
                        }
                        Arg::Value(_) => {}
                        Arg::Ref(x) => self.mark_addressed(x),
                    }
                }
            }
            ExprKind::StructLit { .. }
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::ArrayLit(_)
            | ExprKind::Bytes(_) => {
                self.temp(e);
            }
            ExprKind::Builtin(builtin, args) => {
                if *builtin == Builtin::UnsafeAddr
                    && let Some(x) = args.first()
                    && !matches!(x.ty, Type::Slice(_) | Type::Reusable(_))
                {
                    self.mark_addressed(x);
                }
            }
            // A text's copy lives in its hidden local, laid out as any local.
            _ => {}
        }
        visit::expr_children(e, &mut |x| children.push(Node::Expr(x)));
    }

    /// The backend's `collect_addressed`: a place that is a local itself.
    fn mark_addressed(&mut self, place: &Expr) {
        if let ExprKind::Local(id) = place.kind {
            self.addressed.insert(id);
        }
    }
}
