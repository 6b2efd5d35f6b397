//! The session API (`tern_compiler::session`): programs assembled from item
//! sources, bindings in host memory and an input, with what came of them as
//! data.

mod common;

use common::TestLoader;
use tern_compiler::diagnostics::ErrorKind;
use tern_compiler::session::{self, Binding, Entry, InputKind, Source};
use tern_compiler::tir::Type;

fn source(name: &str, text: &str) -> Source {
    Source {
        name: name.into(),
        text: text.into(),
    }
}

/// Compiles `input` against `items` and `bindings`, handing out slots at
/// 0x1000, 0x2000, ...
fn run(
    items: &[Source],
    bindings: &[Binding],
    input: &str,
    kind: InputKind,
) -> Result<session::Compiled, tern_compiler::Diagnostics> {
    let input = source("<repl>", input);
    let entry = Entry {
        bindings,
        input: Some((&input, kind)),
    };
    let mut next = 0;
    let mut slots = |_bytes: u64| {
        next += 0x1000;
        Some(next)
    };
    session::compile(items, &entry, &mut slots, &TestLoader::default())
}

/// Item sources `P` (declared as `p`) and `Q`, which holds a `P`.
fn p_and_q(p: &str) -> [Source; 2] {
    [
        source("<repl:P>", p),
        source("<repl:Q>", "struct Q { p: P }"),
    ]
}

/// The new bindings of `c` as the host keeps them for the next input.
fn bindings_of(c: &session::Compiled) -> Vec<Binding> {
    c.new_bindings
        .iter()
        .map(|b| Binding {
            name: b.name.clone(),
            ty: c.program.type_name(&b.ty).unwrap(),
            shape: c.program.value_shape(&b.ty),
            mutable: b.mutable,
            addr: b.addr,
        })
        .collect()
}

fn summaries(d: &tern_compiler::Diagnostics) -> Vec<String> {
    d.summaries()
        .into_iter()
        .map(|(file, line, col, msg)| format!("{file}:{line}:{col}: {msg}"))
        .collect()
}

#[test]
fn items_split_with_keys_places_and_parameters() {
    let text = "fn f(a: [4]i64, ref b: P) -> i64 { return 1; }\n  const K: P = P { a: 1 };\nuse m;\nfn g<T>(x: T) {}\nextern fn labs(x: i64) -> i64;";
    let items = session::split_items(&source("f.tern", text)).expect("parses");
    let keys: Vec<&str> = items.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["f", "K", "use m", "g", "labs"]);
    assert_eq!(items[1].text, "const K: P = P { a: 1 };");
    assert_eq!((items[1].line, items[1].col), (2, 3));
    assert_eq!(
        items[0].params,
        Some(vec![(false, "[4]i64".into()), (true, "P".into())])
    );
    assert_eq!(items[3].params, None, "generic");
    assert!(items[4].is_fn && items[4].is_extern);
    // In place: the same line and column in a source of its own.
    let placed = items[1].in_place("f.tern");
    assert_eq!(placed.text, "\n  const K: P = P { a: 1 };");
    let err = session::split_items(&source("<repl>", "fn f() {} 1 + 2")).unwrap_err();
    assert_eq!(summaries(&err).len(), 1);
}

#[test]
fn the_value_and_the_new_bindings_come_back_as_data() {
    let items = [source("<repl:P>", "struct P { a: i64 }")];
    let c = run(&items, &[], "P { a: 2 }", InputKind::Expression).expect("compiles");
    let v = c.value.expect("a value");
    assert_eq!(c.program.type_name(&v.ty).as_deref(), Some("P"));
    assert_eq!(v.addr, 0x1000);
    assert!(c.new_bindings.is_empty());
    // Only top-level bindings of the input, the last of each name; no
    // user name is special.
    let c = run(
        &items,
        &[],
        "let x = 1; var __v = true; if true { let inner = 2; } let x = P { a: 3 };",
        InputKind::Statements,
    )
    .expect("compiles");
    let got: Vec<(String, Type, bool)> = c
        .new_bindings
        .iter()
        .map(|b| (b.name.clone(), b.ty.clone(), b.mutable))
        .collect();
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].0.as_str(), &got[0].1, got[0].2),
        ("__v", &Type::Bool, true)
    );
    assert_eq!(got[1].0, "x");
    assert_eq!(c.program.type_name(&got[1].1).as_deref(), Some("P"));
    assert!(c.value.is_none());
}

