//! Finding `libtern_runtime.a` for linking: `TERN_RUNTIME_LIB`, else beside
//! the `tern` executable (cargo puts it in `target/<profile>/` when it builds
//! the runtime package, and in `target/<profile>/deps/` with a hash suffix
//! whenever it builds the driver).

use std::path::{Path, PathBuf};

/// The library's file name on this platform.
pub const LIB_NAME: &str = "libtern_runtime.a";

/// Locates the runtime's static library or explains what is missing.
pub fn find_runtime_lib() -> Result<PathBuf, String> {
    if let Some(path) = crate::config::runtime_lib() {
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "TERN_RUNTIME_LIB is set to `{}`, which is not a file",
                path.display()
            ))
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the tern executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let beside = dir.join(LIB_NAME);
    // Cargo rebuilds `deps/libtern_runtime-<hash>.a` whenever it rebuilds the
    // driver, but refreshes the un-hashed copy beside the executable only
    // when the runtime itself is a requested package: the newest file wins,
    // so a stale copy is never linked.
    let candidates = [Some(beside.clone()), newest_hashed(&dir.join("deps"))];
    if let Some((_, path)) = candidates
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max()
    {
        return Ok(path);
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
