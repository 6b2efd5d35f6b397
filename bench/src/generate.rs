//! Concrete benchmark programs from the workload templates: one Tern source
//! per (workload, element size, side) and the C baseline's build flags.
//!
//! A template (`bench/workloads/*.tern`) spells every slice operation with
//! a placeholder (`ALLOC(n)`, `APPEND(s, v)`, `RESIZE(s, n)`, `FREE(s)`,
//! `OFFSET(s)`, `SLICE_T`; `ALLOC_BYTES(n)` and `BYTES_T` for byte slices;
//! `DROP_ALL` for dropping the `strings` workload's kept strings), and the side's table below replaces it with the
//! natural code a user of that side writes: `reusable::append(s, v)` for the
//! builtin, `slice_pool::append(ref ctx, s, v)` for the library. So the sides
//! differ only in those calls (no wrapper functions that only one side
//! would pay for), and every other line is identical.

use super::config::{Side, Workload};
use super::pools::LIBRARY_ARENA_BYTES;
use super::programs;

/// The workload whose template, C baseline and scale a variant shares
/// (`graph-exact` is `graph`'s, `strings-free` and `strings-arena` are
/// `strings`'); `tern_source`, `variant` and `c_flags` apply the difference.
fn base(w: Workload) -> Workload {
    match w {
        Workload::GraphExact => Workload::Graph,
        Workload::StringsFree | Workload::StringsArena => Workload::Strings,
        w => w,
    }
}

/// The template text of a workload (embedded at build time).
pub fn template(w: Workload) -> &'static str {
    match base(w) {
        Workload::Append => include_str!("../workloads/append.tern"),
        Workload::Fragmented => include_str!("../workloads/fragmented.tern"),
        Workload::Resize => include_str!("../workloads/resize.tern"),
        // `EXACT_GROWTH` selects the growth (see `tern_source`).
        Workload::Graph => include_str!("../workloads/graph.tern"),
        Workload::Bignum => include_str!("../workloads/bignum.tern"),
        Workload::Binarytrees => include_str!("../workloads/binarytrees.tern"),
        Workload::Bytebuf => include_str!("../workloads/bytebuf.tern"),
        // `variant` sets the drop of the variants.
        Workload::Strings => include_str!("../workloads/strings.tern"),
        // One replayer; the trace file is its argument.
        w if w.trace().is_some() => include_str!("../workloads/trace.tern"),
        Workload::GraphExact | Workload::StringsFree | Workload::StringsArena => {
            unreachable!("a variant maps to its base workload")
        }
        w => programs::tern_text(w),
    }
}

/// The C baseline source of a workload and the shared header.
pub fn c_source(w: Workload) -> &'static str {
    match base(w) {
        Workload::Append => include_str!("../workloads/c/append.c"),
        Workload::Fragmented => include_str!("../workloads/c/fragmented.c"),
        Workload::Resize => include_str!("../workloads/c/resize.c"),
        Workload::Graph => include_str!("../workloads/c/graph.c"),
        Workload::Bignum => include_str!("../workloads/c/bignum.c"),
        Workload::Binarytrees => include_str!("../workloads/c/binarytrees.c"),
        Workload::Bytebuf => include_str!("../workloads/c/bytebuf.c"),
        Workload::Strings => include_str!("../workloads/c/strings.c"),
        w if w.trace().is_some() => include_str!("../workloads/c/trace.c"),
        Workload::GraphExact | Workload::StringsFree | Workload::StringsArena => {
            unreachable!("a variant maps to its base workload")
        }
        w => programs::c_source(w),
    }
}

/// `common.h`, included by every C baseline.
pub const C_HEADER: &str = include_str!("../workloads/c/common.h");

/// The launcher executables run under, for their peak memory (see its
/// comment: `ru_maxrss` of a child of the driver would count the driver).
pub const LAUNCHER: &str = include_str!("../workloads/c/launcher.c");

/// How big one generated program is: the operation count and the workload's
/// length parameter (maximum length, in elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Operations (rounds for `fragmented`).
    pub ops: i64,
    /// The workload's length parameter in elements.
    pub param: i64,
    /// The arena of the library and pure sides' pool, in bytes.
    pub arena: i64,
}

