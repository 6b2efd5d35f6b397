//! The environment variables the driver reads, all here: the compiler crates
//! take what they mean as options and never read the environment.
//!
//! The variables read elsewhere are `TERN_POOL_BYTES` and `TERN_POOL_STATS`:
//! they configure the program's pools and their report, so the runtime reads
//! them when the program starts and ends (an AOT executable runs without the
//! driver).

use std::path::PathBuf;

/// `TERN_VERIFY=1`: run Cranelift's verifier on every function in a release
/// build too (debug builds always do: `Options::new`).
pub fn verify() -> bool {
    std::env::var("TERN_VERIFY").is_ok_and(|v| v == "1")
}

/// `TERN_STDLIB=DIR`: stdlib modules from DIR instead of the copies embedded
/// in the binary.
pub fn stdlib_dir() -> Option<PathBuf> {
    std::env::var_os("TERN_STDLIB").map(PathBuf::from)
}

/// `TERN_RUNTIME_LIB=FILE`: the runtime static library `tern build` links.
pub fn runtime_lib() -> Option<PathBuf> {
    std::env::var_os("TERN_RUNTIME_LIB").map(PathBuf::from)
}

/// Where `tern build` keeps the runtime library it embeds:
/// `$XDG_CACHE_HOME/tern`, else `$HOME/.cache/tern`; `None` without either
/// (never a shared directory such as `/tmp`: `src/staticlib.rs` then unpacks
/// the library into the build's private temporary directory).
pub fn cache_dir() -> Option<PathBuf> {
    xdg_dir("XDG_CACHE_HOME", ".cache")
}

/// The REPL's history file: `$XDG_DATA_HOME/tern/history`, else
/// `$HOME/.local/share/tern/history`; `None` without either (no history is
/// kept).
pub fn history_file() -> Option<PathBuf> {
    Some(xdg_dir("XDG_DATA_HOME", ".local/share")?.join("history"))
}

/// `$VAR/tern`, else `$HOME/FALLBACK/tern` (empty variables count as unset).
fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    // Empty or relative values count as unset, as the XDG base directory
    // specification says (a relative one would follow the working folder).
    let nonempty = |v: &str| {
        std::env::var_os(v)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    match (nonempty(var), nonempty("HOME")) {
        (Some(dir), _) => Some(dir.join("tern")),
        (None, Some(home)) => Some(home.join(fallback).join("tern")),
        (None, None) => None,
    }
}

/// Whether diagnostics on stderr are coloured: stderr is a terminal and
/// `NO_COLOR` is unset or empty (<https://no-color.org>).
pub fn color_stderr() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `TERN_TIME_CPU=1`: `--time` also reports the execution's CPU time (set by
/// `tern bench` for its JIT runs).
pub fn time_cpu() -> bool {
    std::env::var_os("TERN_TIME_CPU").is_some_and(|v| v == "1")
}
