//! Runs every `tests/programs/*.tern` and `examples/*.tern` through
//! `tern run` (JIT) and `tern build` + the executable (AOT) at -O0, -O1 and
//! -O2, and again with each flag set of `FLAG_SETS` (`--sanitize`) at -O0
//! and -O2, and compares stdout, stderr and exit status with the
//! expectations the file carries in comments (`// out:`, `// err:`,
//! `// exit:`, and `// [--sanitize] ...` for a flag set whose runs differ;
//! the syntax and the parser are in `tests/program_support/mod.rs`, shared
//! with `tests/interp.rs`).
//!
//! The debug `tern` binary runs Cranelift's verifier on every function it
//! compiles (`TERN_VERIFY=1` is set as well, for release-mode test runs).
//! All mismatches are collected and reported together.

mod program_support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use program_support::{
    Expect, FLAG_SETS, exe_with, expectations_of, mismatch, parse_all, parse_expectations,
    program_files, tern_with,
};

/// Every (file, flags, mode, level) run of one file; returns the mismatches.
fn check_file(rel: &str, scratch: &Path) -> Vec<String> {
    let all = expectations_of(rel);
    let mut failures = Vec::new();
    let stem = rel.replace(['/', '.'], "_");
    let runs = std::iter::once(("", &["-O0", "-O1", "-O2"][..]))
        .chain(FLAG_SETS.iter().map(|f| (*f, &["-O0", "-O2"][..])));
    for (flags, levels) in runs {
        let expect = all.for_flags(flags);
        let extra: Vec<&str> = flags.split_whitespace().collect();
        let label = |mode: &str, level: &str| {
            let sep = if flags.is_empty() { "" } else { " " };
            format!("{rel} [{mode} {level}{sep}{flags}]")
        };
        for &level in levels {
            let run_id = format!("{stem}{level}{}", flags.replace(' ', ""));
            let prog_args = all.args_with(&scratch.join(format!("{run_id}-jit")));
            let mut args = vec!["run", level];
            args.extend(&extra);
            args.push(rel);
            args.push("--");
            args.extend(prog_args.iter().map(String::as_str));
            let out = tern_with(&args, &all.stdin);
            if let Some(m) = mismatch(expect, &out) {
                failures.push(format!("{}\n  {m}", label("JIT", level)));
            }
            let exe = scratch.join(&run_id);
            let exe_s = exe.to_str().expect("utf-8 temp path");
            let mut args = vec!["build", level];
            args.extend(&extra);
            args.extend([rel, "-o", exe_s]);
            let built = tern_with(&args, b"");
            if !built.status.success() {
                failures.push(format!(
                    "{}\n  build failed ({}): {}",
                    label("AOT", level),
                    built.status,
                    String::from_utf8_lossy(&built.stderr).trim_end()
                ));
                continue;
            }
            let prog_args = all.args_with(&scratch.join(format!("{run_id}-aot")));
            let ran = exe_with(&exe, &prog_args, &all.stdin);
            if let Some(m) = mismatch(expect, &ran) {
                failures.push(format!("{}\n  {m}", label("AOT", level)));
            }
            let _ = std::fs::remove_file(&exe);
        }
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
fn expectations_per_flag_set_parse() {
    let all =
        parse_all("// out: 1\n// [--sanitize] err: error: f:1:2: m\n// [--sanitize] exit: 101\n");
    assert_eq!(all.for_flags("").out, vec!["1".to_string()]);
    let s = all.for_flags("--sanitize");
    assert_eq!(
        s,
        &Expect {
            out: vec![],
            err: vec!["error: f:1:2: m".into()],
            exit: 101,
        }
    );
    // Without qualified lines, every flag set expects the plain lines.
    let plain = parse_all("// out: 2\n");
    assert_eq!(plain.for_flags("--sanitize"), &plain.plain);
    assert!(std::panic::catch_unwind(|| parse_all("// [--nope] out: 3\n")).is_err());
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
