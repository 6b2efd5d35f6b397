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
//! Module map: this file translates the module (signatures, data, the entry
//! wrapper, definition order) and holds a function's frame; `stmt`, `place`,
//! `expr` and `builtins` translate those constructs. Where each local and
//! temporary lives is not decided here: the frame plan (`tir::frame`) says.
//!
//! Calling convention between Tern functions (the platform C convention):
//! scalars one register, slices two, an aggregate argument is the address of
//! a caller-owned copy, an aggregate result is written through a hidden first
//! parameter pointing at the caller's slot, a `ref` parameter is an address.

use std::collections::HashMap;

use cranelift_codegen::Context;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, AbiParam, BlockArg, Function, InstBuilder, MemFlagsData, Signature, StackSlotData,
    StackSlotKind, TrapCode, UserFuncName, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module};
use tern_compiler::tir::arg_sharing::{ArgSharing, Blockers};
use tern_compiler::tir::divergence::Divergence;
use tern_compiler::tir::frame::{FramePlan, Home};
use tern_compiler::tir::{
    self, Arg, BinOp, Builtin, Expr, ExprKind, Loc, LocalId, Program, Stmt, Type, UnOp,
};

use crate::budget::{EGRAPH_WORK_LIMIT, InlineBudget, egraph_work, over_regalloc_budget};
use crate::debug::{DebugInfo, table};
use crate::inline::{CallGraph, Callees, Inliner, Inlining, hot_size};
use crate::runtime_fns::Rt;
use crate::{CodegenError, Listing, OptLevel, Options};
use crate::{
    call_arg_copies, combined_loads, dead_loads, dead_slot_stores, decided_branches, if_conversion,
    jump_threading, loop_invariant_params, loop_markers, merged_index_checks, multiply_by_lea,
    partial_inline, stack_addr_copies, store_forwarding, tail_duplication,
};

mod builtins;
mod expr;
mod memory;
mod place;
mod stmt;

const PTR: ir::Type = types::I64;

/// Symbol name of the wrapper `extern "C" fn() -> i64` that runs the Tern
/// `main` and returns its status (0 for `fn main()`).
pub const ENTRY_SYMBOL: &str = "tern.entry";

// `--sanitize`: the tag layout of pool pointers, from the ABI's one table.
pub use tern_abi::{SANITIZE_ADDR_MASK, SANITIZE_BUILTIN_REGION, SANITIZE_TAG_SHIFT};

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
    /// Call sites and line rows of every compiled function.
    pub debug: DebugInfo,
    /// The backtrace table (`tern_rt_debug_table`'s argument), defined last.
    pub debug_table: Option<DataId>,
    /// The runtime's builtin-pool fast-path record
    /// (`tern_abi::reusable_fast`), once a function reads it.
    reusable_fast: Option<DataId>,
    /// The host ISA without the mid-end optimizer, made when a function is
    /// too large for it (`crate::budget::egraph_work`).
    plain_isa: Option<cranelift_codegen::isa::OwnedTargetIsa>,
    /// [`Translation::plain_isa`] with regalloc2's single-pass allocator,
    /// made when a function is too large for the backtracking one
    /// (`crate::budget::over_regalloc_budget`).
    single_pass_isa: Option<cranelift_codegen::isa::OwnedTargetIsa>,
    /// Which by-value aggregate arguments are passed as the place itself
    /// (`tern_compiler::tir::arg_sharing`).
    sharing: ArgSharing,
    /// Which functions never return (`tern_compiler::tir::divergence`):
    /// their calls are laid out as a `panic` is.
    divergence: Divergence,
}

