//! Small Cranelift functions for the unit tests of the passes that run
//! after the mid-end (`decided_branches`, `jump_threading`).

use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, Signature, Value, types};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
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
pub(crate) fn returning(b: &mut FunctionBuilder, blocks: [(Block, i64); 2]) {
    for (block, k) in blocks {
        b.switch_to_block(block);
        let v = b.ins().iconst(types::I64, k);
        b.ins().return_(&[v]);
    }
}
