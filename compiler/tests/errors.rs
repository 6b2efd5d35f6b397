//! Data-driven diagnostics tests: each `tests/errors/*.tern` lists, in
//! `// error: LINE:COL: MESSAGE` comments, exactly the diagnostics the front
//! end must produce for it, in order (`// error: FILE:LINE:COL: MESSAGE` for
//! one in another file). The rendered form is checked too: one
//! `file:line:col: error: message` header per diagnostic, followed by the
//! source line and a caret line.

mod common;

use common::{TestLoader, root, tern_files};
use tern_compiler::compile;

fn expectations(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("// error: "))
        .map(|s| s.trim().to_string())
        .collect()
}

#[test]
fn every_error_file_produces_exactly_its_diagnostics() {
    let files = tern_files("tests/errors");
    assert!(files.len() >= 40, "only {} error files", files.len());
    let loader = TestLoader::default();
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let expected = expectations(&text);
        assert!(!expected.is_empty(), "{file} has no `// error:` lines");
        let diags = match compile(file, &text, &loader) {
            Ok(_) => {
                failures.push(format!("{file}: compiled without errors"));
                continue;
            }
            Err(d) => d,
        };
        let actual: Vec<String> = diags
            .summaries()
            .into_iter()
            .map(|(f, line, col, msg)| {
                if f == *file {
                    format!("{line}:{col}: {msg}")
                } else {
                    format!("{f}:{line}:{col}: {msg}")
                }
            })
            .collect();
        if actual != expected {
            failures.push(format!(
                "{file}:\n  expected:\n    {}\n  actual:\n    {}",
                expected.join("\n    "),
                actual.join("\n    ")
            ));
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
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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

/// Not a check: prints what each error file produces, in the expectation
/// format, for writing new files (`cargo test --test errors -- --ignored
/// --nocapture`). Review the output before copying it.
#[test]
#[ignore]
fn show_actual_diagnostics() {
    let loader = TestLoader::default();
    for file in tern_files("tests/errors") {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        println!("== {file}");
        match compile(&file, &text, &loader) {
            Ok(_) => println!("(no errors)"),
            Err(d) => {
                for (f, line, col, msg) in d.summaries() {
                    if f == file {
                        println!("// error: {line}:{col}: {msg}");
                    } else {
                        println!("// error: {f}:{line}:{col}: {msg}");
                    }
                }
            }
        }
    }
}
