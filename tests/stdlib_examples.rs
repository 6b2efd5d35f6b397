//! Runs the pool examples (`examples/pools/*.tern`) and the pool test programs
//! (`tests/stdlib_programs/*.tern`) in JIT and AOT at -O0, -O1 and -O2 and compares
//! stdout and the exit status with the `// out:` and `// exit:` comments they carry
//! (the format of `tests/programs/`); stderr must be empty for status 0.
//!
//! They live apart from `examples/*.tern` and `tests/programs/` because they use the
//! stdlib, which needs `panic("literal", detail)` from the front end; these tests
//! compile against the stdlib `pool_support::stdlib_dir` picks (see there).

mod pool_support;

use std::path::Path;
use std::time::Duration;

use pool_support::{MATRIX, ROOT, run_program, scratch};

/// `(expected stdout lines, expected status)` from the file's comments.
fn expectations(text: &str) -> (Vec<String>, i32) {
    let mut out = Vec::new();
    let mut exit = 0;
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("//") else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(v) = rest.strip_prefix("out:") {
            out.push(v.strip_prefix(' ').unwrap_or(v).to_string());
        } else if let Some(v) = rest.strip_prefix("exit:") {
            exit = v.trim().parse().expect("`// exit:` takes a number");
        }
    }
    (out, exit)
}

fn files(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(Path::new(ROOT).join(dir))
        .expect("read directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tern"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    v.sort();
    v
}

#[test]
fn pool_examples_and_programs_run_in_every_mode() {
    let all: Vec<String> = [files("examples/pools"), files("tests/stdlib_programs")].concat();
    assert!(
        all.len() >= 4,
        "expected the pool examples and programs, found {all:?}"
    );
    let dir = scratch("examples");
    let mut failures = Vec::new();
    for rel in &all {
        let text = std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap();
        let (out, exit) = expectations(&text);
        for (mode, level) in MATRIX {
            let o = match run_program(
                Path::new(rel),
                mode,
                level,
                &[],
                &dir,
                Duration::from_secs(120),
            ) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{rel} [{mode:?} {level}]: {e}"));
                    continue;
                }
            };
            let got: Vec<String> = o.stdout.lines().map(str::to_string).collect();
            if got != out || o.code != Some(exit) || (exit == 0 && !o.stderr.is_empty()) {
                failures.push(format!(
                    "{rel} [{mode:?} {level}]: status {:?} (want {exit})\n  stdout {got:?}\n  want   {out:?}\n  stderr {:?}",
                    o.code, o.stderr
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
