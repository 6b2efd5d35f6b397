//! Both library pools agree with the runtime on the span tree's layout: a Tern
//! program prints the layout and error-code constants of `slice_pool` and
//! `slice_pool_pure`, the header words a fresh pool holds (read through the
//! `SpanHeader` field names and through a raw `[]i64` view, so the field order is
//! checked too), the node capacity `slice_pool_pure` computes in Tern, and the node
//! array `slice_pool` gets from the runtime; the test compares every value with
//! `tern_runtime::span_tree::{layout, error}`.

mod pool_support;

use std::fmt::Write as _;
use std::time::Duration;

use pool_support::{Mode, run_program, scratch};
use tern_runtime::span_tree::error;
use tern_runtime::span_tree::layout;

/// The constants each module must define, with the runtime's value.
fn constants() -> Vec<(&'static str, i64)> {
    vec![
        ("HEADER_WORDS", layout::HEADER_WORDS as i64),
        ("H_MAGIC", layout::H_MAGIC as i64),
        ("H_POOL_ID", layout::H_POOL_ID as i64),
        ("H_ROOT", layout::H_ROOT as i64),
        ("H_HEIGHT", layout::H_HEIGHT as i64),
        ("H_FREE_HEAD", layout::H_FREE_HEAD as i64),
        ("H_NODES_USED", layout::H_NODES_USED as i64),
        ("H_SPANS", layout::H_SPANS as i64),
        ("H_FREE_BYTES", layout::H_FREE_BYTES as i64),
        ("H_ARENA_BYTES", layout::H_ARENA_BYTES as i64),
        ("H_NODE_CAP", layout::H_NODE_CAP as i64),
        ("FANOUT", layout::FANOUT as i64),
        ("NODE_WORDS", layout::NODE_WORDS as i64),
        ("MAGIC", layout::MAGIC),
        ("N_KEYS", layout::N_KEYS as i64),
        ("N_LENS", layout::N_LENS as i64),
        ("N_KIDS", layout::N_KIDS as i64),
        (
            "MAX_ARENA_BYTES",
            tern_runtime::span_tree::tree::MAX_ARENA_BYTES,
        ),
        ("ADDR_MASK", tern_runtime::sanitize::ADDR_MASK),
    ]
}

/// Constants only the pure module has (it implements the tree).
fn pure_constants() -> Vec<(&'static str, i64)> {
    vec![
        ("MUST_MOVE", error::MUST_MOVE),
        ("EXHAUSTED", error::EXHAUSTED),
        ("NONE", layout::NONE),
        ("N_COUNT", layout::N_COUNT as i64),
        ("N_LEVEL", layout::N_LEVEL as i64),
        ("N_NEXT_FREE", layout::N_NEXT_FREE as i64),
        ("N_RESERVED", layout::N_RESERVED as i64),
        ("MIN_FILL", layout::MIN_FILL as i64),
        ("SENTINELS", layout::SENTINELS as i64),
        ("EMPTY_KEY", layout::EMPTY_KEY as i64),
        ("MAX_HEIGHT", layout::MAX_HEIGHT as i64),
        ("GRANULE", layout::GRANULE),
        ("DOUBLE_FREE", error::DOUBLE_FREE),
        ("OUTSIDE_ARENA", error::OUTSIDE_ARENA),
        ("BAD_SIZE", error::BAD_SIZE),
        ("BAD_POOL", error::BAD_POOL),
        ("NODES_EXHAUSTED", error::NODES_EXHAUSTED),
        ("RESERVE_FAILED", error::RESERVE_FAILED),
        ("RESIZE_FREE_SPAN", error::RESIZE_FREE_SPAN),
        ("STALE_FREE", error::STALE_FREE),
        ("STALE_RESIZE", error::STALE_RESIZE),
        ("SMALL", tern_runtime::span_tree::extents::SMALL as i64),
        ("CORRUPT_HEADER_BASE", error::CORRUPT_HEADER_BASE),
        ("CORRUPT_NODE_BASE", error::CORRUPT_NODE_BASE),
        ("CORRUPT_FIELD_SPAN", error::CORRUPT_FIELD_SPAN),
    ]
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
    for (module, consts) in [
        ("slice_pool", constants()),
        ("slice_pool_pure", [constants(), pure_constants()].concat()),
    ] {
        for (name, value) in consts {
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
    let o = std::process::Command::new(pool_support::TERN)
        .args(["check", file.to_str().unwrap()])
        .env(
            "TERN_STDLIB",
            std::path::Path::new(pool_support::ROOT).join("stdlib"),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
