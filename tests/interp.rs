//! The reference interpreter (`tern run --interp`) against the expectations
//! of every `tests/programs/*.tern` and `examples/*.tern` (the same ones the
//! JIT and AOT runs of `tests/programs.rs` must meet), plus what only the
//! interpreter has: its simulated stack, its extern support, its flags.

mod program_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Instant;

use program_support::{
    FLAG_SETS, ROOT, TERN, expectations_of, lines, mismatch, program_files, tern_with,
};

fn tern(args: &[&str]) -> Output {
    tern_with(args, b"")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory for programs written by a test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-interp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Writes `source` to `dir/name` and returns the path as a string.
fn program(dir: &Path, name: &str, source: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, source).expect("write program");
    path.to_str().expect("utf-8 temp path").to_string()
}

#[test]
fn every_program_meets_its_expectations_in_the_interpreter() {
    let files = program_files();
    assert!(
        files.len() >= 40,
        "expected 40+ test programs, found {}",
        files.len()
    );
    let queue = Mutex::new(files.clone());
    let results = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let Some(file) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let all = expectations_of(&file);
                    let tmp = scratch(&file.replace(['/', '.'], "_"));
                    let prog_args = all.args_with(&tmp);
                    let run = |flags: &str| {
                        let mut args = vec!["run", "--interp"];
                        args.extend(flags.split_whitespace());
                        args.extend([file.as_str(), "--"]);
                        args.extend(prog_args.iter().map(String::as_str));
                        tern_with(&args, &all.stdin)
                    };
                    let began = Instant::now();
                    let out = run("");
                    let took = began.elapsed();
                    let mut problems: Vec<String> =
                        mismatch(all.for_flags(""), &out).into_iter().collect();
                    // And under each flag set (`--sanitize`).
                    for flags in FLAG_SETS {
                        if let Some(m) = mismatch(all.for_flags(flags), &run(flags)) {
                            problems.push(format!("[{flags}] {m}"));
                        }
                    }
                    let _ = std::fs::remove_dir_all(&tmp);
                    let problem = (!problems.is_empty()).then(|| problems.join("\n  "));
                    results.lock().unwrap().push((file, took, problem));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(_, took, _)| std::cmp::Reverse(*took));
    let slowest: Vec<String> = results
        .iter()
        .take(3)
        .map(|(f, t, _)| format!("{f} {:.0} ms", t.as_secs_f64() * 1e3))
        .collect();
    eprintln!(
        "{} programs interpreted in {:.2} s; slowest: {}",
        results.len(),
        start.elapsed().as_secs_f64(),
        slowest.join(", ")
    );
    let mut failures: Vec<String> = results
        .iter()
        .filter_map(|(f, _, p)| p.as_ref().map(|p| format!("{f} [interp]\n  {p}")))
        .collect();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} programs mismatch in the interpreter:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// The last number a depth probe printed before the stack overflowed.
fn last_depth(o: &Output) -> i64 {
    lines(&o.stdout)
        .last()
        .and_then(|l| l.parse().ok())
        .unwrap_or(-1)
}

