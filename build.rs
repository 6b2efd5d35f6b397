//! Embeds `stdlib/*.tern` into the driver: generates `$OUT_DIR/stdlib.rs`
//! with one `(module name, source)` entry per file, so the binary works
//! without the source tree (`TERN_STDLIB=DIR` overrides it at run time).
//! Also compiles the REPL's jump helpers (`src/repl/escape.c`): `sigsetjmp`
//! cannot be called from Rust. And builds the runtime's static library
//! (release, without debug information) into `$OUT_DIR/libtern_runtime.a`,
//! which the driver embeds, so an installed `tern` links programs without
//! the source tree (`src/staticlib.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `runtime/` as a release static library in a target directory of
/// its own (the outer build holds the workspace's), strips its debug
/// information (the runtime's and its std's line tables would make a
/// hello-world executable megabytes; the Tern code's own DWARF is added by
/// `tern build`) and records a hash of the result for the driver's cache.
fn embed_runtime(manifest: &Path, out: &Path) {
    let runtime = manifest.join("runtime");
    println!("cargo:rerun-if-changed={}", runtime.join("src").display());
    // The runtime's symbol list is made from the ABI's table.
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("abi/src").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        runtime.join("Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("Cargo.lock").display()
    );
    let target_dir = out.join("runtime-build");
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let host = std::env::var("HOST").expect("cargo sets HOST");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--lib", "--locked", "--manifest-path"])
        .arg(runtime.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_ENCODED_RUSTFLAGS", runtime_rustflags())
        .env_remove("CARGO_TARGET_DIR");
    let mut built = target_dir.clone();
    if target != host {
        cmd.args(["--target", &target]);
        built.push(&target);
    }
    built.push("release/libtern_runtime.a");
    let status = cmd
        .status()
        .expect("run cargo to build the runtime library");
    assert!(status.success(), "building the runtime library failed");
    let lib = out.join("libtern_runtime.a");
    let stripped = Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(&lib)
        .arg(&built)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        println!("cargo:warning=`strip` failed: the embedded runtime keeps its debug information");
        std::fs::copy(&built, &lib).expect("copy the runtime library");
    }
    let bytes = std::fs::read(&lib).expect("read the runtime library");
    // FNV-1a: names the cached copy, so a new build never links an old one.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    println!("cargo:rustc-env=TERN_RUNTIME_HASH={hash:016x}");
}

/// The outer build's flags (cargo hands them to build scripts), plus code
/// for position-independent *executables*, the only thing the library is
/// linked into: its functions are then local to the image, so an entry point
/// jumps to its scan backend's copy directly rather than through the GOT
/// (docs/runtime.md, "The entry points").
fn runtime_rustflags() -> String {
    let outer = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut flags: Vec<&str> = outer.split('\x1f').filter(|f| !f.is_empty()).collect();
    flags.push("-Crelocation-model=pie");
    flags.join("\x1f")
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    embed_runtime(&manifest, &out_dir);
    println!("cargo:rerun-if-changed=src/repl/escape.c");
    cc::Build::new()
        .file("src/repl/escape.c")
        // Fixed, not the profile's: the REPL's recursion depth is measured
        // across this file's frame (src/repl/exec.rs, INPUT_STACK).
        .opt_level(2)
        .warnings_into_errors(true)
        .compile("tern_repl_escape");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("stdlib");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, String)> = Vec::new();
    if let Ok(read) = std::fs::read_dir(&dir) {
        for entry in read.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "tern")
                && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            {
                println!("cargo:rerun-if-changed={}", path.display());
                entries.push((stem.to_string(), path.display().to_string()));
            }
        }
    }
    entries.sort();
    let mut code = String::from(
        "/// Embedded stdlib modules: (name, source).\npub static STDLIB: &[(&str, &str)] = &[\n",
    );
    for (name, path) in &entries {
        writeln!(code, "    ({name:?}, include_str!({path:?})),").expect("write to string");
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("stdlib.rs");
    std::fs::write(out, code).expect("write stdlib.rs");
}
