//! Property tests: the front end never panics, whatever it is fed. Three
//! generators: random token soups, mutations of real programs (the error
//! tests and valid programs), and arbitrary strings. Every result must be a
//! program or a renderable list of diagnostics with valid positions.
//!
//! Cases per generator: `TERN_FUZZ_CASES` (default 1000: 4000 inputs in
//! the normal suite, token soups run twice); e.g. `TERN_FUZZ_CASES=100000 cargo test -p
//! tern-compiler --test fuzz -- --nocapture` for a long run.

mod common;

use common::{TestLoader, root, tern_files};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;
use tern_compiler::compile;

fn cases() -> u32 {
    std::env::var("TERN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// Compile `src` and check the result is well-formed.
fn run(src: &str) {
    let loader = TestLoader::with(&[(
        "m",
        "struct S { a: i64 }\nfn f<T>(x: T) -> T { return x; }\nconst C: i64 = 3;\n",
    )]);
    match compile("fuzz.tern", src, &loader) {
        Ok(p) => assert!((p.main.0 as usize) < p.functions.len()),
        Err(d) => {
            assert!(!d.is_empty());
            let rendered = d.render();
            let lines: std::collections::HashSet<&str> = rendered.lines().collect();
            for (file, line, col, msg) in d.summaries() {
                assert!(line >= 1 && col >= 1, "{file}:{line}:{col}: {msg}");
                assert!(lines.contains(format!("{file}:{line}:{col}: error: {msg}").as_str()));
            }
        }
    }
}

const VOCAB: &[&str] = &[
    "fn",
    "let",
    "var",
    "const",
    "struct",
    "extern",
    "use",
    "if",
    "else",
    "while",
    "for",
    "in",
    "break",
    "continue",
    "return",
    "true",
    "false",
    "as",
    "ref",
    "reusable",
    "unsafe",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "::",
    ".",
    "..",
    "->",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "&&",
    "||",
    "!",
    "+=",
    "<<=",
    "x",
    "y",
    "T",
    "S",
    "main",
    "m",
    "i64",
    "i32",
    "u8",
    "bool",
    "len",
    "print",
    "panic",
    "assert",
    "size_of",
    "alloc",
    "append",
    "slice",
    "addr",
    "0",
    "1",
    "255",
    "0xff",
    "9999999999999999999999",
    "\"s\"",
    "\"\\q\"",
    "\"open",
    "@",
    "/*",
    "//",
    "\n",
];

fn seeds() -> Vec<String> {
    let mut out: Vec<String> = tern_files("tests/errors")
        .iter()
        .map(|f| std::fs::read_to_string(root().join(f)).unwrap())
        .collect();
    out.push(
        "use m;\nstruct P { a: i64, b: [4]u8 }\nconst K: i64 = 2 * 3;\n\
         fn g<T>(ref p: P, xs: []T) -> i64 { p.a += len(xs); return size_of::<T>(); }\n\
         fn main() -> i64 {\n    var p = P { a: 1, b: [0; 4] };\n    var xs = [1, 2, 3];\n\
         for i in 0..K { if i > 2 { break; } else { p.b[0] += 1; } }\n\
         var r: reusable[]i64 = reusable::alloc(0);\n    r = reusable::append(r, g(ref p, xs[1..]));\n\
         print(m::f(p.a) + m::C);\n    let s = m::S { a: 1 };\n    while p.a < 10 { p.a = p.a * 2; }\n\
         return p.a as i64;\n}\n"
            .to_string(),
    );
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
    Swap(usize, usize),
}

fn mutate(src: &str, muts: &[Mutation]) -> String {
    let mut s: Vec<char> = src.chars().collect();
    for m in muts {
        let n = s.len().max(1);
        match *m {
            Mutation::Delete(a, len) => {
                let a = a % n;
                let b = (a + len % 16).min(s.len());
                if a < s.len() {
                    s.drain(a..b);
                }
            }
            Mutation::Insert(a, tok) => {
                let a = (a % n).min(s.len());
                let t: Vec<char> = format!(" {} ", VOCAB[tok % VOCAB.len()]).chars().collect();
                s.splice(a..a, t);
            }
            Mutation::Duplicate(a, len) => {
                let a = a % n;
                let b = (a + len % 64).min(s.len());
                if a < b {
                    let piece: Vec<char> = s[a..b].to_vec();
                    s.splice(b..b, piece);
                }
            }
            Mutation::Truncate(a) => {
                let a = a % n;
                s.truncate(a);
            }
            Mutation::Swap(a, b) => {
                if !s.is_empty() {
                    let (a, b) = (a % s.len(), b % s.len());
                    s.swap(a, b);
                }
            }
        }
    }
    s.into_iter().collect()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Delete(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
    ]
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn token_soups_never_panic() {
    let ran = Cell::new(0usize);
    let soup = proptest::collection::vec(0..VOCAB.len(), 0..200)
        .prop_map(|idx| idx.iter().map(|&i| VOCAB[i]).collect::<Vec<_>>().join(" "));
    runner()
        .run(&soup, |src| {
            run(&src);
            // Also inside a function body, where most rules apply.
            run(&format!("fn main() {{ {src} }}"));
            ran.set(ran.get() + 2);
            Ok(())
        })
        .unwrap();
    eprintln!("token soups: {} inputs", ran.get());
    assert_eq!(ran.get(), 2 * cases() as usize);
}

#[test]
fn mutated_programs_never_panic() {
    let seeds = seeds();
    let ran = Cell::new(0usize);
    let strategy = (0..seeds.len(), proptest::collection::vec(mutation(), 1..6));
    runner()
        .run(&strategy, |(i, muts)| {
            run(&mutate(&seeds[i], &muts));
            ran.set(ran.get() + 1);
            Ok(())
        })
        .unwrap();
    eprintln!("mutated programs: {} inputs", ran.get());
    assert_eq!(ran.get(), cases() as usize);
}

#[test]
fn arbitrary_text_never_panics() {
    let ran = Cell::new(0usize);
    runner()
        .run(&".{0,100}", |src| {
            run(&src);
            ran.set(ran.get() + 1);
            Ok(())
        })
        .unwrap();
    eprintln!("arbitrary text: {} inputs", ran.get());
    assert_eq!(ran.get(), cases() as usize);
}

/// Pathological shapes that random generation rarely reaches.
#[test]
fn pathological_inputs_are_errors_not_crashes() {
    let deep = |open: &str, close: &str, n: usize| {
        format!(
            "fn main() {{ let x = {}1{}; }}",
            open.repeat(n),
            close.repeat(n)
        )
    };
    for n in [127, 128, 129, 1_000, 5_000] {
        run(&deep("(", ")", n));
        run(&deep("[", "]", n));
        run(&deep("-", "", n));
        run(&deep("!", "", n));
        run(&format!("fn main() {{ let x = 1{}; }}", " + 1".repeat(n)));
        run(&format!("fn main() {{ let x = y{}; }}", "[0]".repeat(n)));
        run(&format!(
            "fn main() {{ let x = 1{}; }}",
            " as i64".repeat(n)
        ));
        run(&format!("fn main() {{ {} }}", "if true { ".repeat(n)));
        run(&format!(
            "fn main() {{ let x: {}i64 = 1; }}",
            "[]".repeat(n)
        ));
        run(&"{".repeat(n));
        run(&"fn main() { while true { ".repeat(n.min(1_000)));
    }
    run(&format!("fn main() {{ let x = {}; }}", "9".repeat(10_000)));
    run(&format!(
        "fn main() {{ print(\"{}\"); }}",
        "a".repeat(100_000)
    ));
    run("fn main() { let a: [9223372036854775807][9223372036854775807]i64 = [0; 1]; }");
    run("struct A { a: [9223372036854775807]i64 }\nfn main() { print(size_of::<A>()); }");
    run("fn f<T>(x: T) { f::<[1]T>([x]); }\nfn main() { f(1); }");
    run("\u{feff}fn main() {}\u{0}\u{ffff}é");
    // A fully valid program with generics must still compile.
    let src = "fn id<T>(x: T) -> T { return x; }\nfn main() { print(id(1)); }";
    assert!(compile("ok.tern", src, &TestLoader::default()).is_ok());
}
