//! The translator: `tir::Program` to Cranelift IR, generic over
//! `cranelift_module::Module` so the JIT and the object backend share it.
//!
//! Value representation (see `docs/backend.md`):
//! * `i64`, `i32` are Cranelift `i64`, `i32`; `u8` and `bool` are `i8`
//!   (bool is 0 or 1);
//! * slices, reusable slices and string literals are two `i64` values
//!   `(ptr, len)`, kept in SSA variables when they are locals;
//! * fixed arrays and structs live in memory (stack slots) and are handled
//!   by address; copies are explicit memory copies.
//!
//! Calling convention between Tern functions (the platform C convention):
//! scalars one register, slices two, an aggregate argument is the address of
//! a caller-owned copy, an aggregate result is written through a hidden first
//! parameter pointing at the caller's slot, a `ref` parameter is an address.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::Context;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, AbiParam, BlockArg, InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind,
    TrapCode, UserFuncName, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module};
use tern_compiler::tir::{
    self, Arg, BinOp, Builtin, Expr, ExprKind, Loc, LocalId, Program, Stmt, Type, UnOp,
};

use crate::inline::{CallGraph, Inliner, Inlining};
use crate::runtime_fns::Rt;
use crate::{CodegenError, Listing, OptLevel, Options};

const PTR: ir::Type = types::I64;

/// Symbol name of the wrapper `extern "C" fn() -> i64` that runs the Tern
/// `main` and returns its status (0 for `fn main()`).
pub const ENTRY_SYMBOL: &str = "tern.entry";

/// `--sanitize`: the address bits of a pool pointer, whose bits 48..62 carry
/// the sanitizer's tag (`tern_runtime::sanitize::ADDR_MASK`; a test compares).
pub const SANITIZE_ADDR_MASK: i64 = (1 << SANITIZE_TAG_SHIFT) - 1;
/// `--sanitize`: the first bit of a pointer's tag (`tern_runtime::sanitize::TAG_SHIFT`).
pub const SANITIZE_TAG_SHIFT: i64 = 48;
/// `--sanitize`: the sanitizer's region of the builtin pool
/// (`tern_runtime::sanitize::BUILTIN_REGION`).
pub const SANITIZE_BUILTIN_REGION: i64 = 1;

/// Symbol name of a Tern function: its unique display name, prefixed so it
/// can never collide with a C symbol (`main`, `memcpy`, runtime externs).
pub fn function_symbol(name: &str) -> String {
    format!("tern.{name}")
}

/// Module-level state of one translation: ids of every declared function,
/// runtime import and read-only string.
pub struct Translation {
    funcs: Vec<FuncId>,
    externs: Vec<FuncId>,
    runtime: HashMap<Rt, FuncId>,
    strings: HashMap<Vec<u8>, DataId>,
    /// The wrapper around `main` (see [`ENTRY_SYMBOL`]).
    pub entry: FuncId,
    call_conv: CallConv,
    config: TargetFrontendConfig,
    /// Listings collected when the options ask for them.
    pub listing: Listing,
}

impl Translation {
    /// Runtime functions the program uses, for the JIT's symbol check.
    pub fn runtime_used(&self) -> impl Iterator<Item = Rt> + '_ {
        self.runtime.keys().copied()
    }

    /// Declares (once) and returns the import of runtime function `rt`.
    pub fn runtime_func<M: Module>(
        &mut self,
        module: &mut M,
        rt: Rt,
    ) -> Result<FuncId, CodegenError> {
        if let Some(&id) = self.runtime.get(&rt) {
            return Ok(id);
        }
        let spec = rt.spec();
        let id = module
            .declare_function(spec.name, Linkage::Import, &spec.signature(self.call_conv))
            .map_err(|e| CodegenError::cranelift(spec.name, e))?;
        self.runtime.insert(rt, id);
        Ok(id)
    }

    fn string<M: Module>(&mut self, module: &mut M, bytes: &[u8]) -> Result<DataId, CodegenError> {
        if let Some(&id) = self.strings.get(bytes) {
            return Ok(id);
        }
        let name = format!("tern.str.{}", self.strings.len());
        let id = module
            .declare_data(&name, Linkage::Local, false, false)
            .map_err(|e| CodegenError::cranelift(&name, e))?;
        let mut desc = DataDescription::new();
        // An empty definition would be a zero-size object; keep one NUL so
        // every string has a distinct, valid address.
        let mut contents = bytes.to_vec();
        if contents.is_empty() {
            contents.push(0);
        }
        desc.define(contents.into_boxed_slice());
        module
            .define_data(id, &desc)
            .map_err(|e| CodegenError::cranelift(&name, e))?;
        self.strings.insert(bytes.to_vec(), id);
        Ok(id)
    }
}

/// Translates the whole program into `module`: declares every function,
/// defines them, and defines the entry wrapper. The caller finishes the
/// module (JIT finalization or object emission).
pub fn translate<M: Module>(
    module: &mut M,
    program: &Program,
    opts: &Options,
) -> Result<Translation, CodegenError> {
    let call_conv = module.isa().default_call_conv();
    let config = module.isa().frontend_config();
    let mut funcs = Vec::with_capacity(program.functions.len());
    for f in &program.functions {
        let sig = function_signature(program, f, call_conv);
        let name = function_symbol(&f.name);
        let id = module
            .declare_function(&name, Linkage::Local, &sig)
            .map_err(|e| CodegenError::cranelift(&f.name, e))?;
        funcs.push(id);
    }
    let mut externs = Vec::with_capacity(program.externs.len());
    for x in &program.externs {
        let sig = extern_signature(x, call_conv);
        let id = module
            .declare_function(&x.name, Linkage::Import, &sig)
            .map_err(|e| CodegenError::cranelift(format!("extern fn {}", x.name), e))?;
        externs.push(id);
    }
    let entry_sig = {
        let mut s = Signature::new(call_conv);
        s.returns.push(AbiParam::new(types::I64));
        s
    };
    let entry = module
        .declare_function(ENTRY_SYMBOL, Linkage::Local, &entry_sig)
        .map_err(|e| CodegenError::cranelift(ENTRY_SYMBOL, e))?;
    let mut tr = Translation {
        funcs,
        externs,
        runtime: HashMap::new(),
        strings: HashMap::new(),
        entry,
        call_conv,
        config,
        listing: Listing::default(),
    };
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    // Every body first, then each compiled after the bodies it inlines.
    let mut bodies = Vec::with_capacity(program.functions.len());
    for f in &program.functions {
        ctx.func.signature = function_signature(program, f, call_conv);
        FnLower::build(module, &mut tr, program, opts, f, &mut ctx, &mut fctx)?;
        bodies.push(ctx.func.clone());
        module.clear_context(&mut ctx);
    }
    let graph = CallGraph::of(program);
    let index_of: HashMap<FuncId, usize> = tr
        .funcs
        .iter()
        .enumerate()
        .map(|(i, id)| (*id, i))
        .collect();
    let names: Vec<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    let returns_memory: Vec<bool> = program
        .functions
        .iter()
        .map(|f| repr(&f.ret) == Repr::Mem)
        .collect();
    for &index in &graph.order {
        ctx.func = bodies[index].clone();
        if opts.inlining != Inlining::Off {
            let inliner = Inliner {
                policy: &opts.inlining,
                bodies: &bodies,
                index_of: &index_of,
                graph: &graph,
                caller: index,
                keep_calls: &opts.keep_calls,
                names: &names,
                returns_memory: &returns_memory,
            };
            ctx.inline(inliner)
                .map_err(|e| CodegenError::cranelift(&names[index], e))?;
            bodies[index] = ctx.func.clone();
        }
        let id = tr.funcs[index];
        define(module, &mut tr, opts, id, &names[index], &mut ctx)?;
    }
    // The entry wrapper.
    ctx.func.signature = entry_sig;
    {
        let main = program.function(program.main);
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let block = b.create_block();
        b.switch_to_block(block);
        if opts.sanitize {
            let enable = tr.runtime_func(module, Rt::SanitizeEnable)?;
            let enable = module.declare_func_in_func(enable, b.func);
            b.ins().call(enable, &[]);
        }
        let mut args = Vec::new();
        if let Repr::Mem = repr(&main.ret) {
            let slot = b.create_sized_stack_slot(slot_data(program.layout(&main.ret))?);
            args.push(b.ins().stack_addr(PTR, slot, 0));
        }
        let callee = module.declare_func_in_func(tr.funcs[program.main.0 as usize], b.func);
        let call = b.ins().call(callee, &args);
        let status = match (&main.ret, b.inst_results(call).first().copied()) {
            (Type::I64, Some(v)) => v,
            (Type::I32, Some(v)) => b.ins().sextend(types::I64, v),
            (Type::U8 | Type::Bool, Some(v)) => b.ins().uextend(types::I64, v),
            _ => b.ins().iconst(types::I64, 0),
        };
        b.ins().return_(&[status]);
        b.seal_all_blocks();
        b.finalize(config);
    }
    define(module, &mut tr, opts, entry, "<entry>", &mut ctx)?;
    Ok(tr)
}