impl Translation {
    /// The runtime symbols the program uses (its functions, and the
    /// builtin pool's fast-path record once read), for the JIT's check.
    pub fn runtime_used(&self) -> impl Iterator<Item = &'static str> + '_ {
        let data = self.reusable_fast.map(|_| tern_abi::reusable_fast::SYMBOL);
        self.runtime.keys().map(|rt| rt.spec().name).chain(data)
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
            .declare_function(
                spec.name,
                Linkage::Import,
                &crate::runtime_fns::signature(spec, self.call_conv),
            )
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
        debug: DebugInfo::default(),
        debug_table: None,
        reusable_fast: None,
        plain_isa: None,
        single_pass_isa: None,
        sharing: ArgSharing::of(program),
        divergence: Divergence::of(program),
    };
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    // Every body first, then each compiled after the bodies it inlines.
    let mut bodies = Vec::with_capacity(program.functions.len());
    for (index, f) in program.functions.iter().enumerate() {
        ctx.func.signature = function_signature(program, f, call_conv);
        FnLower::build(module, &mut tr, program, opts, index, &mut ctx, &mut fctx)?;
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
    let mut sizes: Vec<usize> = bodies.iter().map(hot_size).collect();
    let mut budget = InlineBudget::new(sizes.iter().sum());
    let callees = Callees {
        policy: &opts.inlining,
        index_of: &index_of,
        graph: &graph,
        keep_calls: &opts.keep_calls,
        names: &names,
        returns_memory: &returns_memory,
    };
    // Per function compiled so far: the inlined stack slots a chain of
    // calls from it holds (`inline::chain_slots`).
    let mut chain = vec![0u64; bodies.len()];
    for &index in &graph.order {
        ctx.func = bodies[index].clone();
        if opts.inlining != Inlining::Off {
            let own = crate::inline::slot_bytes(&ctx.func);
            let inliner = inliner_for(
                &ctx.func,
                &callees,
                &bodies,
                &sizes,
                &mut budget,
                &chain,
                index,
            );
            ctx.inline(inliner)
                .map_err(|e| CodegenError::cranelift(&names[index], e))?;
            bodies[index] = ctx.func.clone();
            let inlined = crate::inline::slot_bytes(&bodies[index]).saturating_sub(own);
            chain[index] = crate::inline::chain_slots(&graph, &chain, index, inlined);
            sizes[index] = hot_size(&bodies[index]);
            // A recursive function whose entry tests for a cheap case:
            // its body becomes the wrapper (callers inline it), and the
            // slow part is defined here, the wrapper inlined at its own
            // recursive calls.
            if let Some(slow_id) = split_off_slow_part(
                module,
                tr.funcs[index],
                &mut ctx.func,
                &mut bodies[index],
                !callees.inlines(index),
            )? {
                sizes[index] = hot_size(&bodies[index]);
                let inliner = Inliner {
                    slow_part: true,
                    ..inliner_for(
                        &ctx.func,
                        &callees,
                        &bodies,
                        &sizes,
                        &mut budget,
                        &chain,
                        index,
                    )
                };
                ctx.inline(inliner)
                    .map_err(|e| CodegenError::cranelift(&names[index], e))?;
                let shown = format!("{} (slow part)", names[index]);
                define(
                    module,
                    &mut tr,
                    opts,
                    slow_id,
                    &shown,
                    Some(index),
                    &mut ctx,
                )?;
                ctx.func = bodies[index].clone();
            }
        }
        let id = tr.funcs[index];
        define(
            module,
            &mut tr,
            opts,
            id,
            &names[index],
            Some(index),
            &mut ctx,
        )?;
    }
    tr.listing.notes.extend(budget.note());
    // A `--keep-call` that names no function keeps nothing: most likely a
    // misspelt name in a benchmark's configuration.
    for k in &opts.keep_calls {
        if !names.contains(k) {
            tr.listing.usage_notes.push(format!(
                "note: --keep-call `{k}` names no function of the program"
            ));
        }
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
    define(module, &mut tr, opts, entry, "<entry>", None, &mut ctx)?;
    define_debug_table(module, &mut tr, program)?;
    Ok(tr)
}

/// The inliner for `func`, the body of function `caller` as it is now.
fn inliner_for<'a>(
    func: &Function,
    callees: &'a Callees<'a>,
    bodies: &'a [Function],
    sizes: &'a [usize],
    budget: &'a mut InlineBudget,
    chain: &[u64],
    caller: usize,
) -> Inliner<'a> {
    let size = hot_size(func);
    Inliner {
        callees,
        bodies,
        sizes,
        budget,
        size,
        limit: InlineBudget::caller_limit(size),
        caller,
        slots: 0,
        slot_limit: crate::inline::slot_limit(
            callees.graph,
            chain,
            caller,
            crate::inline::slot_bytes(func),
        ),
        slow_part: false,
    }
}

