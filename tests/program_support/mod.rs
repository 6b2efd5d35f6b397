//! Shared by the tests that run `tests/programs/*.tern` and `examples/*.tern`
//! against the expectations each file carries in comments
//! (`tests/programs.rs`: JIT and AOT; `tests/interp.rs`: the interpreter):
//!
//! * `// out: TEXT`: one expected stdout line (`// out:` alone: empty line);
//! * `// exit: N`: expected exit status (default 0);
//! * `// err: TEXT`: expected stderr lines, exact and in order; without any,
//!   stderr must be empty.

#![allow(dead_code)]

use std::path::Path;
use std::process::Output;

/// The `tern` driver under test.
pub const TERN: &str = env!("CARGO_BIN_EXE_tern");
/// The workspace root (programs are run from here, so locations read
/// `tests/programs/NAME.tern:L:C`).
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// What a program file expects of a run.
#[derive(Debug, PartialEq, Eq)]
pub struct Expect {
    pub out: Vec<String>,
    pub err: Vec<String>,
    pub exit: i32,
}

/// The expectations in the comments of `text`.
pub fn parse_expectations(text: &str) -> Expect {
    let mut e = Expect {
        out: Vec::new(),
        err: Vec::new(),
        exit: 0,
    };
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("//") else {
            continue;
        };
        let rest = rest.trim_start();
        let field = |key: &str| {
            rest.strip_prefix(key)
                .map(|v| v.strip_prefix(' ').unwrap_or(v).to_string())
        };
        if let Some(v) = field("out:") {
            e.out.push(v);
        } else if let Some(v) = field("err:") {
            e.err.push(v);
        } else if let Some(v) = field("exit:") {
            e.exit = v.trim().parse().expect("`// exit:` takes a number");
        }
    }
    e
}

/// The expectations of the program at `rel` (relative to [`ROOT`]).
pub fn expectations_of(rel: &str) -> Expect {
    let text = std::fs::read_to_string(Path::new(ROOT).join(rel)).expect("read test program");
    parse_expectations(&text)
}

/// Output split into lines (lossy UTF-8).
pub fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Compares one run with the expectations; `None` when it matches.
pub fn mismatch(expect: &Expect, out: &Output) -> Option<String> {
    let got_out = lines(&out.stdout);
    let got_err = lines(&out.stderr);
    let got_exit = out.status.code().unwrap_or(-1);
    let mut problems = Vec::new();
    if got_out != expect.out {
        problems.push(format!(
            "stdout:\n    expected {:?}\n    got      {:?}",
            expect.out, got_out
        ));
    }
    if got_err != expect.err {
        problems.push(format!(
            "stderr:\n    expected {:?}\n    got      {:?}",
            expect.err, got_err
        ));
    }
    if got_exit != expect.exit {
        problems.push(format!(
            "exit status: expected {}, got {got_exit} ({})",
            expect.exit, out.status
        ));
    }
    (!problems.is_empty()).then(|| problems.join("\n  "))
}

/// Every `tests/programs/*.tern` and `examples/*.tern`, relative to [`ROOT`],
/// sorted.
pub fn program_files() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["tests/programs", "examples"] {
        let Ok(read) = std::fs::read_dir(Path::new(ROOT).join(dir)) else {
            continue;
        };
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tern") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    files
}
