//! Runs every `tests/programs/*.tern` and `examples/*.tern` through
//! `tern run` (JIT) and `tern build` + the executable (AOT) at -O0, -O1 and
//! -O2, and compares stdout, stderr and exit status with the expectations the
//! file carries in comments:
//!
//! * `// out: TEXT`: one expected stdout line (`// out:` alone: empty line);
//! * `// exit: N`: expected exit status (default 0);
//! * `// err: TEXT`: expected stderr lines, exact and in order; without any,
//!   stderr must be empty.
//!
//! The debug `tern` binary runs Cranelift's verifier on every function it
//! compiles (`TERN_VERIFY=1` is set as well, for release-mode test runs).
//! All mismatches are collected and reported together.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

const TERN: &str = env!("CARGO_BIN_EXE_tern");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(Debug, PartialEq, Eq)]
struct Expect {
    out: Vec<String>,
    err: Vec<String>,
    exit: i32,
}

fn parse_expectations(text: &str) -> Expect {
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

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Compares one run with the expectations; `None` when it matches.
fn mismatch(expect: &Expect, out: &Output) -> Option<String> {
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
    let text = std::fs::read_to_string(Path::new(ROOT).join(rel)).expect("read test program");
    let expect = parse_expectations(&text);
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

fn program_files() -> Vec<String> {
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