#[test]
fn bindings_whose_layout_changed_are_named() {
    let old = p_and_q("struct P { x: i64 }");
    let c = run(
        &old,
        &[],
        "let q = Q { p: P { x: 5 } }; let n = 1;",
        InputKind::Statements,
    )
    .expect("compiles");
    let bindings = bindings_of(&c);
    let define = |items: &[Source]| {
        let entry = Entry {
            bindings: &bindings,
            input: None,
        };
        session::compile(items, &entry, &mut |_| None, &TestLoader::default())
            .expect("compiles")
            .changed
    };
    // P grows: Q, which holds a P, changes; the i64 does not.
    let grown = p_and_q("struct P { x: i64, y: i64 }");
    assert_eq!(define(&grown), [0]);
    assert_eq!(define(&old), Vec::<usize>::new());
}

#[test]
fn errors_are_said_about_the_input() {
    // A new binding that holds a slice of the input's frame.
    let e = run(
        &[],
        &[],
        "let xs = [1, 2, 3];\nlet view = xs[1..];",
        InputKind::Statements,
    )
    .unwrap_err();
    assert!(matches!(e.list()[0].kind, ErrorKind::CannotKeep { .. }));
    assert_eq!(
        summaries(&e),
        [
            "<repl>:2:12: `view` cannot be kept: it holds a slice of local array `xs`, which lives only while this input runs"
        ]
    );
    // An unfinished expression: the end of the input, not generated text.
    let e = run(&[], &[], "1 +", InputKind::Expression).unwrap_err();
    assert_eq!(
        summaries(&e),
        ["<repl>:1:4: expected an expression, found end of file"]
    );
    // The generated names cannot be written.
    let e = run(&[], &[], "$value", InputKind::Expression).unwrap_err();
    assert_eq!(summaries(&e), ["<repl>:1:1: unexpected character `$`"]);
    // An error in an item names the item's own source and line.
    let items = [source("<repl:f>", "fn f() -> i64 {\n  return true;\n}")];
    let e = run(&items, &[], "f()", InputKind::Expression).unwrap_err();
    assert_eq!(
        summaries(&e),
        ["<repl:f>:2:10: mismatched types: expected `i64`, found `bool`"]
    );
}

#[test]
fn the_shape_of_an_input() {
    use session::InputKindOrItems::{Empty, Items, Run};
    let shape = |t: &str| {
        let s = session::input_shape(t);
        (s.kind, s.complete)
    };
    let statements = Run(InputKind::Statements);
    let expression = Run(InputKind::Expression);
    assert_eq!(shape("let x = 1"), (statements, true));
    assert_eq!(shape("x += 1;"), (statements, true));
    assert_eq!(shape("for i in 0..3 { print(i); }"), (statements, true));
    assert_eq!(shape("Pair { a: 1 }"), (expression, true));
    assert_eq!(shape("f(1) + 2"), (expression, true));
    assert_eq!(shape("fn f() {"), (Items, false));
    assert_eq!(shape("use m;"), (Items, true));
    assert_eq!(shape("let s = \"abc"), (statements, false));
    assert_eq!(shape("let s = \"{\";"), (statements, true));
    assert_eq!(shape(")"), (expression, true));
    assert_eq!(shape("  // just a comment"), (Empty, true));
    // A comment left open is statements (its error is reported once the
    // host stops waiting), and incomplete.
    assert_eq!(shape("/* open"), (statements, false));
}

