//! `tern build`: compile to an object and link it with the runtime into an
//! executable, or write the CLIF, the object or the disassembly.

use std::path::{Path, PathBuf};

use tern_codegen::{OptLevel, Options, link_executable};

use crate::Failure;
use crate::frontend::compile_file;
use crate::staticlib::find_runtime_lib;

/// What `--emit` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// Cranelift IR of every function, headed by its Tern name.
    Clif,
    /// The relocatable object file.
    Obj,
    /// The disassembly of the generated machine code.
    Asm,
}

/// Builds `file` into `out` (default: the file's stem, plus `.clif`, `.o`
/// or `.s` with `--emit`).
pub fn build(
    file: &str,
    out: Option<&Path>,
    level: OptLevel,
    emit: Option<Emit>,
) -> Result<(), Failure> {
    let (program, _) = compile_file(file)?;
    let mut opts = Options::new(level);
    opts.emit_clif = emit == Some(Emit::Clif);
    opts.emit_asm = emit == Some(Emit::Asm);
    let out: PathBuf = match out {
        Some(p) => p.to_path_buf(),
        None => {
            let stem = Path::new(file)
                .file_stem()
                .map(PathBuf::from)
                .unwrap_or_else(|| "a.out".into());
            match emit {
                None => stem,
                Some(Emit::Clif) => stem.with_extension("clif"),
                Some(Emit::Obj) => stem.with_extension("o"),
                Some(Emit::Asm) => stem.with_extension("s"),
            }
        }
    };
    let object = crate::stack::object(&program, &opts)
        .map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes)
            .map_err(|e| Failure::new(1, format!("error: cannot write `{}`: {e}", path.display())))
    };
    match emit {
        Some(Emit::Clif) => return write(&out, object.listing.clif.as_bytes()),
        Some(Emit::Asm) => return write(&out, object.listing.asm.as_bytes()),
        Some(Emit::Obj) => return write(&out, &object.bytes),
        None => {}
    }
    let runtime = find_runtime_lib().map_err(|e| Failure::new(1, format!("error: {e}")))?;
    // The object goes next to the output (same file system, cleaned up
    // after linking) rather than into a shared temp directory.
    let obj_path = {
        let mut name = out
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(format!(".{}.o", std::process::id()));
        out.with_file_name(name)
    };
    write(&obj_path, &object.bytes)?;
    let linked = link_executable(&obj_path, &runtime, &out);
    let _ = std::fs::remove_file(&obj_path);
    linked.map_err(|e| Failure::new(1, format!("error: {e}")))
}
