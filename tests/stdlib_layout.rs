//! Both library pools agree with the runtime on the span tree's layout: a Tern
//! program prints the layout and error-code constants of `slice_pool` and
//! `slice_pool_pure`, the header words a fresh pool holds (read through the
//! `SpanHeader` field names and through a raw `[]i64` view, so the field order is
//! checked too), the node capacity `slice_pool_pure` computes in Tern, and the node
//! array `slice_pool` gets from the runtime; the test compares every value with
//! the runtime's (`tern_runtime::span_tree::mirrored::MIRRORED` for the
//! constants, which lists every one a module declares, and `layout`).

mod pool_support;

use std::fmt::Write as _;
use std::time::Duration;

use pool_support::{Mode, run_program, scratch};
use tern_runtime::span_tree::layout;
use tern_runtime::span_tree::mirrored::MIRRORED;

/// Constants of the library modules that are Tern's own, not the runtime's.
const TERN_ONLY: [&str; 4] = ["ZERO_BLOCK", "FRESH_FILL", "MIN_I64", "MAX_I64"];

/// The names of the top-level `const`s `module` declares.
fn declared_constants(module: &str) -> Vec<String> {
    let path = std::path::Path::new(pool_support::ROOT).join(format!("stdlib/{module}.tern"));
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| {
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let name = l.strip_prefix("const ")?.split(':').next()?.trim();
            Some(name.to_string())
        })
        .collect()
}

/// The runtime's value of each constant `module` mirrors: every `const` it
/// declares is in [`MIRRORED`] or [`TERN_ONLY`], so a constant added on one
/// side only fails here; `slice_pool_pure` (which implements the tree)
/// mirrors all of [`MIRRORED`].
fn constants(module: &str) -> Vec<(&'static str, i64)> {
    let declared = declared_constants(module);
    let unknown: Vec<_> = declared
        .iter()
        .filter(|d| !TERN_ONLY.contains(&d.as_str()) && !MIRRORED.iter().any(|(n, _)| n == *d))
        .collect();
    assert!(
        unknown.is_empty(),
        "{module} declares {unknown:?}, which the runtime's MIRRORED list lacks"
    );
    if module == "slice_pool_pure" {
        let missing: Vec<_> = MIRRORED
            .iter()
            .filter(|(n, _)| !declared.iter().any(|d| d == n))
            .collect();
        assert!(missing.is_empty(), "{module} lacks {missing:?}");
    }
    MIRRORED
        .iter()
        .filter(|(n, _)| declared.iter().any(|d| d == n))
        .copied()
        .collect()
}

/// Header fields in `SpanHeader` declaration order.
const FIELDS: [&str; 10] = [
    "magic",
    "pool_id",
    "root",
    "height",
    "free_head",
    "nodes_used",
    "spans",
    "free_bytes",
    "arena_bytes",
    "node_cap",
];

const ARENAS: [i64; 5] = [8, 4096, 1 << 20, 12_345_680, 1 << 34];