/// Splits `body`, function `id`'s inlined body, into a wrapper (left in
/// `wrapper`) and its slow part (left in `body`), declared under a new id,
/// which is returned; `None` (both untouched) when the function does not
/// split (`crate::partial_inline`) or is `kept` as a call.
fn split_off_slow_part<M: Module>(
    module: &mut M,
    id: FuncId,
    body: &mut Function,
    wrapper: &mut Function,
    kept: bool,
) -> Result<Option<FuncId>, CodegenError> {
    if kept {
        return Ok(None);
    }
    let Some(plan) = partial_inline::plan(body, id.as_u32(), partial_inline::WRAPPER_LIMIT) else {
        return Ok(None);
    };
    let symbol = module
        .declarations()
        .get_function_decl(id)
        .linkage_name(id)
        .into_owned();
    let mut slow = partial_inline::slow_part(body, &plan);
    let slow_symbol = format!("{symbol}.slow");
    let slow_id = module
        .declare_function(&slow_symbol, Linkage::Local, &slow.signature)
        .map_err(|e| CodegenError::cranelift(&slow_symbol, e))?;
    slow.name = UserFuncName::user(0, slow_id.as_u32());
    let slow_ref = module.declare_func_in_func(slow_id, wrapper);
    partial_inline::make_wrapper(wrapper, &plan, slow_ref);
    *body = slow;
    Ok(Some(slow_id))
}

/// Defines the backtrace table of every function defined so far.
fn define_debug_table<M: Module>(
    module: &mut M,
    tr: &mut Translation,
    program: &Program,
) -> Result<(), CodegenError> {
    const NAME: &str = "tern.debug_table";
    let table = table::build(program, &tr.debug);
    let id = module
        .declare_data(NAME, Linkage::Local, false, false)
        .map_err(|e| CodegenError::cranelift(NAME, e))?;
    let mut desc = DataDescription::new();
    desc.set_align(8);
    desc.define(table.bytes.into_boxed_slice());
    for (offset, func, addend) in table.relocs {
        // A code address with an offset: `write_function_addr` has no
        // addend, so the function is imported as a relocation target of
        // the data kind (namespace 0 is the module's functions).
        let target = module.declare_func_in_data(func, &mut desc);
        let name = desc.function_decls[target].clone();
        let gv = desc.import_global_value(name);
        desc.write_data_addr(offset, gv, i64::from(addend));
    }
    module
        .define_data(id, &desc)
        .map_err(|e| CodegenError::cranelift(NAME, e))?;
    tr.debug_table = Some(id);
    Ok(())
}

