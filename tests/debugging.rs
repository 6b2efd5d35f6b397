//! What a developer debugging a Tern executable relies on: DWARF line
//! tables that name `.tern` lines (objdump, addr2line, gdb), `--emit asm`
//! that assembles and links back into the same program, and the JIT's perf
//! map. `cc` is required (AOT needs it anyway). A missing objdump, gdb or
//! addr2line fails the test when `CI` is set (`.ci/run` installs them);
//! elsewhere its check is skipped with a `SKIPPED:` line on stderr.

mod program_support;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use program_support::{ROOT, TERN, child};

/// A scratch directory with its own cache (where `tern build` unpacks the
/// runtime library).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-debugging-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd` to completion (killed, and the test failed, after
/// [`child::PATIENCE`]).
fn run(cmd: &mut Command) -> Output {
    child::output(cmd)
}

fn tern(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(TERN)
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache")))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `tool` is an executable file on `PATH` (what `command -v` finds).
fn installed(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// A check that needs a tool that is not installed: a failure under CI
/// (which installs it), a loud skip elsewhere.
fn missing(tools: &str, check: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{tools} not installed, and CI is set: .ci/run installs it ({check})"
    );
    // Straight to stderr: `eprintln!` is captured, and a passing test's
    // capture is never shown.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {tools} not installed: {check} did not run (with CI set, this fails)"
    );
}

/// The example of the backtrace docs, copied into `dir` as `prog.tern`.
fn program(dir: &Path) -> PathBuf {
    let src = Path::new(ROOT).join("tests/programs/err_backtrace_nested.tern");
    let dst = dir.join("prog.tern");
    std::fs::copy(src, &dst).unwrap();
    dst
}

