//! Error paths of both library pools: each misuse ends the run with status 101
//! and the line `error: <stdlib file>:<line>:<col>: panic: <module>::<op>: <what>`
//! naming the pool operation and, for errors the tree reports, the runtime's
//! message for the error code; its backtrace marks the user's line of the
//! misuse (`  in main at FILE:LINE:COL  <- your code`). Checked in JIT and AOT (-O1).

mod pool_support;

use std::time::Duration;

use pool_support::{Mode, error_and_backtrace, run_program, scratch};
use tern_runtime::span_tree::{error, layout};

/// The runtime's message for a corrupt `len[0]` of node 0 (its word index
/// depends on the fanout).
fn len0_message() -> &'static str {
    let code = error::corrupt_node(0, layout::N_LENS);
    Box::leak(error::message(code).into_boxed_str())
}

/// `(name, body of main using module M, operation, detail)`: `detail` is the
/// runtime's message for the error code, `None` when the whole message is the
/// library's literal.
fn cases() -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
)> {
    vec![
        (
            "double_free",
            "var p = M::new(4096);\n    let s = M::alloc_slice::<i64>(ref p, 3);\n    M::free_slice(ref p, s);\n    M::free_slice(ref p, s);",
            "free_slice",
            Some("double free: the span overlaps free space"),
        ),
        // A stale copy of a slice that has shrunk names a span holding another
        // slice too: refused, naming the live span.
        (
            "stale_free",
            "var p = M::new(4096);\n    let a = M::alloc_slice::<i64>(ref p, 4);\n    let a2 = M::realloc_slice(ref p, a, 1);\n    let d = M::alloc_slice::<i64>(ref p, 3);\n    M::free_slice(ref p, a);",
            "free_slice",
            Some("free of a stale slice: the span at offset 0 is 8 bytes, not 32"),
        ),
        (
            "stale_resize",
            "var p = M::new(4096);\n    let a = M::alloc_slice::<i64>(ref p, 4);\n    let a2 = M::realloc_slice(ref p, a, 1);\n    let d = M::alloc_slice::<i64>(ref p, 3);\n    let b = M::realloc_slice(ref p, a, 6);",
            "realloc_slice",
            Some("resize of a stale slice: the span at offset 0 is 8 bytes, not 32"),
        ),
        // A stale copy of a slice that grew in place names part of its span.
        (
            "partial_free",
            "var p = M::new(4096);\n    let a = M::alloc_slice::<i64>(ref p, 1);\n    let b = M::realloc_slice(ref p, a, 4);\n    M::free_slice(ref p, a);",
            "free_slice",
            Some("free of a stale slice: the span at offset 0 is 32 bytes, not 8"),
        ),
        (
            "exhausted",
            "var p = M::new(64);\n    let a = M::alloc_slice::<i64>(ref p, 4);\n    let b = M::alloc_slice::<i64>(ref p, 5);",
            "alloc_slice",
            Some("pool exhausted: no free span large enough"),
        ),
        (
            "length_overflow",
            "var p = M::new(64);\n    let a = M::alloc_slice::<i64>(ref p, 1 << 61);",
            "alloc_slice",
            None,
        ),
        (
            "grow_exhausted",
            "var p = M::new(64);\n    var a = M::alloc_slice::<i64>(ref p, 4);\n    let b = M::alloc_slice::<i64>(ref p, 1);\n    a = M::realloc_slice(ref p, a, 5);",
            "realloc_slice",
            Some("pool exhausted: no free span large enough"),
        ),
        (
            "resize_freed",
            "var p = M::new(4096);\n    var a = M::alloc_slice::<i64>(ref p, 4);\n    M::free_slice(ref p, a);\n    a = M::realloc_slice(ref p, a, 6);",
            "realloc_slice",
            Some("resize of a span that overlaps free space (already freed?)"),
        ),
        (
            "leak",
            "var p = M::new(4096);\n    let a = M::alloc_slice::<i64>(ref p, 4);\n    M::finish(ref p);",
            "finish",
            None,
        ),
        ("bad_capacity", "var p = M::new(0);", "new", None),
        (
            "negative_length",
            "var p = M::new(64);\n    let a = M::alloc_slice::<u8>(ref p, -1);",
            "alloc_slice",
            None,
        ),
        // 8 * (2^61 + 1) wraps to 8: refused before any multiplication, whatever
        // the program wrote into the pool's fields.
        (
            "huge_length",
            "var p = M::new(64);\n    p.capacity = 9223372036854775807;\n    let a = M::alloc_slice::<i64>(ref p, 2305843009213693953);",
            "alloc_slice",
            None,
        ),
        (
            "huge_resize",
            "var p = M::new(64);\n    let a = M::alloc_slice::<[4]i64>(ref p, 1);\n    let b = M::realloc_slice::<[4]i64>(ref p, a, 576460752303423489);",
            "realloc_slice",
            None,
        ),
    ]
}

