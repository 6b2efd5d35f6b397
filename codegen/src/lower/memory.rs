//! Loads, stores and aggregate copies, each in one of two alias regions.
//!
//! Cranelift's alias analysis keeps a loaded value, instead of loading it
//! again, until a store to the same region (or a call) intervenes. The
//! lowering gives every access it emits a region by the type of the value
//! accessed:
//! * [`Region::Header`]: the two words (pointer, length) of a slice,
//!   `reusable[]` or `str` value, wherever it lives (a local's slot, a struct
//!   field, an element of a slice of slices);
//! * [`Region::Data`]: every other scalar (integers, bytes, booleans).
//!
//! So an element store `xs[i] = v` of a scalar element no longer forces a
//! reload of the headers of `q.xs` and `q.ys` read through a `ref`: the
//! header stays in a register and the index check of the next access sees
//! the same length value (docs/backend.md, "Alias regions").
//!
//! The regions are sound because no byte is ever accessed in both without a
//! call between the two accesses: a type's header words are fixed by its
//! layout, an aggregate copy copies word by word in the region of each word
//! (or calls `memmove`, a call), and memory changes type only through the
//! runtime (calls) or `unsafe::` views. The stdlib's one view that retypes
//! memory without a call, `arena`'s zeroing of a reset chunk, sits behind the
//! reset's own runtime call: a header read before the reset is not reused
//! after it. Every call is a fence for every region.

use cranelift_codegen::ir::{AliasRegionData, MemFlagsData, types};

use super::*;

/// The alias region of a memory access (module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Region {
    Header,
    Data,
}

impl Region {
    /// Identifiers unique across the compilation: the inliner merges a
    /// callee's regions into its caller's by this number.
    fn user_id(self) -> u32 {
        match self {
            Region::Header => 1,
            Region::Data => 2,
        }
    }

    fn description(self) -> &'static str {
        match self {
            Region::Header => "slice headers",
            Region::Data => "scalars",
        }
    }
}

/// The largest number of loads (and as many stores) an aggregate copy is
/// made of before it becomes a `memmove` call (Cranelift's own threshold
/// for `emit_small_memory_copy`).
const INLINE_COPY_PIECES: u64 = 4;

impl<M: Module> FnLower<'_, '_, M> {
    /// Memory flags of an access in `region`.
    pub(super) fn mem_flags(&mut self, region: Region) -> MemFlagsData {
        let r = self.b.func.dfg.alias_regions.insert(AliasRegionData {
            user_id: region.user_id(),
            description: region.description().into(),
        });
        MemFlagsData::new().with_alias_region(Some(r))
    }

    pub(super) fn load(&mut self, ty: &Type, addr: Value) -> Val {
        match repr(ty) {
            Repr::Unit => Val::Unit,
            Repr::Scalar(t) => {
                let flags = self.mem_flags(Region::Data);
                Val::Scalar(self.b.ins().load(t, flags, addr, 0))
            }
            Repr::Pair => {
                let flags = self.mem_flags(Region::Header);
                Val::Pair(
                    self.b.ins().load(types::I64, flags, addr, 0),
                    self.b.ins().load(types::I64, flags, addr, 8),
                )
            }
            Repr::Mem => Val::Mem(addr),
        }
    }

    pub(super) fn store(&mut self, ty: &Type, val: Val, addr: Value) {
        match val {
            Val::Unit => {}
            Val::Scalar(v) => {
                let flags = self.mem_flags(Region::Data);
                self.b.ins().store(flags, v, addr, 0);
            }
            Val::Pair(p, l) => {
                let flags = self.mem_flags(Region::Header);
                self.b.ins().store(flags, p, addr, 0);
                self.b.ins().store(flags, l, addr, 8);
            }
            Val::Mem(src) => self.copy(addr, src, ty),
        }
    }

    /// `memmove` of a value of type `ty` (overlap-safe: `a = a` and
    /// overlapping views through `ref` must work): up to
    /// [`INLINE_COPY_PIECES`] loads, every one before the first store, each
    /// in the region of the word it copies; else a `memmove` call.
    pub(super) fn copy(&mut self, dst: Value, src: Value, ty: &Type) {
        let layout = self.program.layout(ty);
        if layout.size == 0 {
            return;
        }
        // The widest access that divides the size (a type holding a header
        // is a multiple of 8 bytes, so its pieces are whole words).
        let access = 1u64 << layout.size.trailing_zeros().min(3);
        let pieces = layout.size / access;
        if pieces > INLINE_COPY_PIECES {
            let size = self.b.ins().iconst(PTR, layout.size as i64);
            self.b.call_memmove(self.tr.config, dst, src, size);
            return;
        }
        let mut headers = Vec::new();
        header_words(self.program, ty, 0, &mut headers);
        let int = ir::Type::int((access * 8) as u16).expect("1, 2, 4 or 8 bytes");
        let loaded: Vec<(Value, i32, MemFlagsData)> = (0..pieces)
            .map(|i| {
                let offset = i * access;
                let region = if headers.contains(&offset) {
                    Region::Header
                } else {
                    Region::Data
                };
                let mut flags = self.mem_flags(region);
                if layout.align >= access {
                    flags.set_aligned();
                }
                let v = self.b.ins().load(int, flags, src, offset as i32);
                (v, offset as i32, flags)
            })
            .collect();
        for (v, offset, flags) in loaded {
            self.b.ins().store(flags, v, dst, offset);
        }
    }
}

/// Appends the offsets (from `base`) of the header words in a value of type
/// `ty`. Called only for small types (an inlined copy), so arrays are few
/// elements.
fn header_words(program: &Program, ty: &Type, base: u64, out: &mut Vec<u64>) {
    match ty {
        Type::Str | Type::Slice(_) | Type::Reusable(_) => out.extend([base, base + 8]),
        Type::Array(elem, n) => {
            let size = program.layout(elem).size;
            if size == 0 {
                return;
            }
            for i in 0..*n {
                header_words(program, elem, base + i * size, out);
            }
        }
        Type::Struct(id) => {
            for field in &program.struct_def(*id).fields {
                header_words(program, &field.ty, base + field.offset, out);
            }
        }
        Type::I64 | Type::I32 | Type::U8 | Type::U64 | Type::Bool | Type::Unit => {}
    }
}
