//! Small Cranelift functions for the unit tests of the passes over CLIF
//! (`decided_branches`, `jump_threading`, `call_arg_copies`,
//! `partial_inline`), and the verifier they all end with.

use crate::clif_walk;
use cranelift_codegen::Context;
use cranelift_codegen::ir::{
    AbiParam, Block, ExtFuncData, ExternalName, FuncRef, Function, InstBuilder, Opcode, Signature,
    UserExternalName, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_codegen::settings::{self, Flags};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use target_lexicon::PointerWidth;

/// A function `fn(i64) -> i64` over `N` blocks, the first its entry
/// (switched to, its parameter handed to `body`), with its graphs.
pub(crate) fn function<const N: usize>(
    body: impl FnOnce(&mut FunctionBuilder, [Block; N], Value),
) -> Context {
    let mut ctx = Context::new();
    ctx.func.signature = Signature::new(CallConv::SystemV);
    ctx.func.signature.params.push(AbiParam::new(types::I64));
    ctx.func.signature.returns.push(AbiParam::new(types::I64));
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let blocks: [Block; N] = std::array::from_fn(|_| b.create_block());
    b.append_block_params_for_function_params(blocks[0]);
    b.switch_to_block(blocks[0]);
    let x = b.block_params(blocks[0])[0];
    body(&mut b, blocks, x);
    b.seal_all_blocks();
    b.finalize(TargetFrontendConfig {
        default_call_conv: CallConv::SystemV,
        pointer_width: PointerWidth::U64,
        page_size_align_log2: 12,
    });
    ctx.compute_cfg();
    ctx.compute_domtree();
    ctx
}

/// Each block returns its constant.
pub(crate) fn returning<const N: usize>(b: &mut FunctionBuilder, blocks: [(Block, i64); N]) {
    for (block, k) in blocks {
        b.switch_to_block(block);
        let v = b.ins().iconst(types::I64, k);
        b.ins().return_(&[v]);
    }
}

/// How many instructions of `func` have opcode `op`.
pub(crate) fn count(func: &Function, op: Opcode) -> usize {
    clif_walk::insts(func)
        .filter(|&i| func.dfg.insts[i].opcode() == op)
        .count()
}

/// Runs Cranelift's verifier on `func` (default flags), failing the test
/// with the verifier's message.
pub(crate) fn verifies(func: &Function) {
    let flags = Flags::new(settings::builder());
    cranelift_codegen::verify_function(func, &flags).unwrap_or_else(|e| panic!("{e}"));
}

/// Declares the function with module id `index` and `params` 64-bit
/// parameters (and `returns` results) in the function being built.
pub(crate) fn import(
    b: &mut FunctionBuilder,
    index: u32,
    params: usize,
    returns: usize,
) -> FuncRef {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.extend(vec![AbiParam::new(types::I64); params]);
    sig.returns.extend(vec![AbiParam::new(types::I64); returns]);
    let sig = b.import_signature(sig);
    let name = b
        .func
        .declare_imported_user_function(UserExternalName::new(0, index));
    b.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature: sig,
        colocated: false,
        patchable: false,
    })
}
