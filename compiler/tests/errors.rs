//! Data-driven diagnostics tests: each `tests/errors/*.tern` lists, in
//! `// error: LINE:COL: MESSAGE` comments, exactly the diagnostics the front
//! end must produce for it, in order (`// error: FILE:LINE:COL: MESSAGE` for
//! one in another file). The rendered form is checked too: one
//! `file:line:col: error: message` header per diagnostic, followed by the
//! source line and a caret line.
//!
//! `TERN_BLESS=1 cargo test -p tern-compiler --test errors` rewrites the
//! `// error:` lines of each mismatching file to what the front end reports
//! ([`bless`]), instead of failing (refused when `CI` is set: CI checks
//! expectations, it never writes them).

mod common;

use std::io::Write as _;

use common::{TestLoader, root, tern_files};
use tern_compiler::{Diagnostics, compile};

fn expectations(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("// error: "))
        .map(|s| s.trim().to_string())
        .collect()
}

/// Whether `TERN_BLESS` asks for the expectations to be rewritten (set,
/// and neither empty nor `0`); panics when `CI` is set too.
fn bless_mode() -> bool {
    let on = std::env::var_os("TERN_BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(
        !(on && std::env::var_os("CI").is_some()),
        "TERN_BLESS and CI are both set: CI checks expectations, it never rewrites them"
    );
    on
}

/// `text` with its `// error:` lines replaced by `actual`: the new block
/// where the first old line was (at the end if there was none); every other
/// line kept.
fn bless(text: &str, actual: &[String]) -> String {
    let block: String = actual.iter().map(|a| format!("// error: {a}\n")).collect();
    let mut new = String::new();
    let mut placed = false;
    for line in text.split_inclusive('\n') {
        if line.trim().starts_with("// error: ") {
            if !placed {
                new.push_str(&block);
                placed = true;
            }
        } else {
            new.push_str(line);
        }
    }
    if !placed {
        if !new.is_empty() && !new.ends_with('\n') {
            new.push('\n');
        }
        new.push_str(&block);
    }
    new
}

/// The diagnostics as the files write them: `LINE:COL: MESSAGE`, with the
/// file first when it is another one.
fn summaries(file: &str, diags: &Diagnostics) -> Vec<String> {
    diags
        .summaries()
        .into_iter()
        .map(|(f, line, col, msg)| {
            if f == file {
                format!("{line}:{col}: {msg}")
            } else {
                format!("{f}:{line}:{col}: {msg}")
            }
        })
        .collect()
}

