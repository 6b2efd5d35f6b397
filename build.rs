//! Embeds `stdlib/*.tern` into the driver: generates `$OUT_DIR/stdlib.rs`
//! with one `(module name, source)` entry per file, so the binary works
//! without the source tree (`TERN_STDLIB=DIR` overrides it at run time).
//! Also compiles the REPL's jump helpers (`src/repl/escape.c`): `sigsetjmp`
//! cannot be called from Rust.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src/repl/escape.c");
    cc::Build::new()
        .file("src/repl/escape.c")
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
