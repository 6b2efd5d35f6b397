//! The runtime functions the generated code calls: their names and types
//! come from the ABI's one table (`tern_abi`, shared with the runtime and the
//! interpreter, without this crate depending on the runtime); this module
//! makes their Cranelift signatures. The translator declares imports from it
//! (for the object they become undefined symbols that `libtern_runtime.a`
//! resolves; for the JIT, [`crate::jit`] checks that the driver supplied an
//! address for each one used). Signatures follow `docs/runtime-abi.md`.

use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_codegen::isa::CallConv;

pub use tern_abi::{AbiTy, RUNTIME_FNS, Rt, RuntimeFn};

/// The Cranelift signature of runtime function `f` under `call_conv`
/// (pointers are 64-bit: the backend targets 64-bit hosts only).
pub fn signature(f: &RuntimeFn, call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.extend(f.params.iter().map(|&t| abi_param(t)));
    sig.returns.extend(f.ret.map(abi_param));
    sig
}

fn abi_param(t: AbiTy) -> AbiParam {
    match t {
        AbiTy::I64 | AbiTy::Ptr => AbiParam::new(types::I64),
        AbiTy::I32 => AbiParam::new(types::I32).sext(),
        AbiTy::U8 => AbiParam::new(types::I8).uext(),
    }
}
