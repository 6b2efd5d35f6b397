//! The forms the standard library uses, across a `use`: the program of
//! docs/language.md section 1 that shows every surface form with a library
//! pool (kept verbatim here and there), against a stand-in `slice_pool` module
//! (tests/fixtures/slice_pool.tern), plus a check that every
//! `tests/programs/*.tern` and `stdlib/*.tern` the other engineers commit
//! passes the front end.

mod common;

use common::{TestLoader, root, tern_files};
use tern_compiler::{compile, tir};

const SURFACE_EXAMPLE: &str = r#"use slice_pool;                       // loads stdlib/slice_pool.tern; items as slice_pool::name

const N: i64 = 1_000;
struct Pair { a: i64, b: i64 }
extern fn tern_span_alloc(ref tree: SpanHeader, nodes: i64, bytes: i64) -> i64;

fn sum<T>(xs: []T) -> i64 { return len(xs); }
fn bump(ref p: Pair) { p.a += 1; }      // `ref` parameter: the caller's variable, by address

fn main() -> i64 {
    let a = 40;                          // immutable binding, type inferred
    var xs: reusable[]i64 = reusable::alloc::<i64>(0);
    for i in 0..10 { xs = reusable::append(xs, i * a); }
    xs = reusable::resize(xs, 4);        // value semantics, like Go's append
    print(xs[3]);                        // bounds-checked indexing
    print(reusable::offset(xs));         // placement of the span within the pool
    reusable::free(xs);

    var p = slice_pool::new(1 << 20);    // library pool: a struct in program memory
    var ys = slice_pool::alloc_slice::<[16]i64>(ref p, 3);
    ys = slice_pool::append(ref p, ys, [7; 16]);
    print(slice_pool::offset_of(ref p, ys));
    slice_pool::free_slice(ref p, ys);
    slice_pool::finish(ref p);
    var q = Pair { a: 1, b: 2 };
    bump(ref q);
    if q.a == 2 && len(ys) >= 0 { print(true); } else { panic("unreachable"); }
    print(sum(ys));
    return 0;                            // exit status
}
"#;

fn pool_loader() -> TestLoader {
    let text =
        std::fs::read_to_string(root().join("compiler/tests/fixtures/slice_pool.tern")).unwrap();
    TestLoader::with(&[("slice_pool", &text)])
}

#[test]
fn surface_example_checks_against_a_slice_pool_module() {
    let p = compile("surface.tern", SURFACE_EXAMPLE, &pool_loader())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let mut names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bump",
            "main",
            "slice_pool::alloc_slice::<[16]i64>",
            "slice_pool::append::<[16]i64>",
            "slice_pool::bytes_of::<[16]i64>",
            "slice_pool::check",
            "slice_pool::finish",
            "slice_pool::free_slice::<[16]i64>",
            "slice_pool::new",
            "slice_pool::offset_of::<[16]i64>",
            "slice_pool::resize::<[16]i64>",
            "slice_pool::round8",
            "sum::<[16]i64>",
        ]
    );
    // Externs in the order the emitter reaches them; the root's own (unused)
    // declaration of `tern_span_alloc` agrees with the module's, and the
    // symbol appears once.
    let externs: Vec<&str> = p.externs.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        externs,
        [
            "tern_pool_reserve",
            "tern_span_alloc",
            "tern_span_free",
            "tern_pool_release",
            "tern_span_resize"
        ]
    );
    let alloc = &p.externs[1];
    assert_eq!(alloc.params.len(), 3);
    assert!(alloc.params[0].1, "the header goes by ref");
    let tir::Type::Struct(h) = &alloc.params[0].0 else {
        panic!()
    };
    assert_eq!(p.struct_def(*h).name, "slice_pool::SpanHeader");
    assert_eq!(p.struct_def(*h).layout, tir::Layout { size: 40, align: 8 });
    let pool = p
        .structs
        .iter()
        .find(|s| s.name == "slice_pool::Pool")
        .unwrap();
    let offsets: Vec<(&str, u64)> = pool
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect();
    assert_eq!(offsets, [("tree", 0), ("nodes", 40), ("base", 56)]);
    assert_eq!(p.function(p.main).name, "main");
}

#[test]
fn a_module_error_is_reported_in_the_module_file() {
    let loader =
        TestLoader::with(&[("slice_pool", "fn new(n: i64) -> i64 { return n + true; }\n")]);
    let d = compile(
        "user.tern",
        "use slice_pool;\nfn main() { print(slice_pool::new(1)); }\n",
        &loader,
    )
    .unwrap_err();
    assert_eq!(
        d.summaries(),
        [(
            "slice_pool.tern".to_string(),
            1,
            32,
            "operator `+` cannot be applied to `i64` and `bool`".to_string()
        )]
    );
}

/// Programs other engineers add under tests/programs (and the stdlib) must
/// pass the front end; runtime expectations are checked by the driver's
/// tests. Programs whose `// exit:` or `// err:` show a compile error do not
/// belong there (they go to tests/errors).
#[test]
fn every_program_and_stdlib_module_checks() {
    let loader = TestLoader::default();
    let mut checked = 0;
    // The application sketches of bench/apps too (measured by their script).
    let files = tern_files("tests/programs")
        .into_iter()
        .chain(tern_files("bench/apps"));
    for file in files {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        if let Err(d) = compile(&file, &text, &loader) {
            panic!("{file} does not check:\n{}", d.render());
        }
        checked += 1;
    }
    for file in tern_files("stdlib") {
        let name = file.trim_start_matches("stdlib/").trim_end_matches(".tern");
        let user = format!("use {name};\nfn main() {{}}\n");
        if let Err(d) = compile("probe.tern", &user, &loader) {
            panic!("{file} does not check:\n{}", d.render());
        }
        checked += 1;
    }
    eprintln!("checked {checked} programs and stdlib modules");
}

/// Cyclic `use` is allowed; each module is loaded once; a module reaches
/// another only through its own `use`.
#[test]
fn cyclic_use_loads_each_module_once() {
    let loader = TestLoader::with(&[
        (
            "a",
            "use b;\nconst A: i64 = 1;\nfn fa(n: i64) -> i64 { if n == 0 { return A; } return b::fb(n - 1); }\n",
        ),
        (
            "b",
            "use a;\nfn fb(n: i64) -> i64 { return a::fa(n) + a::A; }\n",
        ),
    ]);
    let p = compile(
        "root.tern",
        "use a;\nuse b;\nfn main() { print(a::fa(3) + b::fb(1)); }\n",
        &loader,
    )
    .unwrap_or_else(|d| panic!("{}", d.render()));
    assert_eq!(p.files, ["root.tern", "a.tern", "b.tern"]);
    let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["main", "a::fa", "b::fb"]);
    let d = compile(
        "root.tern",
        "use a;\nfn main() { print(b::fb(1)); }\n",
        &loader,
    )
    .unwrap_err();
    assert_eq!(
        d.summaries(),
        [(
            "root.tern".to_string(),
            2,
            19,
            "unknown module `b`; add `use b;` at the top of the file".to_string()
        )]
    );
}

#[test]
fn the_surface_example_is_the_one_the_language_reference_shows() {
    let md = std::fs::read_to_string(root().join("docs/language.md")).unwrap();
    assert!(
        md.contains(SURFACE_EXAMPLE),
        "docs/language.md section 1 no longer shows the surface example verbatim"
    );
}