/// The scale of a (workload, element size): chosen so a builtin sample at
/// O2 AOT takes roughly 0.2-1 s on the 2-vCPU reference machine;
/// `quick` divides the operation count by 20.
pub fn scale(w: Workload, elem_bytes: u32, quick: bool) -> Scale {
    let (ops, param) = match (base(w), elem_bytes) {
        (Workload::Append, 8) => (4_000_000, 32),
        (Workload::Append, _) => (2_000_000, 8),
        // `fragmented` counts rounds; each frees and refills K/3 = 341 slices.
        (Workload::Fragmented, 8) => (8_000, 16),
        (Workload::Fragmented, _) => (6_000, 4),
        (Workload::Resize, 8) => (4_000_000, 32),
        (Workload::Resize, _) => (2_000_000, 8),
        // `graph` counts edges; its parameter is the vertex count.
        (Workload::Graph, 8) => (1_000_000, 100_000),
        (Workload::Graph, _) => (200_000, 20_000),
        // `bignum` computes N_OPS! (the parameter is unused).
        (Workload::Bignum, 8) => (12_000, 0),
        (Workload::Bignum, _) => (4_000, 0),
        // `binarytrees`: about N_OPS nodes per depth; the parameter is the
        // largest depth.
        (Workload::Binarytrees, 8) => (2_000_000, 16),
        (Workload::Binarytrees, _) => (1_000_000, 14),
        // `bytebuf` counts records; the parameter is the string field's bytes.
        (Workload::Bytebuf, 8) => (1_000_000, 8),
        (Workload::Bytebuf, _) => (200_000, 128),
        // `strings` counts strings (rounds of 1000); the parameter is their
        // typical length.
        (Workload::Strings, 8) => (4_000_000, 16),
        (Workload::Strings, _) => (1_000_000, 128),
        // A replay's size is its trace file's (`--quick` shortens the file:
        // `crate::traces`).
        (w, _) if w.trace().is_some() => (0, 0),
        (Workload::GraphExact | Workload::StringsFree | Workload::StringsArena, _) => {
            unreachable!("a variant maps to its base workload")
        }
        // A program's size is its repetition count (`crate::programs`).
        _ => (programs::reps(w, false), 0),
    };
    Scale {
        ops: if quick { (ops / 20).max(1) } else { ops },
        param,
        arena: LIBRARY_ARENA_BYTES,
    }
}

/// The per-string free of `strings` (the builtin side's `DROP_ALL`).
const FREE_EACH: &str = "for i in 0..K {\n            FREE(keep[i]);\n        }\n";

/// Chunk bytes of the `strings-arena` builtin side's arena: a whole round of
/// strings fits one chunk, so the placement checksum matches the pools'.
const ARENA_CHUNK_BYTES: i64 = 1 << 18;

/// The Tern source of one (workload, element size, side). `Side::C` has no
/// Tern source: use [`c_source`] and [`c_flags`].
/// `arena`: the library and pure sides' pool ([`LIBRARY_ARENA_BYTES`], or a
/// replay's [`crate::traces::Footprint::arena`]).
pub fn tern_source(w: Workload, elem_bytes: u32, side: Side, quick: bool, arena: i64) -> String {
    if w.program().is_some() {
        return programs::tern_source(w, quick);
    }
    let exact = if w == Workload::GraphExact {
        "true"
    } else {
        "false"
    };
    substitute(
        &variant(template(w), w, side),
        elem_bytes,
        side,
        Scale {
            arena,
            ..scale(w, elem_bytes, quick)
        },
    )
    .replace("EXACT_GROWTH", exact)
}

/// The template of a workload that shares another's, for one side: the
/// `strings` variants fix how the strings are dropped before the side's
/// substitution (`strings-free`: every side frees each string;
/// `strings-arena`: the builtin side carves them from an `arena`).
fn variant(template: &str, w: Workload, side: Side) -> String {
    match (w, side) {
        (Workload::StringsFree, _) => template.replace("DROP_ALL\n", FREE_EACH),
        (Workload::StringsArena, Side::Builtin) => {
            let arena: [(&str, String); 9] = [
                ("USE_SIDE\n", "use arena;\n".into()),
                (
                    "SETUP_SIDE\n",
                    format!("var ctx = arena::new({ARENA_CHUNK_BYTES});\n"),
                ),
                ("FINISH_SIDE\n", "arena::free(ref ctx);\n".into()),
                ("DROP_ALL\n", "arena::reset(ref ctx);\n".into()),
                ("CTX_PARAM ", "ref ctx: arena::Arena, ".into()),
                ("CTX_ARG ", "ref ctx, ".into()),
                ("BYTES_T", "[]u8".into()),
                ("ALLOC_BYTES(", "arena::alloc::<u8>(ref ctx, ".into()),
                ("OFFSET(", "arena::offset_of(ctx, ".into()),
            ];
            arena
                .iter()
                .fold(template.to_string(), |t, (from, to)| t.replace(from, to))
        }
        _ => template.to_string(),
    }
}

