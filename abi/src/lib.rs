//! The runtime's C ABI, written once: every `tern_*` function of the runtime
//! with its parameter and result types, and the constants of the tag layout
//! that generated code and the runtime must agree on.
//!
//! Three crates read it and none of them restates it:
//! * `tern-runtime` builds its symbol list for the JIT from it
//!   ([`runtime_abi!`] with a macro of its own, so every entry must name a
//!   function the runtime defines, or the runtime does not compile);
//! * `tern-codegen` declares its imports from [`RUNTIME_FNS`] (by [`Rt`]),
//!   without depending on the runtime;
//! * `tern-interp` finds runtime functions by name in the runtime's symbol
//!   list (so through this table too) and calls them through their addresses
//!   with the words of the program's own `extern fn` declaration.
//!
//! `docs/runtime-abi.md` documents each entry; a test holds the page to
//! exactly this list, and another holds each entry's types to the runtime's
//! Rust definitions.

/// A parameter or result type at the C boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiTy {
    /// `i64` (or `u64`: one register whatever its signedness).
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
    /// The runtime's Rust module that defines it (`runtime/src/abi/NAME.rs`).
    pub module: &'static str,
    pub params: &'static [AbiTy],
    /// `None`: no result (or the function does not return).
    pub ret: Option<AbiTy>,
}

