//! The evaluator: statements and expressions of the typed program, each
//! construct written after its lowering in `codegen/src/lower/` (the method
//! names follow it: `place_addr`, `sequence`, `index_addr`, `checked_bytes`,
//! `push_arg`...). Same order of evaluation, same copies at the same moments,
//! same checks calling the same runtime functions with the same arguments.
//!
//! Values mirror the backend's `Val`: an aggregate is the *address* of its
//! bytes, not a copy, so `a = b`, argument copies and stores read the source
//! when the backend's copy would, and aliasing through `ref` behaves the same.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::rc::Rc;

use tern_compiler::tir::{
    Arg, BinOp, Block, Builtin, Expr, ExprKind, ExternId, FuncId, Function, Loc, LocalId, Program,
    Stmt, Type, UnOp,
};
use tern_runtime::abi::{fail, output, reusable, sanitize};
use tern_runtime::backtrace;

use crate::code::{Code, FrameLayout, Home, is_mem, site};
use crate::externs::{self, Extern};
use crate::memory::{self, Addr, Stack};
use crate::ops::{self, DivByZero};

/// A value, as the backend's `Val`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// No value (`()`).
    Unit,
    /// A scalar in canonical form (see [`crate::ops`]).
    Scalar(i64),
    /// A slice, reusable slice or string: `(ptr, len)`.
    Pair(i64, i64),
    /// The address of an aggregate (array or struct).
    Mem(Addr),
}

/// An inconsistency in the typed program that the front end should have
/// made impossible: a bug, reported as an internal error, never a panic.
#[derive(Debug)]
pub struct Internal {
    /// Where, when known.
    pub loc: Option<Loc>,
    /// What.
    pub msg: String,
}

/// Boxed, so that results stay small on the host stack (they are in every
/// frame of the evaluator's recursion) and the rare error pays for it.
type R<T> = Result<T, Box<Internal>>;

fn internal<T>(loc: Loc, msg: impl Into<String>) -> R<T> {
    Err(Box::new(Internal {
        loc: Some(loc),
        msg: msg.into(),
    }))
}

impl Val {
    /// The backend's `Val::scalar` (which also accepts an address).
    fn scalar(self, loc: Loc) -> R<i64> {
        match self {
            Val::Scalar(v) | Val::Mem(v) => Ok(v),
            other => internal(loc, format!("expected a scalar, got {other:?}")),
        }
    }

    fn pair(self, loc: Loc) -> R<(i64, i64)> {
        match self {
            Val::Pair(p, l) => Ok((p, l)),
            other => internal(loc, format!("expected a (ptr, len) pair, got {other:?}")),
        }
    }
}

/// How a statement ends.
enum Flow {
    Next,
    Break,
    Continue,
    /// `return`; an aggregate result has already been copied to the
    /// caller's slot and is `Unit` here.
    Return(Val),
}

/// One argument as the callee receives it.
enum Passed {
    /// A scalar or `(ptr, len)`, stored into the parameter's slot.
    Value(Val),
    /// The address of a `ref` place, or of the caller's copy of an aggregate.
    Address(Addr),
}

/// One activation of a function.
struct Frame<'a> {
    func: &'a Function,
    layout: &'a FrameLayout,
    /// Start of the frame on the simulated stack.
    base: Addr,
    /// The address of every local (`None` until a passed one is bound; a
    /// passed address may be 0: a `ref` to a zero-size element of a slice
    /// that owns no span).
    addrs: Vec<Option<Addr>>,
    /// Where an aggregate result goes (the caller's slot).
    sret: Option<Addr>,
}

impl Frame<'_> {
    fn addr(&self, id: LocalId, loc: Loc) -> R<Addr> {
        match self.addrs.get(id.0 as usize) {
            Some(&Some(a)) => Ok(a),
            _ => internal(
                loc,
                format!("local #{} of `{}` has no storage", id.0, self.func.name),
            ),
        }
    }

    fn local_ty(&self, id: LocalId, loc: Loc) -> R<&Type> {
        match self.func.locals.get(id.0 as usize) {
            Some(local) => Ok(&local.ty),
            None => internal(
                loc,
                format!("unknown local #{} of `{}`", id.0, self.func.name),
            ),
        }
    }
}

/// The Tern call stack as the runtime's backtraces see it: each active
/// function (innermost last) with the location it is at — the call it is
/// making, or the last location handed to the runtime, exactly the site the
/// backend tags its calls with (`tern_codegen::debug`).
pub struct CallStack<'a> {
    program: &'a Program,
    frames: RefCell<Vec<(FuncId, Loc)>>,
}

impl CallStack<'_> {
    /// The innermost frame is now at `loc`.
    fn at(&self, loc: Loc) {
        if let Some(top) = self.frames.borrow_mut().last_mut() {
            top.1 = loc;
        }
    }
}

impl backtrace::StackSource for CallStack<'_> {
    fn frames(&self) -> Vec<backtrace::Frame> {
        let p = self.program;
        self.frames
            .borrow()
            .iter()
            .rev()
            .map(|&(f, loc)| backtrace::Frame {
                name: p
                    .functions
                    .get(f.0 as usize)
                    .map_or_else(String::new, |f| f.name.clone()),
                loc: p.describe(loc),
                library: p.is_library(loc.file),
            })
            .collect()
    }
}

/// The running program: the simulated stack and the location strings handed
/// to the runtime.
pub struct Machine<'a> {
    code: &'a Code<'a>,
    program: &'a Program,
    stack: Stack,
    /// The lowest host stack address evaluation may reach (see
    /// [`Machine::check_host_stack`]).
    host_floor: usize,
    /// NUL-terminated `file:line:col` strings, made on first use.
    locs: HashMap<Loc, CString>,
    /// `--sanitize`: the checks and calls the backend emits with `--sanitize`.
    sanitize: bool,
    /// `--sanitize`: the tag bits of the pool pointer the place just
    /// addressed lies behind (the backend's `pool_tag`): a view of an array
    /// inside a pool element keeps its allocation's tag.
    pool_tag: Option<i64>,
    /// The call stack backtraces print.
    pub calls: Rc<CallStack<'a>>,
}

// The sanitizer's tag layout, from the ABI's one table (as the backend's).
pub(crate) use tern_runtime::sanitize::{
    ADDR_MASK as SANITIZE_ADDR_MASK, BUILTIN_REGION as SANITIZE_BUILTIN_REGION,
    TAG_SHIFT as SANITIZE_TAG_SHIFT,
};

/// The current host stack address (of a local of the caller's frame).
#[inline(always)]
pub fn host_sp() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

