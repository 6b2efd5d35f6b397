//! Runs every `tests/programs/*.tern` and `examples/*.tern` through
//! `tern run` (JIT) and `tern build` + the executable (AOT) at -O0, -O1 and
//! -O2, and compares stdout, stderr and exit status with the expectations the
//! file carries in comments (`// out:`, `// err:`, `// exit:`; the parser is
//! `tests/program_support/mod.rs`, shared with `tests/interp.rs`).
//!
//! The debug `tern` binary runs Cranelift's verifier on every function it
//! compiles (`TERN_VERIFY=1` is set as well, for release-mode test runs).
//! All mismatches are collected and reported together.

mod program_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use program_support::{
    Expect, ROOT, TERN, expectations_of, mismatch, parse_expectations, program_files,
};

fn tern(args: &[&str]) -> Output {
    Command::new(TERN)
        .args(args)
        .current_dir(ROOT)
        .env("TERN_VERIFY", "1")
        .output()
        .expect("run tern")
}

/// Every (file, mode, level) run of one file; returns the mismatches.
fn check_file(rel: &str, scratch: &Path) -> Vec<String> {
    let expect = expectations_of(rel);
    let mut failures = Vec::new();
    let stem = rel.replace(['/', '.'], "_");
    for level in ["-O0", "-O1", "-O2"] {
        let out = tern(&["run", level, rel]);
        if let Some(m) = mismatch(&expect, &out) {
            failures.push(format!("{rel} [JIT {level}]\n  {m}"));
        }
        let exe = scratch.join(format!("{stem}{level}"));
        let exe_s = exe.to_str().expect("utf-8 temp path");
        let built = tern(&["build", level, rel, "-o", exe_s]);
        if !built.status.success() {
            failures.push(format!(
                "{rel} [AOT {level}]\n  build failed ({}): {}",
                built.status,
                String::from_utf8_lossy(&built.stderr).trim_end()
            ));
            continue;
        }
        let ran = Command::new(&exe)
            .current_dir(ROOT)
            .output()
            .expect("run built executable");
        if let Some(m) = mismatch(&expect, &ran) {
            failures.push(format!("{rel} [AOT {level}]\n  {m}"));
        }
        let _ = std::fs::remove_file(&exe);
    }
    failures
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-programs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn programs_run_identically_in_jit_and_aot_at_every_level() {
    let files = program_files();
    assert!(
        files.len() >= 40,
        "expected 40+ test programs, found {}",
        files.len()
    );
    let scratch = scratch_dir();
    let queue = Mutex::new(files.clone());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        // Linking waits on the file system more than on the CPU: two
        // workers per core keep the cores busy.
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let Some(file) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let f = check_file(&file, &scratch);
                    failures.lock().unwrap().extend(f);
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} mismatching runs of {} files:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn expectation_comments_parse() {
    let e = parse_expectations(
        "// out: a b\n// out:\nx // out: no\n// exit: 101\n// err: error: f:1:2: m\n",
    );
    assert_eq!(
        e,
        Expect {
            out: vec!["a b".into(), "".into()],
            err: vec!["error: f:1:2: m".into()],
            exit: 101,
        }
    );
}