/// Hands the whole table to `$callback!`, one entry per line:
/// `Id = module::symbol(param types) -> result type;` (the result is left
/// out for functions without one). The module paths resolve where the
/// callback expands: in the runtime, its `abi` module.
#[macro_export]
macro_rules! runtime_abi {
    ($callback:ident) => {
        $callback! {
            // Program entry and exit.
            RtMain = process::tern_rt_main(Ptr) -> I32;
            RtArgs = io::tern_rt_args(I32, Ptr);
            RtFlush = process::tern_rt_flush();
            DebugTable = process::tern_rt_debug_table(Ptr);
            Interrupted = interrupt::tern_rt_interrupted(Ptr);
            // Output and the failure entry points of generated code.
            PrintI64 = output::tern_print_i64(I64);
            PrintU64 = output::tern_print_u64(I64);
            WriteI64 = output::tern_write_i64(I64);
            WriteU64 = output::tern_write_u64(I64);
            WriteBool = output::tern_write_bool(U8);
            WriteStr = output::tern_write_str(Ptr, I64);
            PrintBool = output::tern_print_bool(U8);
            PrintStr = output::tern_print_str(Ptr, I64);
            EprintI64 = output::tern_eprint_i64(I64);
            EprintU64 = output::tern_eprint_u64(I64);
            EprintBool = output::tern_eprint_bool(U8);
            EprintStr = output::tern_eprint_str(Ptr, I64);
            EwriteI64 = output::tern_ewrite_i64(I64);
            EwriteU64 = output::tern_ewrite_u64(I64);
            EwriteBool = output::tern_ewrite_bool(U8);
            EwriteStr = output::tern_ewrite_str(Ptr, I64);
            Panic = output::tern_panic(Ptr, I64, Ptr, I64, Ptr);
            AssertFail = output::tern_assert_fail(Ptr, I64, Ptr);
            BoundsFail = output::tern_bounds_fail(I64, I64, Ptr);
            SliceFail = output::tern_slice_fail(I64, I64, I64, Ptr);
            DivZero = output::tern_div_zero(Ptr);
            StackFail = output::tern_stack_fail(Ptr);
            LengthFail = output::tern_length_fail(Ptr, I64, I64, Ptr);
            // The builtin pool (`reusable[]T`).
            ReusableAlloc = reusable::tern_reusable_alloc(I64, Ptr) -> Ptr;
            ReusableResize = reusable::tern_reusable_resize(Ptr, I64, I64, Ptr) -> Ptr;
            ReusableResizePacked = reusable::tern_reusable_resize_packed(Ptr, I64, I64, Ptr) -> Ptr;
            ReusableAppend = reusable::tern_reusable_append(Ptr, I64, I64, Ptr) -> Ptr;
            ReusableFree = reusable::tern_reusable_free(Ptr, I64, Ptr);
            ReusableOffset = reusable::tern_reusable_offset(Ptr, Ptr) -> I64;
            // Memory for library pools, and their statistics.
            MemReserve = mem::tern_mem_reserve(I64) -> I64;
            MemReservation = mem::tern_mem_reservation(I64) -> I64;
            MemRelease = mem::tern_mem_release(I64, I64, I64) -> I64;
            StatsNoteHighWater = stats::tern_stats_note_high_water(I64);
            // The checked span tree (`slice_pool`).
            SpanAlloc = span::tern_span_alloc(Ptr, Ptr, I64) -> I64;
            SpanFree = span::tern_span_free(Ptr, Ptr, I64, I64) -> I64;
            SpanResize = span::tern_span_resize(Ptr, Ptr, I64, I64, I64) -> I64;
            SpanHeaderWords = span::tern_span_header_words() -> I64;
            SpanNodeWords = span::tern_span_node_words(I64) -> I64;
            SpanInit = span::tern_span_init(Ptr, Ptr, I64, Ptr, I64) -> I64;
            SpanNew = span::tern_span_new(Ptr, I64, Ptr) -> I64;
            SpanFinish = span::tern_span_finish(Ptr, Ptr) -> I64;
            SpanReset = span::tern_span_reset(Ptr, Ptr) -> I64;
            SpanErrorMessage = span::tern_span_error_message(I64, Ptr, I64) -> I64;
            SpanLiveBytes = span::tern_span_live_bytes(Ptr, Ptr, I64) -> I64;
            SpanStaleMessage = span::tern_span_stale_message(I64, I64, I64, I64, Ptr, I64) -> I64;
            SpanFailureMessage = span::tern_span_failure_message(Ptr, Ptr, I64, Ptr, I64) -> I64;
            // The sanitizer (`--sanitize`). Tagged addresses travel as
            // integers (`i64`): a tag sits in their high bits.
            SanitizeEnable = sanitize::tern_sanitize_enable();
            SanitizeSite = sanitize::tern_sanitize_site(Ptr);
            SanitizeCheck = sanitize::tern_sanitize_check(I64, I64, Ptr) -> I64;
            SanitizeTag = sanitize::tern_sanitize_tag(I64, I64, I64) -> I64;
            SanitizeTagAt = sanitize::tern_sanitize_tag_at(I64, I64) -> I64;
            SanitizeRelease = sanitize::tern_sanitize_release(I64, I64, I64, Ptr);
            SanitizeRetag = sanitize::tern_sanitize_retag(I64, I64, I64, I64, I64, Ptr) -> I64;
            SanitizeRegion = sanitize::tern_sanitize_region(I64, I64) -> I64;
            SanitizeRegionReset = sanitize::tern_sanitize_region_reset(I64, I64, Ptr);
            SanitizeRegionEnd = sanitize::tern_sanitize_region_end(I64, Ptr);
            SanitizeArenaReset = sanitize::tern_sanitize_arena_reset(I64) -> I64;
            // Files, the standard streams, arguments, environment (`io`).
            IoOpen = io::tern_io_open(Ptr, I64, I64) -> I64;
            IoRead = io::tern_io_read(I64, Ptr, I64) -> I64;
            IoReadLine = io::tern_io_read_line(I64, Ptr, I64) -> I64;
            IoWrite = io::tern_io_write(I64, Ptr, I64) -> I64;
            IoClose = io::tern_io_close(I64) -> I64;
            IoArgCount = io::tern_io_arg_count() -> I64;
            IoArg = io::tern_io_arg(I64, Ptr, I64) -> I64;
            IoEnv = io::tern_io_env(Ptr, I64, Ptr, I64) -> I64;
            IoMessage = io::tern_io_message(I64, Ptr, I64) -> I64;
            IoFail = io::tern_io_fail(Ptr, I64, Ptr, I64, I64);
            IoFailFile = io::tern_io_fail_file(Ptr, I64, I64, I64);
            IoError = io::tern_io_error(Ptr, I64);
            IoExit = io::tern_io_exit(I64);
        }
    };
}