/// Defines one function (running the verifier if the ISA flags say so) and
/// collects the listings the options ask for.
fn define<M: Module>(
    module: &mut M,
    tr: &mut Translation,
    opts: &Options,
    id: FuncId,
    name: &str,
    ctx: &mut Context,
) -> Result<(), CodegenError> {
    if opts.emit_clif {
        // Show the function under its symbol name (`function %"tern.main"`);
        // the module only uses the id, so the name is restored afterwards.
        let symbol = module
            .declarations()
            .get_function_decl(id)
            .linkage_name(id)
            .into_owned();
        let saved = std::mem::replace(&mut ctx.func.name, UserFuncName::testcase(symbol));
        tr.listing
            .clif
            .push_str(&format!("; fn {name}\n{}\n", ctx.func.display()));
        ctx.func.name = saved;
    }
    ctx.set_disasm(opts.emit_asm);
    module
        .define_function(id, ctx)
        .map_err(|e| CodegenError::cranelift(name, format_module_error(e)))?;
    if opts.emit_asm {
        let text = ctx
            .compiled_code()
            .and_then(|c| c.vcode.clone())
            .unwrap_or_default();
        tr.listing.asm.push_str(&format!("; fn {name}\n{text}\n"));
    }
    module.clear_context(ctx);
    Ok(())
}

/// `; u0:N = symbol` for every function of the module, so that the
/// `fnK = u0:N` references in the CLIF listing can be read.
pub fn callee_legend<M: Module>(module: &M) -> String {
    let mut out = String::from("; functions referenced as u0:N\n");
    for (id, decl) in module.declarations().get_functions() {
        out.push_str(&format!(
            "; u0:{} = {}\n",
            id.as_u32(),
            decl.linkage_name(id)
        ));
    }
    out.push('\n');
    out
}

fn format_module_error(e: cranelift_module::ModuleError) -> String {
    match e {
        cranelift_module::ModuleError::Compilation(cranelift_codegen::CodegenError::Verifier(
            errors,
        )) => format!("verifier errors:\n{errors}"),
        other => format!("{other:?}"),
    }
}

/// How a value of a type is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repr {
    Unit,
    Scalar(ir::Type),
    /// `(ptr, len)` as two `i64`.
    Pair,
    /// In memory, handled by address.
    Mem,
}

fn repr(ty: &Type) -> Repr {
    match ty {
        Type::I64 => Repr::Scalar(types::I64),
        Type::I32 => Repr::Scalar(types::I32),
        Type::U8 | Type::Bool => Repr::Scalar(types::I8),
        Type::Unit => Repr::Unit,
        Type::Str | Type::Slice(_) | Type::Reusable(_) => Repr::Pair,
        Type::Array(..) | Type::Struct(_) => Repr::Mem,
    }
}

fn is_signed(ty: &Type) -> bool {
    matches!(ty, Type::I64 | Type::I32)
}

fn bits(ty: &Type) -> u32 {
    match ty {
        Type::I64 => 64,
        Type::I32 => 32,
        _ => 8,
    }
}

fn push_repr_params(out: &mut Vec<AbiParam>, ty: &Type) {
    match repr(ty) {
        Repr::Unit => {}
        Repr::Scalar(t) => out.push(AbiParam::new(t)),
        Repr::Pair => {
            out.push(AbiParam::new(types::I64));
            out.push(AbiParam::new(types::I64));
        }
        Repr::Mem => out.push(AbiParam::new(PTR)),
    }
}

/// The signature of a Tern function (see the module docs).
fn function_signature(program: &Program, f: &tir::Function, cc: CallConv) -> Signature {
    let mut sig = Signature::new(cc);
    if repr(&f.ret) == Repr::Mem {
        sig.params.push(AbiParam::new(PTR));
    }
    for p in &f.params {
        if p.by_ref {
            sig.params.push(AbiParam::new(PTR));
        } else {
            push_repr_params(&mut sig.params, &f.locals[p.local.0 as usize].ty);
        }
    }
    match repr(&f.ret) {
        Repr::Mem | Repr::Unit => {}
        _ => push_repr_params(&mut sig.returns, &f.ret),
    }
    let _ = program;
    sig
}

/// The C signature of an `extern fn`: narrow integers are extended as C
/// callers do.
fn extern_signature(x: &tir::ExternFn, cc: CallConv) -> Signature {
    let c_param = |ty: &Type| match ty {
        Type::I32 => AbiParam::new(types::I32).sext(),
        Type::U8 | Type::Bool => AbiParam::new(types::I8).uext(),
        _ => AbiParam::new(types::I64),
    };
    let mut sig = Signature::new(cc);
    for (ty, by_ref) in &x.params {
        if *by_ref {
            sig.params.push(AbiParam::new(PTR));
        } else if repr(ty) == Repr::Pair {
            push_repr_params(&mut sig.params, ty);
        } else if repr(ty) != Repr::Unit {
            sig.params.push(c_param(ty));
        }
    }
    if repr(&x.ret) != Repr::Unit {
        sig.returns.push(c_param(&x.ret));
    }
    sig
}

fn slot_data(layout: tir::Layout) -> Result<StackSlotData, CodegenError> {
    let size = u32::try_from(layout.size).map_err(|_| {
        CodegenError::Unsupported(format!("a {}-byte value on the stack", layout.size))
    })?;
    let align_shift = layout.align.max(1).trailing_zeros() as u8;
    Ok(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        size,
        align_shift,
    ))
}

/// A lowered value.
#[derive(Clone, Copy, Debug)]
enum Val {
    Unit,
    Scalar(Value),
    Pair(Value, Value),
    /// The address of an aggregate.
    Mem(Value),
}

impl Val {
    fn scalar(self) -> Value {
        match self {
            Val::Scalar(v) | Val::Mem(v) => v,
            other => panic!("internal: expected a scalar, got {other:?}"),
        }
    }
    fn pair(self) -> (Value, Value) {
        match self {
            Val::Pair(a, b) => (a, b),
            other => panic!("internal: expected a pair, got {other:?}"),
        }
    }
}

/// Where a local lives.
#[derive(Clone, Copy, Debug)]
enum Storage {
    Var(Variable),
    VarPair(Variable, Variable),
    /// In its own stack slot (aggregates, address-taken scalars).
    Slot(ir::StackSlot),
    /// In memory the local does not own: a `ref` parameter, or an aggregate
    /// value parameter (the caller's copy).
    Addr(Value),
}

/// A fact that makes an index check redundant (O2): the `for` variable lies
/// in `0..bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// `len(s)` of an immutable slice local `s`.
    LenOf(LocalId),
    /// A constant.
    Const(u64),
}

struct LoopTarget {
    continue_to: ir::Block,
    break_to: ir::Block,
}

