//! `cargo install` gives a `tern` that works anywhere: from a directory
//! unrelated to the checkout, with no `TERN_*` variable, it runs a program
//! and builds an executable (the runtime library travels inside the binary).
//!
//! The install reuses this build's debug artifacts (`--debug` with the
//! workspace's target directory), so it costs a link, not a rebuild.

mod child_support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use child_support::output;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn installed_tern_runs_and_builds_from_anywhere() {
    let base = std::env::temp_dir().join(format!("tern-install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (root, work, home) = (base.join("root"), base.join("work"), base.join("home"));
    for d in [&work, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let target: PathBuf = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(ROOT).join("target"));
    let mut install = Command::new(env!("CARGO"));
    install
        .args([
            "install",
            "--debug",
            "--locked",
            "--offline",
            "--path",
            ROOT,
            "--root",
        ])
        .arg(&root)
        .arg("--target-dir")
        .arg(&target);
    // A link, not a rebuild, but cargo may wait for the build directory's
    // lock: the build timeout of `tests/pool_support`.
    let (o, timed_out) = child_support::run_timed(install, None, Duration::from_secs(600));
    assert!(
        !timed_out && o.status.success(),
        "cargo install: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(
        work.join("hello.tern"),
        "fn main() {\n    print(\"hello from anywhere\");\n}\n",
    )
    .unwrap();
    let tern = root.join("bin/tern");
    let clean = |cmd: &mut Command| {
        cmd.current_dir(&work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home);
    };
    let mut run = Command::new(&tern);
    run.args(["run", "hello.tern"]);
    clean(&mut run);
    let o = output(&mut run);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello from anywhere\n");
    let mut build = Command::new(&tern);
    build.args(["build", "hello.tern", "-o", "hello"]);
    clean(&mut build);
    let o = output(&mut build);
    assert!(
        o.status.success(),
        "tern build: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = output(&mut Command::new(work.join("hello")));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello from anywhere\n");
    // The runtime library was unpacked into the user's cache.
    assert!(
        std::fs::read_dir(home.join(".cache/tern"))
            .unwrap()
            .flatten()
            .any(|e| e
                .file_name()
                .to_string_lossy()
                .starts_with("libtern_runtime-")),
        "no runtime library in ~/.cache/tern"
    );
    // A hello world stays small with its Tern line tables.
    let size = std::fs::metadata(work.join("hello")).unwrap().len();
    assert!(size <= 600 * 1024, "hello world is {size} bytes");
    let _ = std::fs::remove_dir_all(&base);
}