/// Defines one function (running the verifier if the ISA flags say so) and
/// collects the listings the options ask for.
fn define<M: Module>(
    module: &mut M,
    tr: &mut Translation,
    opts: &Options,
    id: FuncId,
    name: &str,
    index: Option<usize>,
    ctx: &mut Context,
) -> Result<(), CodegenError> {
    if opts.emit_clif {
        // Show the function under its symbol name (`function %"tern.main"`),
        // without the source locations (indices into the debug records,
        // which would only clutter the listing).
        let symbol = module
            .declarations()
            .get_function_decl(id)
            .linkage_name(id)
            .into_owned();
        let mut shown = ctx.func.clone();
        shown.name = UserFuncName::testcase(symbol);
        shown.stencil.srclocs.clear();
        tr.listing
            .clif
            .push_str(&format!("; fn {name}\n{}\n", shown.display()));
    }
    if opts.opt_level == OptLevel::O0 {
        if over_regalloc_budget(&ctx.func) {
            define_after_midend(module, tr, opts, (id, name), ctx, true)?;
        } else {
            module
                .define_function(id, ctx)
                .map_err(|e| CodegenError::cranelift(name, format_module_error(e)))?;
        }
    } else {
        // A function too large for the e-graph pass skips it (see
        // `crate::budget`); the others get it with the module's ISA, then
        // the fold of the branches it left decided, the threading of edges
        // past merges they decide and the forwarding of stored fields to
        // the loads behind them, then the rest of the pipeline without
        // optimizing again.
        if egraph_work(&ctx.func) <= EGRAPH_WORK_LIMIT {
            loop_invariant_params::remove(&mut ctx.func);
            loop_markers::mark(ctx);
            let mut ctrl = cranelift_codegen::control::ControlPlane::default();
            ctx.optimize(module.isa(), &mut ctrl)
                .map_err(|e| CodegenError::cranelift(name, format!("{e:?}")))?;
            let folded = decided_branches::fold(&mut ctx.func, &ctx.cfg, &ctx.domtree);
            let threaded = jump_threading::thread(&mut ctx.func);
            let converted = if_conversion::convert(&mut ctx.func);
            if folded + threaded + converted > 0 {
                // The verifier holds the context's graph to the code.
                ctx.compute_cfg();
                ctx.compute_domtree();
            }
            store_forwarding::forward(&mut ctx.func, &ctx.cfg, &ctx.domtree);
            // Before the slots' stores: a slot read only by unused loads
            // is then write-only.
            dead_loads::remove(&mut ctx.func);
            dead_slot_stores::remove(&mut ctx.func);
            if merged_index_checks::merge(&mut ctx.func, &ctx.cfg, &ctx.domtree) > 0 {
                ctx.compute_cfg();
                ctx.compute_domtree();
            }
            combined_loads::combine(&mut ctx.func, &ctx.cfg, module.isa().endianness());
            if tail_duplication::duplicate(&mut ctx.func) > 0 {
                ctx.compute_cfg();
                ctx.compute_domtree();
            }
        }
        // Every optimized function, including those too large for the
        // e-graph pass: linear walks that rewrite one instruction or add
        // copies.
        multiply_by_lea::rewrite(&mut ctx.func);
        // Before the calls' copies: an address remade for a call is read
        // by the call alone, and gets no second copy.
        stack_addr_copies::remake(&mut ctx.func);
        call_arg_copies::isolate(&mut ctx.func);
        let single_pass = over_regalloc_budget(&ctx.func);
        define_after_midend(module, tr, opts, (id, name), ctx, single_pass)?;
    }
    if let (Some(index), Some(code)) = (index, ctx.compiled_code()) {
        tr.debug.record(id, index as u32, code);
    }
    module.clear_context(ctx);
    Ok(())
}

/// Compiles `ctx` with the host ISA at `opt_level=none` (no e-graph pass:
/// it has run already, or the function is too large for it, see
/// `crate::budget`) and defines the code under `id`, as
/// `Module::define_function` does with the module's own ISA. With
/// `single_pass` (a function too large for the backtracking register
/// allocator, `crate::budget::over_regalloc_budget`), regalloc2's single-pass one.
fn define_after_midend<M: Module>(
    module: &mut M,
    tr: &mut Translation,
    opts: &Options,
    (id, name): (FuncId, &str),
    ctx: &mut Context,
    single_pass: bool,
) -> Result<(), CodegenError> {
    let slot = if single_pass {
        &mut tr.single_pass_isa
    } else {
        &mut tr.plain_isa
    };
    if slot.is_none() {
        let plain = Options {
            opt_level: OptLevel::O0,
            ..opts.clone()
        };
        let pic = module.isa().flags().is_pic();
        *slot = Some(crate::isa::host_isa_with(&plain, pic, single_pass)?);
    }
    let isa = slot.as_deref().expect("made above");
    let mut ctrl = cranelift_codegen::control::ControlPlane::default();
    ctx.compile(isa, &mut ctrl)
        .map_err(|e| CodegenError::cranelift(name, format!("{:?}", e.inner)))?;
    let code = ctx.compiled_code().expect("compiled above");
    let alignment = u64::from(code.buffer.alignment);
    let bytes = code.code_buffer().to_vec();
    let relocs: Vec<cranelift_module::ModuleReloc> = code
        .buffer
        .relocs()
        .iter()
        .map(|r| cranelift_module::ModuleReloc::from_mach_reloc(r, &ctx.func, id))
        .collect();
    module
        .define_function_bytes(id, alignment, &bytes, &relocs)
        .map_err(|e| CodegenError::cranelift(name, format_module_error(e)))
}

