//! Finding the `tern` driver under test: an explicit path, or — when the
//! tester runs from the workspace it was built in — a fresh build of the
//! workspace's own driver, in the tester's own profile.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root this crate was compiled in.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("difftest/ sits in the workspace root")
        .to_path_buf()
}

/// The cargo profile directory of the tester's own build (`debug` or
/// `release`).
pub fn own_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// The driver to test: `explicit` when given (it must exist); else runs
/// `cargo build --bin tern` (with `--release` when the tester is a release
/// build) in the workspace root, once, and returns the binary it built.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        // Absolute: programs run with their own directory as the cwd.
        let p = std::fs::canonicalize(p).map_err(|e| format!("--tern {}: {e}", p.display()))?;
        return usable(p);
    }
    let root = workspace_root();
    if !root.join("Cargo.toml").is_file() || !root.join("src/main.rs").is_file() {
        return Err(format!(
            "the workspace this tester was built in ({}) is gone; pass --tern PATH",
            root.display()
        ));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["build", "--quiet", "--bin", "tern"]);
    if own_profile() == "release" {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo to build tern: {e}; pass --tern PATH"))?;
    if !status.success() {
        return Err(format!("`cargo build --bin tern` failed ({status})"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { root.join(t) })
        .unwrap_or_else(|| root.join("target"));
    let exe = target
        .join(own_profile())
        .join(format!("tern{}", std::env::consts::EXE_SUFFIX));
    if exe.is_file() {
        usable(exe)
    } else {
        Err(format!(
            "built tern, but {} does not exist; pass --tern PATH",
            exe.display()
        ))
    }
}

/// `exe` if it runs (`tern --version`).
fn usable(exe: PathBuf) -> Result<PathBuf, String> {
    match Command::new(&exe).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(exe),
        Ok(o) => Err(format!("{} --version failed ({})", exe.display(), o.status)),
        Err(e) => Err(format!("cannot run {}: {e}", exe.display())),
    }
}