/// Translation state of one function.
struct FnLower<'a, 'b, M: Module> {
    module: &'a mut M,
    tr: &'a mut Translation,
    program: &'a Program,
    opts: &'a Options,
    f: &'a tir::Function,
    b: FunctionBuilder<'b>,
    locals: Vec<Option<Storage>>,
    sret: Option<Value>,
    loops: Vec<LoopTarget>,
    proven: Vec<(LocalId, Bound)>,
    func_refs: HashMap<FuncId, ir::FuncRef>,
    data_refs: HashMap<DataId, ir::GlobalValue>,
}

type R<T> = Result<T, CodegenError>;

impl<'a, 'b, M: Module> FnLower<'a, 'b, M> {
    fn build(
        module: &'a mut M,
        tr: &'a mut Translation,
        program: &'a Program,
        opts: &'a Options,
        f: &'a tir::Function,
        ctx: &'b mut Context,
        fctx: &'b mut FunctionBuilderContext,
    ) -> R<()> {
        let b = FunctionBuilder::new(&mut ctx.func, fctx);
        let mut this = FnLower {
            module,
            tr,
            program,
            opts,
            f,
            b,
            locals: vec![None; f.locals.len()],
            sret: None,
            loops: Vec::new(),
            proven: Vec::new(),
            func_refs: HashMap::new(),
            data_refs: HashMap::new(),
        };
        this.body()?;
        this.b.seal_all_blocks();
        let config = this.tr.config;
        this.b.finalize(config);
        Ok(())
    }

    fn body(&mut self) -> R<()> {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let params: Vec<Value> = self.b.block_params(entry).to_vec();
        let mut params = params.into_iter();
        if repr(&self.f.ret) == Repr::Mem {
            self.sret = params.next();
        }
        let mut addressed = HashSet::new();
        collect_addressed_block(&self.f.body, &mut addressed);
        for p in &self.f.params {
            let ty = &self.f.locals[p.local.0 as usize].ty;
            if p.by_ref {
                let addr = params.next().expect("signature has the ref param");
                self.locals[p.local.0 as usize] = Some(Storage::Addr(addr));
                continue;
            }
            let val = match repr(ty) {
                Repr::Unit => Val::Unit,
                Repr::Scalar(_) => Val::Scalar(params.next().expect("param")),
                Repr::Pair => {
                    let a = params.next().expect("param");
                    Val::Pair(a, params.next().expect("param"))
                }
                Repr::Mem => {
                    // The caller passed the address of its own copy; value
                    // parameters are immutable, so use it in place.
                    let addr = params.next().expect("param");
                    self.locals[p.local.0 as usize] = Some(Storage::Addr(addr));
                    continue;
                }
            };
            self.init_local(p.local, val, &addressed)?;
        }
        self.poll_interrupt(self.f.loc)?;
        self.block(&self.f.body, &addressed)?;
        // Falling off the end: `fn f()` returns; a function with a result
        // always returns explicitly (the front end checks it), so the end is
        // unreachable.
        if self.f.ret == Type::Unit {
            self.b.ins().return_(&[]);
        } else {
            self.b.ins().trap(TrapCode::unwrap_user(1));
        }
        Ok(())
    }

    // ----- locals -------------------------------------------------------

    fn init_local(&mut self, id: LocalId, val: Val, addressed: &HashSet<LocalId>) -> R<()> {
        let ty = self.f.locals[id.0 as usize].ty.clone();
        let storage = match self.locals[id.0 as usize] {
            Some(s) => s,
            None => {
                let s = match repr(&ty) {
                    _ if addressed.contains(&id) || repr(&ty) == Repr::Mem => Storage::Slot(
                        self.b
                            .create_sized_stack_slot(slot_data(self.program.layout(&ty))?),
                    ),
                    Repr::Scalar(t) => Storage::Var(self.b.declare_var(t)),
                    Repr::Pair => Storage::VarPair(
                        self.b.declare_var(types::I64),
                        self.b.declare_var(types::I64),
                    ),
                    // Unit locals hold nothing; a dummy variable keeps the
                    // storage uniform.
                    Repr::Unit | Repr::Mem => Storage::Var(self.b.declare_var(types::I8)),
                };
                self.locals[id.0 as usize] = Some(s);
                s
            }
        };
        self.write_storage(storage, &ty, val);
        Ok(())
    }

    fn write_storage(&mut self, storage: Storage, ty: &Type, val: Val) {
        match storage {
            Storage::Var(v) => {
                if let Val::Scalar(x) = val {
                    self.b.def_var(v, x);
                }
            }
            Storage::VarPair(a, b) => {
                let (p, l) = val.pair();
                self.b.def_var(a, p);
                self.b.def_var(b, l);
            }
            Storage::Slot(s) => {
                let addr = self.b.ins().stack_addr(PTR, s, 0);
                self.store(ty, val, addr);
            }
            Storage::Addr(addr) => self.store(ty, val, addr),
        }
    }

    fn storage(&self, id: LocalId) -> R<Storage> {
        self.locals[id.0 as usize].ok_or_else(|| {
            CodegenError::Unsupported(format!(
                "local `{}` of `{}` used before its definition",
                self.f.locals[id.0 as usize].name, self.f.name
            ))
        })
    }

    fn read_local(&mut self, id: LocalId) -> R<Val> {
        let ty = self.f.locals[id.0 as usize].ty.clone();
        Ok(match self.storage(id)? {
            Storage::Var(v) => {
                if repr(&ty) == Repr::Unit {
                    Val::Unit
                } else {
                    Val::Scalar(self.b.use_var(v))
                }
            }
            Storage::VarPair(a, b) => Val::Pair(self.b.use_var(a), self.b.use_var(b)),
            Storage::Slot(s) => {
                let addr = self.b.ins().stack_addr(PTR, s, 0);
                self.load(&ty, addr)
            }
            Storage::Addr(addr) => self.load(&ty, addr),
        })
    }

    // ----- memory -------------------------------------------------------

    fn load(&mut self, ty: &Type, addr: Value) -> Val {
        let flags = MemFlagsData::new();
        match repr(ty) {
            Repr::Unit => Val::Unit,
            Repr::Scalar(t) => Val::Scalar(self.b.ins().load(t, flags, addr, 0)),
            Repr::Pair => Val::Pair(
                self.b.ins().load(types::I64, flags, addr, 0),
                self.b.ins().load(types::I64, flags, addr, 8),
            ),
            Repr::Mem => Val::Mem(addr),
        }
    }

    fn store(&mut self, ty: &Type, val: Val, addr: Value) {
        let flags = MemFlagsData::new();
        match val {
            Val::Unit => {}
            Val::Scalar(v) => {
                self.b.ins().store(flags, v, addr, 0);
            }
            Val::Pair(p, l) => {
                self.b.ins().store(flags, p, addr, 0);
                self.b.ins().store(flags, l, addr, 8);
            }
            Val::Mem(src) => {
                let layout = self.program.layout(ty);
                self.copy(addr, src, layout);
            }
        }
    }

    /// `memmove` of an aggregate (overlap-safe: `a = a` and overlapping
    /// views through `ref` must work).
    fn copy(&mut self, dst: Value, src: Value, layout: tir::Layout) {
        let align = layout.align.clamp(1, 8) as u8;
        self.b.emit_small_memory_copy(
            self.tr.config,
            dst,
            src,
            layout.size,
            align,
            align,
            false,
            MemFlagsData::new(),
        );
    }

    fn temp(&mut self, ty: &Type) -> R<Value> {
        let slot = self
            .b
            .create_sized_stack_slot(slot_data(self.program.layout(ty))?);
        Ok(self.b.ins().stack_addr(PTR, slot, 0))
    }

    // ----- helpers ------------------------------------------------------

    fn runtime(&mut self, rt: Rt) -> R<ir::FuncRef> {
        let id = self.tr.runtime_func(self.module, rt)?;
        Ok(self.func_ref(id))
    }