fn build(dir: &Path, level: &str) -> PathBuf {
    let o = tern(dir, &["build", level, "prog.tern", "-o", "prog"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    dir.join("prog")
}

#[test]
fn line_tables_name_tern_lines() {
    let dir = scratch("lines");
    program(&dir);
    let exe = build(&dir, "-O0");
    if installed("objdump") {
        let o = run(Command::new("objdump").arg("--dwarf=decodedline").arg(&exe));
        let lines = text(&o.stdout);
        // The rows of `inner` (line 6) and `outer` (line 10) are there.
        assert!(lines.contains("CU: prog.tern:"), "{lines}");
        assert!(
            lines
                .lines()
                .any(|l| l.starts_with("prog.tern") && l.split_whitespace().nth(1) == Some("6")),
            "{lines}"
        );
    } else {
        missing("objdump (binutils)", "the DWARF decodedline check");
    }
    if installed("gdb") {
        let o = run(Command::new("gdb")
            .args([
                "-nx",
                "-batch",
                "-ex",
                "break prog.tern:6",
                "-ex",
                "run",
                "-ex",
                "bt",
            ])
            .arg(&exe)
            .current_dir(&dir));
        let out = text(&o.stdout);
        assert!(
            out.contains("Breakpoint 1, inner () at prog.tern:6"),
            "{out}"
        );
        assert!(out.contains(" in outer () at prog.tern:10"), "{out}");
        assert!(out.contains(" in main () at prog.tern:15"), "{out}");
    } else if installed("addr2line") && installed("nm") {
        let o = run(Command::new("nm").arg(&exe));
        let nm = text(&o.stdout);
        let addr = nm
            .lines()
            .find(|l| l.ends_with(" tern.outer"))
            .and_then(|l| l.split_whitespace().next())
            .expect("tern.outer in the symbol table");
        let o = run(Command::new("addr2line")
            .args(["-f", "-e"])
            .arg(&exe)
            .arg(addr));
        let out = text(&o.stdout);
        assert!(
            out.starts_with("outer\n") && out.contains("prog.tern:9"),
            "{out}"
        );
    } else {
        missing(
            "gdb, and addr2line with nm (binutils),",
            "the debugger check",
        );
    }
}

/// `--emit asm` for `prog.tern` at `level`, assembled with `cc -c`, linked
/// like `tern build` links, run: the same output, error and status as the
/// executable `tern build` makes.
fn assembly_round_trip(dir: &Path, level: &str) {
    let exe = build(dir, level);
    let o = tern(
        dir,
        &["build", level, "prog.tern", "--emit", "asm", "-o", "prog.s"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let asm = std::fs::read_to_string(dir.join("prog.s")).unwrap();
    assert!(asm.contains("\t.intel_syntax noprefix\n"), "{asm}");
    assert!(asm.contains("\ntern.inner:\n"), "{asm}");
    // Without it the linker would make the stack executable.
    assert!(
        asm.contains("\t.section .note.GNU-stack,\"\",@progbits\n"),
        "{asm}"
    );
    assert!(asm.contains("\t.loc 1 6 12\t# prog.tern:6:12\n"), "{asm}");
    let o = run(Command::new("cc")
        .args(["-c", "prog.s", "-o", "prog_s.o"])
        .current_dir(dir));
    assert!(o.status.success(), "cc -c: {}", text(&o.stderr));
    let cache = dir.join("cache/tern");
    let lib = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "a"))
        .expect("tern build unpacked the runtime library");
    let o = run(Command::new("cc")
        .arg("prog_s.o")
        .arg(&lib)
        .args(tern_codegen::runtime_link_libs())
        .args(["-o", "prog_s"])
        .current_dir(dir));
    assert!(o.status.success(), "link: {}", text(&o.stderr));
    let want = run(&mut Command::new(&exe));
    let got = run(&mut Command::new(dir.join("prog_s")));
    assert_eq!(text(&got.stdout), text(&want.stdout));
    assert_eq!(text(&got.stderr), text(&want.stderr));
    assert_eq!(got.status.code(), want.status.code());
    // The backtrace survived reassembly (its return addresses are labels).
    assert!(text(&got.stderr).contains("  in outer at prog.tern:10:12\n"));
}

#[test]
fn emitted_assembly_assembles_into_the_same_program() {
    let dir = scratch("asm");
    program(&dir);
    for level in ["-O0", "-O2"] {
        assembly_round_trip(&dir, level);
    }
}

#[test]
fn perf_map_lists_every_function() {
    let dir = scratch("perf");
    program(&dir);
    let tern = Command::new(TERN)
        .args(["run", "--perf-map", "prog.tern"])
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let map = PathBuf::from(format!("/tmp/perf-{}.map", tern.id()));
    let o = child::wait(tern);
    assert_eq!(o.status.code(), Some(101));
    let text = std::fs::read_to_string(&map).expect("the perf map");
    let _ = std::fs::remove_file(&map);
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap_or(""))
        .collect();
    assert_eq!(names, ["inner", "outer", "main"], "{text}");
    for line in text.lines() {
        let fields: Vec<&str> = line.splitn(3, ' ').collect();
        assert!(u64::from_str_radix(fields[0], 16).is_ok(), "{line}");
        assert!(
            u64::from_str_radix(fields[1], 16).is_ok_and(|n| n > 0),
            "{line}"
        );
    }
}

#[test]
fn perf_map_never_follows_a_planted_link() {
    let dir = scratch("perf-link");
    program(&dir);
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    // `exec` keeps the shell's PID, so the link sits at the map's exact name
    // before tern starts, as another user could place it.
    let o = run(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ln -s '{}' /tmp/perf-$$.map && exec '{TERN}' run --perf-map prog.tern",
            victim.display()
        ))
        .current_dir(&dir));
    let pid_link = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{pid_link}");
    assert!(
        pid_link.starts_with("error: cannot write the perf map /tmp/perf-")
            && pid_link.ends_with(
                ".map: File exists (os error 17) (not a file of yours: remove it, \
                 or run again under another process id)\n"
            ),
        "{pid_link}"
    );
    let map = pid_link
        .trim_start_matches("error: cannot write the perf map ")
        .split(':')
        .next()
        .unwrap()
        .to_string();
    let _ = std::fs::remove_file(&map);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(o.stdout.is_empty(), "the program did not run");
}

/// A regular file of the user's own at the map's name is a stale map of an
/// earlier process that had the same id: replaced, and the run goes on.
#[test]
fn perf_map_replaces_a_stale_map_of_ones_own() {
    let dir = scratch("perf-stale");
    program(&dir);
    let o = run(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo 'stale 1 old' > /tmp/perf-$$.map && echo $$ >&2 && exec '{TERN}' run --perf-map prog.tern"
        ))
        .current_dir(&dir));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let pid = err.lines().next().unwrap().trim().to_string();
    let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
    let text = std::fs::read_to_string(&map).unwrap_or_default();
    let _ = std::fs::remove_file(&map);
    assert_eq!(o.status.code(), Some(101), "{err}");
    assert!(!text.contains("old"), "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");
}