impl<'a> Machine<'a> {
    /// A machine running `code` on `stack`; evaluation stops with a stack
    /// overflow if the host stack gets below `host_floor`.
    pub fn new(code: &'a Code<'a>, stack: Stack, host_floor: usize) -> Machine<'a> {
        Machine {
            code,
            program: code.program,
            stack,
            host_floor,
            locs: HashMap::new(),
            sanitize: false,
            pool_tag: None,
            calls: Rc::new(CallStack {
                program: code.program,
                frames: RefCell::new(Vec::new()),
            }),
        }
    }

    /// Runs with the semantics of `--sanitize` (see the backend's `Options::sanitize`).
    pub fn sanitized(mut self, on: bool) -> Machine<'a> {
        self.sanitize = on;
        self
    }

    /// Runs `main` and returns what the backend's entry wrapper returns: the
    /// `i64` status, or 0 for `fn main()`. Internal errors end the run.
    pub fn run_main(&mut self) -> i64 {
        match self.run_main_inner() {
            Ok(status) => status,
            Err(error) => {
                let Internal { loc, msg } = *error;
                let at =
                    loc.map_or_else(|| "<interpreter>".to_string(), |l| self.program.describe(l));
                fail::report_at(&at, format!("internal error in the interpreter: {msg}"))
            }
        }
    }

    fn run_main_inner(&mut self) -> R<i64> {
        // The backend's entry wrapper turns the sanitizer on before `main`.
        if self.sanitize {
            sanitize::tern_sanitize_enable();
        }
        let id = self.program.main;
        let Some(main) = self.program.functions.get(id.0 as usize) else {
            return Err(Box::new(Internal {
                loc: None,
                msg: "the program has no `main`".into(),
            }));
        };
        // The entry wrapper gives an aggregate result a slot of its own.
        let mut ret_slot: Vec<u64> = Vec::new();
        let sret = if is_mem(&main.ret) {
            let words = self.program.layout(&main.ret).size.div_ceil(8) as usize;
            ret_slot.resize(words.max(1), 0);
            Some(ret_slot.as_mut_ptr() as Addr)
        } else {
            None
        };
        let v = self.invoke(id, sret, Vec::new(), main.loc)?;
        drop(ret_slot);
        // `i32` sign-extends, `u8`/`bool` zero-extend: the canonical form.
        Ok(match (&main.ret, v) {
            (Type::I64 | Type::I32 | Type::U8 | Type::Bool, Val::Scalar(v)) => v,
            _ => 0,
        })
    }

    /// Stops the run like a stack overflow if the host stack is nearly used
    /// up. The host stack is sized so that the simulated stack overflows
    /// first (see `docs/interpreter.md`); this is the guard that keeps the
    /// interpreter from ever faulting on its own stack.
    fn check_host_stack(&self) {
        if host_sp() < self.host_floor {
            fail::report_stack_overflow();
        }
    }

    // ----- calls ----------------------------------------------------------

    /// Calls function `id`: takes its frame from the simulated stack (a
    /// stack overflow if it does not fit), binds the parameters, runs the
    /// body, returns the frame. Kept small (the work is in `enter` and
    /// `leave`): it is on the host stack once per Tern call.
    fn invoke(&mut self, id: FuncId, sret: Option<Addr>, args: Vec<Passed>, at: Loc) -> R<Val> {
        // The caller's frame is at this call before the callee's is taken:
        // an overflow names the call that did not fit.
        self.calls.at(at);
        self.check_host_stack();
        let (f, layout) = self.callee(id, args.len(), at)?;
        let Some((base, mark)) = self.stack.push(layout.size, layout.charge) else {
            let mut frames = self.calls.frames.borrow_mut();
            if frames.is_empty() {
                // `main`'s own frame: no call made it, so the report names
                // its declaration, as compiled code's fault handler does.
                frames.push((id, f.loc));
            }
            drop(frames);
            fail::report_stack_overflow()
        };
        self.calls.frames.borrow_mut().push((id, f.loc));
        let frame = self.enter(f, layout, base, sret, args)?;
        let flow = self.block(&frame, &f.body)?;
        drop(frame);
        self.calls.frames.borrow_mut().pop();
        self.stack.pop(mark);
        leave(f, flow)
    }

    /// The function `id` and its frame layout, checked against the call.
    #[inline(never)]
    fn callee(&self, id: FuncId, argc: usize, at: Loc) -> R<(&'a Function, &'a FrameLayout)> {
        let code = self.code;
        match (
            code.program.functions.get(id.0 as usize),
            code.frames.get(id.0 as usize),
        ) {
            (Some(f), Some(layout))
                if argc == f.params.len() && layout.homes.len() == f.locals.len() =>
            {
                Ok((f, layout))
            }
            _ => internal(at, format!("call of function #{} does not match it", id.0)),
        }
    }

    /// The activation of `f` at `base`: the address of every local, and the
    /// parameters bound (a value stored into its slot; a `ref` or aggregate
    /// parameter is the address the caller passed).
    #[inline(never)]
    fn enter(
        &mut self,
        f: &'a Function,
        layout: &'a FrameLayout,
        base: Addr,
        sret: Option<Addr>,
        args: Vec<Passed>,
    ) -> R<Frame<'a>> {
        let mut addrs = Vec::with_capacity(layout.homes.len());
        for home in &layout.homes {
            addrs.push(home.offset().map(|o| base.wrapping_add(o as i64)));
        }
        let mut frame = Frame {
            func: f,
            layout,
            base,
            addrs,
            sret,
        };
        for (p, arg) in f.params.iter().zip(args) {
            let i = p.local.0 as usize;
            match (layout.homes.get(i), arg) {
                (Some(Home::Passed), Passed::Address(a)) => frame.addrs[i] = Some(a),
                (Some(Home::Slot(_) | Home::Adopted(_)), Passed::Value(v)) => {
                    let ty = frame.local_ty(p.local, f.loc)?;
                    let at = frame.addr(p.local, f.loc)?;
                    // SAFETY: the parameter's slot in the new frame.
                    unsafe { self.store(ty, v, at) };
                }
                _ => {
                    return internal(
                        f.loc,
                        format!("parameter #{i} of `{}` passed wrongly", f.name),
                    );
                }
            }
        }
        Ok(frame)
    }

    /// The backend's `push_arg`: `ref` passes the place's address; a value
    /// aggregate passes the address of a fresh copy (an rvalue is already
    /// one), so the callee sees the value at the call even if it also
    /// changes the original through a `ref`.
    fn push_arg(&mut self, fr: &Frame<'a>, arg: &'a Arg) -> R<Passed> {
        match arg {
            Arg::Ref(place) => Ok(Passed::Address(self.place_addr(fr, place)?)),
            Arg::Value(e) => match self.expr(fr, e)? {
                Val::Mem(a) if e.is_fresh_aggregate() => Ok(Passed::Address(a)),
                Val::Mem(a) => {
                    let t = self.temp(fr, e)?;
                    // SAFETY: from the value's place to this call site's
                    // temporary in the frame, both of the value's type.
                    unsafe { memory::copy(t, a, self.size_of(&e.ty)) };
                    Ok(Passed::Address(t))
                }
                v => Ok(Passed::Value(v)),
            },
        }
    }

    #[inline(never)]
    fn call(&mut self, fr: &Frame<'a>, func: FuncId, args: &'a [Arg], e: &'a Expr) -> R<Val> {
        let sret = if is_mem(&e.ty) {
            Some(self.temp(fr, e)?)
        } else {
            None
        };
        let mut passed = Vec::with_capacity(args.len());
        for arg in args {
            passed.push(self.push_arg(fr, arg)?);
        }
        // `--sanitize`: a call into another source file records its location.
        if self.sanitize && self.program.call_records_site(fr.func, func) {
            let at = self.loc_ptr(e.loc);
            // SAFETY: `at` is a NUL-terminated string this machine keeps.
            unsafe { sanitize::tern_sanitize_site(at) };
        }
        let v = self.invoke(func, sret, passed, e.loc)?;
        Ok(match sret {
            Some(t) => Val::Mem(t),
            None => v,
        })
    }

    #[inline(never)]
    fn call_extern(
        &mut self,
        fr: &Frame<'a>,
        func: ExternId,
        args: &'a [Arg],
        e: &'a Expr,
    ) -> R<Val> {
        let code = self.code;
        let (Some(x), Some(how)) = (
            code.program.externs.get(func.0 as usize),
            code.externs.get(func.0 as usize),
        ) else {
            return internal(e.loc, format!("call of unknown extern #{}", func.0));
        };
        // The C arguments: words in order, as `extern_signature` lays them out.
        let mut words = Vec::with_capacity(args.len());
        for arg in args {
            match self.push_arg(fr, arg)? {
                Passed::Address(a) | Passed::Value(Val::Scalar(a)) => words.push(a),
                // The backend's: a slice's span is checked under
                // `--sanitize` and the C side gets the real address.
                Passed::Value(Val::Pair(p, l)) => {
                    let p = match arg {
                        Arg::Value(x) => self.sanitize_slice(&x.ty, p, l, x.loc),
                        Arg::Ref(_) => p,
                    };
                    words.extend([p, l]);
                }
                Passed::Value(Val::Unit) => {}
                Passed::Value(Val::Mem(a)) => words.push(a),
            }
        }
        self.calls.at(e.loc);
        let raw = match *how {
            Extern::Runtime(call) => call(&words),
            // SAFETY: a function the linker found under the declared name,
            // called with the words of the program's own declaration (the
            // program vouches for the signature, as with compiled code).
            Extern::Native(addr) => unsafe { externs::call_native(addr, &words) },
            Extern::Unavailable => fail::report_at(
                self.program.describe(e.loc),
                format!("extern fn `{}` is not available in the interpreter", x.name),
            ),
        };
        // The result register, read at the declared type's width.
        Ok(if e.ty == Type::Unit {
            Val::Unit
        } else {
            Val::Scalar(ops::canonical(&e.ty, raw))
        })
    }

    // ----- statements -----------------------------------------------------

    fn block(&mut self, fr: &Frame<'a>, block: &'a Block) -> R<Flow> {
        for stmt in &block.stmts {
            match self.stmt(fr, stmt)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    /// One statement. Each kind has its own function so that this
    /// dispatcher's frame stays small: it is on the host stack once per
    /// nested statement and per Tern call (debug builds give every local of
    /// every arm its own stack slot).
    fn stmt(&mut self, fr: &Frame<'a>, stmt: &'a Stmt) -> R<Flow> {
        match stmt {
            Stmt::Let { local, init } => self.let_stmt(fr, *local, init),
            Stmt::Assign { place, value } => self.assign(fr, place, value),
            Stmt::CompoundAssign { place, op, value } => {
                self.compound_assign(fr, place, *op, value)
            }
            Stmt::Expr(e) => self.expr(fr, e).map(|_| Flow::Next),
            Stmt::If { cond, then, else_ } => self.if_stmt(fr, cond, then, else_.as_ref()),
            Stmt::While { cond, body } => self.while_loop(fr, cond, body),
            Stmt::For {
                var,
                start,
                end,
                body,
            } => self.for_loop(fr, *var, start, end, body),
            Stmt::ForEach {
                index,
                var,
                seq,
                body,
            } => self.for_each(fr, *index, *var, seq, body),
            Stmt::Block(b) => self.block(fr, b),
            Stmt::Break => Ok(Flow::Break),
            Stmt::Continue => Ok(Flow::Continue),
            Stmt::Return(value) => self.return_stmt(fr, value.as_ref()),
        }
    }

    #[inline(never)]
    fn let_stmt(&mut self, fr: &Frame<'a>, local: LocalId, init: &'a Expr) -> R<Flow> {
        let v = self.expr(fr, init)?;
        let dst = fr.addr(local, init.loc)?;
        // A fresh aggregate was built in the temporary the local adopted
        // (see `code.rs`): it is already in place.
        if v != Val::Mem(dst) {
            let ty = fr.local_ty(local, init.loc)?;
            // SAFETY: the local's slot in this frame.
            unsafe { self.store(ty, v, dst) };
        }
        Ok(Flow::Next)
    }

    /// `place = value`: the value first, then the place (its index checks
    /// too), then the store.
    #[inline(never)]
    fn assign(&mut self, fr: &Frame<'a>, place: &'a Expr, value: &'a Expr) -> R<Flow> {
        let v = self.expr(fr, value)?;
        let addr = self.place_addr(fr, place)?;
        // SAFETY: a place `place_addr` found (see there).
        unsafe { self.store(&place.ty, v, addr) };
        Ok(Flow::Next)
    }

    /// `place op= value`: the value first, then the place, evaluated once; a
    /// division by zero is reported at the place.
    #[inline(never)]
    fn compound_assign(
        &mut self,
        fr: &Frame<'a>,
        place: &'a Expr,
        op: BinOp,
        value: &'a Expr,
    ) -> R<Flow> {
        let rhs = self.expr(fr, value)?.scalar(value.loc)?;
        let addr = self.place_addr(fr, place)?;
        // SAFETY: a place `place_addr` found (see there).
        let old = unsafe { memory::load_scalar(&place.ty, addr) };
        let new = self.binop(op, &place.ty, old, rhs, place.loc);
        // SAFETY: as above.
        unsafe { memory::store_scalar(&place.ty, new, addr) };
        Ok(Flow::Next)
    }

    #[inline(never)]
    fn if_stmt(
        &mut self,
        fr: &Frame<'a>,
        cond: &'a Expr,
        then: &'a Block,
        else_: Option<&'a Block>,
    ) -> R<Flow> {
        let c = self.expr(fr, cond)?.scalar(cond.loc)?;
        if c != 0 {
            self.block(fr, then)
        } else if let Some(e) = else_ {
            self.block(fr, e)
        } else {
            Ok(Flow::Next)
        }
    }

    #[inline(never)]
    fn while_loop(&mut self, fr: &Frame<'a>, cond: &'a Expr, body: &'a Block) -> R<Flow> {
        loop {
            let c = self.expr(fr, cond)?.scalar(cond.loc)?;
            if c == 0 {
                return Ok(Flow::Next);
            }
            match self.block(fr, body)? {
                Flow::Break => return Ok(Flow::Next),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Next | Flow::Continue => {}
            }
        }
    }

    /// `return`: an aggregate result is copied to the caller's slot here,
    /// while the frame it may live in still exists.
    #[inline(never)]
    fn return_stmt(&mut self, fr: &Frame<'a>, value: Option<&'a Expr>) -> R<Flow> {
        let v = match value {
            Some(e) => self.expr(fr, e)?,
            None => Val::Unit,
        };
        if let Val::Mem(src) = v {
            let Some(dst) = fr.sret else {
                return internal(fr.func.loc, "aggregate return without a slot");
            };
            // SAFETY: the caller's result slot, from the returned value's
            // place, both of the function's result type.
            unsafe { memory::copy(dst, src, self.size_of(&fr.func.ret)) };
            return Ok(Flow::Return(Val::Unit));
        }
        Ok(Flow::Return(v))
    }

    /// `for var in start..end`: both bounds once, first; the variable is
    /// re-read from its storage for the test and the step, as the backend
    /// does; the comparison is signed for `i64`/`i32`, unsigned for `u8`, and
    /// the step wraps in the type.
    #[inline(never)]
    fn for_loop(
        &mut self,
        fr: &Frame<'a>,
        var: LocalId,
        start: &'a Expr,
        end: &'a Expr,
        body: &'a Block,
    ) -> R<Flow> {
        let ty = &start.ty;
        let s = self.expr(fr, start)?.scalar(start.loc)?;
        let e = self.expr(fr, end)?.scalar(end.loc)?;
        let addr = fr.addr(var, start.loc)?;
        // SAFETY: the counter's slot in this frame (so below).
        unsafe { memory::store_scalar(ty, s, addr) };
        loop {
            // SAFETY: as above.
            let i = unsafe { memory::load_scalar(ty, addr) };
            let more = if ops::is_signed(ty) {
                i < e
            } else {
                (i as u64) < (e as u64)
            };
            if !more {
                break;
            }
            match self.block(fr, body)? {
                Flow::Break => break,
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Next | Flow::Continue => {}
            }
            // SAFETY: as above.
            unsafe {
                let i = memory::load_scalar(ty, addr);
                memory::store_scalar(ty, ops::canonical(ty, i.wrapping_add(1)), addr);
            }
        }
        Ok(Flow::Next)
    }

    /// `for [index,] var in seq`: the backend's `for_each` (the sequence's
    /// pointer and length once; each element read unchecked below the
    /// length, checked under `--sanitize`).
    #[inline(never)]
    fn for_each(
        &mut self,
        fr: &Frame<'a>,
        index: Option<LocalId>,
        var: LocalId,
        seq: &'a Expr,
        body: &'a Block,
    ) -> R<Flow> {
        // An array inside a pool element is read through its allocation's
        // tag, as a slice is (a body that frees it is caught at the next).
        let in_pool = self.sanitize && seq.is_array_in_pool_element();
        self.pool_tag = None;
        let (mut ptr, len) = self.sequence(fr, seq)?;
        if let Some(t) = self.pool_tag.take().filter(|_| in_pool) {
            ptr |= t;
        }
        let elem = seq.ty.element().cloned().unwrap_or(Type::Unit);
        let size = self.size_of(&elem);
        let tagged =
            self.sanitize && (in_pool || matches!(seq.ty, Type::Slice(_) | Type::Reusable(_)));
        let var_addr = fr.addr(var, seq.loc)?;
        let index_addr = index.map(|i| fr.addr(i, seq.loc)).transpose()?;
        let mut i: i64 = 0;
        while (i as u64) < (len as u64) {
            let mut at = ptr.wrapping_add(scaled(i, size));
            if tagged {
                // Zero-size elements read nothing (see `index_addr`).
                at = self.sanitize_check(at, size as i64, seq.loc);
            }
            // SAFETY: element `i < len` of the sequence (checked against
            // its tag under `--sanitize`), into the variable's slot.
            unsafe {
                let v = self.load(&elem, at as Addr);
                self.store(&elem, v, var_addr);
            }
            if let Some(a) = index_addr {
                // SAFETY: the index variable's slot in this frame.
                unsafe { memory::store_scalar(&Type::I64, i, a) };
            }
            match self.block(fr, body)? {
                Flow::Break => break,
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Next | Flow::Continue => {}
            }
            i += 1;
        }
        Ok(Flow::Next)
    }

    // ----- memory ---------------------------------------------------------

    fn size_of(&self, ty: &Type) -> u64 {
        memory::size_of(self.program, ty)
    }

    /// The backend's `load`: scalars and pairs are read, an aggregate is its
    /// address.
    ///
    /// # Safety
    ///
    /// `addr` holds a value of type `ty` (`memory::copy`'s contract).
    unsafe fn load(&self, ty: &Type, addr: Addr) -> Val {
        // SAFETY: the caller's contract.
        unsafe {
            match ty {
                Type::Unit => Val::Unit,
                Type::I64 | Type::I32 | Type::U8 | Type::U64 | Type::Bool => {
                    Val::Scalar(memory::load_scalar(ty, addr))
                }
                Type::Str | Type::Slice(_) | Type::Reusable(_) => {
                    let (p, l) = memory::load_pair(addr);
                    Val::Pair(p, l)
                }
                Type::Array(..) | Type::Struct(_) => Val::Mem(addr),
            }
        }
    }

    /// The backend's `store`: an aggregate is copied (`memmove`) from the
    /// address the value holds.
    ///
    /// # Safety
    ///
    /// `addr` has room for a value of type `ty`, and an aggregate `v` holds
    /// one (`memory::copy`'s contract).
    unsafe fn store(&self, ty: &Type, v: Val, addr: Addr) {
        // SAFETY: the caller's contract.
        unsafe {
            match v {
                Val::Unit => {}
                Val::Scalar(x) => memory::store_scalar(ty, x, addr),
                Val::Pair(p, l) => memory::store_pair(p, l, addr),
                Val::Mem(src) => memory::copy(addr, src, self.size_of(ty)),
            }
        }
    }

    /// The temporary of expression site `e` in this frame.
    fn temp(&self, fr: &Frame<'a>, e: &Expr) -> R<Addr> {
        match fr.layout.temps.get(&site(e)) {
            Some(&offset) => Ok(fr.base.wrapping_add(offset as i64)),
            None => internal(e.loc, "an expression without its temporary"),
        }
    }

    /// Where the sanitizer records that a builtin pool operation at `loc`
    /// (located `at`) freed a slice: null inside a standard-library module,
    /// for the current call site, as compiled code does (`lower::freed_at`).
    fn freed_at(&self, loc: Loc, at: *const c_char) -> *const c_char {
        if self.program.is_library(loc.file) {
            std::ptr::null()
        } else {
            at
        }
    }

    /// Address of the NUL-terminated `file:line:col` of `loc`.
    /// The runtime call it is passed to fails at `loc`: the innermost
    /// frame is there (as in the backend's `loc_ptr`).
    fn loc_ptr(&mut self, loc: Loc) -> *const c_char {
        self.calls.at(loc);
        let program = self.program;
        self.locs
            .entry(loc)
            .or_insert_with(|| CString::new(program.describe(loc)).unwrap_or_default())
            .as_ptr()
    }

    // ----- places ---------------------------------------------------------

    /// The address of a place (a local, field or element), or of an rvalue
    /// aggregate (a call result, a literal).
    fn place_addr(&mut self, fr: &Frame<'a>, e: &'a Expr) -> R<Addr> {
        match &e.kind {
            ExprKind::Local(id) => fr.addr(*id, e.loc),
            ExprKind::Field(base, index) => {
                let base_addr = self.place_addr(fr, base)?;
                let Type::Struct(sid) = &base.ty else {
                    return internal(e.loc, "field of a non-struct");
                };
                let field = self
                    .program
                    .structs
                    .get(sid.0 as usize)
                    .and_then(|s| s.fields.get(*index as usize));
                match field {
                    Some(field) => Ok(base_addr.wrapping_add(field.offset as i64)),
                    None => internal(e.loc, "unknown struct field"),
                }
            }
            ExprKind::Index(base, idx) => self.index_addr(fr, base, idx, e.loc),
            _ => match self.expr(fr, e)? {
                Val::Mem(a) => Ok(a),
                // The backend would spill the value to a temporary; the front
                // end only lets places reach here.
                other => internal(e.loc, format!("the address of a non-place value {other:?}")),
            },
        }
    }

    /// `(ptr, len)` of a slice, reusable slice or array operand.
    fn sequence(&mut self, fr: &Frame<'a>, base: &'a Expr) -> R<(i64, i64)> {
        match &base.ty {
            Type::Array(_, n) => Ok((self.place_addr(fr, base)?, *n as i64)),
            _ => self.expr(fr, base)?.pair(base.loc),
        }
    }

    fn elem_size(&self, seq: &Type) -> u64 {
        seq.element().map_or(0, |t| self.size_of(t))
    }

    /// `s[i]`: the sequence, then the index, then `i <u len` (one unsigned
    /// compare also rejects a negative index) else `tern_bounds_fail`.
    fn index_addr(&mut self, fr: &Frame<'a>, base: &'a Expr, idx: &'a Expr, loc: Loc) -> R<Addr> {
        let (ptr, len) = self.sequence(fr, base)?;
        // An array's element lies where the array does, whatever the index
        // expression addressed on the way.
        let outer_tag = self.pool_tag;
        let i = self.expr(fr, idx)?.scalar(idx.loc)?;
        self.pool_tag = outer_tag;
        if (i as u64) >= (len as u64) {
            let at = self.loc_ptr(loc);
            // SAFETY: `at` is a NUL-terminated string this machine owns.
            unsafe { output::tern_bounds_fail(i, len, at) }
        }
        let size = self.elem_size(&base.ty);
        let addr = ptr.wrapping_add(scaled(i, size));
        if self.sanitize && matches!(base.ty, Type::Slice(_) | Type::Reusable(_)) {
            self.pool_tag = Some(ptr & !SANITIZE_ADDR_MASK);
            // A zero-size element reads nothing: 0 bytes are not checked.
            return Ok(self.sanitize_check(addr, size as i64, loc));
        }
        Ok(addr)
    }

    /// `--sanitize`: the backend's `sanitize_check`: a pointer with a tag (bits
    /// 48..62, or any bit above 47) is checked by the runtime for `bytes` and
    /// comes back untagged; an untagged one passes as is.
    fn sanitize_check(&mut self, addr: i64, bytes: i64, loc: Loc) -> i64 {
        if (addr as u64) >> SANITIZE_TAG_SHIFT == 0 {
            return addr;
        }
        let at = self.loc_ptr(loc);
        // SAFETY: `at` is a NUL-terminated string this machine owns.
        unsafe { sanitize::tern_sanitize_check(addr, bytes, at) }
    }

    /// `--sanitize`: the backend's `sanitize_slice` (`print`, `panic`'s detail).
    fn sanitize_slice(&mut self, ty: &Type, p: i64, l: i64, loc: Loc) -> i64 {
        if !self.sanitize || !matches!(ty, Type::Slice(_) | Type::Reusable(_)) {
            return p;
        }
        let bytes = scaled(l, self.elem_size(ty));
        self.sanitize_check(p, bytes, loc)
    }

    /// `tern_reusable_resize`, and under `--sanitize` the check before and the
    /// tag after (the backend's `reusable_resize`): the untagged new address
    /// and the slice's pointer.
    fn reusable_resize(
        &mut self,
        p: i64,
        (old, new): (i64, i64),
        size: u64,
        loc: Loc,
    ) -> (i64, i64) {
        let at = self.loc_ptr(loc);
        // The entry compiled code calls for this element size.
        let resize = if size.is_multiple_of(8) {
            reusable::tern_reusable_resize
        } else {
            reusable::tern_reusable_resize_packed
        };
        // SAFETY: `at` is a NUL-terminated string this machine owns; the
        // pointer is the program's, as compiled code passes it.
        unsafe {
            if !self.sanitize {
                let np = resize(p as *mut u8, old, new, at) as i64;
                return (np, np);
            }
            let a = sanitize::tern_sanitize_check(p, old, at);
            let np = resize(a as *mut u8, old, new, at) as i64;
            let freed_at = self.freed_at(loc, at);
            let tagged =
                sanitize::tern_sanitize_retag(SANITIZE_BUILTIN_REGION, a, old, np, new, freed_at);
            (np, tagged)
        }
    }

    /// `s[lo..hi]`: the sequence, `lo` (default 0), `hi` (default `len`),
    /// then `hi <=u len && lo <=u hi` else `tern_slice_fail`.
    #[inline(never)]
    fn slice_range(
        &mut self,
        fr: &Frame<'a>,
        e: &'a Expr,
        base: &'a Expr,
        lo: Option<&'a Expr>,
        hi: Option<&'a Expr>,
    ) -> R<Val> {
        let in_pool = self.sanitize && base.is_array_in_pool_element();
        self.pool_tag = None;
        let (ptr, len) = self.sequence(fr, base)?;
        let tag = self.pool_tag.take().filter(|_| in_pool);
        let lo = match lo {
            Some(x) => self.expr(fr, x)?.scalar(x.loc)?,
            None => 0,
        };
        let hi = match hi {
            Some(x) => self.expr(fr, x)?.scalar(x.loc)?,
            None => len,
        };
        let ok = (hi as u64) <= (len as u64) && (lo as u64) <= (hi as u64);
        if !ok {
            let at = self.loc_ptr(e.loc);
            // SAFETY: `at` is a NUL-terminated string this machine owns.
            unsafe { output::tern_slice_fail(lo, hi, len, at) }
        }
        let size = self.elem_size(&base.ty);
        let (mut p, n) = (ptr.wrapping_add(scaled(lo, size)), hi.wrapping_sub(lo));
        if let Some(t) = tag {
            p |= t;
        }
        // The backend's view of an array behind a `ref` parameter (the
        // lookup finds the bytes live, as a check would).
        if self.sanitize && base.is_array_behind_ref(fr.func) {
            p = sanitize::tern_sanitize_tag_at(p, scaled(n, size));
        } else if self.sanitize
            && (tag.is_some() || matches!(base.ty, Type::Slice(_) | Type::Reusable(_)))
        {
            // The view keeps its tag; the span it names is checked now.
            self.sanitize_check(p, scaled(n, size), e.loc);
        }
        Ok(Val::Pair(p, n))
    }

    // ----- expressions ----------------------------------------------------

    /// One expression. Like [`Machine::stmt`], a dispatcher with a small
    /// frame: it is on the host stack once per nesting level.
    fn expr(&mut self, fr: &Frame<'a>, e: &'a Expr) -> R<Val> {
        self.check_host_stack();
        match &e.kind {
            ExprKind::Int(v) => Ok(Val::Scalar(ops::literal(&e.ty, *v))),
            ExprKind::Bool(v) => Ok(Val::Scalar(i64::from(*v))),
            ExprKind::Str(s) => self.string(s, e.loc),
            ExprKind::Local(id) => self.read_local(fr, *id, e.loc),
            ExprKind::Field(..) | ExprKind::Index(..) => self.read_place(fr, e),
            ExprKind::SliceRange { base, lo, hi } => {
                self.slice_range(fr, e, base, lo.as_deref(), hi.as_deref())
            }
            ExprKind::Unary(op, x) => self.unary(fr, *op, x),
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                self.short_circuit(fr, *op, l, r)
            }
            ExprKind::Binary(op, l, r) => self.binary(fr, *op, l, r, e.loc),
            ExprKind::Cast(x) => self.cast(fr, x, &e.ty),
            ExprKind::Call { func, args } => self.call(fr, *func, args, e),
            ExprKind::CallExtern { func, args } => self.call_extern(fr, *func, args, e),
            ExprKind::StructLit { id, fields } => self.struct_lit(fr, e, id.0, fields),
            ExprKind::ArrayRepeat { value, count } => self.array_repeat(fr, e, value, *count),
            ExprKind::ArrayLit(items) => self.array_lit(fr, e, items),
            ExprKind::Bytes(bytes) => {
                let addr = self.temp(fr, e)?;
                // SAFETY: the literal's bytes into its temporary, which has
                // their type (`[N]u8`).
                unsafe { memory::copy(addr, bytes.as_ptr() as Addr, bytes.len() as u64) };
                Ok(Val::Mem(addr))
            }
            ExprKind::Text { local, bytes } => {
                // A fresh copy in the literal's own frame array, viewed.
                let addr = fr.addr(*local, e.loc)?;
                // SAFETY: the literal's bytes into its hidden local, an array
                // of their length.
                unsafe { memory::copy(addr, bytes.as_ptr() as Addr, bytes.len() as u64) };
                Ok(Val::Pair(addr, bytes.len() as i64))
            }
            ExprKind::Len(x) => self.len(fr, x),
            ExprKind::Builtin(builtin, args) => self.builtin(fr, builtin, args, e),
        }
    }

    #[inline(never)]
    fn string(&self, s: &str, loc: Loc) -> R<Val> {
        match self.code.strings.get(s) {
            Some(bytes) => Ok(Val::Pair(bytes.as_ptr() as i64, s.len() as i64)),
            None => internal(loc, "a string literal that was not collected"),
        }
    }

    #[inline(never)]
    fn read_local(&mut self, fr: &Frame<'a>, id: LocalId, loc: Loc) -> R<Val> {
        let addr = fr.addr(id, loc)?;
        let ty = fr.local_ty(id, loc)?;
        // SAFETY: the local's home in this frame (or the caller's place it
        // was passed by address).
        Ok(unsafe { self.load(ty, addr) })
    }

    #[inline(never)]
    fn read_place(&mut self, fr: &Frame<'a>, e: &'a Expr) -> R<Val> {
        let addr = self.place_addr(fr, e)?;
        // SAFETY: a place `place_addr` found (see there).
        Ok(unsafe { self.load(&e.ty, addr) })
    }

    #[inline(never)]
    fn unary(&mut self, fr: &Frame<'a>, op: UnOp, x: &'a Expr) -> R<Val> {
        let v = self.expr(fr, x)?.scalar(x.loc)?;
        Ok(Val::Scalar(ops::unary(op, &x.ty, v)))
    }

    /// `&&`, `||`: the right operand only when it decides.
    #[inline(never)]
    fn short_circuit(&mut self, fr: &Frame<'a>, op: BinOp, l: &'a Expr, r: &'a Expr) -> R<Val> {
        let lv = self.expr(fr, l)?.scalar(l.loc)?;
        let decided = if op == BinOp::And { lv == 0 } else { lv != 0 };
        if decided {
            Ok(Val::Scalar(lv))
        } else {
            Ok(Val::Scalar(self.expr(fr, r)?.scalar(r.loc)?))
        }
    }

    /// Left operand, right operand, then the operation (at the operator's
    /// location, for a division by zero).
    #[inline(never)]
    fn binary(&mut self, fr: &Frame<'a>, op: BinOp, l: &'a Expr, r: &'a Expr, loc: Loc) -> R<Val> {
        let lv = self.expr(fr, l)?.scalar(l.loc)?;
        let rv = self.expr(fr, r)?.scalar(r.loc)?;
        Ok(Val::Scalar(self.binop(op, &l.ty, lv, rv, loc)))
    }

    #[inline(never)]
    fn cast(&mut self, fr: &Frame<'a>, x: &'a Expr, to: &Type) -> R<Val> {
        let v = self.expr(fr, x)?.scalar(x.loc)?;
        Ok(Val::Scalar(ops::cast(&x.ty, to, v)))
    }

    /// `len(x)`: an array's length is its type's, and the operand is then not
    /// evaluated at all.
    #[inline(never)]
    fn len(&mut self, fr: &Frame<'a>, x: &'a Expr) -> R<Val> {
        match &x.ty {
            Type::Array(_, n) => Ok(Val::Scalar(*n as i64)),
            _ => Ok(Val::Scalar(self.expr(fr, x)?.pair(x.loc)?.1)),
        }
    }

    /// A binary operator on two evaluated operands; division by zero calls
    /// `tern_div_zero` at `loc`.
    fn binop(&mut self, op: BinOp, ty: &Type, l: i64, r: i64, loc: Loc) -> i64 {
        match ops::binary(op, ty, l, r) {
            Ok(v) => v,
            Err(DivByZero) => {
                let at = self.loc_ptr(loc);
                // SAFETY: `at` is a NUL-terminated string this machine owns.
                unsafe { output::tern_div_zero(at) }
            }
        }
    }

    /// Fields in declaration order, each stored as soon as it is evaluated.
    #[inline(never)]
    fn struct_lit(&mut self, fr: &Frame<'a>, e: &'a Expr, id: u32, fields: &'a [Expr]) -> R<Val> {
        let addr = self.temp(fr, e)?;
        let program = self.program;
        let Some(def) = program.structs.get(id as usize) else {
            return internal(e.loc, "literal of an unknown struct");
        };
        for (field, value) in def.fields.iter().zip(fields) {
            let v = self.expr(fr, value)?;
            // SAFETY: the field inside the literal's temporary.
            unsafe { self.store(&field.ty, v, addr.wrapping_add(field.offset as i64)) };
        }
        Ok(Val::Mem(addr))
    }

    /// `[value; count]`: the value once, then `count` stores of it.
    #[inline(never)]
    fn array_repeat(&mut self, fr: &Frame<'a>, e: &'a Expr, value: &'a Expr, count: u64) -> R<Val> {
        let v = self.expr(fr, value)?;
        let addr = self.temp(fr, e)?;
        let size = self.size_of(&value.ty);
        if size > 0 {
            for i in 0..count {
                // SAFETY: element `i < count` of the literal's temporary.
                unsafe { self.store(&value.ty, v, addr.wrapping_add((i * size) as i64)) };
            }
        }
        Ok(Val::Mem(addr))
    }

    #[inline(never)]
    fn array_lit(&mut self, fr: &Frame<'a>, e: &'a Expr, items: &'a [Expr]) -> R<Val> {
        let addr = self.temp(fr, e)?;
        let elem = e.ty.element().cloned().unwrap_or(Type::Unit);
        let size = self.size_of(&elem);
        for (i, item) in items.iter().enumerate() {
            let v = self.expr(fr, item)?;
            // SAFETY: element `i` of the literal's temporary, which holds
            // them all.
            unsafe { self.store(&elem, v, addr.wrapping_add((i as u64 * size) as i64)) };
        }
        Ok(Val::Mem(addr))
    }

    /// `n * size` as a byte count after the backend's check: `n` as unsigned
    /// must be at most `i64::MAX / max(size, 1)` (which also rejects a
    /// negative `n`), else `tern_length_fail(op, n, size, loc)`.
    fn checked_bytes(&mut self, n: i64, size: u64, op: &CStr, loc: Loc) -> i64 {
        let limit = i64::MAX as u64 / size.max(1);
        if (n as u64) > limit {
            let at = self.loc_ptr(loc);
            // SAFETY: `op` and `at` are NUL-terminated strings.
            unsafe { output::tern_length_fail(op.as_ptr(), n, size as i64, at) }
        }
        scaled(n, size)
    }

    /// One value of the print family, on stdout or (`err`) stderr, with a
    /// newline when `newline`: the runtime function compiled code calls.
    fn print_value(&mut self, x: &'a Expr, v: Val, err: bool, newline: bool, loc: Loc) -> R<()> {
        type Text = unsafe extern "C" fn(*const u8, i64);
        let text: Text = match (err, newline) {
            (false, true) => output::tern_print_str,
            (false, false) => output::tern_write_str,
            (true, true) => output::tern_eprint_str,
            (true, false) => output::tern_ewrite_str,
        };
        let pick = |f: [extern "C" fn(i64); 4]| f[usize::from(err) * 2 + usize::from(!newline)];
        match (&x.ty, v) {
            (Type::Str | Type::Slice(_) | Type::Reusable(_), Val::Pair(p, l)) => {
                let p = self.sanitize_slice(&x.ty, p, l, loc) as *const u8;
                // SAFETY: `l` bytes at `p`: a string literal of the program,
                // or a slice it holds, exactly as compiled code passes them.
                unsafe { text(p, l) }
            }
            (Type::Array(_, n), Val::Mem(a)) => {
                // SAFETY: the array's `n` bytes in this machine's memory.
                unsafe { text(a as *const u8, *n as i64) }
            }
            (Type::Bool, Val::Scalar(v)) => {
                let f: [extern "C" fn(u8); 4] = [
                    output::tern_print_bool,
                    output::tern_write_bool,
                    output::tern_eprint_bool,
                    output::tern_ewrite_bool,
                ];
                f[usize::from(err) * 2 + usize::from(!newline)](v as u8)
            }
            (Type::U64, Val::Scalar(v)) => {
                let f: [extern "C" fn(u64); 4] = [
                    output::tern_print_u64,
                    output::tern_write_u64,
                    output::tern_eprint_u64,
                    output::tern_ewrite_u64,
                ];
                f[usize::from(err) * 2 + usize::from(!newline)](v as u64)
            }
            // `i32` sign- and `u8` zero-extended: the canonical form.
            (_, Val::Scalar(v)) => pick([
                output::tern_print_i64,
                output::tern_write_i64,
                output::tern_eprint_i64,
                output::tern_ewrite_i64,
            ])(v),
            (ty, _) => return internal(loc, format!("print of {ty}")),
        }
        Ok(())
    }

    #[inline(never)]
    fn builtin(
        &mut self,
        fr: &Frame<'a>,
        builtin: &Builtin,
        args: &'a [Expr],
        e: &'a Expr,
    ) -> R<Val> {
        let loc = e.loc;
        let arg = |i: usize| match args.get(i) {
            Some(a) => Ok(a),
            None => internal(loc, format!("{builtin:?} without argument {i}")),
        };
        // Every runtime call below gets pointers of three kinds only: a
        // location or operation name this machine owns (NUL-terminated), a
        // string literal of the program, or a value the program computed and
        // hands to the same function in compiled code.
        match builtin {
            Builtin::Print | Builtin::Write | Builtin::Eprint | Builtin::Ewrite => {
                // The backend's: values separated by one space for the
                // `print`s, the last one with its newline.
                let err = matches!(builtin, Builtin::Eprint | Builtin::Ewrite);
                let line = matches!(builtin, Builtin::Print | Builtin::Eprint);
                let mut values = Vec::with_capacity(args.len());
                for x in args.iter() {
                    values.push(self.expr(fr, x)?);
                }
                for (i, (x, v)) in args.iter().zip(values).enumerate() {
                    let last = i + 1 == args.len();
                    self.print_value(x, v, err, line && last, loc)?;
                    if line && !last {
                        let write: unsafe extern "C" fn(*const u8, i64) = match err {
                            false => output::tern_write_str,
                            true => output::tern_ewrite_str,
                        };
                        // SAFETY: one byte of a static literal.
                        unsafe { write(b" ".as_ptr(), 1) };
                    }
                }
                Ok(Val::Unit)
            }
            Builtin::Panic => {
                let (p, l) = self.expr(fr, arg(0)?)?.pair(loc)?;
                let (dp, dl) = match args.get(1) {
                    Some(detail) => {
                        let (dp, dl) = self.expr(fr, detail)?.pair(loc)?;
                        (self.sanitize_slice(&detail.ty, dp, dl, loc), dl)
                    }
                    None => (0, 0),
                };
                let at = self.loc_ptr(loc);
                // SAFETY: message and detail are strings or slices of the
                // program (the detail checked by the sanitizer when on), `at`
                // a location this machine owns.
                unsafe { output::tern_panic(p as *const u8, l, dp as *const u8, dl, at) }
            }
            Builtin::Assert => {
                let c = self.expr(fr, arg(0)?)?.scalar(loc)?;
                if c == 0 {
                    let (p, l) = self.expr(fr, arg(1)?)?.pair(loc)?;
                    let at = self.loc_ptr(loc);
                    // SAFETY: the message is a string of the program, `at` a
                    // location this machine owns.
                    unsafe { output::tern_assert_fail(p as *const u8, l, at) }
                }
                Ok(Val::Unit)
            }
            Builtin::ReusableAlloc => {
                let n = self.expr(fr, arg(0)?)?.scalar(loc)?;
                let size = self.elem_size(&e.ty);
                let bytes = self.checked_bytes(n, size, c"reusable::alloc", loc);
                let at = self.loc_ptr(loc);
                // SAFETY: `at` is a location this machine owns.
                let mut p = unsafe { reusable::tern_reusable_alloc(bytes, at) } as i64;
                if self.sanitize {
                    p = sanitize::tern_sanitize_tag(SANITIZE_BUILTIN_REGION, p, bytes);
                }
                Ok(Val::Pair(p, n))
            }
            Builtin::ReusableAppend => {
                let (p, len) = self.expr(fr, arg(0)?)?.pair(loc)?;
                let value = arg(1)?;
                let v = match self.expr(fr, value)? {
                    // An element read from a place may lie in the span the
                    // resize moves and frees: copied first, as compiled code.
                    Val::Mem(a) if !value.is_fresh_aggregate() => {
                        let t = self.temp(fr, value)?;
                        // SAFETY: from the value's place to this site's
                        // temporary in the frame, both of the value's type.
                        unsafe { memory::copy(t, a, self.size_of(&value.ty)) };
                        Val::Mem(t)
                    }
                    v => v,
                };
                let size = self.elem_size(&e.ty);
                // `len * size` fits (the span holds it); `len + 1` elements
                // may not, and `len + 1` itself may wrap.
                let old = scaled(len, size);
                let new_len = len.wrapping_add(1);
                let new = self.checked_bytes(new_len, size, c"reusable::append", loc);
                let (np, tagged) = self.reusable_resize(p, (old, new), size, loc);
                // SAFETY: the new last element of the span just resized to
                // hold it.
                unsafe { self.store(&value.ty, v, np.wrapping_add(old)) };
                Ok(Val::Pair(tagged, new_len))
            }
            Builtin::ReusableResize => {
                let (p, len) = self.expr(fr, arg(0)?)?.pair(loc)?;
                let n = self.expr(fr, arg(1)?)?.scalar(loc)?;
                let size = self.elem_size(&e.ty);
                let old = scaled(len, size);
                let new = self.checked_bytes(n, size, c"reusable::resize", loc);
                let (_, tagged) = self.reusable_resize(p, (old, new), size, loc);
                Ok(Val::Pair(tagged, n))
            }
            Builtin::ReusableFree => {
                let s = arg(0)?;
                let (p, len) = self.expr(fr, s)?.pair(loc)?;
                let bytes = scaled(len, self.elem_size(&s.ty));
                let at = self.loc_ptr(loc);
                if self.sanitize {
                    // SAFETY: the slice the program holds, its tag checked
                    // (and stripped) before the pool sees it, as compiled
                    // code does; `at` a location this machine owns.
                    unsafe {
                        let a = sanitize::tern_sanitize_check(p, bytes, at);
                        reusable::tern_reusable_free(a as *mut u8, bytes, at);
                        let freed_at = self.freed_at(loc, at);
                        sanitize::tern_sanitize_release(
                            SANITIZE_BUILTIN_REGION,
                            a,
                            bytes,
                            freed_at,
                        );
                    }
                } else {
                    // SAFETY: the slice the program holds; the pool checks
                    // that it is one of its live spans.
                    unsafe { reusable::tern_reusable_free(p as *mut u8, bytes, at) };
                }
                Ok(Val::Unit)
            }
            Builtin::ReusableOffset => {
                let (mut p, _) = self.expr(fr, arg(0)?)?.pair(loc)?;
                if self.sanitize {
                    p &= SANITIZE_ADDR_MASK;
                }
                let at = self.loc_ptr(loc);
                // SAFETY: only compares the address with the pool's arena;
                // `at` a location this machine owns.
                Ok(Val::Scalar(unsafe {
                    reusable::tern_reusable_offset(p as *const u8, at)
                }))
            }
            Builtin::UnsafeSlice => {
                let p = self.expr(fr, arg(0)?)?.scalar(loc)?;
                let l = self.expr(fr, arg(1)?)?.scalar(loc)?;
                Ok(Val::Pair(p, l))
            }
            Builtin::UnsafeAddr => {
                let x = arg(0)?;
                Ok(Val::Scalar(match x.ty {
                    Type::Slice(_) | Type::Reusable(_) => self.expr(fr, x)?.pair(loc)?.0,
                    _ => self.place_addr(fr, x)?,
                }))
            }
            Builtin::UnsafeCopy => {
                let mut dst = self.expr(fr, arg(0)?)?.scalar(loc)?;
                let mut src = self.expr(fr, arg(1)?)?.scalar(loc)?;
                let n = self.expr(fr, arg(2)?)?.scalar(loc)?;
                if self.sanitize {
                    dst &= SANITIZE_ADDR_MASK;
                    src &= SANITIZE_ADDR_MASK;
                }
                // SAFETY: `unsafe::copy`: the program vouches for both
                // ranges, as in compiled code; a bad one faults as there.
                unsafe { memory::copy(dst, src, n as u64) };
                Ok(Val::Unit)
            }
        }
    }
}

/// The result of a call whose body ended with `flow`: falling off the end
/// of a function with a result cannot happen in a checked program (the
/// backend traps there).
fn leave(f: &Function, flow: Flow) -> R<Val> {
    match flow {
        Flow::Return(v) => Ok(v),
        _ if f.ret == Type::Unit => Ok(Val::Unit),
        _ => internal(
            f.loc,
            format!("`{}` ended without returning a value", f.name),
        ),
    }
}

/// `index * size`, wrapping (the backend's `scaled`).
fn scaled(index: i64, size: u64) -> i64 {
    index.wrapping_mul(size as i64)
}