/// The library's literal part of each message.
fn literal(name: &str, op: &str) -> String {
    match name {
        "leak" => format!("{op}: slices still allocated (leaked spans)"),
        "bad_capacity" => {
            format!("{op}: capacity must be in 1..=17179869176 bytes (16 GiB less 8)")
        }
        "negative_length" => format!("{op}: negative length"),
        "length_overflow" | "huge_length" | "huge_resize" => format!(
            "{op}: length is too large for the element size (more bytes than any pool holds)"
        ),
        _ => op.to_string(),
    }
}

fn check_module(module: &str, extra: &[(&str, &str, &str, Option<&str>)]) {
    let dir = scratch(&format!("errors-{module}"));
    let mut failures = Vec::new();
    for (name, body, op, detail) in cases().iter().chain(extra) {
        let src = format!(
            "use {module};\nfn main() {{\n    {}\n}}\n",
            body.replace("M::", &format!("{module}::"))
        );
        let file = dir.join(format!("{name}.tern"));
        std::fs::write(&file, src).unwrap();
        let lit = literal(name, op);
        let want = match detail {
            Some(d) => format!(": panic: {module}::{lit}: {d}"),
            None => format!(": panic: {module}::{lit}"),
        };
        // The misuse is the body's last line.
        let user_line = format!("{}:{}:", file.display(), 2 + body.lines().count());
        for mode in [Mode::Jit, Mode::Aot] {
            let o = run_program(&file, mode, "-O1", &[], &dir, Duration::from_secs(120)).unwrap();
            let ok = o.code == Some(101)
                && error_and_backtrace(&o.stderr).is_some_and(|(line, frames)| {
                    let last = frames.last().copied().unwrap_or("");
                    let first = frames.first().copied().unwrap_or("");
                    // Located at the program's call; the library's line is
                    // the innermost frame.
                    line.contains(&format!("error: {user_line}"))
                        && first.contains(&format!("stdlib/{module}.tern:"))
                        && line.ends_with(&want)
                        && last.contains(&user_line)
                        && last.ends_with("  <- your code")
                });
            if !ok {
                failures.push(format!(
                    "{module} {name} [{mode:?}]: status {:?}, stderr {:?}, want ...{want:?}",
                    o.code, o.stderr
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn slice_pool_errors_name_the_operation_and_the_cause() {
    // The runtime's registry keeps the authoritative bounds: a header that names
    // another pool is refused. The tree's other words are never read back
    // (a scribbled magic number stops no allocation), but `finish` refuses a
    // header that is not the tree's.
    let extra = [
        (
            "bad_pool_id",
            "var p = M::new(4096);\n    p.tree.pool_id = 12345;\n    let a = M::alloc_slice::<i64>(ref p, 4);",
            "alloc_slice",
            Some("not a live pool: bad pool id or node array"),
        ),
        (
            "scribbled_header_finish",
            "var p = M::new(4096);\n    p.tree.magic = 0;\n    let a = M::alloc_slice::<i64>(ref p, 4);\n    M::free_slice(ref p, a);\n    M::finish(ref p);",
            "finish",
            Some(
                "not the live pool: its header does not describe its tree (a stale copy of the pool?)",
            ),
        ),
    ];
    check_module("slice_pool", &extra);
}

#[test]
fn slice_pool_pure_errors_name_the_operation_and_the_cause() {
    // The pure tree validates every word it reads, and names the one it
    // found corrupt.
    let extra = [
        (
            "corrupt_magic",
            "var p = M::new(4096);\n    p.tree.magic = 0;\n    let a = M::alloc_slice::<i64>(ref p, 4);",
            "alloc_slice",
            Some("corrupt tree: header field magic (word 0)"),
        ),
        (
            "corrupt_count",
            "var p = M::new(4096);\n    let a = M::alloc_slice::<i64>(ref p, 4);\n    let b = M::alloc_slice::<i64>(ref p, 4);\n    p.nodes[0] = (M::FANOUT + 1) as i32;\n    M::free_slice(ref p, a);",
            "free_slice",
            Some("corrupt tree: node 0, field count (word 0)"),
        ),
        (
            "corrupt_span",
            "var p = M::new(4096);\n    p.nodes[M::N_LENS] = (4096 / 8 + 1) as i32;\n    let a = M::alloc_slice::<i64>(ref p, 4);",
            "alloc_slice",
            Some(len0_message()),
        ),
    ];
    check_module("slice_pool_pure", &extra);
}
