//! `tern repl` driven through piped stdin: each `tests/repl/*.txt` transcript
//! holds the input and the exact stdout and stderr expected, in sections
//! `--- input`, `--- stdout`, `--- stderr`. Lines before the first section
//! are a comment, except `env: NAME=VALUE`, which sets an environment
//! variable for the REPL, and `exit: N`, the session's exit status (default 0). The REPL runs from the workspace root, so `:load` paths
//! are relative to it. In `time:` lines every number reads as `N`.

mod child_support;

use std::path::Path;
use std::process::Command;

/// The sections of a transcript file.
struct Transcript {
    env: Vec<(String, String)>,
    exit: i32,
    input: String,
    stdout: String,
    stderr: String,
}

fn parse(text: &str) -> Transcript {
    let mut sections: [Option<String>; 3] = [None, None, None];
    let mut current: Option<usize> = None;
    let mut env = Vec::new();
    let mut exit = 0;
    for line in text.lines() {
        if current.is_none()
            && let Some((name, value)) = line.strip_prefix("env: ").and_then(|v| v.split_once('='))
        {
            env.push((name.to_string(), value.to_string()));
            continue;
        }
        if current.is_none()
            && let Some(n) = line.strip_prefix("exit: ")
        {
            exit = n.trim().parse().expect("`exit:` takes a number");
            continue;
        }
        let section = match line {
            "--- input" => Some(0),
            "--- stdout" => Some(1),
            "--- stderr" => Some(2),
            _ => None,
        };
        if let Some(k) = section {
            sections[k] = Some(String::new());
            current = Some(k);
            continue;
        }
        if let Some(k) = current {
            let s = sections[k].as_mut().expect("section started");
            s.push_str(line);
            s.push('\n');
        }
    }
    let [input, stdout, stderr] = sections.map(|s| s.expect("missing section"));
    Transcript {
        env,
        exit,
        input,
        stdout,
        stderr,
    }
}

/// Replaces the numbers of `time:` lines by `N` (timings vary per run).
fn normalize(text: &str) -> String {
    text.lines()
        .map(|line| {
            if !line.starts_with("time: ") {
                return format!("{line}\n");
            }
            let mut out = String::new();
            let mut in_number = false;
            for c in line.chars() {
                if c.is_ascii_digit() || (in_number && c == '.') {
                    if !in_number {
                        out.push('N');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    out.push(c);
                }
            }
            out + "\n"
        })
        .collect()
}

/// Runs the transcript `tests/repl/NAME.txt` and compares the output.
fn check(name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("tests/repl").join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&path).expect("transcript exists");
    let t = parse(&text);
    let out = run_repl(t.input.as_bytes(), &t.env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = normalize(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout, t.stdout, "stdout of {name}");
    assert_eq!(stderr, t.stderr, "stderr of {name}");
    assert_eq!(out.status.code(), Some(t.exit), "exit status of {name}");
}

/// Runs `tern repl` from the workspace root (no inherited `TERN_STDLIB`)
/// with `input` piped to its stdin and `env` set.
fn run_repl(input: &[u8], env: &[(String, String)]) -> std::process::Output {
    child_support::output_with_input(
        Command::new(env!("CARGO_BIN_EXE_tern"))
            .arg("repl")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("TERN_STDLIB")
            .envs(env.iter().map(|(k, v)| (k, v))),
        input,
    )
}

/// One test per transcript, and the list `every_transcript_is_run` checks.
macro_rules! transcripts {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { check(stringify!($name)); })*
        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

transcripts!(
    persistence,
    let_written_through_slice,
    redefinition,
    redefinition_layout,
    module_swap,
    failed_input,
    failed_input_view,
    sanitize_off,
    pool_stats,
    pool_stats_quit,
    named_bindings,
    pure_finish_handle_in_own_memory,
    finish_leak_keeps_slices,
    compile_errors,
    runtime_errors,
    stack_overflow,
    multiline,
    commands,
    clif_shadowed,
    load,
    time,
    reusable,
    values,
    modules,
    slice_pool,
    sanitize,
    session,
    user_terms,
    io,
    parse_recovery,
);

/// Every transcript file has a test above.
#[test]
fn every_transcript_is_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/repl");
    for entry in std::fs::read_dir(dir).expect("tests/repl exists") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "txt") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(LISTED.contains(&stem.as_str()), "{stem}.txt has no test");
        }
    }
}

/// Invalid UTF-8 on stdin is an error for that input, not the end of the
/// session (transcripts are UTF-8 text, so this one is inline).
/// A line that is not UTF-8 drops its input, located, and the session goes
/// on; inside a string literal it was once rewritten to U+FFFD and run.
#[test]
fn invalid_utf8_input_is_reported_and_the_session_goes_on() {
    let out = run_repl(
        b"let a = 1;\n\xff\nprint(\"\xc3\xa9\xff\xfe\");\nprint(a,\n\"\xfe\");\na + 1\n",
        &[],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: <repl>:1:1: the input is not valid UTF-8 (byte 0xff); it was not run\n\
         error: <repl>:1:9: the input is not valid UTF-8 (byte 0xff); it was not run\n\
         error: <repl>:2:2: the input is not valid UTF-8 (byte 0xfe); it was not run\n"
    );
    assert_eq!(out.status.code(), Some(0));
}