#[test]
fn every_error_file_produces_exactly_its_diagnostics() {
    let bless_on = bless_mode();
    let files = tern_files("tests/errors");
    assert!(files.len() >= 40, "only {} error files", files.len());
    let loader = TestLoader::default();
    let mut failures = Vec::new();
    for file in &files {
        let path = root().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = expectations(&text);
        let diags = match compile(file, &text, &loader) {
            Ok(_) => {
                failures.push(format!("{file}: compiled without errors"));
                continue;
            }
            Err(d) => d,
        };
        let actual = summaries(file, &diags);
        if actual != expected {
            if bless_on {
                let new = bless(&text, &actual);
                assert_eq!(
                    expectations(&new),
                    actual,
                    "{file}: blessed text reads back"
                );
                std::fs::write(&path, new).unwrap();
                // Straight to stderr: `eprintln!` is captured.
                let _ = writeln!(std::io::stderr(), "blessed: {file}");
            } else if expected.is_empty() {
                failures.push(format!("{file} has no `// error:` lines"));
            } else {
                failures.push(format!(
                    "{file}:\n  expected:\n    {}\n  actual:\n    {}",
                    expected.join("\n    "),
                    actual.join("\n    ")
                ));
            }
            continue;
        }
        // Rendering: each header exactly once, each followed by a snippet
        // line (`N | ...`) and a caret line.
        let rendered = diags.render();
        let lines: Vec<&str> = rendered.lines().collect();
        for (f, line, col, msg) in diags.summaries() {
            let header = format!("{f}:{line}:{col}: error: {msg}");
            let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == header).collect();
            assert_eq!(at.len(), 1, "{file}: header `{header}` in\n{rendered}");
            let rest = &lines[at[0] + 1..];
            assert!(
                rest.iter()
                    .take(12)
                    .any(|l| l.trim_start().starts_with(&format!("{line} |"))),
                "{file}: no source line after `{header}`:\n{rendered}"
            );
            assert!(
                rest.iter().take(14).any(|l| l.contains('^')),
                "{file}: no caret after `{header}`:\n{rendered}"
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(`TERN_BLESS=1 cargo test -p tern-compiler --test errors` rewrites the \
         `// error:` lines: docs/testing.md)",
        failures.join("\n")
    );
}

#[test]
fn bless_replaces_the_error_lines_in_place_and_keeps_the_rest() {
    let actual = ["1:4: new".to_string(), "m.tern:2:1: other".to_string()];
    assert_eq!(
        bless(
            "fn main() {}\n// error: 1:4: old\n// error: 9:9: gone\n// note\n",
            &actual
        ),
        "fn main() {}\n// error: 1:4: new\n// error: m.tern:2:1: other\n// note\n"
    );
    assert_eq!(
        bless("fn main() {}", &actual[..1]),
        "fn main() {}\n// error: 1:4: new\n"
    );
}

/// The full rendered form of one diagnostic with a label and a note.
#[test]
fn rendering_of_an_immutable_assignment_is_exact() {
    let src = "fn main() {\n    let x = 1;\n    x = 2;\n}\n";
    let d = compile("t.tern", src, &TestLoader::default()).unwrap_err();
    assert_eq!(
        d.render(),
        "t.tern:3:5: error: cannot assign to immutable binding `x`\n\
         2 |     let x = 1;\n  \
           |         - `x` is declared here, immutable\n\
         3 |     x = 2;\n  \
           |     ^\n  \
           |\n  \
           = note: declare `x` with `var` to make it mutable\n"
    );
}

/// The note says what to write for the kind of binding assigned: `var` for
/// a `let`, `ref` (or a copy) for a value parameter, a copy for a `for`
/// variable.
#[test]
fn the_note_of_an_immutable_assignment_fits_the_binding() {
    let cases = [
        (
            "fn main() {\n    let x = 1;\n    x = 2;\n}\n",
            "declare `x` with `var` to make it mutable",
        ),
        (
            "fn f(x: i64) {\n    x = 2;\n}\nfn main() { f(1); }\n",
            "`x` is a value parameter: declare it `ref x: T` to change the caller's variable, or copy it into a `var`",
        ),
        (
            "fn main() {\n    for i in 0..3 {\n        i = 5;\n    }\n}\n",
            "a `for` variable is immutable: copy `i` into a `var` to change it",
        ),
        (
            "fn main() {\n    let xs = [1, 2];\n    for k, x in xs[..] {\n        k += x;\n    }\n}\n",
            "a `for` variable is immutable: copy `k` into a `var` to change it",
        ),
    ];
    for (src, note) in cases {
        let rendered = compile("t.tern", src, &TestLoader::default())
            .unwrap_err()
            .render();
        let notes: Vec<&str> = rendered
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("= note: "))
            .collect();
        assert_eq!(notes, [note], "{src}\n{rendered}");
    }
}

/// An error an instance's types cause in a generic body names the instance
/// and the call that first made it; an error of each instance is its own.
#[test]
fn an_instance_error_names_the_instance_and_its_call() {
    let src = "fn add<T>(a: T, b: T) -> T { return a + b; }\n\
               fn main() {\n    print(add(1, 2));\n    print(add(true, false));\n}\n";
    let rendered = compile("t.tern", src, &TestLoader::default())
        .unwrap_err()
        .render();
    assert_eq!(
        rendered,
        "t.tern:1:37: error: operator `+` cannot be applied to `bool`\n\
         1 | fn add<T>(a: T, b: T) -> T { return a + b; }\n  \
           |                                     ^^^^^\n  \
           |\n  \
           = note: in the instance `add::<bool>`, called at t.tern:4:11\n"
    );
}

#[test]
fn rendering_of_a_simple_error_is_header_line_and_caret() {
    let src = "fn main() {\n    print(1 + true);\n}\n";
    let d = compile("dir/t.tern", src, &TestLoader::default()).unwrap_err();
    assert_eq!(
        d.render(),
        "dir/t.tern:2:11: error: operator `+` cannot be applied to `i64` and `bool`\n\
         2 |     print(1 + true);\n  \
           |           ^^^^^^^^\n"
    );
    assert_eq!(d.len(), 1);
}

/// A run keeps the first 1000 diagnostics and counts the rest: a file of
/// stray characters must not keep one per byte (tens of GB at the size
/// limit).
#[test]
fn diagnostics_past_the_first_thousand_are_counted_not_kept() {
    let src = "@".repeat(1500);
    let d = compile("t.tern", &src, &TestLoader::default()).unwrap_err();
    assert_eq!(d.len(), 1500);
    assert_eq!(d.list().len(), 1000);
    assert!(
        d.render()
            .ends_with("error: 500 more errors not shown (only the first 1000 are kept)\n"),
        "{}",
        &d.render()[d.render().len() - 300..]
    );
}
