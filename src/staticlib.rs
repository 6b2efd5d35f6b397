//! The runtime's static library `tern build` links: `TERN_RUNTIME_LIB` if
//! set, else the copy embedded in this binary at build time (`build.rs`),
//! unpacked on first use into the cache directory under a name carrying its
//! hash, so a `tern` installed anywhere builds programs with no source tree
//! and no environment, and two versions never share a file.

use std::io::Write as _;
use std::path::PathBuf;

/// The runtime library this binary was built with (release, no debug info).
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libtern_runtime.a"));

/// Hash of [`EMBEDDED`] (computed by `build.rs`).
const HASH: &str = env!("TERN_RUNTIME_HASH");

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
    unpack_embedded()
}

/// The embedded library as a file in the cache directory, written if it is
/// not there yet (to a temporary name first, so a concurrent `tern build`
/// never links half a file).
fn unpack_embedded() -> Result<PathBuf, String> {
    let dir = crate::config::cache_dir();
    let path = dir.join(format!("libtern_runtime-{HASH}.a"));
    if path
        .metadata()
        .is_ok_and(|m| m.len() == EMBEDDED.len() as u64)
    {
        return Ok(path);
    }
    let fail = |what: &str, e: std::io::Error| {
        format!(
            "cannot {what} the runtime library in `{}`: {e} (set XDG_CACHE_HOME to a writable directory, or TERN_RUNTIME_LIB to the library)",
            dir.display()
        )
    };
    std::fs::create_dir_all(&dir).map_err(|e| fail("create a cache directory for", e))?;
    let tmp = dir.join(format!(
        ".libtern_runtime-{HASH}.{}.tmp",
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(EMBEDDED)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail("write", e)
    })?;
    Ok(path)
}