/// Fills a template's placeholders for one side and element type.
pub fn substitute(template: &str, elem_bytes: u32, side: Side, s: Scale) -> String {
    let elem = if elem_bytes == 8 { "i64" } else { "[16]i64" };
    // For i64 elements, MK(x) and VAL(e) are the value itself; for [16]i64
    // they are small functions (every side pays the same for them).
    let (mk, val, prelude) = if elem_bytes == 8 {
        ("(", "(", String::new())
    } else {
        (
            "mk_elem(",
            "val_elem(",
            "fn mk_elem(x: i64) -> [16]i64 {\n    var e = [x; 16];\n    e[15] = x * 3;\n    return e;\n}\n\n\
             fn val_elem(e: [16]i64) -> i64 {\n    return e[0] + e[15];\n}\n"
                .to_string(),
        )
    };
    let table: Vec<(&str, String)> = match side {
        Side::Builtin | Side::C | Side::CZeroed => vec![
            ("USE_SIDE\n", String::new()),
            ("SETUP_SIDE\n", String::new()),
            ("FINISH_SIDE\n", String::new()),
            ("DROP_ALL\n", FREE_EACH.into()),
            ("CTX_PARAM ", String::new()),
            ("CTX_ARG ", String::new()),
            ("SLICE_T", format!("reusable[]{elem}")),
            ("BYTES_T", "reusable[]u8".into()),
            ("ALLOC_BYTES(", "reusable::alloc::<u8>(".into()),
            ("ALLOC(", format!("reusable::alloc::<{elem}>(")),
            ("APPEND(", "reusable::append(".into()),
            ("RESIZE(", "reusable::resize(".into()),
            ("FREE(", "reusable::free(".into()),
            ("OFFSET(", "reusable::offset(".into()),
        ],
        Side::Library | Side::Pure => {
            let m = if side == Side::Library {
                "slice_pool"
            } else {
                "slice_pool_pure"
            };
            vec![
                ("USE_SIDE\n", format!("use {m};\n")),
                (
                    "SETUP_SIDE\n",
                    format!("    var ctx = {m}::new({});\n", s.arena),
                ),
                ("FINISH_SIDE\n", format!("    {m}::finish(ref ctx);\n")),
                ("DROP_ALL\n", format!("{m}::reset(ref ctx);\n")),
                ("CTX_PARAM ", format!("ref ctx: {m}::Pool, ")),
                ("CTX_ARG ", "ref ctx, ".into()),
                ("SLICE_T", format!("[]{elem}")),
                ("BYTES_T", "[]u8".into()),
                ("ALLOC_BYTES(", format!("{m}::alloc_slice::<u8>(ref ctx, ")),
                ("ALLOC(", format!("{m}::alloc_slice::<{elem}>(ref ctx, ")),
                ("APPEND(", format!("{m}::append(ref ctx, ")),
                ("RESIZE(", format!("{m}::realloc_slice(ref ctx, ")),
                ("FREE(", format!("{m}::free_slice(ref ctx, ")),
                ("OFFSET(", format!("{m}::offset_of(ref ctx, ")),
            ]
        }
    };
    let mut out = template.to_string();
    // Drop the indentation before the statement placeholders so an empty
    // substitution leaves no blank-with-spaces line.
    for p in ["SETUP_SIDE\n", "FINISH_SIDE\n"] {
        out = out.replace(&format!("    {p}"), p);
    }
    for (from, to) in &table {
        out = out.replace(from, to);
    }
    out.replace("ELEM_PRELUDE\n", &prelude)
        .replace("MK(", mk)
        .replace("VAL(", val)
        .replace("N_OPS", &s.ops.to_string())
        .replace("LMAX_ELEMS", &s.param.to_string())
        .replace("MAX_ELEMS", &s.param.to_string())
}