macro_rules! define_table {
    ($($id:ident = $module:ident :: $name:ident ($($p:ident),*) $(-> $r:ident)?;)*) => {
        /// One variant per runtime function: an index into [`RUNTIME_FNS`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rt { $($id),* }

        /// Every runtime function, in the order of [`Rt`].
        pub const RUNTIME_FNS: &[RuntimeFn] = &[
            $(RuntimeFn {
                name: stringify!($name),
                module: stringify!($module),
                params: &[$(AbiTy::$p),*],
                ret: define_table!(@ret $($r)?),
            }),*
        ];
    };
    (@ret) => { None };
    (@ret $r:ident) => { Some(AbiTy::$r) };
}

runtime_abi!(define_table);

impl Rt {
    /// This function's entry.
    pub fn spec(self) -> &'static RuntimeFn {
        &RUNTIME_FNS[self as usize]
    }
}

/// The entry of the runtime function named `name`.
pub fn find(name: &str) -> Option<&'static RuntimeFn> {
    RUNTIME_FNS.iter().find(|f| f.name == name)
}

/// The sanitizer's pointer tags (`--sanitize`): a tagged slice pointer
/// carries its allocation's tag in bits `TAG_SHIFT..62`; generated code and
/// the interpreter strip it with [`SANITIZE_ADDR_MASK`] before an access.
pub const SANITIZE_TAG_SHIFT: u32 = 48;
/// The address bits of a (tagged) pointer.
pub const SANITIZE_ADDR_MASK: i64 = (1 << SANITIZE_TAG_SHIFT) - 1;
/// The sanitizer's region id of the builtin pool's arena.
pub const SANITIZE_BUILTIN_REGION: i64 = 1;

/// The builtin pool's fast-path record: a runtime `static` of four words
/// that generated code reads to answer a byte append inside a span's last
/// 8-byte granule without a call (the check and the zero fill of
/// `tern_reusable_resize_packed`'s first case, inline). All zero while no
/// builtin pool exists, which sends every append to the call.
pub mod reusable_fast {
    /// The static's C symbol.
    pub const SYMBOL: &str = "tern_reusable_fast";
    /// Byte offset of the arena's base address.
    pub const BASE: i32 = 0;
    /// Byte offset of the arena's size in bytes.
    pub const ARENA_BYTES: i32 = 8;
    /// Byte offset of the boundary record's size map's address (one byte
    /// per granule: the size in granules of the allocation starting there,
    /// for allocations of at most [`SMALL_GRANULES`]).
    pub const SIZES: i32 = 16;
    /// Byte offset of the boundary record's large table's address (one word
    /// per block of [`SMALL_GRANULES`] granules: `n << 7 | s % 128` for the
    /// allocation of `n` granules starting at granule `s` of the block).
    pub const LARGE: i32 = 24;
    /// The longest allocation, in granules, the size map records.
    pub const SMALL_GRANULES: i64 = 128;
    /// Byte offset of the append window's slice address (0: no window).
    /// The window is the free span right after one live slice that the
    /// runtime let appends take without the tree: generated code answers
    /// an append of that slice (`p == WIN_BASE`, `p + round8(old) ==
    /// WIN_END`, `p + round8(new) <= WIN_LIMIT`) by moving `WIN_END`, and
    /// the runtime's next entry point settles the growth in the tree.
    pub const WIN_BASE: i32 = 32;
    /// Byte offset of the address where the window's slice ends now (its
    /// length rounded up to 8 bytes); the one word generated code writes.
    pub const WIN_END: i32 = 40;
    /// Byte offset of the address where the window's free span ends (0: no
    /// window).
    pub const WIN_LIMIT: i32 = 48;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_unique_and_a_runtime_symbol() {
        for (i, f) in RUNTIME_FNS.iter().enumerate() {
            assert!(f.name.starts_with("tern_"), "{}", f.name);
            assert!(
                RUNTIME_FNS[..i].iter().all(|g| g.name != f.name),
                "{} twice",
                f.name
            );
            assert!(f.params.len() <= 6, "{}: more than six words", f.name);
        }
        assert_eq!(Rt::ReusableAlloc.spec().name, "tern_reusable_alloc");
        assert_eq!(find("tern_span_alloc").map(|f| f.module), Some("span"));
    }
}
