//! Linking an object with the runtime's static library into an executable,
//! using the C compiler the `cc` crate finds (it honours `CC`).

use std::path::Path;
use std::process::Command;

use crate::CodegenError;

/// System libraries `libtern_runtime.a` needs on this target (what
/// `cargo rustc -p tern-runtime -- --print native-static-libs` reports,
/// minus what the C compiler links by default).
pub fn runtime_link_libs() -> &'static [&'static str] {
    if cfg!(target_os = "macos") {
        &["-lSystem", "-lc", "-lm"]
    } else {
        &[
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ]
    }
}

/// The host triple the `cc` crate is asked about (outside a build script it
/// needs target, host and opt level given explicitly).
fn host_triple() -> String {
    target_lexicon::Triple::host().to_string()
}

/// Links `object` with `runtime_lib` into the executable `out`, a path of
/// the caller's scratch directory: a failed link may leave anything there,
/// so the caller moves the executable into place only on success.
pub fn link_executable(object: &Path, runtime_lib: &Path, out: &Path) -> Result<(), CodegenError> {
    let triple = host_triple();
    let compiler = cc::Build::new()
        .target(&triple)
        .host(&triple)
        .opt_level(0)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()
        .map_err(|e| CodegenError::Link(format!("no C compiler found: {e}")))?;
    let mut cmd: Command = compiler.to_command();
    // Drop the parts of the runtime (and its std) the program never calls:
    // smaller executables and a faster link.
    if cfg!(target_os = "macos") {
        cmd.arg("-Wl,-dead_strip");
    } else {
        cmd.arg("-Wl,--gc-sections");
    }
    cmd.arg(object)
        .arg(runtime_lib)
        .args(runtime_link_libs())
        .arg("-o")
        .arg(out);
    let output = cmd.output().map_err(|e| {
        CodegenError::Link(format!(
            "cannot run the C compiler `{}`: {e}",
            compiler.path().display()
        ))
    })?;
    if !output.status.success() {
        return Err(CodegenError::Link(format!(
            "`{}` exited with {}:\n{}",
            compiler.path().display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        )));
    }
    if !out.is_file() {
        return Err(CodegenError::Link(format!(
            "`{}` exited with success but wrote no executable",
            compiler.path().display(),
        )));
    }
    Ok(())
}