/// The `cc` arguments (besides source and output) of a C baseline.
pub fn c_flags(w: Workload, elem_bytes: u32, side: Side, quick: bool) -> Vec<String> {
    if w.program().is_some() {
        return programs::c_flags(w, quick);
    }
    let s = scale(w, elem_bytes, quick);
    // Only the trace replay uses malloc as it is; the other workloads'
    // C sides zero-fill like Tern's (`common.h`).
    let zero_fill = (side == Side::CZeroed && w.trace().is_some()).then(|| "-DZERO_FILL".into());
    let mut flags = vec![
        "-O2".into(),
        format!("-DELEM_BYTES={elem_bytes}"),
        format!("-DN_OPS={}", s.ops),
        format!("-DPARAM={}", s.param),
    ];
    if w == Workload::GraphExact {
        flags.push("-DEXACT_GROWTH".into());
    }
    flags.extend(zero_fill);
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn no_placeholder_survives_substitution() {
        // Programs have no placeholders (`crate::programs`).
        for &w in Workload::value_variants()
            .iter()
            .filter(|w| w.program().is_none())
        {
            for size in [8, 128] {
                for side in [Side::Builtin, Side::Library, Side::Pure] {
                    let src = tern_source(w, size, side, false, LIBRARY_ARENA_BYTES);
                    for p in [
                        "USE_SIDE",
                        "SETUP_SIDE",
                        "FINISH_SIDE",
                        "ALLOC(",
                        "APPEND(",
                        "RESIZE(",
                        "FREE(",
                        "OFFSET(",
                        "ELEM_PRELUDE",
                        "MK(",
                        "VAL(",
                        "N_OPS",
                        "MAX_ELEMS",
                        "CTX_PARAM",
                        "CTX_ARG",
                        "SLICE_T",
                        "BYTES_T",
                        "ALLOC_BYTES(",
                        "DROP_ALL",
                        "EXACT_GROWTH",
                    ] {
                        assert!(
                            !src.contains(p),
                            "{p} left in {w:?}/{size}/{side:?}:\n{src}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sides_differ_only_in_slice_operations() {
        let t = "USE_SIDE\nfn main() {\n    SETUP_SIDE\n    var s = ALLOC(0);\n    s = APPEND(s, MK(1));\n    \
                 s = RESIZE(s, N_OPS);\n    print(VAL(s[0]) + OFFSET(s));\n    FREE(s);\n    FINISH_SIDE\n}\n";
        let scale = Scale {
            ops: 5,
            param: 2,
            arena: LIBRARY_ARENA_BYTES,
        };
        assert_eq!(
            substitute(t, 8, Side::Builtin, scale),
            "fn main() {\n    var s = reusable::alloc::<i64>(0);\n    s = reusable::append(s, (1));\n    \
             s = reusable::resize(s, 5);\n    print((s[0]) + reusable::offset(s));\n    reusable::free(s);\n}\n"
        );
        assert_eq!(
            substitute(t, 128, Side::Library, scale),
            "use slice_pool;\nfn main() {\n    var ctx = slice_pool::new(1073741824);\n    \
             var s = slice_pool::alloc_slice::<[16]i64>(ref ctx, 0);\n    \
             s = slice_pool::append(ref ctx, s, mk_elem(1));\n    \
             s = slice_pool::realloc_slice(ref ctx, s, 5);\n    \
             print(val_elem(s[0]) + slice_pool::offset_of(ref ctx, s));\n    \
             slice_pool::free_slice(ref ctx, s);\n    slice_pool::finish(ref ctx);\n}\n"
        );
        assert!(substitute(t, 8, Side::Pure, scale).starts_with("use slice_pool_pure;\n"));
    }

    #[test]
    fn strings_variants_differ_only_in_the_drop() {
        let src = |w, side| tern_source(w, 8, side, true, LIBRARY_ARENA_BYTES);
        let (free, reset) = ("reusable::free(keep[i]);", "slice_pool::reset(ref ctx);");
        assert!(src(Workload::Strings, Side::Library).contains(reset));
        assert!(
            src(Workload::StringsFree, Side::Library)
                .contains("slice_pool::free_slice(ref ctx, keep[i]);")
        );
        assert!(src(Workload::StringsFree, Side::Builtin).contains(free));
        let arena = src(Workload::StringsArena, Side::Builtin);
        for line in [
            "use arena;",
            "    var ctx = arena::new(262144);",
            "fn exercise(ref ctx: arena::Arena, r: i64, i: i64) -> []u8 {",
            "    var s = arena::alloc::<u8>(ref ctx, n);",
            "        arena::reset(ref ctx);",
            "    arena::free(ref ctx);",
        ] {
            assert!(arena.lines().any(|l| l == line), "{line} not in:\n{arena}");
        }
        assert!(!arena.contains(free));
        assert_eq!(
            src(Workload::StringsArena, Side::Library),
            src(Workload::Strings, Side::Library)
        );
    }

    #[test]
    fn quick_shrinks_twentyfold() {
        assert_eq!(scale(Workload::Append, 8, false).ops, 4_000_000);
        assert_eq!(scale(Workload::Append, 8, true).ops, 200_000);
        assert_eq!(
            c_flags(Workload::Resize, 128, Side::C, true),
            ["-O2", "-DELEM_BYTES=128", "-DN_OPS=100000", "-DPARAM=8"]
        );
    }

    #[test]
    fn c_zeroed_differs_from_c_in_the_trace_replay_only() {
        let trace = Workload::value_variants()
            .iter()
            .copied()
            .find(|w| w.trace().is_some())
            .unwrap();
        let c = c_flags(trace, 1, Side::C, false);
        let zeroed = c_flags(trace, 1, Side::CZeroed, false);
        assert_eq!(zeroed[..zeroed.len() - 1], c[..]);
        assert_eq!(zeroed.last().map(String::as_str), Some("-DZERO_FILL"));
        assert!(c_source(trace).contains("#ifdef ZERO_FILL"));
        assert_eq!(
            c_flags(Workload::Append, 8, Side::CZeroed, false),
            c_flags(Workload::Append, 8, Side::C, false)
        );
    }
}