#[test]
fn a_balance_kept_line_by_line_is_the_whole_texts() {
    use session::Balance;
    // Multi-line literals and comments, closers before openers, and every
    // program of the test suite, fed one line at a time as the REPL does.
    let mut texts: Vec<String> = [
        "fn f() {\n  let s = \"a\nb{\";\n}",
        "/* a\n{ */ x\n(",
        "let x = (1 +\n2) * [3,\n4][0];",
        ")\n(\n",
        "let s = \"\n\n\"; // }\n}",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/programs");
    for entry in std::fs::read_dir(dir).unwrap() {
        texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    for text in &texts {
        let mut whole = String::new();
        let mut kept = Balance::default();
        for line in text.split('\n') {
            if !whole.is_empty() {
                whole.push('\n');
            }
            whole.push_str(line);
            kept = kept.then(line, &whole);
            assert_eq!(kept, Balance::of(&whole), "after {whole:?}");
        }
    }
}

#[test]
fn the_final_semicolon_is_added_where_it_is_missing() {
    let stmts = |t: &str| session::with_final_semicolon(t, false);
    assert_eq!(
        stmts("var p = P { x: 1 }").as_deref(),
        Some("var p = P { x: 1 };")
    );
    assert_eq!(stmts("x = 5  ").as_deref(), Some("x = 5;"));
    assert_eq!(stmts("let y = 2;"), None);
    assert_eq!(stmts("if c { print(1); }"), None);
    assert_eq!(stmts("while c { x += 1; }"), None);
    // Not a missing `;`: left alone, its own error is reported.
    assert_eq!(stmts("let = 3"), None);
    let items = |t: &str| session::with_final_semicolon(t, true);
    assert_eq!(items("use vec").as_deref(), Some("use vec;"));
    assert_eq!(
        items("const N: i64 = 3").as_deref(),
        Some("const N: i64 = 3;")
    );
    assert_eq!(items("fn f() {}"), None);
}

/// An input's entry reads only the bindings the input names (a session's
/// inputs would otherwise each cost as much as the session is long); what
/// comes back still indexes the entry's bindings.
#[test]
fn an_input_reads_only_the_bindings_it_names() {
    let old = p_and_q("struct P { x: i64 }");
    let c = run(
        &old,
        &[],
        "let n = 1; let q = Q { p: P { x: 5 } };",
        InputKind::Statements,
    )
    .expect("compiles");
    let bindings = bindings_of(&c);
    assert_eq!(bindings[1].name, "q");
    let locals = |c: &session::Compiled| -> Vec<String> {
        let main = c.program.function(c.program.main);
        main.locals.iter().map(|l| l.name.clone()).collect()
    };
    let c = run(&old, &bindings, "n + 1", InputKind::Expression).expect("compiles");
    assert!(locals(&c).contains(&"n".to_string()));
    assert!(!locals(&c).contains(&"q".to_string()), "{:?}", locals(&c));
    let c = run(
        &old,
        &bindings,
        "let z = Q { p: P { x: n } }; let w = z.p.x;",
        InputKind::Statements,
    )
    .expect("compiles");
    assert!(!locals(&c).contains(&"q".to_string()));
    // The only binding named has a stale layout: its index among all of them.
    let grown = p_and_q("struct P { x: i64, y: i64 }");
    let c = run(&grown, &bindings, "q", InputKind::Expression).expect("compiles");
    assert_eq!(c.changed, [1]);
    let c = run(&grown, &bindings, "n", InputKind::Expression).expect("compiles");
    assert_eq!(c.changed, Vec::<usize>::new());
    // An unknown name is the same error as before.
    let e = run(&old, &bindings, "m + 1", InputKind::Expression).unwrap_err();
    assert_eq!(summaries(&e), ["<repl>:1:1: cannot find `m` in this scope"]);
}