    fn func_ref(&mut self, id: FuncId) -> ir::FuncRef {
        if let Some(&r) = self.func_refs.get(&id) {
            return r;
        }
        let r = self.module.declare_func_in_func(id, self.b.func);
        self.func_refs.insert(id, r);
        r
    }

    fn data_addr(&mut self, id: DataId) -> Value {
        let gv = match self.data_refs.get(&id) {
            Some(&gv) => gv,
            None => {
                let gv = self.module.declare_data_in_func(id, self.b.func);
                self.data_refs.insert(id, gv);
                gv
            }
        };
        self.b.ins().symbol_value(PTR, gv)
    }

    /// Address of the NUL-terminated `file:line:col` for a runtime call.
    fn loc_ptr(&mut self, loc: Loc) -> R<Value> {
        let text = self.program.describe(loc);
        self.c_str(&text)
    }

    /// Address of `text` as a NUL-terminated read-only string.
    fn c_str(&mut self, text: &str) -> R<Value> {
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0);
        let id = self.tr.string(self.module, &bytes)?;
        Ok(self.data_addr(id))
    }

    fn str_val(&mut self, s: &str) -> R<Val> {
        let id = self.tr.string(self.module, s.as_bytes())?;
        let ptr = self.data_addr(id);
        let len = self.b.ins().iconst(types::I64, s.len() as i64);
        Ok(Val::Pair(ptr, len))
    }

    fn call_rt(&mut self, rt: Rt, args: &[Value]) -> R<Option<Value>> {
        let f = self.runtime(rt)?;
        let call = self.b.ins().call(f, args);
        Ok(self.b.inst_results(call).first().copied())
    }

    /// Continues in a fresh block with no predecessors after a terminator
    /// (`return`, `break`, a failing runtime call): code after it is dead.
    fn after_terminator(&mut self) {
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    /// Calls a runtime failure entry (which never returns) in a cold block
    /// entered when `ok` is false; continues where `ok` is true.
    fn check(&mut self, ok: Value, rt: Rt, args: impl FnOnce(&mut Self) -> R<Vec<Value>>) -> R<()> {
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.switch_to_block(fail);
        let args = args(self)?;
        self.call_rt(rt, &args)?;
        self.b.ins().trap(TrapCode::unwrap_user(2));
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// With `Options::interrupt_flag`: stop here (`error: LOC: interrupted`)
    /// if the flag is set. Function entries and loop headers poll, so any
    /// running program reaches a poll soon. Nothing without the option.
    fn poll_interrupt(&mut self, loc: Loc) -> R<()> {
        let Some(flag) = self.opts.interrupt_flag else {
            return Ok(());
        };
        let addr = self.b.ins().iconst(PTR, flag as i64);
        // Atomic: an ordinary load of the same address with no store in
        // between could be merged with an earlier one (the entry's poll) and
        // a loop would never see the flag change.
        let set = self
            .b
            .ins()
            .atomic_load(types::I8, MemFlagsData::new(), addr);
        let clear = self.b.ins().icmp_imm_u(IntCC::Equal, set, 0);
        self.check(clear, Rt::Interrupted, |s| Ok(vec![s.loc_ptr(loc)?]))
    }

    fn dummy(&mut self, ty: &Type) -> R<Val> {
        Ok(match repr(ty) {
            Repr::Unit => Val::Unit,
            Repr::Scalar(t) => Val::Scalar(self.b.ins().iconst(t, 0)),
            Repr::Pair => {
                let z = self.b.ins().iconst(types::I64, 0);
                Val::Pair(z, z)
            }
            Repr::Mem => Val::Mem(self.temp(ty)?),
        })
    }

    // ----- statements ---------------------------------------------------

    fn block(&mut self, block: &tir::Block, addressed: &HashSet<LocalId>) -> R<()> {
        for stmt in &block.stmts {
            self.stmt(stmt, addressed)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt, addressed: &HashSet<LocalId>) -> R<()> {
        match stmt {
            Stmt::Let { local, init } => {
                let v = self.expr(init)?;
                // A fresh aggregate (call result, literal) already sits in a
                // temporary of its own: the local adopts it instead of
                // copying. The temporary belongs to this `let` alone; when the
                // `let` runs again (a loop) the previous binding is dead.
                if let Val::Mem(addr) = v
                    && self.locals[local.0 as usize].is_none()
                    && is_fresh_aggregate(init)
                {
                    self.locals[local.0 as usize] = Some(Storage::Addr(addr));
                } else {
                    self.init_local(*local, v, addressed)?;
                }
            }
            Stmt::Assign { place, value } => {
                let v = self.expr(value)?;
                self.assign(place, v)?;
            }
            Stmt::CompoundAssign { place, op, value } => {
                let rhs = self.expr(value)?.scalar();
                if let ExprKind::Local(id) = place.kind
                    && let Storage::Var(var) = self.storage(id)?
                {
                    let old = self.b.use_var(var);
                    let new = self.binop(*op, &place.ty, old, rhs, place.loc)?;
                    self.b.def_var(var, new);
                } else {
                    let addr = self.place_addr(place)?;
                    let old = self.load(&place.ty, addr).scalar();
                    let new = self.binop(*op, &place.ty, old, rhs, place.loc)?;
                    self.b.ins().store(MemFlagsData::new(), new, addr, 0);
                }
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
            Stmt::If { cond, then, else_ } => {
                let c = self.expr(cond)?.scalar();
                let then_b = self.b.create_block();
                let else_b = self.b.create_block();
                let merge = self.b.create_block();
                self.b.ins().brif(c, then_b, &[], else_b, &[]);
                self.b.switch_to_block(then_b);
                self.block(then, addressed)?;
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(else_b);
                if let Some(e) = else_ {
                    self.block(e, addressed)?;
                }
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(merge);
            }
            Stmt::While { cond, body } => {
                let header = self.b.create_block();
                let body_b = self.b.create_block();
                let exit = self.b.create_block();
                self.b.ins().jump(header, &[]);
                self.b.switch_to_block(header);
                self.poll_interrupt(cond.loc)?;
                let c = self.expr(cond)?.scalar();
                self.b.ins().brif(c, body_b, &[], exit, &[]);
                self.b.switch_to_block(body_b);
                self.loops.push(LoopTarget {
                    continue_to: header,
                    break_to: exit,
                });
                self.block(body, addressed)?;
                self.loops.pop();
                self.b.ins().jump(header, &[]);
                self.b.switch_to_block(exit);
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => self.for_loop(*var, start, end, body, addressed)?,
            Stmt::Break | Stmt::Continue => {
                let target = self.loops.last().ok_or_else(|| {
                    CodegenError::Unsupported("`break`/`continue` outside a loop".into())
                })?;
                let to = if matches!(stmt, Stmt::Break) {
                    target.break_to
                } else {
                    target.continue_to
                };
                self.b.ins().jump(to, &[]);
                self.after_terminator();
            }
            Stmt::Return(value) => {
                let v = match value {
                    Some(e) => self.expr(e)?,
                    None => Val::Unit,
                };
                match v {
                    Val::Unit => {
                        self.b.ins().return_(&[]);
                    }
                    Val::Scalar(x) => {
                        self.b.ins().return_(&[x]);
                    }
                    Val::Pair(p, l) => {
                        self.b.ins().return_(&[p, l]);
                    }
                    Val::Mem(src) => {
                        let dst = self.sret.ok_or_else(|| {
                            CodegenError::Unsupported("aggregate return without a slot".into())
                        })?;
                        let layout = self.program.layout(&self.f.ret);
                        self.copy(dst, src, layout);
                        self.b.ins().return_(&[]);
                    }
                }
                self.after_terminator();
            }
        }
        Ok(())
    }

    fn for_loop(
        &mut self,
        var: LocalId,
        start: &Expr,
        end: &Expr,
        body: &tir::Block,
        addressed: &HashSet<LocalId>,
    ) -> R<()> {
        let ty = start.ty.clone();
        let s = self.expr(start)?.scalar();
        let e = self.expr(end)?.scalar();
        let cc = if is_signed(&ty) {
            IntCC::SignedLessThan
        } else {
            IntCC::UnsignedLessThan
        };
        self.init_local(var, Val::Scalar(s), addressed)?;
        let header = self.b.create_block();
        let body_b = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        self.poll_interrupt(start.loc)?;
        let i = self.read_local(var)?.scalar();
        let c = self.b.ins().icmp(cc, i, e);
        self.b.ins().brif(c, body_b, &[], exit, &[]);
        self.b.switch_to_block(body_b);
        self.loops.push(LoopTarget {
            continue_to: step,
            break_to: exit,
        });
        let fact = self.loop_fact(start, end);
        if let Some(bound) = fact {
            self.proven.push((var, bound));
        }
        self.block(body, addressed)?;
        if fact.is_some() {
            self.proven.pop();
        }
        self.loops.pop();
        self.b.ins().jump(step, &[]);
        self.b.switch_to_block(step);
        let i = self.read_local(var)?.scalar();
        let next = self.b.ins().iadd_imm_s(i, 1);
        let storage = self.storage(var)?;
        self.write_storage(storage, &ty, Val::Scalar(next));
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// O2: what a counted loop proves about its variable. `start` must be a
    /// non-negative constant; `end` a constant or `len` of an immutable local
    /// (whose `(ptr, len)` therefore cannot change inside the loop).
    fn loop_fact(&self, start: &Expr, end: &Expr) -> Option<Bound> {
        if self.opts.opt_level < OptLevel::O2 || start.ty != Type::I64 {
            return None;
        }
        if !matches!(start.kind, ExprKind::Int(s) if s >= 0) {
            return None;
        }
        match &end.kind {
            ExprKind::Int(e) if *e >= 0 => Some(Bound::Const(*e as u64)),
            ExprKind::Len(inner) => match (&inner.kind, &inner.ty) {
                (ExprKind::Local(_), Type::Array(_, n)) => Some(Bound::Const(*n)),
                (ExprKind::Local(s), Type::Slice(_) | Type::Reusable(_))
                    if !self.f.locals[s.0 as usize].mutable =>
                {
                    Some(Bound::LenOf(*s))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// O2: is `base[idx]` in bounds by a loop fact?
    fn index_proven(&self, base: &Expr, idx: &Expr) -> bool {
        let ExprKind::Local(i) = idx.kind else {
            return false;
        };
        let Some(&(_, bound)) = self.proven.iter().rev().find(|(v, _)| *v == i) else {
            return false;
        };
        match (bound, &base.ty, &base.kind) {
            (Bound::Const(e), Type::Array(_, n), _) => e <= *n,
            (Bound::LenOf(s), _, ExprKind::Local(b)) => s == *b,
            _ => false,
        }
    }

    fn assign(&mut self, place: &Expr, v: Val) -> R<()> {
        if let ExprKind::Local(id) = place.kind {
            let storage = self.storage(id)?;
            self.write_storage(storage, &place.ty, v);
            return Ok(());
        }
        let addr = self.place_addr(place)?;
        self.store(&place.ty, v, addr);
        Ok(())
    }

    // ----- places -------------------------------------------------------

    /// The address of a place (or of a materialized rvalue).
    fn place_addr(&mut self, e: &Expr) -> R<Value> {
        match &e.kind {
            ExprKind::Local(id) => match self.storage(*id)? {
                Storage::Slot(s) => Ok(self.b.ins().stack_addr(PTR, s, 0)),
                Storage::Addr(a) => Ok(a),
                // Not address-taken by the analysis (cannot happen for a
                // well-typed program): give a snapshot's address.
                Storage::Var(_) | Storage::VarPair(..) => {
                    let v = self.read_local(*id)?;
                    self.materialize(&e.ty, v)
                }
            },
            ExprKind::Field(base, index) => {
                let base_addr = self.place_addr(base)?;
                let Type::Struct(sid) = &base.ty else {
                    return Err(CodegenError::Unsupported("field of a non-struct".into()));
                };
                let offset = self.program.struct_def(*sid).fields[*index as usize].offset;
                Ok(self.b.ins().iadd_imm_s(base_addr, offset as i64))
            }
            ExprKind::Index(base, idx) => self.index_addr(base, idx, e.loc),
            _ => {
                let v = self.expr(e)?;
                self.materialize(&e.ty, v)
            }
        }
    }

    fn materialize(&mut self, ty: &Type, v: Val) -> R<Value> {
        if let Val::Mem(a) = v {
            return Ok(a);
        }
        let t = self.temp(ty)?;
        self.store(ty, v, t);
        Ok(t)
    }

    /// `(ptr, len)` of a slice, reusable slice or array operand.
    fn sequence(&mut self, base: &Expr) -> R<(Value, Value)> {
        match &base.ty {
            Type::Array(_, n) => {
                let ptr = self.place_addr(base)?;
                let len = self.b.ins().iconst(types::I64, *n as i64);
                Ok((ptr, len))
            }
            _ => Ok(self.expr(base)?.pair()),
        }
    }

    fn elem_size(&self, seq: &Type) -> u64 {
        seq.element().map_or(0, |t| self.program.layout(t).size)
    }

    fn scaled(&mut self, index: Value, size: u64) -> Value {
        if size == 1 {
            index
        } else {
            self.b.ins().imul_imm_s(index, size as i64)
        }
    }

    /// `n * size` as a byte count, after checking that it exists: `n` is
    /// non-negative and the product fits in 63 bits (one unsigned compare:
    /// a negative `n` is a huge unsigned value). Otherwise `tern_length_fail`
    /// names `op`. The product can then never wrap into a small size.
    fn checked_bytes(&mut self, n: Value, size: u64, op: &str, loc: Loc) -> R<Value> {
        let limit = i64::MAX as u64 / size.max(1);
        let ok = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, n, limit as i64);
        self.check(ok, Rt::LengthFail, |s| {
            let op = s.c_str(op)?;
            let size = s.b.ins().iconst(types::I64, size as i64);
            Ok(vec![op, n, size, s.loc_ptr(loc)?])
        })?;
        Ok(self.scaled(n, size))
    }

    /// `tern_reusable_resize(p, old, new, loc)`; under `--sanitize` the slice is
    /// checked (and untagged) first and the result tagged after. Returns the
    /// untagged new address (where `append` stores) and the slice's pointer.
    fn reusable_resize(&mut self, p: Value, old: Value, new: Value, loc: Loc) -> R<(Value, Value)> {
        let at = self.loc_ptr(loc)?;
        if !self.opts.sanitize {
            let np = self
                .call_rt(Rt::ReusableResize, &[p, old, new, at])?
                .expect("ptr");
            return Ok((np, np));
        }
        let a = self
            .call_rt(Rt::SanitizeCheck, &[p, old, at])?
            .expect("address");
        let np = self
            .call_rt(Rt::ReusableResize, &[a, old, new, at])?
            .expect("ptr");
        let region = self.b.ins().iconst(types::I64, SANITIZE_BUILTIN_REGION);
        let tagged = self
            .call_rt(Rt::SanitizeRetag, &[region, a, old, np, new, at])?
            .expect("ptr");
        Ok((np, tagged))
    }

    fn index_addr(&mut self, base: &Expr, idx: &Expr, loc: Loc) -> R<Value> {
        let (ptr, len) = self.sequence(base)?;
        let i = self.expr(idx)?.scalar();
        if !self.index_proven(base, idx) {
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
            self.check(ok, Rt::BoundsFail, |s| Ok(vec![i, len, s.loc_ptr(loc)?]))?;
        }
        let size = self.elem_size(&base.ty);
        let off = self.scaled(i, size);
        let addr = self.b.ins().iadd(ptr, off);
        if self.opts.sanitize && matches!(base.ty, Type::Slice(_) | Type::Reusable(_)) {
            let bytes = self.b.ins().iconst(types::I64, size.max(1) as i64);
            return self.sanitize_check(addr, bytes, loc);
        }
        Ok(addr)
    }

    /// `--sanitize`: a pointer with a tag (bits 48..62) is checked by the
    /// runtime for `bytes` and comes back untagged; an untagged one passes
    /// as is (one shift and branch).
    fn sanitize_check(&mut self, addr: Value, bytes: Value, loc: Loc) -> R<Value> {
        let tag = self.b.ins().ushr_imm_u(addr, SANITIZE_TAG_SHIFT);
        let tagged = self.b.ins().icmp_imm_u(IntCC::NotEqual, tag, 0);
        let check = self.b.create_block();
        let cont = self.b.create_block();
        let out = self.b.append_block_param(cont, PTR);
        self.b
            .ins()
            .brif(tagged, check, &[], cont, &[BlockArg::Value(addr)]);
        self.b.switch_to_block(check);
        let at = self.loc_ptr(loc)?;
        let untagged = self
            .call_rt(Rt::SanitizeCheck, &[addr, bytes, at])?
            .expect("address");
        self.b.ins().jump(cont, &[BlockArg::Value(untagged)]);
        self.b.switch_to_block(cont);
        Ok(out)
    }

    /// `--sanitize`: `(ptr, len)` of a slice handed to the runtime (`print`,
    /// `panic`'s detail): checked and untagged.
    fn sanitize_slice(&mut self, ty: &Type, p: Value, l: Value, loc: Loc) -> R<Value> {
        if !self.opts.sanitize || !matches!(ty, Type::Slice(_) | Type::Reusable(_)) {
            return Ok(p);
        }
        let size = self.elem_size(ty);
        let bytes = self.scaled(l, size);
        self.sanitize_check(p, bytes, loc)
    }

    // ----- expressions --------------------------------------------------

    fn expr(&mut self, e: &Expr) -> R<Val> {
        Ok(match &e.kind {
            ExprKind::Int(v) => {
                let t = match repr(&e.ty) {
                    Repr::Scalar(t) => t,
                    _ => types::I64,
                };
                let masked = match t.bits() {
                    64 => *v,
                    n => *v & ((1i64 << n) - 1),
                };
                Val::Scalar(self.b.ins().iconst(t, masked))
            }
            ExprKind::Bool(v) => Val::Scalar(self.b.ins().iconst(types::I8, i64::from(*v))),
            ExprKind::Str(s) => self.str_val(s)?,
            ExprKind::Local(id) => self.read_local(*id)?,
            ExprKind::Field(..) | ExprKind::Index(..) => {
                let addr = self.place_addr(e)?;
                self.load(&e.ty, addr)
            }
            ExprKind::SliceRange { base, lo, hi } => {
                let (ptr, len) = self.sequence(base)?;
                let lo = match lo {
                    Some(x) => self.expr(x)?.scalar(),
                    None => self.b.ins().iconst(types::I64, 0),
                };
                let hi = match hi {
                    Some(x) => self.expr(x)?.scalar(),
                    None => len,
                };
                let hi_ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, hi, len);
                let lo_ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, lo, hi);
                let ok = self.b.ins().band(hi_ok, lo_ok);
                self.check(ok, Rt::SliceFail, |s| {
                    Ok(vec![lo, hi, len, s.loc_ptr(e.loc)?])
                })?;
                let size = self.elem_size(&base.ty);
                let off = self.scaled(lo, size);
                let p = self.b.ins().iadd(ptr, off);
                let n = self.b.ins().isub(hi, lo);
                if self.opts.sanitize && matches!(base.ty, Type::Slice(_) | Type::Reusable(_)) {
                    // The view keeps its tag; the span it names is checked now.
                    let bytes = self.scaled(n, size);
                    self.sanitize_check(p, bytes, e.loc)?;
                }
                Val::Pair(p, n)
            }
            ExprKind::Unary(op, x) => {
                let v = self.expr(x)?.scalar();
                Val::Scalar(match (op, &x.ty) {
                    (UnOp::Neg, _) => self.b.ins().ineg(v),
                    (UnOp::Not, Type::Bool) => self.b.ins().bxor_imm_s(v, 1),
                    (UnOp::Not, _) => self.b.ins().bnot(v),
                })
            }
            ExprKind::Binary(BinOp::And | BinOp::Or, l, r) => {
                let is_and = matches!(e.kind, ExprKind::Binary(BinOp::And, ..));
                let lv = self.expr(l)?.scalar();
                let rhs_b = self.b.create_block();
                let merge = self.b.create_block();
                let res = self.b.append_block_param(merge, types::I8);
                if is_and {
                    self.b
                        .ins()
                        .brif(lv, rhs_b, &[], merge, &[BlockArg::Value(lv)]);
                } else {
                    self.b
                        .ins()
                        .brif(lv, merge, &[BlockArg::Value(lv)], rhs_b, &[]);
                }
                self.b.switch_to_block(rhs_b);
                let rv = self.expr(r)?.scalar();
                self.b.ins().jump(merge, &[BlockArg::Value(rv)]);
                self.b.switch_to_block(merge);
                Val::Scalar(res)
            }
            ExprKind::Binary(op, l, r) => {
                let lv = self.expr(l)?.scalar();
                let rv = self.expr(r)?.scalar();
                Val::Scalar(self.binop(*op, &l.ty, lv, rv, e.loc)?)
            }
            ExprKind::Cast(x) => {
                let v = self.expr(x)?.scalar();
                let (from, to) = (bits(&x.ty), bits(&e.ty));
                let t = match repr(&e.ty) {
                    Repr::Scalar(t) => t,
                    _ => types::I64,
                };
                Val::Scalar(if from == to {
                    v
                } else if to < from {
                    self.b.ins().ireduce(t, v)
                } else if is_signed(&x.ty) {
                    self.b.ins().sextend(t, v)
                } else {
                    self.b.ins().uextend(t, v)
                })
            }
            ExprKind::Call { func, args } => self.call(*func, args, &e.ty, e.loc)?,
            ExprKind::CallExtern { func, args } => self.call_extern(*func, args, &e.ty)?,
            ExprKind::StructLit { id, fields } => {
                let addr = self.temp(&e.ty)?;
                let def = self.program.struct_def(*id).clone();
                for (field, value) in def.fields.iter().zip(fields) {
                    let v = self.expr(value)?;
                    let at = self.b.ins().iadd_imm_s(addr, field.offset as i64);
                    self.store(&field.ty, v, at);
                }
                Val::Mem(addr)
            }
            ExprKind::ArrayRepeat { value, count } => {
                let v = self.expr(value)?;
                let addr = self.temp(&e.ty)?;
                self.fill(addr, &value.ty, v, *count);
                Val::Mem(addr)
            }
            ExprKind::ArrayLit(items) => {
                let addr = self.temp(&e.ty)?;
                let elem = e.ty.element().cloned().unwrap_or(Type::Unit);
                let size = self.program.layout(&elem).size;
                for (i, item) in items.iter().enumerate() {
                    let v = self.expr(item)?;
                    let at = self.b.ins().iadd_imm_s(addr, (i as u64 * size) as i64);
                    self.store(&elem, v, at);
                }
                Val::Mem(addr)
            }
            ExprKind::Len(x) => match &x.ty {
                Type::Array(_, n) => Val::Scalar(self.b.ins().iconst(types::I64, *n as i64)),
                _ => Val::Scalar(self.expr(x)?.pair().1),
            },
            ExprKind::Builtin(builtin, args) => self.builtin(builtin, args, e)?,
        })
    }

    /// Stores `v` into `count` consecutive elements at `addr`.
    fn fill(&mut self, addr: Value, elem: &Type, v: Val, count: u64) {
        let size = self.program.layout(elem).size;
        if count <= 8 || size == 0 {
            for i in 0..count {
                let at = self.b.ins().iadd_imm_s(addr, (i * size) as i64);
                self.store(elem, v, at);
            }
            return;
        }
        let end = self.b.ins().iadd_imm_s(addr, (count * size) as i64);
        let header = self.b.create_block();
        let p = self.b.append_block_param(header, PTR);
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[BlockArg::Value(addr)]);
        self.b.switch_to_block(header);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, p, end);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        self.store(elem, v, p);
        let next = self.b.ins().iadd_imm_s(p, size as i64);
        self.b.ins().jump(header, &[BlockArg::Value(next)]);
        self.b.switch_to_block(exit);
    }

    fn binop(&mut self, op: BinOp, ty: &Type, l: Value, r: Value, loc: Loc) -> R<Value> {
        let signed = is_signed(ty);
        Ok(match op {
            BinOp::Add => self.b.ins().iadd(l, r),
            BinOp::Sub => self.b.ins().isub(l, r),
            BinOp::Mul => self.b.ins().imul(l, r),
            BinOp::Div | BinOp::Rem => {
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                self.check(nonzero, Rt::DivZero, |s| Ok(vec![s.loc_ptr(loc)?]))?;
                if signed {
                    // `sdiv` traps on MIN / -1: divide by 1 instead and
                    // patch the quotient to the wrapped result (-MIN = MIN);
                    // any x % -1 is 0, which x % 1 also gives.
                    let t = self.b.func.dfg.value_type(r);
                    let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, r, -1);
                    let one = self.b.ins().iconst(t, 1);
                    let safe = self.b.ins().select(minus_one, one, r);
                    if op == BinOp::Div {
                        let q = self.b.ins().sdiv(l, safe);
                        let neg = self.b.ins().ineg(l);
                        self.b.ins().select(minus_one, neg, q)
                    } else {
                        self.b.ins().srem(l, safe)
                    }
                } else if op == BinOp::Div {
                    self.b.ins().udiv(l, r)
                } else {
                    self.b.ins().urem(l, r)
                }
            }
            BinOp::BitAnd => self.b.ins().band(l, r),
            BinOp::BitOr => self.b.ins().bor(l, r),
            BinOp::BitXor => self.b.ins().bxor(l, r),
            BinOp::Shl | BinOp::Shr => {
                let amount = self.b.ins().band_imm_s(r, i64::from(bits(ty) - 1));
                match (op, signed) {
                    (BinOp::Shl, _) => self.b.ins().ishl(l, amount),
                    (_, true) => self.b.ins().sshr(l, amount),
                    (_, false) => self.b.ins().ushr(l, amount),
                }
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let cc = match (op, signed) {
                    (BinOp::Eq, _) => IntCC::Equal,
                    (BinOp::Ne, _) => IntCC::NotEqual,
                    (BinOp::Lt, true) => IntCC::SignedLessThan,
                    (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
                    (BinOp::Gt, true) => IntCC::SignedGreaterThan,
                    (BinOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
                    (BinOp::Lt, false) => IntCC::UnsignedLessThan,
                    (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
                    (BinOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
                    _ => unreachable!("comparison operators only"),
                };
                self.b.ins().icmp(cc, l, r)
            }
            BinOp::And => self.b.ins().band(l, r),
            BinOp::Or => self.b.ins().bor(l, r),
        })
    }

    /// Lowers one argument into `out`: value arguments by representation
    /// (aggregates as the address of a fresh copy), `ref` as an address.
    fn push_arg(&mut self, arg: &Arg, out: &mut Vec<Value>) -> R<()> {
        match arg {
            Arg::Ref(place) => {
                // `ref` of a slice-typed place passes the address of the
                // place (the `(ptr, len)` pair itself), like any other type.
                let addr = self.place_addr(place)?;
                out.push(addr);
            }
            Arg::Value(e) => match self.expr(e)? {
                Val::Unit => {}
                Val::Scalar(v) => out.push(v),
                Val::Pair(p, l) => {
                    out.push(p);
                    out.push(l);
                }
                Val::Mem(a) => {
                    // Rvalues are already fresh temporaries; places are
                    // copied so the callee sees the value at the call even
                    // if it also mutates the original through a `ref`.
                    if !is_fresh_aggregate(e) {
                        let t = self.temp(&e.ty)?;
                        let layout = self.program.layout(&e.ty);
                        self.copy(t, a, layout);
                        out.push(t);
                    } else {
                        out.push(a);
                    }
                }
            },
        }
        Ok(())
    }

    fn call(&mut self, func: tir::FuncId, args: &[Arg], ret: &Type, loc: Loc) -> R<Val> {
        let mut vals = Vec::new();
        let sret = if repr(ret) == Repr::Mem {
            let t = self.temp(ret)?;
            vals.push(t);
            Some(t)
        } else {
            None
        };
        for arg in args {
            self.push_arg(arg, &mut vals)?;
        }
        // `--sanitize`: a call into another source file (a library) records
        // its location, which errors found inside the library name.
        if self.opts.sanitize && self.program.function(func).loc.file != self.f.loc.file {
            let at = self.loc_ptr(loc)?;
            self.call_rt(Rt::SanitizeSite, &[at])?;
        }
        let id = self.tr.funcs[func.0 as usize];
        let f = self.func_ref(id);
        let call = self.b.ins().call(f, &vals);
        let results = self.b.inst_results(call).to_vec();
        Ok(match (repr(ret), sret) {
            (_, Some(t)) => Val::Mem(t),
            (Repr::Scalar(_), _) => Val::Scalar(results[0]),
            (Repr::Pair, _) => Val::Pair(results[0], results[1]),
            _ => Val::Unit,
        })
    }

    fn call_extern(&mut self, func: tir::ExternId, args: &[Arg], ret: &Type) -> R<Val> {
        let mut vals = Vec::new();
        for arg in args {
            self.push_arg(arg, &mut vals)?;
        }
        let id = self.tr.externs[func.0 as usize];
        let f = self.func_ref(id);
        let call = self.b.ins().call(f, &vals);
        Ok(match self.b.inst_results(call).first() {
            Some(&v) if repr(ret) != Repr::Unit => Val::Scalar(v),
            _ => Val::Unit,
        })
    }

    fn builtin(&mut self, builtin: &Builtin, args: &[Expr], e: &Expr) -> R<Val> {
        let loc = e.loc;
        match builtin {
            Builtin::Print => {
                let arg = &args[0];
                let v = self.expr(arg)?;
                match (&arg.ty, v) {
                    (Type::Str | Type::Slice(_), Val::Pair(p, l)) => {
                        let p = self.sanitize_slice(&arg.ty, p, l, loc)?;
                        self.call_rt(Rt::PrintStr, &[p, l])?;
                    }
                    (Type::Bool, Val::Scalar(x)) => {
                        self.call_rt(Rt::PrintBool, &[x])?;
                    }
                    (ty, Val::Scalar(x)) => {
                        let wide = match ty {
                            Type::I32 => self.b.ins().sextend(types::I64, x),
                            Type::U8 => self.b.ins().uextend(types::I64, x),
                            _ => x,
                        };
                        self.call_rt(Rt::PrintI64, &[wide])?;
                    }
                    (ty, _) => {
                        return Err(CodegenError::Unsupported(format!("print of {ty}")));
                    }
                }
                Ok(Val::Unit)
            }
            Builtin::Panic => {
                let (p, l) = self.expr(&args[0])?.pair();
                let (dp, dl) = match args.get(1) {
                    Some(detail) => {
                        let (dp, dl) = self.expr(detail)?.pair();
                        (self.sanitize_slice(&detail.ty, dp, dl, loc)?, dl)
                    }
                    None => {
                        let zero = self.b.ins().iconst(PTR, 0);
                        (zero, zero)
                    }
                };
                let at = self.loc_ptr(loc)?;
                // A block that ends in a panic is the unlikely path: laid out
                // out of line, and not counted as inlining cost.
                if let Some(block) = self.b.current_block()
                    && self.b.func.layout.entry_block() != Some(block)
                {
                    self.b.set_cold_block(block);
                }
                self.call_rt(Rt::Panic, &[p, l, dp, dl, at])?;
                self.b.ins().trap(TrapCode::unwrap_user(2));
                self.after_terminator();
                self.dummy(&e.ty)
            }
            Builtin::Assert => {
                let c = self.expr(&args[0])?.scalar();
                let msg = &args[1];
                self.check(c, Rt::AssertFail, |s| {
                    let (p, l) = s.expr(msg)?.pair();
                    Ok(vec![p, l, s.loc_ptr(loc)?])
                })?;
                Ok(Val::Unit)
            }
            Builtin::ReusableAlloc => {
                let n = self.expr(&args[0])?.scalar();
                let size = self.elem_size(&e.ty);
                let bytes = self.checked_bytes(n, size, "reusable::alloc", loc)?;
                let at = self.loc_ptr(loc)?;
                let mut p = self.call_rt(Rt::ReusableAlloc, &[bytes, at])?.expect("ptr");
                if self.opts.sanitize {
                    let region = self.b.ins().iconst(types::I64, SANITIZE_BUILTIN_REGION);
                    p = self
                        .call_rt(Rt::SanitizeTag, &[region, p, bytes])?
                        .expect("ptr");
                }
                Ok(Val::Pair(p, n))
            }
            Builtin::ReusableAppend => {
                let (p, len) = self.expr(&args[0])?.pair();
                let v = self.expr(&args[1])?;
                let size = self.elem_size(&e.ty);
                // `len * size` fits: the slice's span holds it. `len + 1`
                // elements may not (and `len + 1` itself may wrap).
                let old = self.scaled(len, size);
                let new_len = self.b.ins().iadd_imm_s(len, 1);
                let new = self.checked_bytes(new_len, size, "reusable::append", loc)?;
                let (np, tagged) = self.reusable_resize(p, old, new, loc)?;
                let slot = self.b.ins().iadd(np, old);
                let elem = args[1].ty.clone();
                self.store(&elem, v, slot);
                Ok(Val::Pair(tagged, new_len))
            }
            Builtin::ReusableResize => {
                let (p, len) = self.expr(&args[0])?.pair();
                let n = self.expr(&args[1])?.scalar();
                let size = self.elem_size(&e.ty);
                let old = self.scaled(len, size);
                let new = self.checked_bytes(n, size, "reusable::resize", loc)?;
                let (_, tagged) = self.reusable_resize(p, old, new, loc)?;
                Ok(Val::Pair(tagged, n))
            }
            Builtin::ReusableFree => {
                let (p, len) = self.expr(&args[0])?.pair();
                let size = self.elem_size(&args[0].ty);
                let bytes = self.scaled(len, size);
                let at = self.loc_ptr(loc)?;
                if self.opts.sanitize {
                    let a = self
                        .call_rt(Rt::SanitizeCheck, &[p, bytes, at])?
                        .expect("address");
                    self.call_rt(Rt::ReusableFree, &[a, bytes, at])?;
                    let region = self.b.ins().iconst(types::I64, SANITIZE_BUILTIN_REGION);
                    self.call_rt(Rt::SanitizeRelease, &[region, a, bytes, at])?;
                } else {
                    self.call_rt(Rt::ReusableFree, &[p, bytes, at])?;
                }
                Ok(Val::Unit)
            }
            Builtin::ReusableOffset => {
                let (mut p, _) = self.expr(&args[0])?.pair();
                if self.opts.sanitize {
                    p = self.b.ins().band_imm_s(p, SANITIZE_ADDR_MASK);
                }
                let at = self.loc_ptr(loc)?;
                let off = self.call_rt(Rt::ReusableOffset, &[p, at])?.expect("offset");
                Ok(Val::Scalar(off))
            }
            Builtin::UnsafeSlice => {
                let p = self.expr(&args[0])?.scalar();
                let l = self.expr(&args[1])?.scalar();
                Ok(Val::Pair(p, l))
            }
            Builtin::UnsafeAddr => {
                let x = &args[0];
                Ok(Val::Scalar(match x.ty {
                    Type::Slice(_) | Type::Reusable(_) => self.expr(x)?.pair().0,
                    _ => self.place_addr(x)?,
                }))
            }
            Builtin::UnsafeCopy => {
                let mut dst = self.expr(&args[0])?.scalar();
                let mut src = self.expr(&args[1])?.scalar();
                let n = self.expr(&args[2])?.scalar();
                if self.opts.sanitize {
                    // Addresses of pool slices may carry a tag: copy from and
                    // to the memory itself (unchecked, like everything unsafe).
                    dst = self.b.ins().band_imm_s(dst, SANITIZE_ADDR_MASK);
                    src = self.b.ins().band_imm_s(src, SANITIZE_ADDR_MASK);
                }
                self.b.call_memmove(self.tr.config, dst, src, n);
                Ok(Val::Unit)
            }
        }
    }
}

/// Whether evaluating `e` yields an aggregate in a temporary nobody else
/// refers to (as opposed to a place: a local, field or element).
fn is_fresh_aggregate(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Call { .. }
            | ExprKind::StructLit { .. }
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::ArrayLit(_)
    )
}

/// Locals whose address is taken (`ref x`, `unsafe::addr(x)` of a scalar or
/// slice variable): they live in a stack slot instead of SSA variables.
fn collect_addressed_block(block: &tir::Block, out: &mut HashSet<LocalId>) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::Let { init, .. } => collect_addressed(init, out),
            Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
                collect_addressed(place, out);
                collect_addressed(value, out);
            }
            Stmt::Expr(e) => collect_addressed(e, out),
            Stmt::If { cond, then, else_ } => {
                collect_addressed(cond, out);
                collect_addressed_block(then, out);
                if let Some(e) = else_ {
                    collect_addressed_block(e, out);
                }
            }
            Stmt::While { cond, body } => {
                collect_addressed(cond, out);
                collect_addressed_block(body, out);
            }
            Stmt::For {
                start, end, body, ..
            } => {
                collect_addressed(start, out);
                collect_addressed(end, out);
                collect_addressed_block(body, out);
            }
            Stmt::Return(Some(e)) => collect_addressed(e, out),
            Stmt::Return(None) | Stmt::Break | Stmt::Continue => {}
        }
    }
}

fn collect_addressed(e: &Expr, out: &mut HashSet<LocalId>) {
    let mark_root = |place: &Expr, out: &mut HashSet<LocalId>| {
        if let ExprKind::Local(id) = place.kind {
            out.insert(id);
        }
    };
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Local(_) => {}
        ExprKind::Field(b, _) => collect_addressed(b, out),
        ExprKind::Index(b, i) => {
            collect_addressed(b, out);
            collect_addressed(i, out);
        }
        ExprKind::SliceRange { base, lo, hi } => {
            collect_addressed(base, out);
            for x in [lo, hi].into_iter().flatten() {
                collect_addressed(x, out);
            }
        }
        ExprKind::Unary(_, x) | ExprKind::Cast(x) | ExprKind::Len(x) => collect_addressed(x, out),
        ExprKind::Binary(_, l, r) => {
            collect_addressed(l, out);
            collect_addressed(r, out);
        }
        ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
            for a in args {
                match a {
                    Arg::Value(x) => collect_addressed(x, out),
                    Arg::Ref(x) => {
                        mark_root(x, out);
                        collect_addressed(x, out);
                    }
                }
            }
        }
        ExprKind::StructLit { fields, .. } => fields.iter().for_each(|x| collect_addressed(x, out)),
        ExprKind::ArrayRepeat { value, .. } => collect_addressed(value, out),
        ExprKind::ArrayLit(items) => items.iter().for_each(|x| collect_addressed(x, out)),
        ExprKind::Builtin(b, args) => {
            if *b == Builtin::UnsafeAddr
                && let Some(x) = args.first()
                && !matches!(x.ty, Type::Slice(_) | Type::Reusable(_))
            {
                mark_root(x, out);
            }
            args.iter().for_each(|x| collect_addressed(x, out));
        }
    }
}