#[test]
fn library_pools_mirror_the_runtime_layout() {
    let mut src = String::from("use slice_pool;\nuse slice_pool_pure;\nfn main() {\n");
    let mut want: Vec<String> = Vec::new();
    for module in ["slice_pool", "slice_pool_pure"] {
        for (name, value) in constants(module) {
            writeln!(src, "    print({module}::{name});").unwrap();
            want.push(format!("{module}::{name} = {value}"));
        }
        // A fresh pool's header, by field name and by word index.
        let arena: i64 = 1 << 16;
        writeln!(src, "    var p_{module} = {module}::new({arena});").unwrap();
        writeln!(
            src,
            "    let w_{module} = unsafe::slice::<i64>(unsafe::addr(p_{module}.tree), {});",
            layout::HEADER_WORDS
        )
        .unwrap();
        let cap = layout::node_capacity(arena);
        for (i, f) in FIELDS.iter().enumerate() {
            writeln!(src, "    print(p_{module}.tree.{f} == w_{module}[{i}]);").unwrap();
            want.push(format!("{module} header field {f} is word {i} = true"));
            let expect = match i {
                layout::H_MAGIC => Some(layout::MAGIC),
                layout::H_ROOT => Some(0),
                layout::H_HEIGHT => Some(1),
                layout::H_FREE_HEAD => Some(layout::NONE),
                layout::H_NODES_USED | layout::H_SPANS => Some(1),
                layout::H_FREE_BYTES | layout::H_ARENA_BYTES => Some(arena),
                layout::H_NODE_CAP => Some(cap),
                _ => None,
            };
            if let Some(v) = expect {
                writeln!(src, "    print(p_{module}.tree.{f});").unwrap();
                want.push(format!("{module} fresh header {f} = {v}"));
            }
        }
        writeln!(src, "    print(len(p_{module}.nodes));").unwrap();
        want.push(format!(
            "{module} node array words = {}",
            layout::node_array_words(arena)
        ));
        // The root leaf: one span covering the arena.
        for (word, v) in [
            (layout::N_COUNT, 1),
            (layout::N_LEVEL, 0),
            (layout::N_NEXT_FREE, layout::NONE),
        ] {
            writeln!(src, "    print(p_{module}.nodes[{word}]);").unwrap();
            want.push(format!("{module} root word {word} = {v}"));
        }
        // Offsets and lengths count 8-byte granules.
        for (word, v) in [
            (layout::N_KEYS, 0),
            (layout::N_LENS, arena / layout::GRANULE),
        ] {
            writeln!(src, "    print(p_{module}.nodes[{word}]);").unwrap();
            want.push(format!("{module} root word {word} = {v}"));
        }
        writeln!(src, "    {module}::finish(ref p_{module});").unwrap();
    }
    for a in ARENAS {
        writeln!(src, "    print(slice_pool_pure::node_capacity({a}));").unwrap();
        want.push(format!(
            "slice_pool_pure::node_capacity({a}) = {}",
            layout::node_capacity(a)
        ));
    }
    src.push_str("}\n");
    let dir = scratch("layout");
    let file = dir.join("layout.tern");
    std::fs::write(&file, &src).unwrap();
    let o = run_program(&file, Mode::Jit, "-O1", &[], &dir, Duration::from_secs(120)).unwrap();
    assert_eq!(o.code, Some(0), "stderr: {}", o.stderr);
    let got: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(got.len(), want.len(), "output:\n{}", o.stdout);
    let mut bad = Vec::new();
    for (g, w) in got.iter().zip(&want) {
        let value = w.rsplit(" = ").next().unwrap();
        if *g != value {
            bad.push(format!("{w}, got {g}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(bad.is_empty(), "layout mismatches:\n{}", bad.join("\n"));
}

/// The `SpanHeader` structs declare the header words in layout order.
#[test]
fn span_header_fields_are_in_layout_order() {
    for module in ["slice_pool", "slice_pool_pure"] {
        let path = std::path::Path::new(pool_support::ROOT).join(format!("stdlib/{module}.tern"));
        let text = std::fs::read_to_string(path).unwrap();
        let start = text
            .find("struct SpanHeader {")
            .expect("SpanHeader declared");
        let body = &text[start..start + text[start..].find('}').unwrap()];
        let fields: Vec<&str> = body
            .lines()
            .skip(1)
            .filter_map(|l| l.trim().split(':').next())
            .filter(|f| !f.is_empty())
            .collect();
        assert_eq!(fields, FIELDS, "{module}");
    }
}

/// The stdlib as committed passes the front end (both modules, one program).
#[test]
fn committed_stdlib_checks() {
    let dir = scratch("committed");
    let file = dir.join("uses_both.tern");
    std::fs::write(
        &file,
        "use slice_pool;\nuse slice_pool_pure;\nfn main() {\n    var p = slice_pool::new(64);\n    \
         var q = slice_pool_pure::new(64);\n    let a = slice_pool::alloc_slice::<i64>(ref p, 1);\n    \
         let b = slice_pool_pure::alloc_slice::<i64>(ref q, 1);\n    slice_pool::free_slice(ref p, a);\n    \
         slice_pool_pure::free_slice(ref q, b);\n    slice_pool::finish(ref p);\n    slice_pool_pure::finish(ref q);\n}\n",
    )
    .unwrap();
    let o = pool_support::child::output(
        std::process::Command::new(pool_support::TERN)
            .args(["check", file.to_str().unwrap()])
            .env(
                "TERN_STDLIB",
                std::path::Path::new(pool_support::ROOT).join("stdlib"),
            ),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