/// A piped session's program reads stdin as ended: the session reads its
/// input ahead in blocks, and a program's read once took what lay past the
/// block (here the line `12345` was cut after its `1`, which then ran alone).
#[test]
fn a_program_in_a_piped_session_reads_stdin_as_ended() {
    let head = "use io;\nlet d = io::read_stdin(); print(len(d));\n";
    let mut input = head.to_string();
    input.push_str("//");
    input.push_str(&"a".repeat(8192 - head.len() - 4));
    input.push_str("\n12345\n99\n");
    let out = run_repl(input.as_bytes(), &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n12345\n99\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
}

/// An input that cannot be read ends the session with the error and status
/// 1 (`tern repl < folder` ended as if the input were empty, status 0).
#[test]
fn an_unreadable_input_is_an_error() {
    let folder = std::fs::File::open(env!("CARGO_MANIFEST_DIR")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_tern"))
        .arg("repl")
        .stdin(folder)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child_support::wait(child);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: cannot read the REPL's input: Is a directory (os error 21)\n"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// The rest of an input a bad line drops is dropped with it, up to where
/// the input ends (its brackets closed, or a blank line): its lines once ran
/// as inputs of their own, so a free guarded by `if false` ran, and a line
/// starting with `:` is no command inside it.
#[test]
fn a_bad_line_drops_the_rest_of_its_input_too() {
    let out = run_repl(
        b"var r = reusable::alloc::<i64>(4);\nif false {\n  eprint(\"\xe9t\xe9\");\n  reusable::free(r);\n}\nr[0]\n\
          if true {\n  let s = \"\xff\";\n  print(666);\n:quit\n}\nreusable::free(r);\nprint(len(r))\n",
        &[],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n4\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: <repl>:2:11: the input is not valid UTF-8 (byte 0xe9); it was not run\n\
         error: <repl>:2:12: the input is not valid UTF-8 (byte 0xff); it was not run\n"
    );
    assert_eq!(out.status.code(), Some(0));
}

/// A piped line longer than a source file may be (64 MiB) is read to its
/// end without being kept whole, and drops its input (it once grew the
/// REPL's memory until the allocator aborted); so does an input whose lines
/// add up to more. The session goes on.
#[test]
fn an_overlong_line_drops_its_input_and_the_session_goes_on() {
    let limit = 64 << 20;
    let mut input = b"let a = 1;\nprint(a,\n".to_vec();
    input.extend(std::iter::repeat_n(b' ', limit + 1));
    // Its input ends where its brackets close; the lines up to there go
    // with it, and none of them runs on its own.
    input.extend(b"\nprint(a + 100);\n)\nprint(a + 1);\nprint(\n");
    for _ in 0..3 {
        input.extend(b"//");
        input.extend(std::iter::repeat_n(b'x', limit / 3));
        input.push(b'\n');
    }
    input.extend(b"print(a + 200);\n)\nprint(a + 2);\n");
    let out = run_repl(&input, &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n3\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: <repl>:2: the line is longer than 64 MiB; its input was not run\n\
         error: <repl>: the input is longer than 64 MiB; it was not run\n"
    );
    assert_eq!(out.status.code(), Some(0));
}

/// `:load` of a FIFO is refused: opening it would wait for a writer, and
/// nothing at the prompt could interrupt that.
#[test]
fn load_refuses_a_fifo() {
    let dir = std::env::temp_dir().join(format!("tern-repl-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("f.tern");
    child_support::mkfifo(&fifo);
    let out = run_repl(format!(":load {}\n1 + 1\n", fifo.display()).as_bytes(), &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: cannot read `{}`: it is a pipe or a socket, not a file\n",
            fifo.display()
        )
    );
    // A directory as a module's is (`loader::not_a_source`).
    let out = run_repl(format!(":load {}\n", dir.display()).as_bytes(), &[]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: cannot read `{}`: it is a directory\n",
            dir.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Standard output gone ends the session with one error line and status 1
/// (the REPL's own replies went through `println!`, which panicked).
#[test]
fn an_unwritable_stdout_ends_the_session_with_an_error() {
    let out = child_support::output_with_input(
        Command::new("sh")
            .args([
                "-c",
                "exec \"$0\" repl > /dev/full",
                env!("CARGO_BIN_EXE_tern"),
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("TERN_STDLIB"),
        b":help\n1 + 1\n",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: tern repl: cannot write to stdout: No space left on device (os error 28)\n"
    );
    assert_eq!(out.status.code(), Some(1));
}
