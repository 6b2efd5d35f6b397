//! A binding redefined many times keeps one slot, not one per definition:
//! 300 redefinitions of an 800 KB array used to keep 240 MB until `:reset`.
//! Alone in its test binary so that the child's peak RSS it reads is its own.

mod child_support;

use std::process::Command;

const REDEFINITIONS: usize = 300;

#[test]
fn a_redefined_binding_frees_its_old_slot() {
    let mut input = String::new();
    for k in 0..REDEFINITIONS {
        input.push_str(&format!("let big = [{k}; 100000];\n"));
    }
    input.push_str("big[99999]\n");
    let out = child_support::output_with_input(
        Command::new(env!("CARGO_BIN_EXE_tern"))
            .arg("repl")
            .env_remove("TERN_STDLIB"),
        input.as_bytes(),
    );
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
