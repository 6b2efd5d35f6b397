//! Running one test of this test binary in a fresh process (`TERN_CHILD=1`):
//! for runtime errors, which end the process.

/// Runs the child test `name` with the extra environment `env`; its exit
/// status and the first `error:` line of its stderr.
pub fn run_child(name: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("TERN_CHILD", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or("")
        .to_string();
    (out.status.code(), line)
}
