//! The driver's command line: exit statuses and messages for bad input,
//! `check`, `--emit`, `--time`, and runtime-library discovery.

mod child_support;
mod pty_support;

use std::path::Path;
use std::process::{Command, Output};

const TERN: &str = env!("CARGO_BIN_EXE_tern");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tern(args: &[&str]) -> Output {
    child_support::output(Command::new(TERN).args(args).current_dir(ROOT))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn bad_flag_is_a_usage_error() {
    let o = tern(&["run", "-O7", "tests/programs/arith_i64.tern"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`7` is not an optimization level"),
        "{}",
        stderr(&o)
    );
    let o = tern(&["run", "--frobnicate", "x.tern"]);
    assert_eq!(o.status.code(), Some(2));
    // A flag that cannot act is refused, not ignored: the interpreter
    // compiles nothing to map.
    let o = tern(&[
        "run",
        "--interp",
        "--perf-map",
        "tests/programs/arith_i64.tern",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'--interp' cannot be used with '--perf-map'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn missing_file_is_a_clear_error() {
    for cmd in ["run", "build", "check"] {
        let o = tern(&[cmd, "no/such/file.tern"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert!(
            stderr(&o).starts_with("error: cannot read `no/such/file.tern`: "),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn check_reports_diagnostics_with_status_1() {
    let dir = scratch("check");
    let bad = dir.join("bad.tern");
    std::fs::write(&bad, "fn main() {\n    let x: i64 = true;\n}\n").unwrap();
    let o = tern(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with(&format!("{}:2:", bad.display())), "{err}");
    assert!(err.contains(": error: "), "{err}");
    assert!(
        err.ends_with(&format!(
            "error: could not compile `{}`: 1 error\n",
            bad.display()
        )),
        "{err}"
    );
    // run and build print the same diagnostics and do not generate code.
    let o = tern(&["run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), err);
    let o = tern(&["check", "tests/programs/arith_i64.tern"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_closed_stderr_keeps_the_exit_status() {
    // `tern check bad.tern 2>&1 | true`: every write to stderr fails with
    // EPIPE, and the status must still be the diagnostics' 1 (a panic on
    // the failed write made it 101).
    let dir = scratch("closed_stderr");
    let bad = dir.join("bad.tern");
    std::fs::write(&bad, "fn main() { x }\n").unwrap();
    for args in [
        &["check", bad.to_str().unwrap()][..],
        &["run", "no_such_file.tern"][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let status = Command::new(TERN)
            .args(args)
            .current_dir(ROOT)
            .stderr(writer)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn emit_clif_obj_and_asm() {
    let dir = scratch("emit");
    let file = "tests/programs/functions.tern";
    let clif = dir.join("f.clif");
    let o = tern(&[
        "build",
        file,
        "-o",
        clif.to_str().unwrap(),
        "--emit",
        "clif",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&clif).unwrap();
    assert!(text.contains("; fn fib\nfunction "), "{text}");
    assert!(text.contains("; fn main\n"));
    let obj = dir.join("f.o");
    let o = tern(&[
        "build",
        file,
        "-o",
        obj.to_str().unwrap(),
        "--emit",
        "obj",
        "-O0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&std::fs::read(&obj).unwrap()[..4], b"\x7fELF");
    let asm = dir.join("f.s");
    let o = tern(&["build", file, "-o", asm.to_str().unwrap(), "--emit", "asm"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&asm).unwrap();
    // Assembly source (the round trip through `cc -c` is tests/debugging.rs).
    assert!(
        text.contains("\ntern.fib:\n") && text.contains("\tret"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// An executable reaches the runtime by direct calls (`call sym@PLT`, which
/// the static link binds to the runtime's function), not through a register
/// loaded from the GOT (docs/backend.md, "AOT and linking").
#[test]
fn an_executables_runtime_calls_are_direct() {
    let dir = scratch("direct-calls");
    let src = dir.join("calls.tern");
    std::fs::write(
        &src,
        "fn main() {\n    var s = reusable::alloc::<i64>(3);\n    s[1] = 5;\n    \
         print(s[1]);\n    reusable::free(s);\n}\n",
    )
    .unwrap();
    let o = tern(&[
        "build",
        src.to_str().unwrap(),
        "--emit",
        "asm",
        "-O2",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let start = text.find("\ntern.main:\n").expect("tern.main");
    let end = start + text[start..].find(".size tern.main").expect("its end");
    let body = &text[start..end];
    for callee in [
        "tern_reusable_alloc",
        "tern_print_i64",
        "tern_reusable_free",
    ] {
        assert!(
            body.contains(&format!("\tcall {callee}@PLT\n")),
            "{callee}:\n{body}"
        );
    }
    assert!(!body.contains("\tcall r"), "an indirect call:\n{body}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn dash_output_is_stdout_for_every_emit_and_refused_for_an_executable() {
    let file = "tests/programs/functions.tern";
    let from_file = |emit: &str, ext: &str| {
        let dir = scratch(&format!("dash-{emit}"));
        let out = dir.join(format!("f.{ext}"));
        let o = tern(&["build", file, "-o", out.to_str().unwrap(), "--emit", emit]);
        assert!(o.status.success(), "{}", stderr(&o));
        let bytes = std::fs::read(&out).unwrap();
        let _ = std::fs::remove_dir_all(dir);
        bytes
    };
    for (emit, ext) in [("clif", "clif"), ("obj", "o"), ("asm", "s")] {
        let o = tern(&["build", file, "-o", "-", "--emit", emit]);
        assert!(o.status.success(), "{emit}: {}", stderr(&o));
        assert_eq!(
            o.stdout,
            from_file(emit, ext),
            "{emit}: stdout is the file's bytes"
        );
    }
    assert!(!Path::new(ROOT).join("-").exists(), "no file named `-`");
    let o = tern(&["build", file, "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: `-o -` writes to stdout, which only `--emit clif`, `--emit asm` or `--emit obj` can do; give the executable a file name\n"
    );
}

#[test]
fn help_lists_the_subcommands_and_the_environment() {
    let o = tern(&["--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for word in [
        "run",
        "build",
        "check",
        "repl",
        "bench",
        "TERN_POOL_BYTES",
        "TERN_POOL_STATS",
        "TERN_STDLIB",
        "TERN_RUNTIME_LIB",
        "TERN_VERIFY",
        "CC ",
    ] {
        assert!(help.contains(word), "`{word}` missing from:\n{help}");
    }
    let o = tern(&["build", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("The Tern source file"), "{help}");
}

#[test]
fn time_reports_three_phases() {
    let o = tern(&["run", "--time", "tests/programs/arith_i64.tern"]);
    assert!(o.status.success());
    let err = stderr(&o);
    let phases: Vec<&str> = err
        .lines()
        .map(|l| {
            l.split(" ms")
                .next()
                .unwrap()
                .trim_end_matches(|c: char| c == '.' || c.is_ascii_digit() || c == ' ')
        })
        .collect();
    assert_eq!(
        phases,
        ["time: front end", "time: cranelift", "time: execution"],
        "{err}"
    );
}

/// Writes `source` to `dir/name.tern`, builds it to `dir/name`, and runs it
/// with `tern run` and as the executable, each with `TERN_POOL_STATS` naming
/// a fresh file; checks that each run printed `out` and reported `stats`.
/// Returns the source file and the executable.
fn pool_stats_in_both_modes(
    dir: &Path,
    name: &str,
    source: &str,
    (out, stats_text): (&str, &str),
) -> (std::path::PathBuf, std::path::PathBuf) {
    let file = dir.join(format!("{name}.tern"));
    std::fs::write(&file, source).unwrap();
    let stats = dir.join("stats.txt");
    let exe = dir.join(name);
    let b = tern(&["build", file.to_str().unwrap(), "-o", exe.to_str().unwrap()]);
    assert!(b.status.success(), "{}", stderr(&b));
    let mut jit = Command::new(TERN);
    jit.args(["run", file.to_str().unwrap()]);
    for mut cmd in [jit, Command::new(&exe)] {
        let _ = std::fs::remove_file(&stats);
        let o = child_support::output(cmd.env("TERN_POOL_STATS", &stats));
        assert_eq!(String::from_utf8_lossy(&o.stdout), out, "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&stats).unwrap(), stats_text);
    }
    (file, exe)
}

/// `TERN_POOL_STATS` after append loops answered in append windows (the
/// builtin's by generated code, the library's by `tern_span_resize`) that
/// no later pool operation settled: the report counts them, so each mark is
/// its slice's whole length, in both modes.
#[test]
fn pool_stats_count_the_appends_of_an_open_append_window() {
    let dir = scratch("pool-stats-window");
    pool_stats_in_both_modes(
        &dir,
        "window",
        "use slice_pool;\n\
         fn main() {\n\
         \x20   var a: reusable[]i64 = reusable::alloc::<i64>(0);\n\
         \x20   for i in 0..1000 { a = reusable::append(a, i); }\n\
         \x20   var p = slice_pool::new(1 << 16);\n\
         \x20   var s = slice_pool::alloc_slice::<i64>(ref p, 0);\n\
         \x20   for i in 0..700 { s = slice_pool::append(ref p, s, i); }\n\
         \x20   print(len(a), a[999], len(s), s[699]);\n\
         }\n",
        ("1000 999 700 699\n", "builtin 8000\nlibrary 5600\n"),
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `TERN_POOL_STATS`: each pool kind's arena high-water mark, the same from
/// `tern run` and from the executable; frees and resets do not lower it.
#[test]
fn pool_stats_report_each_pools_high_water_mark() {
    let dir = scratch("pool-stats");
    // The builtin span grows in place from 24 to 40 bytes; the library
    // pool's two spans end at 80 + 8; the pure pool's first span ends at 16
    // (before the reset), its second at 8.
    let (file, exe) = pool_stats_in_both_modes(
        &dir,
        "stats",
        "use slice_pool;\nuse slice_pool_pure;\n\
         fn main() {\n\
         \x20   var a = reusable::alloc::<i64>(3);\n\
         \x20   a = reusable::resize(a, 5);\n\
         \x20   reusable::free(a);\n\
         \x20   var p = slice_pool::new(1 << 16);\n\
         \x20   let s = slice_pool::alloc_slice::<i64>(ref p, 10);\n\
         \x20   let t = slice_pool::alloc_slice::<u8>(ref p, 3);\n\
         \x20   slice_pool::free_slice(ref p, s);\n\
         \x20   slice_pool::free_slice(ref p, t);\n\
         \x20   slice_pool::finish(ref p);\n\
         \x20   var q = slice_pool_pure::new(1 << 16);\n\
         \x20   let u = slice_pool_pure::alloc_slice::<i64>(ref q, 2);\n\
         \x20   slice_pool_pure::reset(ref q);\n\
         \x20   let v = slice_pool_pure::alloc_slice::<i64>(ref q, 1);\n\
         \x20   slice_pool_pure::free_slice(ref q, v);\n\
         \x20   slice_pool_pure::finish(ref q);\n\
         \x20   print(len(u));\n\
         }\n",
        ("2\n", "builtin 40\nlibrary 88\npure 16\n"),
    );
    // Naming a file that is not a report (the program's own source) leaves
    // it as it is, with a warning; the run's status is unchanged.
    let source = std::fs::read_to_string(&file).unwrap();
    let o = child_support::output(Command::new(&exe).env("TERN_POOL_STATS", &file));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "warning: cannot write TERN_POOL_STATS file `{}`: it exists and is not a pool statistics report; left unchanged\n",
            file.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), source);
    // Unset, nothing is written.
    let stats = dir.join("stats.txt");
    let _ = std::fs::remove_file(&stats);
    assert!(
        child_support::output(&mut Command::new(&exe))
            .status
            .success()
    );
    assert!(!stats.exists());
    // A FIFO gets the report when something reads it, and a warning says
    // so when nothing does (the report went nowhere without a word).
    let fifo = dir.join("stats.fifo");
    child_support::mkfifo(&fifo);
    let o = child_support::output(Command::new(&exe).env("TERN_POOL_STATS", &fifo));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "warning: cannot write TERN_POOL_STATS file `{}`: it is a FIFO that no process reads\n",
            fifo.display()
        )
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    // The reader opens first (the program does not wait for one).
    let start = std::time::Instant::now();
    let o = loop {
        let o = child_support::output(Command::new(&exe).env("TERN_POOL_STATS", &fifo));
        if stderr(&o).is_empty() || start.elapsed().as_secs() > 60 {
            break o;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
    assert_eq!(reader.join().unwrap(), "builtin 40\nlibrary 88\npure 16\n");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn runtime_library_override_is_checked() {
    let o = child_support::output(
        Command::new(TERN)
            .args([
                "build",
                "tests/programs/arith_i64.tern",
                "-o",
                "/tmp/tern-never-written",
            ])
            .current_dir(ROOT)
            .env("TERN_RUNTIME_LIB", "/nonexistent/libtern_runtime.a"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: TERN_RUNTIME_LIB is set to `/nonexistent/libtern_runtime.a`, which is not a file\n"
    );
    assert!(!Path::new("/tmp/tern-never-written").exists());
}

#[test]
fn undefined_extern_is_reported_not_a_crash() {
    let dir = scratch("extern");
    let file = dir.join("undef.tern");
    std::fs::write(
        &file,
        "extern fn no_such_function_anywhere(v: i64) -> i64;\nfn main() {\n    print(no_such_function_anywhere(1));\n}\n",
    )
    .unwrap();
    let o = tern(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: linking failed: undefined symbol `no_such_function_anywhere` (declared by `extern fn`)\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_build_ended_by_a_signal_leaves_no_scratch() {
    // SIGTERM while the C compiler runs: the build removes its scratch
    // folder (it was left in $TMPDIR), leaves `-o` unwritten and ends by the
    // same signal.
    use std::os::unix::process::ExitStatusExt as _;
    let dir = scratch("signal");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = dir.join("p.tern");
    std::fs::write(&file, "fn main() { print(1); }\n").unwrap();
    let started = dir.join("cc-started");
    let cc = dir.join("slow-cc");
    std::fs::write(
        &cc,
        format!(
            "#!/bin/sh\ntouch '{}'\nsleep 2\nexec cc \"$@\"\n",
            started.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = dir.join("p");
    let mut child = Command::new(TERN)
        .args(["build", file.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .current_dir(ROOT)
        .env("CC", &cc)
        .env("TMPDIR", &tmp)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + child_support::PATIENCE;
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the C compiler never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let scratch_folders = || {
        std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tern-build-"))
            .count()
    };
    assert_eq!(scratch_folders(), 1, "the build works in a scratch folder");
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
    assert_eq!(scratch_folders(), 0, "the scratch folder is removed");
    assert!(!out.exists(), "no executable is installed");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_compiler_that_writes_no_executable_fails_the_build() {
    // `CC=true` exits 0 and writes nothing: the build must not report
    // success; what `-o` names is left as it was (an earlier build, or a
    // file of the user's: a failed build never takes it away).
    let dir = scratch("cc_true");
    let file = dir.join("p.tern");
    std::fs::write(&file, "fn main() { print(1); }\n").unwrap();
    let out = dir.join("p");
    let o = tern(&["build", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.is_file());
    let earlier = std::fs::read(&out).unwrap();
    let o = child_support::output(
        Command::new(TERN)
            .args(["build", file.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .current_dir(ROOT)
            .env("CC", "true"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: linking failed: `true` exited with success but wrote no executable (`{}` is left as it was)\n",
            out.display()
        )
    );
    assert_eq!(std::fs::read(&out).unwrap(), earlier);
    // Nor does a compiler that cannot be run take a file of the user's.
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let o = child_support::output(
        Command::new(TERN)
            .args([
                "build",
                file.to_str().unwrap(),
                "-o",
                notes.to_str().unwrap(),
            ])
            .current_dir(ROOT)
            .env("CC", "/nonexistent/cc"),
    );
    assert_eq!(o.status.code(), Some(1));
    let kept = format!("(`{}` is left as it was)\n", notes.display());
    assert!(stderr(&o).ends_with(&kept), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn modules_load_beside_the_file_then_from_tern_stdlib() {
    let with_stdlib = |args: &[&str]| {
        child_support::output(
            Command::new(TERN)
                .args(args)
                .current_dir(ROOT)
                .env("TERN_STDLIB", "tests/modules/stdlib"),
        )
    };
    let o = with_stdlib(&["run", "tests/modules/main.tern"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "12\n42\n",
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0));
    let dir = scratch("modules");
    let exe = dir.join("main");
    let o = with_stdlib(&[
        "build",
        "tests/modules/main.tern",
        "-o",
        exe.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = child_support::output(&mut Command::new(&exe));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "12\n42\n");
    // Without the override `counter` is not in the (embedded) stdlib.
    let o = tern(&["run", "tests/modules/main.tern"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .starts_with("tests/modules/main.tern:3:5: error: cannot find module `counter`\n"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_default_output_name_replaces_only_what_a_build_wrote() {
    let dir = scratch("default-output");
    std::fs::write(dir.join("p.tern"), "fn main() {\n    print(1);\n}\n").unwrap();
    let build = |extra: &[&str]| {
        child_support::output(
            Command::new(TERN)
                .args(["build", "p.tern"])
                .args(extra)
                .current_dir(&dir),
        )
    };
    // The user's files under the default names stay, and say why.
    for (emit, name, kind) in [
        (&[][..], "p", "an executable"),
        (&["--emit", "obj"], "p.o", "an object file"),
        (&["--emit", "asm"], "p.s", "an assembly listing tern wrote"),
        (&["--emit", "clif"], "p.clif", "a CLIF listing tern wrote"),
    ] {
        std::fs::write(dir.join(name), "my notes\n").unwrap();
        let o = build(emit);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert_eq!(
            stderr(&o),
            format!(
                "error: the default output `{name}` exists and is not {kind}; name the output with `-o` to replace it\n"
            )
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(name)).unwrap(),
            "my notes\n"
        );
        // What a build wrote there is replaced by the next build.
        std::fs::remove_file(dir.join(name)).unwrap();
        assert!(build(emit).status.success(), "{name}");
        let first = std::fs::read(dir.join(name)).unwrap();
        assert!(build(emit).status.success(), "{name} again");
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), first, "{name}");
    }
    // A link at a default name is refused (its target was overwritten); a
    // link named with `-o` is replaced, its target left alone, for a
    // listing as for an executable.
    std::fs::write(dir.join("target.txt"), "my notes\n").unwrap();
    let _ = std::fs::remove_file(dir.join("p.s"));
    std::os::unix::fs::symlink("target.txt", dir.join("p.s")).unwrap();
    let o = build(&["--emit", "asm"]);
    assert_eq!(
        stderr(&o),
        "error: the default output `p.s` is a symbolic link; name the output with `-o` to replace it\n"
    );
    assert!(build(&["--emit", "asm", "-o", "p.s"]).status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("target.txt")).unwrap(),
        "my notes\n"
    );
    assert!(
        !std::fs::symlink_metadata(dir.join("p.s"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A name the user gave is theirs to replace, as a C compiler's `-o` is.
    std::fs::write(dir.join("notes.txt"), "my notes\n").unwrap();
    assert!(build(&["-o", "notes.txt"]).status.success());
    assert!(
        std::fs::read(dir.join("notes.txt"))
            .unwrap()
            .starts_with(b"\x7fELF")
    );
    // A directory is refused whichever way it is written.
    std::fs::create_dir_all(dir.join("adir")).unwrap();
    for out in ["adir", "adir/"] {
        let o = build(&["-o", out]);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert_eq!(
            stderr(&o),
            format!("error: cannot write `{out}`: Is a directory (os error 21)\n")
        );
    }
}

#[test]
fn build_never_writes_over_its_input() {
    let dir = scratch("overwrite");
    let src = "fn main() {\n    print(1);\n}\n";
    // A source without an extension: the default output name is the file itself.
    let prog = dir.join("prog");
    std::fs::write(&prog, src).unwrap();
    let o = child_support::output(Command::new(TERN).args(["build", "prog"]).current_dir(&dir));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: the output `prog` is the input file; choose another name with `-o`\n"
    );
    assert_eq!(std::fs::read_to_string(&prog).unwrap(), src);
    // Nor another source file under the default name (`x.tern.tern` -> `x.tern`).
    std::fs::write(dir.join("x.tern"), "// notes\n").unwrap();
    std::fs::write(dir.join("x.tern.tern"), src).unwrap();
    let o = child_support::output(
        Command::new(TERN)
            .args(["build", "x.tern.tern"])
            .current_dir(&dir),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: the default output `x.tern` would replace a Tern source file; choose a name with `-o`\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("x.tern")).unwrap(),
        "// notes\n"
    );
    // Explicitly too.
    let named = dir.join("named.tern");
    std::fs::write(&named, src).unwrap();
    let n = named.to_str().unwrap();
    let o = tern(&["build", n, "-o", n]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&named).unwrap(), src);
    // A hard link of the source is the source too, for every kind of output.
    let link = dir.join("link.s");
    std::fs::hard_link(&named, &link).unwrap();
    let l = link.to_str().unwrap();
    for emit in [
        &["--emit", "asm"][..],
        &["--emit", "clif"],
        &["--emit", "obj"],
        &[],
    ] {
        let o = tern(&[&["build", n, "-o", l][..], emit].concat());
        assert_eq!(o.status.code(), Some(1), "{emit:?}");
        assert_eq!(
            stderr(&o),
            format!("error: the output `{l}` is the input file; choose another name with `-o`\n"),
            "{emit:?}"
        );
        assert_eq!(std::fs::read_to_string(&named).unwrap(), src, "{emit:?}");
    }
    // Nor a module the program uses, for every kind of output.
    let module = "fn one() -> i64 {\n    return 1;\n}\n";
    std::fs::write(dir.join("m.tern"), module).unwrap();
    std::fs::write(
        dir.join("main.tern"),
        "use m;\nfn main() {\n    print(m::one());\n}\n",
    )
    .unwrap();
    for emit in [&["--emit", "clif"][..], &[]] {
        let args = [&["build", "main.tern", "-o", "m.tern"][..], emit].concat();
        let o = child_support::output(Command::new(TERN).args(&args).current_dir(&dir));
        assert_eq!(o.status.code(), Some(1), "{emit:?}");
        assert_eq!(
            stderr(&o),
            "error: the output `m.tern` is a source file of the program (module `m.tern`); choose another name with `-o`\n",
            "{emit:?}"
        );
        assert_eq!(std::fs::read_to_string(dir.join("m.tern")).unwrap(), module);
    }
    // Nor the runtime library the link reads (`TERN_RUNTIME_LIB`), which a
    // build then replaced by the executable.
    // (Refused before the link: what the file holds plays no part.)
    let runtime = dir.join("rt.a");
    std::fs::write(&runtime, "!<arch>\n").unwrap();
    let o = child_support::output(
        Command::new(TERN)
            .args(["build", "main.tern", "-o", "rt.a"])
            .current_dir(&dir)
            .env("TERN_RUNTIME_LIB", &runtime),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: the output `rt.a` is the runtime library the program is linked with (`TERN_RUNTIME_LIB`); choose another name with `-o`\n"
    );
    assert_eq!(std::fs::read_to_string(&runtime).unwrap(), "!<arch>\n");
    // A missing input, or a folder, is that: not an output named as the
    // input (`tern build prog` for `prog.tern`).
    for (input, why) in [
        ("gone", "No such file or directory (os error 2)"),
        (".", "Is a directory (os error 21)"),
    ] {
        let o = child_support::output(Command::new(TERN).args(["build", input]).current_dir(&dir));
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o), format!("error: cannot read `{input}`: {why}\n"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_output_write_names_the_output() {
    let dir = scratch("badout");
    let out = dir.join("no-such-dir").join("x");
    let o = tern(&[
        "build",
        "tests/programs/arith_i64.tern",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: cannot write `{}`: no such directory\n",
            out.display()
        )
    );
    let o = tern(&[
        "build",
        "tests/programs/arith_i64.tern",
        "--emit",
        "obj",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with(&format!("error: cannot write `{}`: ", out.display())),
        "{}",
        stderr(&o)
    );
    // `-o dir/` names a folder, which is not there (the final rename said
    // `Not a directory`), for every kind of output.
    let folder = format!("{}/", dir.join("missing").display());
    for emit in [&["--emit", "asm"][..], &[]] {
        let o = tern(
            &[
                &["build", "tests/programs/arith_i64.tern", "-o", &folder][..],
                emit,
            ]
            .concat(),
        );
        assert_eq!(o.status.code(), Some(1), "{emit:?}");
        assert_eq!(
            stderr(&o),
            format!("error: cannot write `{folder}`: no such directory\n")
        );
    }
    // A socket as the program's file is named as one (`No such device or
    // address` said nothing of the kind).
    let socket = dir.join("p.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let o = tern(&["run", socket.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: cannot read `{}`: it is a socket, not a file\n",
            socket.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `main`'s CLIF in `listing` still calls the Tern function `name`.
fn main_calls(listing: &str, name: &str) -> bool {
    let symbol = format!(" = tern.{name}\n");
    let Some(legend) = listing
        .lines()
        .find(|l| format!("{l}\n").ends_with(&symbol))
    else {
        panic!("no legend line for {name}:\n{listing}");
    };
    let user = legend.trim_start_matches("; ").split(' ').next().unwrap();
    let main = listing
        .split("; fn ")
        .find(|f| f.starts_with("main\n"))
        .expect("main in the listing");
    let decl = format!(" {user} ");
    main.lines()
        .filter(|l| l.contains(&decl) && l.trim_start().starts_with("fn"))
        .filter_map(|l| l.trim_start().split(' ').next())
        .any(|fref| main.contains(&format!("call {fref}(")))
}

#[test]
fn inlining_is_chosen_by_flags_and_changes_no_output() {
    let dir = scratch("inline");
    let file = "tests/programs/inlined_error_location.tern";
    let clif = dir.join("p.clif");
    let c = clif.to_str().unwrap();
    let listing = |extra: &[&str]| {
        let mut args = vec!["build", file, "--emit", "clif", "-o", c];
        args.extend_from_slice(extra);
        let o = tern(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(&clif).unwrap()
    };
    // -O2 inlines small functions; -O1, `--inline off` and `--keep-call` keep the call.
    assert!(!main_calls(&listing(&[]), "at"));
    assert!(!main_calls(&listing(&["--inline", "all"]), "at"));
    assert!(main_calls(&listing(&["-O1"]), "at"));
    assert!(main_calls(&listing(&["--inline", "off"]), "at"));
    let kept = listing(&["--inline", "all", "--keep-call", "at"]);
    assert!(main_calls(&kept, "at") && !main_calls(&kept, "ratio"));
    // The same output and the same located error whatever is inlined, JIT and AOT.
    let exe = dir.join("p");
    for flags in [&["--inline", "off"][..], &["--inline", "all"][..]] {
        let mut run = vec!["run", file];
        run.extend_from_slice(flags);
        let o = tern(&run);
        let mut build = vec!["build", file, "-o", exe.to_str().unwrap()];
        build.extend_from_slice(flags);
        assert!(tern(&build).status.success());
        let a = child_support::output(Command::new(&exe).current_dir(ROOT));
        for out in [&o, &a] {
            assert_eq!(String::from_utf8_lossy(&out.stdout), "5\n");
            assert_eq!(
                stderr(out),
                "error: tests/programs/inlined_error_location.tern:5:12: index out of bounds: index 3, length 3\n  \
                 in at   at tests/programs/inlined_error_location.tern:5:12\n  \
                 in main at tests/programs/inlined_error_location.tern:15:11\n"
            );
            assert_eq!(out.status.code(), Some(101));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Long programs compile and run with every command: chains are not
/// nesting (a 10,000-term sum, a 2,000-arm `else if`), a function may have
/// 100,000 statements, and the register allocator's budgets take the
/// functions it would spend the square of their size on.
#[test]
fn long_chains_and_long_functions_check_run_and_build() {
    let dir = scratch("long");
    let sum = vec!["1"; 10_000].join(" + ");
    let arms: Vec<String> = (0..2_000)
        .map(|i| format!("if x == {i} {{\n        return {i};\n    }}"))
        .collect();
    // Arms that all continue after the chain: 25 000 joins, past the
    // backtracking register allocator's budget (`codegen/src/budget.rs`).
    let joined: Vec<String> = (0..25_000)
        .map(|i| format!("if x == {i} {{\n        r = {i} * 2;\n    }}"))
        .collect();
    // Arms that each make a call and continue: the arms join in a tree
    // (`if_arms`), not a chain of blocks that only jump to the next.
    let calls: Vec<String> = (0..6_000)
        .map(|i| format!("if x == {i} {{\n        print({i});\n    }}"))
        .collect();
    // Every call's result live across every later call at -O1 (the e-graph
    // pass puts the additions after the last call): past the allocator's
    // pressure budget.
    let sums: String = (0..5_000)
        .map(|i| format!("    x = x + g({i});\n"))
        .collect();
    let statements: String = (0..100_000)
        .map(|i| format!("    t += {};\n", i % 7))
        .collect();
    let programs = [
        (
            "sum.tern",
            format!("fn main() {{\n    print({sum});\n}}\n"),
            "10000\n",
            "-O0",
        ),
        (
            "else_if.tern",
            format!(
                "fn pick(x: i64) -> i64 {{\n    {} else {{\n        return -1;\n    }}\n}}\nfn main() {{\n    print(pick(1999));\n}}\n",
                arms.join(" else ")
            ),
            "1999\n",
            "-O0",
        ),
        (
            "joins.tern",
            format!(
                "fn pick(x: i64) -> i64 {{\n    var r = -1;\n    {}\n    return r + 1;\n}}\nfn main() {{\n    print(pick(24999));\n    print(pick(30000));\n}}\n",
                joined.join(" else ")
            ),
            "49999\n0\n",
            "-O0",
        ),
        (
            "calls.tern",
            format!(
                "fn main() {{\n    let x = 5999;\n    {}\n    print(x);\n}}\n",
                calls.join(" else ")
            ),
            "5999\n5999\n",
            "-O0",
        ),
        (
            "statements.tern",
            format!("fn main() {{\n    var t = 0;\n{statements}    print(t);\n}}\n"),
            "299995\n",
            "-O0",
        ),
        // At -O1, where the calls are not inlined.
        (
            "sums.tern",
            format!(
                "fn g(k: i64) -> i64 {{\n    return k % 3;\n}}\nfn main() {{\n    var x = 0;\n{sums}    print(x);\n}}\n"
            ),
            "4999\n",
            "-O1",
        ),
    ];
    for (name, text, out, level) in programs {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let file = file.to_str().unwrap();
        let o = tern(&["check", file]);
        assert!(o.status.success(), "check {name}: {}", stderr(&o));
        let o = tern(&["run", level, file]);
        assert!(o.status.success(), "run {name}: {}", stderr(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout), out, "run {name}");
        let exe = dir.join(format!("{name}.exe"));
        let o = tern(&["build", level, file, "-o", exe.to_str().unwrap()]);
        assert!(o.status.success(), "build {name}: {}", stderr(&o));
        let o = child_support::output(&mut Command::new(&exe));
        assert_eq!(String::from_utf8_lossy(&o.stdout), out, "built {name}");
    }
    // A chain of 16 000 assignments against the statements' order carries a
    // slice of a local array to the `return`: the escape check finds it
    // (its rounds took the body one way, one round per link: 15 s).
    let n = 16_000;
    let mut chain = String::from("fn f(p: []i64) -> []i64 {\n    var a = [1, 2, 3];\n");
    chain.extend((0..n).map(|i| format!("    var s{i} = p;\n")));
    chain.extend((0..n - 1).map(|i| format!("    s{i} = s{};\n", i + 1)));
    chain.push_str(&format!(
        "    s{} = a[..];\n    return s0;\n}}\nfn main() {{\n    var b = [4, 5];\n    print(len(f(b[..])));\n}}\n",
        n - 1
    ));
    let file = dir.join("chain.tern");
    std::fs::write(&file, chain).unwrap();
    let o = tern(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with(&format!(
            "{}:{}:12: error: cannot return a slice of local array `a`: the array does not outlive this call\n",
            file.display(),
            2 * n + 3
        )),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A module file that exists but is not UTF-8 is reported as such.
#[test]
fn a_module_that_is_not_utf8_is_reported_at_the_use() {
    let dir = scratch("utf8");
    std::fs::write(dir.join("m.tern"), b"fn f() {}\n\xff\xfe\n").unwrap();
    let main = dir.join("main.tern");
    std::fs::write(&main, "use m;\nfn main() {}\n").unwrap();
    let o = tern(&["check", main.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let m = dir.join("m.tern");
    assert!(
        stderr(&o).contains(&format!(
            ":1:5: error: module `m` ({}) is not valid UTF-8",
            m.display()
        )),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `--sanitize` adds the sanitizer's calls (checks before element accesses and
/// subslices, tags around pool calls, call sites into other files, the enable
/// in the entry); without it the generated code references none of them.
#[test]
fn sanitize_is_emitted_only_on_request() {
    let dir = scratch("sanitize-clif");
    let plain = dir.join("plain.clif");
    let sanitized = dir.join("sanitized.clif");
    // The builtin pool and slice_pool (slice_pool_pure declares sanitizer
    // externs of its own, for when its pool is sanitized).
    let file = dir.join("both.tern");
    std::fs::write(
        &file,
        "use slice_pool;\nfn main() {\n    var xs = reusable::alloc::<i64>(2);\n    xs = reusable::append(xs, 1);\n    let v = xs[1..];\n    print(v[0] + xs[0]);\n    reusable::free(xs);\n    var p = slice_pool::new(4096);\n    let s = slice_pool::alloc_slice::<u8>(ref p, 3);\n    s[0] = 65;\n    print(s[0]);\n    slice_pool::free_slice(ref p, s);\n    slice_pool::finish(ref p);\n}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    for (out, extra) in [(&plain, None), (&sanitized, Some("--sanitize"))] {
        let mut args = vec!["build", file, "--emit", "clif", "-o", out.to_str().unwrap()];
        args.extend(extra);
        let o = tern(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let plain = std::fs::read_to_string(plain).unwrap();
    let sanitized = std::fs::read_to_string(sanitized).unwrap();
    assert!(
        !plain.contains("tern_sanitize"),
        "an unsanitized build calls the sanitizer"
    );
    for f in [
        "tern_sanitize_enable",
        "tern_sanitize_check",
        "tern_sanitize_site",
        "tern_sanitize_tag",
        "tern_sanitize_retag",
        "tern_sanitize_release",
    ] {
        assert!(sanitized.contains(f), "a sanitized build does not call {f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tern check` of a bad file with stderr on a terminal, and `NO_COLOR` as given.
fn check_on_a_terminal(no_color: Option<&str>) -> String {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let dir = scratch("color");
    let bad = dir.join("bad.tern");
    std::fs::write(&bad, "fn main() {\n    let x: i64 = true;\n}\n").unwrap();
    let (master, slave) = pty_support::open_pty();
    let child = {
        let mut cmd = Command::new(TERN);
        cmd.args(["check", bad.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::from(slave))
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        cmd.spawn().expect("run tern")
        // `cmd`, and with it this process's copy of the slave, ends here:
        // reading the master then ends when the child exits.
    };
    let status = child_support::wait(child).status;
    assert_eq!(status.code(), Some(1));
    let mut out = Vec::new();
    let mut master = std::fs::File::from(master);
    let mut buf = [0u8; 4096];
    loop {
        let mut fds = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut fds, 1, 5000) } <= 0 {
            break;
        }
        match master.read(&mut buf) {
            Ok(n) if n > 0 => out.extend_from_slice(&buf[..n]),
            _ => break, // EIO: the slave side is closed
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    String::from_utf8_lossy(&out).replace("\r\n", "\n")
}

#[test]
fn diagnostics_are_coloured_on_a_terminal_unless_no_color() {
    let colored = check_on_a_terminal(None);
    assert!(
        colored.contains("\x1b[1;31merror\x1b[0m\x1b[1m: mismatched types"),
        "{colored:?}"
    );
    assert!(colored.contains("\x1b[1;31m^^^^\x1b[0m"), "{colored:?}");
    let plain = check_on_a_terminal(Some("1"));
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(
        plain.contains(": error: mismatched types: expected `i64`, found `bool`\n"),
        "{plain:?}"
    );
    // An empty NO_COLOR does not count (no-color.org).
    assert!(check_on_a_terminal(Some("")).contains('\x1b'));
    // Not a terminal: plain (every other test of this file).
    let o = tern(&["check", "tests/errors/addr_and_slices.tern"]);
    assert!(!stderr(&o).contains('\x1b'));
}

/// `-o` naming a node that is not a regular file (`/dev/null`, a FIFO) is
/// written into, as a C compiler's linker does: the build's rename replaced
/// the node itself (run as root, `/dev/null` became a regular file); a
/// socket, which cannot be written into, is refused by name. A
/// symbolic link is replaced, as the linker replaces it, and its target
/// left alone, unless it links to such a node (`-o /dev/stdout`): then
/// it is written through, or refused for a socket.
#[test]
fn build_writes_into_a_special_file_and_replaces_a_link() {
    use std::io::Read as _;
    use std::os::unix::fs::FileTypeExt as _;
    let dir = scratch("special-output");
    let src = dir.join("p.tern");
    std::fs::write(&src, "fn main() {\n    print(7);\n}\n").unwrap();
    let build = |out: &Path| tern(&["build", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    // Everything written into the FIFO, read on a thread of its own.
    let read_all = |fifo: &Path| {
        let fifo = fifo.to_path_buf();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        })
    };
    // A build into `out` refused, `out` as it was.
    let refused = |out: &Path, why: &str| {
        let o = build(out);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "error: cannot write `{}`: {why}; name another output\n",
                out.display()
            )
        );
    };
    let fifo = dir.join("out.fifo");
    child_support::mkfifo(&fifo);
    let reader = read_all(&fifo);
    let o = build(&fifo);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Tested before the join: had the FIFO been replaced, its reader would
    // wait for a writer for good.
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let bytes = reader.join().unwrap();
    // A socket is refused by name, and stays.
    let socket = dir.join("out.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    refused(&socket, "it is a socket");
    assert!(
        std::fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket()
    );
    // The whole executable went through the FIFO.
    let exe = dir.join("p");
    let o = build(&exe);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(bytes, std::fs::read(&exe).unwrap());
    // A link: replaced by the executable, its target as it was.
    let target = dir.join("target.txt");
    std::fs::write(&target, "notes\n").unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = build(&link);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "notes\n");
    let o = child_support::output(&mut Command::new(&link));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "7\n");
    // A link to a special file (`-o /dev/stdout`, a link to the FIFO
    // here) is written through and stays a link; one to a socket is
    // refused.
    let to_fifo = dir.join("to-fifo");
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    let reader = read_all(&fifo);
    let o = build(&to_fifo);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&to_fifo).unwrap().is_symlink());
    assert_eq!(reader.join().unwrap(), std::fs::read(&exe).unwrap());
    let to_socket = dir.join("to-socket");
    std::os::unix::fs::symlink(&socket, &to_socket).unwrap();
    refused(&to_socket, "it links to a socket");
    assert!(std::fs::symlink_metadata(&to_socket).unwrap().is_symlink());
    // Not followed where another user could have planted it: a link in a
    // sticky, world-writable folder that neither this user nor the folder's
    // owner made (needs root to make; skipped otherwise).
    use std::os::unix::fs::PermissionsExt as _;
    let shared = dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = shared.join("out");
    std::os::unix::fs::symlink(&fifo, &planted).unwrap();
    let c = std::ffi::CString::new(planted.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::lchown(c.as_ptr(), 54321, 54321) } == 0 {
        let o = build(&planted);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "error: cannot write `{}`: it is a symbolic link another user (uid 54321) made in a shared folder; not followed\n",
                planted.display()
            )
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `-o` naming this process's own stdout (`/dev/stdout`, a link to
/// `/proc/self/fd/1`) writes through the descriptor, wherever the shell
/// sent it: into a redirected file (the link stays; replaced, it took the
/// system's `/dev/stdout` with it when run as root, and the file stayed
/// empty), after what a `>>` log already holds; a file that holds the
/// executable alone gets its execute bits. A build waiting for a
/// FIFO's reader ends on SIGINT, leaving no scratch folder (the signals
/// were held through the wait, for good).
#[test]
fn build_writes_through_its_own_stdout_and_stops_waiting_for_a_fifo() {
    let dir = scratch("own-stdout");
    let src = dir.join("p.tern");
    std::fs::write(&src, "fn main() {\n    print(7);\n}\n").unwrap();
    let src = src.to_str().unwrap();
    let exe = dir.join("p");
    let o = tern(&["build", src, "-o", exe.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let built = std::fs::read(&exe).unwrap();
    let link = dir.join("my-stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    for (name, already, append) in [("new.bin", "", false), ("log.bin", "log\n", true)] {
        let file = dir.join(name);
        std::fs::write(&file, already).unwrap();
        let stdout = std::fs::OpenOptions::new()
            .write(true)
            .append(append)
            .open(&file)
            .unwrap();
        let child = Command::new(TERN)
            .args(["build", src, "-o", link.to_str().unwrap()])
            .stdout(stdout)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let o = child_support::wait(child);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        let mut want = already.as_bytes().to_vec();
        want.extend_from_slice(&built);
        assert!(std::fs::read(&file).unwrap() == want, "{name}");
        // The file that holds the executable alone can run, as a C
        // compiler's `-o /dev/stdout > p` leaves it; a log stays a log.
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        let base = std::fs::metadata(&exe).unwrap().permissions().mode() & 0o777;
        let plain = base & !0o111;
        assert_eq!(mode, if append { plain } else { base }, "{name}: {mode:o}");
    }
    let fifo = dir.join("out.fifo");
    child_support::mkfifo(&fifo);
    let temp = dir.join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let child = Command::new(TERN)
        .args(["build", src, "-o", fifo.to_str().unwrap()])
        .env("TMPDIR", &temp)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the scratch folder is gone, the build is not yet waiting.
    let start = std::time::Instant::now();
    while std::fs::read_dir(&temp).unwrap().next().is_none() {
        assert!(start.elapsed().as_secs() < 120, "no scratch folder");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    while std::fs::read_dir(&temp).unwrap().next().is_some() {
        assert!(start.elapsed().as_secs() < 120, "the scratch folder stayed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (o, timed_out) = child_support::wait_timed(child, None, std::time::Duration::from_secs(60));
    assert!(!timed_out, "the build kept waiting after SIGINT");
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(o.status.signal(), Some(libc::SIGINT), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

/// A module that is there but is no source file is an error at its `use`:
/// a FIFO (reading it waited for a writer for good), a directory (it was
/// "cannot find module") and a link that cannot be followed.
#[test]
fn a_module_that_is_not_a_file_is_refused() {
    let dir = scratch("module-not-a-file");
    let main = dir.join("main.tern");
    std::fs::write(&main, "use m;\nfn main() {}\n").unwrap();
    let module = dir.join("m.tern");
    let check = |why: &str| {
        let o = tern(&["check", main.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{why}");
        assert!(
            stderr(&o).starts_with(&format!(
                "{}:1:5: error: cannot read module `m` ({}): {why}\n",
                main.display(),
                module.display()
            )),
            "{}",
            stderr(&o)
        );
    };
    child_support::mkfifo(&module);
    check("it is a pipe or a socket, not a file");
    std::fs::remove_file(&module).unwrap();
    std::fs::create_dir(&module).unwrap();
    check("it is a directory");
    std::fs::remove_dir(&module).unwrap();
    std::os::unix::fs::symlink("loop.tern", &module).unwrap();
    std::os::unix::fs::symlink("m.tern", dir.join("loop.tern")).unwrap();
    check("Too many levels of symbolic links (os error 40)");
    let _ = std::fs::remove_dir_all(dir);
}

/// A source that never ends is refused after 64 MiB, as the entry file and
/// as a module (at its `use`), not read until memory runs out.
#[test]
fn a_source_that_never_ends_is_refused() {
    for cmd in ["check", "run", "build"] {
        let o = tern(&[cmd, "/dev/zero"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert_eq!(
            stderr(&o),
            "error: cannot read `/dev/zero`: it is larger than 64 MiB, the limit of a source file\n",
            "{cmd}"
        );
    }
    let dir = scratch("endless");
    std::os::unix::fs::symlink("/dev/zero", dir.join("m.tern")).unwrap();
    let main = dir.join("main.tern");
    std::fs::write(&main, "use m;\nfn main() {}\n").unwrap();
    let o = tern(&["check", main.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with(&format!(
            "{}:1:5: error: module `m` ({}) is larger than 64 MiB, the limit of a source file\n",
            main.display(),
            dir.join("m.tern").display()
        )),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A source that is not UTF-8 is refused with where its first bad byte is,
/// in the form of every compile error (`file:line:col: error:`, the line
/// with the bad bytes shown as U+FFFD, a caret; it was `error: file:...`
/// without the line).
#[test]
fn a_source_that_is_not_utf8_is_located() {
    let dir = scratch("not-utf8");
    let file = dir.join("bad.tern");
    std::fs::write(
        &file,
        b"fn main() -> i64 {\n  print(\xff\xfe); return 0; }\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = tern(&["run", f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{f}:2:9: error: the file is not valid UTF-8 (byte 0xff)\n\
             2 |   print(\u{fffd}\u{fffd}); return 0; }}\n  \
             |         ^\n\
             error: could not compile `{f}`: 1 error\n"
        )
    );
    // A byte order mark first is not part of the text: the program runs, and
    // its errors' columns count from what follows it.
    std::fs::write(&file, b"\xef\xbb\xbffn main() { print(1); }\n").unwrap();
    let o = tern(&["run", f]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n", "{}", stderr(&o));
    std::fs::write(&file, b"\xef\xbb\xbffn main() { print(x); }\n").unwrap();
    let o = tern(&["check", f]);
    assert!(
        stderr(&o).starts_with(&format!("{f}:1:19: error: ")),
        "{}",
        stderr(&o)
    );
    std::fs::write(&file, b"\xef\xbb\xbf\xff").unwrap();
    let o = tern(&["run", f]);
    assert_eq!(
        stderr(&o),
        format!(
            "{f}:1:1: error: the file is not valid UTF-8 (byte 0xff)\n\
             1 | \u{fffd}\n  \
             | ^\n\
             error: could not compile `{f}`: 1 error\n"
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tern help bench` prints the harness's own help, as `tern bench --help`
/// does (it printed a stub without options).
#[test]
fn help_bench_is_the_bench_help() {
    let a = tern(&["help", "bench"]);
    let b = tern(&["bench", "--help"]);
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout)
    );
    assert!(String::from_utf8_lossy(&a.stdout).contains("--workloads"));
}

/// A `--keep-call` naming no function says so, under `build` and `run` (it
/// was accepted silently: a misspelt name in a benchmark's configuration
/// kept nothing).
#[test]
fn keep_call_of_no_function_is_noted() {
    let dir = scratch("keep-call");
    let out = dir.join("a");
    let o = tern(&[
        "build",
        "--keep-call",
        "nosuch",
        "tests/programs/arith_i64.tern",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stderr(&o),
        "note: --keep-call `nosuch` names no function of the program\n"
    );
    // `tern run` says so too (it was silent there), before the program runs,
    // and a name that exists is no note.
    let run = |name: &str| {
        let o = tern(&["run", "--keep-call", name, "tests/programs/arith_i64.tern"]);
        assert_eq!(o.status.code(), Some(0));
        stderr(&o)
    };
    assert_eq!(
        run("nosuch"),
        "note: --keep-call `nosuch` names no function of the program\n"
    );
    assert_eq!(run("main"), "");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `TERN_STDLIB` naming a directory without the module, or no directory:
/// the error says where the standard library was looked for.
#[test]
fn a_module_missing_from_tern_stdlib_names_the_directory() {
    let dir = scratch("stdlib-dir");
    let file = dir.join("main.tern");
    std::fs::write(&file, "use vec;\nfn main() {}\n").unwrap();
    let missing = dir.join("none");
    for (stdlib, why) in [
        (&dir, "which has no `vec.tern`".to_string()),
        (&missing, "which is not a directory".to_string()),
    ] {
        let o = child_support::output(
            Command::new(TERN)
                .args(["check", file.to_str().unwrap()])
                .env("TERN_STDLIB", stdlib),
        );
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "{f}:1:5: error: cannot find module `vec`\n\
                 1 | use vec;\n  |     ^^^\n  |\n  \
                 = note: the standard library is read from `{d}` (TERN_STDLIB), {why}\n\
                 error: could not compile `{f}`: 1 error\n",
                f = file.display(),
                d = stdlib.display()
            )
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A module name names one file in a program: a program's own
/// `slice_pool.tern` cannot become the module the standard library's
/// `vec_pool` uses (its operations are trusted by the stale-operand rule as
/// the standard library's), whichever `use` comes first; and the standard
/// library's own `use`s never read a `stdlib/` folder where `tern` runs.
#[test]
fn a_program_module_cannot_stand_in_for_one_the_stdlib_uses() {
    let dir = scratch("module-clash");
    let tern_in =
        |args: &[&str]| child_support::output(Command::new(TERN).args(args).current_dir(&dir));
    std::fs::write(dir.join("slice_pool.tern"), "fn own() {}\n").unwrap();
    let main = dir.join("main.tern");
    for (text, line) in [
        ("use slice_pool;\nuse vec_pool;\nfn main() {}\n", 1),
        ("use vec_pool;\nuse slice_pool;\nfn main() {}\n", 2),
    ] {
        std::fs::write(&main, text).unwrap();
        let o = tern_in(&["check", "main.tern"]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "main.tern:{line}:5: error: module `slice_pool` names two files in this program, \
                 `slice_pool.tern` and `stdlib/slice_pool.tern`: a name must name one module \
                 (rename the program's own file; the standard library's modules always use the \
                 standard library's)\n\
                 {line} | use slice_pool;\n  |     ^^^^^^^^^^\n\
                 error: could not compile `main.tern`: 1 error\n",
            )
        );
    }
    // Without the program's own `use slice_pool`, its file is not looked at.
    std::fs::write(&main, "use vec_pool;\nfn main() { print(1); }\n").unwrap();
    let o = tern_in(&["run", "main.tern"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n", "{}", stderr(&o));
    // A program kept in a folder named `stdlib`: its own `vec_pool.tern` is
    // not the standard library's (it was, by its name `stdlib/vec_pool.tern`,
    // and its `put` was trusted by the stale-operand rule).
    std::fs::create_dir_all(dir.join("stdlib")).unwrap();
    std::fs::write(
        dir.join("stdlib/main.tern"),
        "use slice_pool;\nuse vec_pool;\nfn main() {\n    var p = slice_pool::new(4096);\n    \
         var s = slice_pool::alloc_slice::<i64>(ref p, 4);\n    let t = vec_pool::put(ref p, s, ref s[1]);\n    \
         print(t[1]);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("stdlib/vec_pool.tern"),
        "use slice_pool;\nfn put(ref p: slice_pool::Pool, s: []i64, ref x: i64) -> []i64 {\n    \
         slice_pool::free_slice::<i64>(ref p, s);\n    let t = slice_pool::alloc_slice::<i64>(ref p, 4);\n    \
         x = 7;\n    return t;\n}\n",
    )
    .unwrap();
    let o = tern_in(&["check", "stdlib/main.tern"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .starts_with("stdlib/main.tern:6:41: error: this argument points into a pool's memory"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(dir.join("stdlib")).unwrap();
    // Nor is a `stdlib/` folder beside it.
    std::fs::remove_file(dir.join("slice_pool.tern")).unwrap();
    std::fs::create_dir_all(dir.join("stdlib")).unwrap();
    std::fs::write(dir.join("stdlib/slice_pool.tern"), "this is not Tern\n").unwrap();
    let o = tern_in(&["run", "main.tern"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n", "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

/// `--help` and `--version` that cannot be written (a full device) fail with
/// status 1 and say so, for `tern` and for `tern bench` alike (clap's own
/// printing ignored the failed write and reported success).
#[test]
fn help_that_cannot_be_written_is_an_error() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["run", "--help"],
        &["bench", "--help"],
        &["help", "bench"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let child = Command::new(TERN)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let o = child_support::wait(child);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&o),
            "error: cannot write to stdout: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
    let o = tern(&["--help"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("The Tern language"));
}

/// A source line shown under an error has its control characters drawn as
/// `?` (byte for byte, so the caret still lines up): an escape sequence or
/// a lone carriage return in the source drove the terminal. A line's
/// `\r\n` end stays as it is.
#[test]
fn control_characters_of_a_source_line_are_not_echoed() {
    let dir = scratch("control-source");
    let file = dir.join("c.tern");
    std::fs::write(
        &file,
        "fn main() {\r\n    let s: i64 = \"a\x1b[2Jb\rc\";\r\n}\r\n",
    )
    .unwrap();
    let o = tern(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{0}:2:18: error: mismatched types: expected `i64`, found `[8]u8`\n2 |     let s: i64 = \"a?[2Jb?c\";\n  |                  ^^^^^^^^^^\n\
             {0}:2:25: error: a carriage return inside a literal must be written `\\r` (one written as it is would not show)\n2 |     let s: i64 = \"a?[2Jb?c\";\n  |                         ^\n\
             error: could not compile `{0}`: 2 errors\n",
            file.display()
        )
    );
    let _ = std::fs::remove_dir_all(dir);
}