#[test]
fn the_simulated_stack_overflows_near_the_compiled_depth() {
    // Recursions of different frame shapes print their depth every 1000
    // calls until the stack overflows; the interpreter's last depth must be
    // within 10% of the JIT's (the frame estimate is the backend's shape, not
    // its register allocation).
    let dir = scratch("depth");
    let probes = [
        (
            "scalar.tern",
            "fn down(n: i64) -> i64 {\n    if n % 1000 == 0 { print(n); }\n    return down(n + 1) + 1;\n}\nfn main() { print(down(0)); }\n",
        ),
        (
            "array.tern",
            "fn down(n: i64) -> i64 {\n    var pad = [n; 32];\n    pad[n % 32] = 1;\n    if n % 1000 == 0 { print(n); }\n    return down(n + 1) + pad[3];\n}\nfn main() { print(down(0)); }\n",
        ),
        (
            "struct.tern",
            "struct P { a: i64, b: i64, c: i64 }\nfn down(n: i64, p: P, q: i64, r: i64) -> i64 {\n    let x = n * 2;\n    let y = x + q;\n    if n % 1000 == 0 { print(n); }\n    return down(n + 1, P { a: y, b: x, c: r }, y, x) + p.a;\n}\nfn main() { print(down(0, P { a: 1, b: 2, c: 3 }, 4, 5)); }\n",
        ),
    ];
    for ((name, source), line) in probes.into_iter().zip([3, 5, 6]) {
        let file = program(&dir, name, source);
        let jit = tern(&["run", &file]);
        let interp = tern(&["run", "--interp", &file]);
        for o in [&jit, &interp] {
            assert_eq!(o.status.code(), Some(101), "{name}: {}", stderr(o));
        }
        // Both name the recursive call, the same way whether the stack ran
        // out in `down` or inside `print` (runtime code).
        let err = stderr(&interp);
        let want = format!("error: {file}:{line}:12: stack overflow\n");
        assert!(err.starts_with(&want), "{name}: {err}");
        assert_eq!(stderr(&jit), err, "{name}");
        let (j, i) = (last_depth(&jit), last_depth(&interp));
        assert!(j > 0 && i > 0, "{name}: depths {j} and {i}");
        assert!(
            (i - j).abs() * 10 <= j,
            "{name}: the JIT overflowed at depth {j}, the interpreter at {i}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deepest_recursion_overflows_the_simulated_stack_not_the_host() {
    // Frames with nothing in them: the most calls the simulated stack
    // allows, hence the deepest host recursion.
    let dir = scratch("frameless");
    let file = program(
        &dir,
        "f.tern",
        "fn f() { f(); }\nfn main() { print(5); f(); }\n",
    );
    let o = tern(&["run", "--interp", &file]);
    assert_eq!(lines(&o.stdout), ["5"]);
    assert_eq!(
        stderr(&o),
        format!(
            "error: {file}:1:10: stack overflow\n  in f    at {file}:1:10\n  in f    at {file}:1:10\n  \
             in f    at {file}:1:10\n  ... more frames in f\n  in main at {file}:2:23\n"
        )
    );
    assert_eq!(o.status.code(), Some(101));
    // The compiled run says the same.
    assert_eq!(stderr(&tern(&["run", &file])), stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn externs_resolve_as_in_the_jit_or_fail_at_the_call() {
    let dir = scratch("externs");
    // Unknown symbol: the JIT's load-time error, same text and status.
    let file = program(
        &dir,
        "undefined.tern",
        "extern fn no_such_function_anywhere(x: i64) -> i64;\nfn main() { print(no_such_function_anywhere(1)); }\n",
    );
    let jit = tern(&["run", &file]);
    let interp = tern(&["run", "--interp", &file]);
    assert_eq!(interp.status.code(), Some(1));
    assert_eq!(stderr(&interp), stderr(&jit));
    assert!(stderr(&interp).contains("undefined symbol `no_such_function_anywhere`"));
    // More than six argument words: found, but reported at the call, after
    // the output before it and the arguments' evaluation.
    let file = program(
        &dir,
        "seven.tern",
        "extern fn labs(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64) -> i64;\nfn one() -> i64 { print(1); return 1; }\nfn main() { print(0); print(labs(one(), 0, 0, 0, 0, 0, 0)); }\n",
    );
    let o = tern(&["run", "--interp", &file]);
    assert_eq!(lines(&o.stdout), ["0", "1"]);
    assert_eq!(
        stderr(&o),
        format!(
            "error: {file}:3:29: extern fn `labs` is not available in the interpreter\n  \
             in main at {file}:3:29\n"
        )
    );
    assert_eq!(o.status.code(), Some(101));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn invalid_memory_access_faults_like_compiled_code() {
    let dir = scratch("fault");
    let file = program(
        &dir,
        "fault.tern",
        "fn main() {\n    print(1);\n    let s = unsafe::slice::<i64>(8, 1);\n    print(s[0]);\n}\n",
    );
    let jit = tern(&["run", &file]);
    let interp = tern(&["run", "--interp", &file]);
    assert_eq!(interp.stdout, jit.stdout);
    assert_eq!(stderr(&interp), stderr(&jit));
    assert_eq!(interp.status.code(), Some(101));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pool_configuration_is_checked_by_the_runtime_as_for_compiled_code() {
    let mut cmd = Command::new(TERN);
    cmd.args(["run", "--interp", "tests/programs/reusable_basic.tern"])
        .current_dir(ROOT)
        .env("TERN_POOL_BYTES", "lots");
    let o = program_support::child::run(cmd, None, program_support::child::PATIENCE);
    assert_eq!(o.status.code(), Some(101));
    assert_eq!(
        stderr(&o),
        "error: <runtime>: TERN_POOL_BYTES must be a positive number of bytes, got `lots`\n"
    );
    // One byte past the largest arena says so (it said "positive").
    let mut cmd = Command::new(TERN);
    cmd.args(["run", "--interp", "tests/programs/reusable_basic.tern"])
        .current_dir(ROOT)
        .env("TERN_POOL_BYTES", "17179869177");
    let o = program_support::child::run(cmd, None, program_support::child::PATIENCE);
    assert_eq!(o.status.code(), Some(101));
    assert_eq!(
        stderr(&o),
        "error: <runtime>: TERN_POOL_BYTES is `17179869177`, more than the largest pool, 17179869176 bytes (16 GiB less 8)\n"
    );
}

/// A builtin pool of under 8 bytes has an arena of 0: a sanitized run
/// starts as an unsanitized one does (it failed at startup with "cannot
/// reserve the sanitizer's shadow"), and its first allocation is the
/// located `pool exhausted`, in the interpreter, the JIT and AOT alike.
#[test]
fn a_pool_of_under_a_granule_runs_sanitized_as_it_runs_plain() {
    let dir = scratch("tiny-pool");
    let quiet = program(&dir, "quiet.tern", "fn main() {\n    print(1);\n}\n");
    let alloc = program(
        &dir,
        "alloc.tern",
        "fn main() {\n    print(1);\n    var s = reusable::alloc::<i64>(2);\n    print(len(s));\n}\n",
    );
    let exhausted = format!(
        "error: {alloc}:3:13: pool exhausted: no free span of 16 bytes\n  in main at {alloc}:3:13\n"
    );
    let exe = dir.join("alloc");
    let built = tern(&["build", "--sanitize", &alloc, "-o", exe.to_str().unwrap()]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    for (file, want_err, want_status) in [(&quiet, String::new(), 0), (&alloc, exhausted, 101)] {
        let mut runs = Vec::new();
        for flags in [
            &["run"][..],
            &["run", "--sanitize"],
            &["run", "--interp", "--sanitize"],
        ] {
            let mut cmd = Command::new(TERN);
            cmd.args(flags).arg(file);
            runs.push((format!("{flags:?}"), cmd));
        }
        if file == &alloc {
            runs.push(("AOT --sanitize".into(), Command::new(&exe)));
        }
        for (what, mut cmd) in runs {
            cmd.current_dir(ROOT).env("TERN_POOL_BYTES", "7");
            let o = program_support::child::run(cmd, None, program_support::child::PATIENCE);
            assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n", "{file} {what}");
            assert_eq!(stderr(&o), want_err, "{file} {what}");
            assert_eq!(o.status.code(), Some(want_status), "{file} {what}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn time_reports_front_end_and_execution_and_levels_are_accepted() {
    let o = tern(&[
        "run",
        "--interp",
        "-O0",
        "--time",
        "tests/programs/arith_i64.tern",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let labels: Vec<String> = lines(&o.stderr)
        .iter()
        .map(|l| l.split("  ").next().unwrap_or("").trim().to_string())
        .collect();
    assert_eq!(labels, ["time: front end", "time: execution"]);
    let plain = tern(&["run", "--interp", "tests/programs/arith_i64.tern"]);
    assert_eq!(o.stdout, plain.stdout);
}
