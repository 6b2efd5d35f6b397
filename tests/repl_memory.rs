//! A binding redefined many times keeps one slot, not one per definition:
//! 300 redefinitions of an 800 KB array used to keep 240 MB until `:reset`.
//! Alone in its test binary so that the child's peak RSS it reads is its own.

use std::io::Write;
use std::process::{Command, Stdio};

const REDEFINITIONS: usize = 300;

#[test]
fn a_redefined_binding_frees_its_old_slot() {
    let mut input = String::new();
    for k in 0..REDEFINITIONS {
        input.push_str(&format!("let big = [{k}; 100000];\n"));
    }
    input.push_str("big[99999]\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tern"))
        .arg("repl")
        .env_remove("TERN_STDLIB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tern starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("tern ends");
    writer.join().expect("writer").expect("input written");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", REDEFINITIONS - 1)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // SAFETY: getrusage fills the struct it is given.
    let peak_kib = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    };
    // 300 kept slots alone would be 234 MiB; a debug `tern repl` with one
    // slot (and its frame's copy) stays far below this bound.
    assert!(peak_kib < 160 * 1024, "peak RSS {peak_kib} KiB");
}
