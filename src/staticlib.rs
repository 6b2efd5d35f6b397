//! Finding `libtern_runtime.a` for linking: `TERN_RUNTIME_LIB`, else beside
//! the `tern` executable (cargo puts it in `target/<profile>/` when it builds
//! the workspace, and in `target/<profile>/deps/` with a hash suffix).

use std::path::{Path, PathBuf};

/// The library's file name on this platform.
pub const LIB_NAME: &str = "libtern_runtime.a";

/// Locates the runtime's static library or explains what is missing.
pub fn find_runtime_lib() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("TERN_RUNTIME_LIB") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "TERN_RUNTIME_LIB is set to `{}`, which is not a file",
                path.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the tern executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let beside = dir.join(LIB_NAME);
    if beside.is_file() {
        return Ok(beside);
    }
    if let Some(found) = newest_hashed(&dir.join("deps")) {
        return Ok(found);
    }
    Err(format!(
        "cannot find the Tern runtime library: TERN_RUNTIME_LIB is not set and `{}` does not exist \
         (build it with `cargo build -p tern-runtime`, or set TERN_RUNTIME_LIB to its path)",
        beside.display()
    ))
}

/// The most recent `libtern_runtime-<hash>.a` in cargo's `deps` directory.
fn newest_hashed(deps: &Path) -> Option<PathBuf> {
    std::fs::read_dir(deps)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libtern_runtime-") && name.ends_with(".a")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}