/// How every CLIF listing starts (`tern build` tells its own listings from a
/// user's file by it).
pub const CLIF_HEADER: &str = "; functions referenced as u0:N";

/// `; u0:N = symbol` for every function of the module, so that the
/// `fnK = u0:N` references in the CLIF listing can be read.
pub fn callee_legend<M: Module>(module: &M) -> String {
    let mut out = format!("{CLIF_HEADER}\n");
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
        Type::I64 | Type::U64 => Repr::Scalar(types::I64),
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
        Type::I64 | Type::U64 => 64,
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
    /// An immutable scalar or pair (`let`, a value parameter): its SSA
    /// value(s), which dominate every use. No Cranelift `Variable`: the SSA
    /// builder keeps a block-indexed map per variable, which made a function
    /// with many locals and many blocks quadratic to translate.
    Value(Val),
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

/// The length an index was checked against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Length {
    /// A fixed array's.
    Const(u64),
    /// A slice's, as an SSA value.
    Value(Value),
}

struct LoopTarget {
    continue_to: ir::Block,
    break_to: ir::Block,
}

/// Translation state of one function.
///
/// The methods are split by construct: this file has the function's frame
/// (parameters, locals, memory, runtime calls); `stmt`, `place`, `expr` and
/// `builtins` translate what their names say.
struct FnLower<'a, 'b, M: Module> {
    /// The JIT or object module: declarations of functions, data, imports.
    module: &'a mut M,
    /// Module-wide state: function ids, interned strings.
    tr: &'a mut Translation,
    program: &'a Program,
    opts: &'a Options,
    /// The function being translated, and its index in the program.
    f: &'a tir::Function,
    index: u32,
    /// The location of the construct being translated: the site of the
    /// calls emitted now (see [`crate::debug`]).
    here: Loc,
    b: FunctionBuilder<'b>,
    /// Where each local lives, once it is initialised.
    locals: Vec<Option<Storage>>,
    /// The hidden result pointer of a function returning an aggregate.
    sret: Option<Value>,
    /// Targets of `break` and `continue`, innermost last.
    loops: Vec<LoopTarget>,
    /// O2: what enclosing counted loops prove about their variables.
    proven: Vec<(LocalId, Bound)>,
    /// Index checks already passed on the straight-line path that ends in
    /// block `checked_in` (index value, length): a second check of the same
    /// pair there is dropped. Any other block starts afresh.
    checked: Vec<(Value, Length)>,
    checked_in: Option<ir::Block>,
    /// `--sanitize`: the tag bits of the pool pointer the place just
    /// addressed lies behind (set by `index_addr` for an element of a slice
    /// or reusable slice, kept through fields and array elements), so that
    /// a view of an array inside a pool element keeps its allocation's tag.
    pool_tag: Option<Value>,
    /// Callees and data already imported into this function.
    func_refs: HashMap<FuncId, ir::FuncRef>,
    data_refs: HashMap<DataId, ir::GlobalValue>,
    /// Where every local lives, from the frame plan (`tir::frame`, which
    /// the interpreter and the front end's frame bound read too): a local
    /// whose address is taken lives in a stack slot, not in SSA
    /// variables, and the first `let` of an [`Home::Adopted`] local takes
    /// its initialiser's temporary.
    frame: FramePlan,
    /// Variables of `var` locals whose scope has ended, by type, reused by
    /// later ones (see [`Storage::Value`]: fewer variables, less memory).
    free_vars: HashMap<ir::Type, Vec<Variable>>,
    /// The type of every variable declared.
    var_types: cranelift_codegen::entity::SecondaryMap<Variable, ir::Type>,
}

type R<T> = Result<T, CodegenError>;

