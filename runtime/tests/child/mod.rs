//! Running one child fixture of this test binary in a fresh process
//! (`TERN_CHILD=1`): for runtime errors, which end the process, and for
//! process-wide switches. A child fixture is `#[ignore]`d (in the parent's
//! process it would mean nothing, or end the run) and calls [`require_child`]
//! or [`fixture_env`] first, so run by hand without its parent it fails
//! loudly instead of passing; [`run_child`] runs it with `--ignored --exact`
//! and fails when the child ran no test or ran past [`PATIENCE`].
//!
//! The timeout is the driver's one helper (`tests/child_support`), included
//! by path: every child any test starts goes through it.

#![allow(dead_code)]

use std::process::Command;

#[path = "../../../tests/child_support/mod.rs"]
mod child_support;

pub use child_support::PATIENCE;

/// Runs the child fixture `name` with the extra environment `env`; its exit
/// status and the first `error:` line of its stderr. Panics when the child
/// runs past [`PATIENCE`] or did not run exactly the one test `name`.
pub fn run_child(name: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("TERN_CHILD", "1")
    .envs(env.iter().copied());
    let (o, timed_out) = child_support::run_timed(cmd, None, PATIENCE);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !timed_out,
        "child fixture {name}: killed after {} s\nstdout:\n{stdout}\nstderr:\n{stderr}",
        PATIENCE.as_secs()
    );
    // libtest prints this line before the test starts, so it is there even
    // when the fixture ends the process; a misspelt or un-ignored name runs
    // 0 tests and exits 0, which must not pass.
    assert!(
        stdout.lines().any(|l| l == "running 1 test"),
        "child fixture {name} did not run exactly one test\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or("")
        .to_string();
    (o.status.code(), line)
}

/// Panics unless this process was started by [`run_child`].
pub fn require_child() {
    assert!(
        std::env::var_os("TERN_CHILD").is_some(),
        "this is a child fixture: TERN_CHILD is not set; its parent test runs it \
         in a process of its own (see runtime/tests/child/mod.rs)"
    );
}

/// [`require_child`], then the variable `var` the parent sets for the
/// fixture (panics when it is missing).
pub fn fixture_env(var: &str) -> String {
    require_child();
    std::env::var(var)
        .unwrap_or_else(|_| panic!("child fixture: {var} is not set (its parent test sets it)"))
}
