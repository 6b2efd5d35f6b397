//! The ONE table of runtime functions the generated code calls: names and
//! signatures. It drives both backends: the translator declares imports from
//! it (for the object they become undefined symbols that `libtern_runtime.a`
//! resolves; for the JIT, [`crate::jit`] checks that the driver supplied an
//! address for each one used). Signatures follow `docs/runtime-abi.md`.

use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_codegen::isa::CallConv;

/// A parameter or result type at the C boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiTy {
    /// `i64`.
    I64,
    /// `i32`.
    I32,
    /// A machine word holding an address.
    Ptr,
    /// `u8` (zero-extended at the call, as C callers do).
    U8,
}

/// One runtime function.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeFn {
    /// The C symbol.
    pub name: &'static str,
    pub params: &'static [AbiTy],
    pub ret: Option<AbiTy>,
}

use AbiTy::{I32, I64, Ptr, U8};

macro_rules! runtime_fns {
    ($($id:ident = $name:literal ($($p:expr),*) $(-> $r:expr)?;)*) => {
        /// Index into [`RUNTIME_FNS`], one per runtime function.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(non_camel_case_types)]
        pub enum Rt { $($id),* }
        /// Every runtime function the generated code may call.
        pub const RUNTIME_FNS: &[RuntimeFn] = &[
            $(RuntimeFn { name: $name, params: &[$($p),*], ret: runtime_fns!(@ret $($r)?) }),*
        ];
    };
    (@ret) => { None };
    (@ret $r:expr) => { Some($r) };
}

runtime_fns! {
    RtMain = "tern_rt_main"(Ptr) -> I32;
    DebugTable = "tern_rt_debug_table"(Ptr);
    PrintI64 = "tern_print_i64"(I64);
    PrintU64 = "tern_print_u64"(I64);
    WriteI64 = "tern_write_i64"(I64);
    WriteU64 = "tern_write_u64"(I64);
    WriteBool = "tern_write_bool"(U8);
    WriteStr = "tern_write_str"(Ptr, I64);
    PrintBool = "tern_print_bool"(U8);
    PrintStr = "tern_print_str"(Ptr, I64);
    Panic = "tern_panic"(Ptr, I64, Ptr, I64, Ptr);
    AssertFail = "tern_assert_fail"(Ptr, I64, Ptr);
    BoundsFail = "tern_bounds_fail"(I64, I64, Ptr);
    SliceFail = "tern_slice_fail"(I64, I64, I64, Ptr);
    DivZero = "tern_div_zero"(Ptr);
    Interrupted = "tern_rt_interrupted"(Ptr);
    StackFail = "tern_stack_fail"(Ptr);
    LengthFail = "tern_length_fail"(Ptr, I64, I64, Ptr);
    ReusableAlloc = "tern_reusable_alloc"(I64, Ptr) -> Ptr;
    ReusableResize = "tern_reusable_resize"(Ptr, I64, I64, Ptr) -> Ptr;
    ReusableFree = "tern_reusable_free"(Ptr, I64, Ptr);
    ReusableOffset = "tern_reusable_offset"(Ptr, Ptr) -> I64;
    SanitizeEnable = "tern_sanitize_enable"();
    SanitizeSite = "tern_sanitize_site"(Ptr);
    SanitizeCheck = "tern_sanitize_check"(I64, I64, Ptr) -> I64;
    // Tagged addresses travel as integers (`i64`), as the runtime declares
    // them: a tag sits in their high bits.
    SanitizeTag = "tern_sanitize_tag"(I64, I64, I64) -> I64;
    SanitizeRelease = "tern_sanitize_release"(I64, I64, I64, Ptr);
    SanitizeRetag = "tern_sanitize_retag"(I64, I64, I64, I64, I64, Ptr) -> I64;
}

impl Rt {
    /// The table entry.
    pub fn spec(self) -> &'static RuntimeFn {
        &RUNTIME_FNS[self as usize]
    }
}

impl RuntimeFn {
    /// The Cranelift signature under `call_conv` (pointers are 64-bit: the
    /// backend targets 64-bit hosts only).
    pub fn signature(&self, call_conv: CallConv) -> Signature {
        let mut sig = Signature::new(call_conv);
        sig.params.extend(self.params.iter().map(|&t| abi_param(t)));
        sig.returns.extend(self.ret.map(abi_param));
        sig
    }
}

fn abi_param(t: AbiTy) -> AbiParam {
    match t {
        AbiTy::I64 | AbiTy::Ptr => AbiParam::new(types::I64),
        AbiTy::I32 => AbiParam::new(types::I32).sext(),
        AbiTy::U8 => AbiParam::new(types::I8).uext(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_order_matches_enum() {
        assert_eq!(Rt::RtMain.spec().name, "tern_rt_main");
        assert_eq!(Rt::ReusableOffset.spec().name, "tern_reusable_offset");
        assert_eq!(Rt::SanitizeRetag.spec().name, "tern_sanitize_retag");
        assert_eq!(RUNTIME_FNS.len(), Rt::SanitizeRetag as usize + 1);
    }

    #[test]
    fn names_are_unique_runtime_symbols() {
        let mut names: Vec<_> = RUNTIME_FNS.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), RUNTIME_FNS.len());
        assert!(names.iter().all(|n| n.starts_with("tern_")));
    }
}