impl<'a, 'b, M: Module> FnLower<'a, 'b, M> {
    fn build(
        module: &'a mut M,
        tr: &'a mut Translation,
        program: &'a Program,
        opts: &'a Options,
        index: usize,
        ctx: &'b mut Context,
        fctx: &'b mut FunctionBuilderContext,
    ) -> R<()> {
        let b = FunctionBuilder::new(&mut ctx.func, fctx);
        let f = &program.functions[index];
        let mut this = FnLower {
            module,
            tr,
            program,
            opts,
            f,
            index: index as u32,
            here: f.loc,
            b,
            locals: vec![None; f.locals.len()],
            sret: None,
            loops: Vec::new(),
            proven: Vec::new(),
            checked: Vec::new(),
            checked_in: None,
            pool_tag: None,
            func_refs: HashMap::new(),
            data_refs: HashMap::new(),
            frame: tir::frame::plan(program, f),
            free_vars: HashMap::new(),
            var_types: Default::default(),
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
            self.init_local(p.local, val)?;
        }
        // One check at entry: with a stack limit it doubles as the
        // interrupt poll (`Options::stack_limit`).
        if self.opts.stack_limit.is_some() {
            self.check_stack(self.f.loc)?;
        } else {
            self.poll_interrupt(self.f.loc)?;
        }
        self.block(&self.f.body)?;
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

    fn init_local(&mut self, id: LocalId, val: Val) -> R<()> {
        let local = &self.f.locals[id.0 as usize];
        if !local.mutable
            && !self.frame.addressed.contains(&id)
            && repr(&local.ty) != Repr::Mem
            && self.locals[id.0 as usize].is_none()
        {
            self.locals[id.0 as usize] = Some(Storage::Value(val));
            return Ok(());
        }
        let storage = self.local_storage(id)?;
        let ty = self.f.locals[id.0 as usize].ty.clone();
        self.write_storage(storage, &ty, val);
        Ok(())
    }

    /// The storage of local `id`, made on its first definition: a stack
    /// slot, or (reused) variables.
    pub(super) fn local_storage(&mut self, id: LocalId) -> R<Storage> {
        if let Some(s) = self.locals[id.0 as usize] {
            return Ok(s);
        }
        let ty = self.f.locals[id.0 as usize].ty.clone();
        let s = match repr(&ty) {
            _ if self.frame.addressed.contains(&id) || repr(&ty) == Repr::Mem => Storage::Slot(
                self.b
                    .create_sized_stack_slot(slot_data(self.program.layout(&ty))?),
            ),
            Repr::Scalar(t) => Storage::Var(self.new_var(t)),
            Repr::Pair => Storage::VarPair(self.new_var(types::I64), self.new_var(types::I64)),
            // Unit locals hold nothing; a dummy variable keeps the
            // storage uniform.
            Repr::Unit | Repr::Mem => Storage::Var(self.new_var(types::I8)),
        };
        self.locals[id.0 as usize] = Some(s);
        Ok(s)
    }

    /// A variable of type `t`: one whose local's scope has ended, or a new one.
    pub(super) fn new_var(&mut self, t: ir::Type) -> Variable {
        if let Some(v) = self.free_vars.get_mut(&t).and_then(Vec::pop) {
            return v;
        }
        let v = self.b.declare_var(t);
        self.var_types[v] = t;
        v
    }

    /// The scope of local `id` has ended: its variables may serve a later
    /// local (every use of that one follows its own definition).
    pub(super) fn end_scope(&mut self, id: LocalId) {
        match self.locals[id.0 as usize] {
            Some(Storage::Var(v)) => self.free_var(v),
            Some(Storage::VarPair(a, b)) => {
                self.free_var(a);
                self.free_var(b);
            }
            _ => {}
        }
    }

    /// Variable `v` (of [`FnLower::new_var`]) is dead: a later one may reuse it.
    pub(super) fn free_var(&mut self, v: Variable) {
        let t = self.var_types[v];
        self.free_vars.entry(t).or_default().push(v);
    }

    pub(super) fn write_storage(&mut self, storage: Storage, ty: &Type, val: Val) {
        match storage {
            Storage::Value(_) => unreachable!("an immutable local is written once"),
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
            Storage::Value(v) => v,
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

    // ----- memory (loads, stores and copies: `memory.rs`) ---------------

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
        // An executable (position-independent code, the only kind this
        // module makes with `is_pic`) links the runtime and libc into one
        // image: an imported function is reached by a direct `call` (through
        // a PLT entry for libc), not `lea fn(%rip),%rax; call *%rax`, one
        // instruction and one register less per call. The JIT keeps
        // non-colocated calls: the runtime may lie beyond a rel32's reach.
        if self.module.isa().flags().is_pic() {
            self.b.func.dfg.ext_funcs[r].colocated = true;
        }
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

    /// The address of the runtime's builtin-pool fast-path record
    /// (`tern_abi::reusable_fast`), declared as an import on first use.
    fn reusable_fast_addr(&mut self) -> R<Value> {
        let id = match self.tr.reusable_fast {
            Some(id) => id,
            None => {
                let name = tern_abi::reusable_fast::SYMBOL;
                let id = self
                    .module
                    .declare_data(name, Linkage::Import, false, false)
                    .map_err(|e| CodegenError::cranelift(name, e))?;
                self.tr.reusable_fast = Some(id);
                id
            }
        };
        Ok(self.data_addr(id))
    }

    /// Address of the NUL-terminated `file:line:col` for a runtime call.
    ///
    /// The runtime call it is passed to fails at `loc`, so `loc` becomes the
    /// location of the calls emitted next (the innermost backtrace frame
    /// then names the same place as the error message).
    fn loc_ptr(&mut self, loc: Loc) -> R<Value> {
        self.here = loc;
        let text = self.program.describe(loc);
        self.c_str(&text)
    }

    /// The location the sanitizer records as where a builtin pool operation
    /// at `loc` freed a slice (`at`, its location): null inside a
    /// standard-library module, which makes the runtime record the current
    /// call site, the program's call into the library (docs/language.md,
    /// section 15.1); the interpreter makes the same choice.
    fn freed_at(&mut self, loc: Loc, at: Value) -> Value {
        if self.program.is_library(loc.file) {
            self.b.ins().iconst(types::I64, 0)
        } else {
            at
        }
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
        self.tag_call(call);
        Ok(self.b.inst_results(call).first().copied())
    }

    /// Marks `call` as made from [`FnLower::here`] (see [`crate::debug`]).
    fn tag_call(&mut self, call: ir::Inst) {
        let tag = self.tr.debug.tag(self.index, self.here);
        self.b.func.debug_tags.set(call, [tag]);
    }

    /// Translates code for the construct at `loc`: the calls it emits are
    /// made from `loc`, and its instructions map to `loc` in the line table.
    /// The enclosing location is restored afterwards.
    fn at<T>(&mut self, loc: Loc, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let outer = std::mem::replace(&mut self.here, loc);
        let srcloc = self.tr.debug.srcloc(loc);
        let outer_srcloc = self.b.srcloc();
        self.b.set_srcloc(srcloc);
        let result = f(self);
        self.here = outer;
        self.b.set_srcloc(outer_srcloc);
        result
    }

    /// Marks the current block cold unless it is the entry block: a block
    /// that ends in a panic (or a call that never returns) is the unlikely
    /// path, laid out out of line and not counted as inlining cost.
    fn cold_unless_entry(&mut self) {
        if let Some(block) = self.b.current_block()
            && self.b.func.layout.entry_block() != Some(block)
        {
            self.b.set_cold_block(block);
        }
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
        let straight = self.b.current_block() == self.checked_in;
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        // Both have their one predecessor: sealed now, a variable read in
        // `cont` is the value from before the check (not a new block
        // parameter), so repeated checks can be recognised.
        self.b.seal_block(fail);
        self.b.seal_block(cont);
        self.b.switch_to_block(fail);
        let args = args(self)?;
        self.call_rt(rt, &args)?;
        self.b.ins().trap(TrapCode::unwrap_user(2));
        self.b.switch_to_block(cont);
        // The path continues straight through a check.
        self.checked_in = if straight { Some(cont) } else { None };
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

    /// With `Options::stack_limit`: fail with `stack overflow` (a runtime
    /// error, at `loc`) when the stack pointer is below the limit.
    fn check_stack(&mut self, loc: Loc) -> R<()> {
        let Some(limit) = self.opts.stack_limit else {
            return Ok(());
        };
        let addr = self.b.ins().iconst(PTR, limit as i64);
        let limit = self.b.ins().load(PTR, MemFlagsData::new(), addr, 0);
        let sp = self.b.ins().get_stack_pointer(PTR);
        let room = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, sp, limit);
        self.check(room, Rt::StackFail, |s| Ok(vec![s.loc_ptr(loc)?]))
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
}
